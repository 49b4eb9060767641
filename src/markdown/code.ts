// Code block HTML in the shape Zulip's codehilite wrapper produces. We do not
// run a syntax highlighter (Pygments has no JS twin); the markup around the
// code, the escaping and the data-code-language names are Zulip's.

/** Pygments lexer display names for the aliases people actually type. */
const LEXER_NAMES: Record<string, string> = {};
const LEXERS: Array<[string, string[]]> = [
  ['Python', ['python', 'py', 'sage', 'python3', 'py3', 'bazel', 'starlark']],
  ['Python 2.x', ['python2', 'py2']],
  ['Python console session', ['pycon', 'python-console']],
  ['Python Traceback', ['pytb', 'py3tb']],
  ['JavaScript', ['javascript', 'js']],
  ['TypeScript', ['typescript', 'ts']],
  ['JSX', ['jsx', 'react']],
  ['TSX', ['tsx']],
  ['JSON', ['json', 'json-object']],
  ['YAML', ['yaml']],
  ['TOML', ['toml']],
  ['INI', ['ini', 'cfg', 'dosini']],
  ['XML', ['xml']],
  ['HTML', ['html']],
  ['CSS', ['css']],
  ['SCSS', ['scss']],
  ['Sass', ['sass']],
  ['Less', ['less']],
  ['Bash', ['bash', 'sh', 'ksh', 'zsh', 'shell', 'openrc']],
  ['Bash Session', ['console', 'shell-session']],
  ['PowerShell', ['powershell', 'pwsh', 'posh', 'ps1', 'psm1']],
  ['Batchfile', ['batch', 'bat', 'dosbatch', 'winbatch']],
  ['C', ['c']],
  ['C++', ['cpp', 'c++']],
  ['C#', ['csharp', 'c#', 'cs']],
  ['Objective-C', ['objective-c', 'objectivec', 'obj-c', 'objc']],
  ['Java', ['java']],
  ['Kotlin', ['kotlin']],
  ['Scala', ['scala']],
  ['Groovy', ['groovy']],
  ['Go', ['go', 'golang']],
  ['Rust', ['rust', 'rs']],
  ['Ruby', ['ruby', 'rb', 'duby']],
  ['PHP', ['php', 'php3', 'php4', 'php5']],
  ['Perl', ['perl', 'pl']],
  ['Lua', ['lua']],
  ['R', ['splus', 's', 'r']],
  ['Julia', ['julia', 'jl']],
  ['Haskell', ['haskell', 'hs']],
  ['OCaml', ['ocaml']],
  ['F#', ['fsharp', 'f#']],
  ['Elixir', ['elixir', 'ex', 'exs']],
  ['Erlang', ['erlang']],
  ['Clojure', ['clojure', 'clj']],
  ['Common Lisp', ['common-lisp', 'cl', 'lisp']],
  ['Scheme', ['scheme', 'scm']],
  ['Racket', ['racket', 'rkt']],
  ['Elm', ['elm']],
  ['Dart', ['dart']],
  ['Swift', ['swift']],
  ['SQL', ['sql']],
  ['PostgreSQL SQL dialect', ['postgresql', 'postgres']],
  ['MySQL', ['mysql']],
  ['Markdown', ['markdown', 'md']],
  ['reStructuredText', ['restructuredtext', 'rst', 'rest']],
  ['TeX', ['tex', 'latex']],
  ['Diff', ['diff', 'udiff']],
  ['Docker', ['docker', 'dockerfile']],
  ['Makefile', ['make', 'makefile', 'mf', 'bsdmake']],
  ['CMake', ['cmake']],
  ['Nginx configuration file', ['nginx']],
  ['VimL', ['vim']],
  ['Matlab', ['matlab']],
  ['Fortran', ['fortran', 'f90']],
  ['Zig', ['zig']],
  ['Nix', ['nixos', 'nix']],
  ['Coq', ['coq']],
  ['Lean', ['lean', 'lean3']],
  ['Prolog', ['prolog']],
  ['GraphQL', ['graphql']],
  ['Protocol Buffer', ['protobuf', 'proto']],
  ['Text only', ['text']],
  ['Spitfire', ['spitfire']],
  ['Delphi', ['delphi', 'pas', 'pascal', 'objectpascal']],
  ['verilog', ['verilog', 'v']],
  ['vhdl', ['vhdl']],
  ['NASM', ['nasm']],
  ['GAS', ['gas', 'asm']],
  ['Awk', ['awk', 'gawk', 'mawk', 'nawk']],
  ['Handlebars', ['handlebars']],
  ['Django/Jinja', ['django', 'jinja']],
  ['VB.net', ['vb.net', 'vbnet', 'lobas', 'oobas', 'sobas', 'visual-basic', 'visualbasic']],
  ['Solidity', ['solidity']],
  ['Terraform', ['terraform', 'tf', 'hcl']],
];
for (const [name, aliases] of LEXERS) for (const alias of aliases) LEXER_NAMES[alias] = name;

/** The value Zulip puts in data-code-language for a fence's language. */
export function codeLanguageName(lang: string): string {
  return LEXER_NAMES[lang] ?? lang;
}

function pygmentsEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function lxmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The codehilite block for a fenced code block. With a language, Zulip
 * re-serializes the block through lxml, which leaves quotes unescaped.
 */
export function renderCodeBlock(lang: string | undefined, code: string): string {
  const body = code.replace(/^\n+|\n+$/g, '') + '\n';
  if (lang) {
    const language = codeLanguageName(lang).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return `<div class="codehilite" data-code-language="${language}"><pre><span></span><code>${lxmlEscape(body)}</code></pre></div>`;
  }
  return `<div class="codehilite"><pre><span></span><code>${pygmentsEscape(body)}</code></pre></div>`;
}

const SHEBANG_RE = /^(?:(?:::+)|(#!))((?:\/\w+)*[/ ])?([\w#.+-]*)\s*/;

/** An indented code block: upstream codehilite drops a `:::lang` / `#!lang` first line. */
export function renderIndentedCodeBlock(code: string): string {
  const lines = code.split('\n');
  const first = lines[0]!;
  const m = SHEBANG_RE.exec(first);
  if (m && m[2]) {
    // A path (#!/usr/bin/python) keeps the line.
  } else if (m) {
    lines.shift();
  }
  return renderCodeBlock(undefined, lines.join('\n'));
}
