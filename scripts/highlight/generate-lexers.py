#!/usr/bin/env python3
"""Builds src/markdown/highlight/lexers.json from an installed Pygments.

Zulip highlights code blocks with Pygments, and clients style Pygments' token classes, so our
highlighter runs Pygments' own lexer tables: for each chosen lexer that is a plain RegexLexer
(no callbacks of its own), every state's rules as (JavaScript regex source, flags, action, next
state), with the action already turned into the HtmlFormatter's CSS class. The file also holds
every Pygments lexer's aliases and display name, which Zulip writes into data-code-language.

Run with the Pygments version Zulip pins: python3 scripts/highlight/generate-lexers.py
Pygments is BSD-licensed; the tables it generates keep its copyright (see the file's `source`).
"""
import json
import os
import re
import sys

import pygments
from pygments import lexers as lexers_module
from pygments.formatters.html import HtmlFormatter
from pygments.lexer import DelegatingLexer, RegexLexer, _This
from pygments.lexers import find_lexer_class_by_name
from pygments.token import Keyword, Name, Operator, _TokenType
from pygments import unistring as uni

# The lexers we highlight with, by the name Zulip users type most.
CHOSEN = [
    'python', 'python2', 'pytb', 'javascript', 'typescript', 'jsx', 'tsx', 'bash', 'java', 'kotlin',
    'groovy', 'go', 'rust', 'csharp', 'dart', 'sql', 'mysql', 'html', 'xml', 'css', 'scss', 'diff',
    'ini', 'haskell', 'ocaml', 'erlang', 'perl', 'r', 'latex', 'powershell', 'graphql', 'nginx',
    'protobuf', 'zig', 'nix', 'clojure', 'django', 'c', 'cpp', 'php', 'elixir', 'css+php', 'html+php',
    'javascript+php', 'xml+php', 'html+django', 'json', 'docker',
]

# Lexers that are hand-written scanners, ported by hand (src/markdown/highlight/json.ts).
NATIVE = {'JsonLexer': 'json'}

# Lexers whose own get_tokens_unprocessed only renames some names' tokens (and PHP's, which also
# starts inside `<?php`, as Zulip asks with startinline): the renames as
# [(token classes, names, new class)], the first that applies wins.
def c_family(lexer):
    types = lexer.stdlib_types | lexer.c99_types | lexer.c11_atomic_types | lexer.linux_types
    return {'remap': [[['n'], sorted(types), css_class(Keyword.Type)]]}


def php(lexer):
    return {'remap': [[['nx'], sorted(lexer._functions), css_class(Name.Builtin)]], 'stack': ['root', 'php']}


def elixir(lexer):
    pairs = [(lexer.KEYWORD, Keyword), (lexer.KEYWORD_OPERATOR, Operator.Word), (lexer.BUILTIN, Keyword),
             (lexer.BUILTIN_DECLARATION, Keyword.Declaration), (lexer.BUILTIN_NAMESPACE, Keyword.Namespace),
             (lexer.CONSTANT, Name.Constant), (lexer.PSEUDO_VAR, Name.Builtin.Pseudo)]
    return {'remap': [[['n'], sorted(names), css_class(ttype)] for names, ttype in pairs]}


OVERRIDES = {'CLexer': c_family, 'CppLexer': c_family, 'PhpLexer': php, 'ElixirLexer': elixir}

FORMATTER = HtmlFormatter()
WORD = r'\p{L}\p{N}_'
UNI_CLASSES = {
    uni.xid_start: r'_\p{XID_Start}',
    uni.xid_continue: r'\p{XID_Continue}',
    uni.Lu: r'\p{Lu}', uni.Ll: r'\p{Ll}', uni.Lt: r'\p{Lt}', uni.Lm: r'\p{Lm}', uni.Lo: r'\p{Lo}',
    uni.Nd: r'\p{Nd}', uni.Nl: r'\p{Nl}', uni.Mn: r'\p{Mn}', uni.Mc: r'\p{Mc}', uni.Pc: r'\p{Pc}',
}
SYNTAX = set('^$\\.*+?()[]{}|/')


class Unsupported(Exception):
    pass


def css_class(ttype):
    return FORMATTER._get_css_classes(ttype)


def convert_regex(pattern, flags):
    """A Python `re` pattern as JavaScript source and flags (with the `u` flag)."""
    original = pattern
    # The classes with \W that Pygments' lexers use, as JavaScript writes them.
    pattern = pattern.replace(r'[^\W\d]', r'[\p{L}\p{Nl}\p{No}_]').replace(r'[\w\W]', r'[\s\S]').replace(r'[\W_]', r'[^\p{L}\p{N}]')
    for text, cls in sorted(UNI_CLASSES.items(), key=lambda kv: -len(kv[0])):
        pattern = pattern.replace(text, cls)
    js_flags = 'u'
    if flags & re.IGNORECASE:
        js_flags += 'i'
    if flags & re.MULTILINE:
        js_flags += 'm'
    if flags & re.DOTALL:
        js_flags += 's'
    if flags & re.VERBOSE:
        raise Unsupported('verbose pattern')
    m = re.match(r'\(\?([aiLmsux]+)\)', pattern)
    while m:
        for f in m.group(1):
            if f in 'ims' and f not in js_flags:
                js_flags += f
            elif f == 'x':
                raise Unsupported('verbose pattern')
        pattern = pattern[m.end():]
        m = re.match(r'\(\?([aiLmsux]+)\)', pattern)
    out = []
    i = 0
    in_class = False
    class_start = False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == '\\':
            if i + 1 >= n:
                raise Unsupported('trailing backslash')
            d = pattern[i + 1]
            if d in 'pP' and i + 2 < n and pattern[i + 2] == '{':
                end = pattern.index('}', i)
                out.append(pattern[i:end + 1])
                i = end + 1
                class_start = False
                continue
            if d == 'w':
                out.append(WORD if in_class else f'[{WORD}]')
            elif d == 'W':
                if in_class:
                    raise Unsupported(r'\W in a class: ' + pattern)
                out.append(f'[^{WORD}]')
            elif d == 'd':
                out.append(r'\p{Nd}')
            elif d == 'D':
                out.append(r'\P{Nd}')
            elif d == 'Z':
                out.append(r'(?![\s\S])')
            elif d == 'A':
                out.append(r'(?<![\s\S])')
            elif d == 'U':
                out.append('\\u{' + pattern[i + 2:i + 10].lstrip('0') + '}')
                i += 10
                class_start = False
                continue
            elif d == 'u':
                out.append(pattern[i:i + 6])
                i += 6
                class_start = False
                continue
            elif d.isdigit() and d != '0' and not in_class:
                out.append('\\' + d)
            elif d.isalnum() or d in SYNTAX or (in_class and d == '-'):
                out.append('\\' + d)
            elif d == '\n':
                out.append('\\n')
            else:
                # An identity escape JavaScript's `u` mode refuses.
                out.append('\\' + d if d in SYNTAX else d)
            i += 2
            class_start = False
            continue
        if in_class:
            if c == ']' and not class_start:
                in_class = False
                out.append(c)
            elif c == ']' and class_start:
                out.append('\\]')
            elif c == '[':
                if pattern.startswith('[:', i):
                    raise Unsupported('POSIX class')
                out.append('\\[')
            elif c == '^' and class_start and out[-1] == '[':
                out.append(c)
                i += 1
                continue
            else:
                out.append(c)
            class_start = False
            i += 1
            continue
        if c == '[':
            in_class = True
            class_start = True
            out.append(c)
            i += 1
            continue
        if c == '(' and pattern.startswith('(?P<', i):
            out.append('(?<')
            i += 4
            continue
        if c == '(' and pattern.startswith('(?P=', i):
            end = pattern.index(')', i)
            out.append('\\k<' + pattern[i + 4:end] + '>')
            i = end + 1
            continue
        if c == '(' and pattern.startswith('(?(', i):
            raise Unsupported('conditional group')
        if c == '(' and pattern.startswith('(?#', i):
            i = pattern.index(')', i) + 1
            continue
        if c == '(' and re.match(r'\(\?[aiLmsux-]+:', pattern[i:]):
            raise Unsupported('scoped flags')
        if c == '{' and re.match(r'\{,\d+\}', pattern[i:]):
            out.append('{0,')
            i += 2
            continue
        if c == '{' and not re.match(r'\{\d+(,\d*)?\}', pattern[i:]):
            out.append('\\{')
            i += 1
            continue
        if c == '}' and not (out and re.search(r'\{\d+(,\d*)?$', ''.join(out[-8:]))):
            out.append('\\}')
            i += 1
            continue
        if c in '/]':
            out.append('\\' + c)
            i += 1
            continue
        out.append(c)
        i += 1
    source = ''.join(out)
    try:
        check = re.compile(original, flags)  # noqa: F841  (the original must be valid)
    except re.error as e:
        raise Unsupported(str(e))
    return source, js_flags


def lexer_key(cls):
    return cls.aliases[0] if cls.aliases else cls.__name__


def closure(fn):
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))


def convert_action(action, needed):
    if action is None:
        return None
    if type(action) is _TokenType:
        return css_class(action)
    name = getattr(action, '__qualname__', '')
    if name.startswith('bygroups.'):
        return {'groups': [convert_action(a, needed) for a in closure(action)['args']]}
    if name.startswith('using.'):
        cells = closure(action)
        other = cells.get('_other', _This())
        stack = cells.get('gt_kwargs', {}).get('stack')
        if cells.get('kwargs') == {'_startinline': True} and isinstance(other, _This):
            # PHP inside a string's interpolation: lexed again from inside `<?php`.
            stack = ['root', 'php']
        elif cells.get('kwargs'):
            raise Unsupported('using() with lexer options')
        if isinstance(other, _This):
            target = 'this'
        else:
            if other.get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed and other.__name__ not in OVERRIDES and other.__name__ not in NATIVE:
                raise Unsupported(f'using({other.__name__}) with its own tokenizer')
            target = lexer_key(other)
            needed.append(other)
        out = {'using': target}
        if stack:
            out['stack'] = list(stack)
        return out
    raise Unsupported(f'callback {name}')


def convert_state(new_state):
    if new_state is None:
        return None
    if isinstance(new_state, int):
        return new_state
    if isinstance(new_state, tuple):
        return list(new_state)
    if new_state == '#push':
        return ['#push']
    raise Unsupported(f'state {new_state!r}')


def convert_lexer(cls, needed):
    if cls.__name__ in NATIVE:
        return {'name': cls.name, 'native': NATIVE[cls.__name__], 'states': {}}
    if issubclass(cls, DelegatingLexer):
        # The language lexer's `Other` text, joined, is lexed by the root lexer, and the
        # language's tokens are put back where they were (Pygments' do_insertions).
        lexer = cls(startinline=True)
        if type(lexer.root_lexer).__name__ == '_ReplaceInnerCode' or type(lexer.language_lexer).__name__ == '_ReplaceInnerCode':
            raise Unsupported('inner code replacement')
        needed.extend([type(lexer.root_lexer), type(lexer.language_lexer)])
        return {'name': cls.name, 'delegate': {'root': lexer_key(type(lexer.root_lexer)), 'language': lexer_key(type(lexer.language_lexer)), 'needle': css_class(lexer.needle)}, 'states': {}}
    override = OVERRIDES.get(cls.__name__)
    if cls.get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed and override is None:
        raise Unsupported('its own tokenizer')
    lexer = cls(startinline=True)
    states = {}
    for state, rules in lexer._tokens.items():
        out = []
        for rexmatch, action, new_state in rules:
            regex = rexmatch.__self__
            source, flags = convert_regex(regex.pattern, regex.flags)
            out.append([source, flags, convert_action(action, needed), convert_state(new_state)])
        states[state] = out
    out = {'name': cls.name, 'states': states}
    if override:
        out.update(override(lexer))
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    lexers = {}
    pending = [find_lexer_class_by_name(name) for name in CHOSEN]
    skipped = []
    while pending:
        cls = pending.pop(0)
        key = lexer_key(cls)
        if key in lexers:
            continue
        needed = []
        try:
            lexers[key] = convert_lexer(cls, needed)
        except Unsupported as e:
            skipped.append(f'{cls.name}: {e}')
            continue
        pending.extend(needed)
    names = {}
    for _module, name, aliases, _filenames, _mimetypes in lexers_module.LEXERS.values():
        for alias in aliases:
            names.setdefault(alias, name)
    highlighted = {}
    for alias in names:
        cls = find_lexer_class_by_name(alias)
        if lexer_key(cls) in lexers:
            highlighted[alias] = lexer_key(cls)
    data = {
        'source': f'Generated by scripts/highlight/generate-lexers.py from Pygments {pygments.__version__} '
                  '(BSD-2-Clause, Copyright 2006 the Pygments team); do not edit.',
        'names': dict(sorted(names.items())),
        'highlighted': dict(sorted(highlighted.items())),
        'lexers': lexers,
    }
    path = os.path.join(root, 'src', 'markdown', 'highlight', 'lexers.json')
    with open(path, 'w') as f:
        json.dump(data, f, ensure_ascii=False, separators=(',', ':'))
    print(f'{len(lexers)} lexers, {len(names)} aliases; skipped: {skipped}', file=sys.stderr)


main()
