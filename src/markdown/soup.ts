// The HTML of a message as Zulip stores it once a thumbnail is put in: Zulip's
// rewrite_thumbnailed_images parses the rendered message with BeautifulSoup (html.parser) and
// writes it back whole with its html_formatter, which changes more than the images: entities are
// decoded (`&#39;` becomes `'`), only `&`, `<` and `>` are escaped again, attributes are
// lower-cased and sorted by name, a value holding `"` is quoted with `'`, an empty value is a bare attribute, a
// self-closed `<path/>` gets its end tag, and the whole is stripped of surrounding whitespace.
// This is that round trip for the well-formed HTML our serializer writes.
import entities from './html-entities.json' with { type: 'json' };

const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'keygen',
  'link',
  'menuitem',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'basefont',
  'bgsound',
  'command',
  'frame',
  'image',
  'isindex',
  'nextid',
  'spacer',
]);
/** Attributes BeautifulSoup keeps as a list of words, written back joined by single spaces. */
const WORD_LISTS: Record<string, Set<string>> = {
  '*': new Set(['class', 'accesskey', 'dropzone']),
  a: new Set(['rel', 'rev']),
  link: new Set(['rel', 'rev']),
  td: new Set(['headers']),
  th: new Set(['headers']),
  form: new Set(['accept-charset']),
  object: new Set(['archive']),
  area: new Set(['rel']),
  icon: new Set(['sizes']),
  iframe: new Set(['sandbox']),
  output: new Set(['for']),
};
/** Windows-1252's meaning of the C1 code points, which numeric references are taken to mean. */
const CP1252: Record<number, number> = {
  0x80: 0x20ac,
  0x82: 0x201a,
  0x83: 0x192,
  0x84: 0x201e,
  0x85: 0x2026,
  0x86: 0x2020,
  0x87: 0x2021,
  0x88: 0x2c6,
  0x89: 0x2030,
  0x8a: 0x160,
  0x8b: 0x2039,
  0x8c: 0x152,
  0x8e: 0x17d,
  0x91: 0x2018,
  0x92: 0x2019,
  0x93: 0x201c,
  0x94: 0x201d,
  0x95: 0x2022,
  0x96: 0x2013,
  0x97: 0x2014,
  0x98: 0x2dc,
  0x99: 0x2122,
  0x9a: 0x161,
  0x9b: 0x203a,
  0x9c: 0x153,
  0x9e: 0x17e,
  0x9f: 0x178,
};

const NAMED: Record<string, string> = entities;
let namesWithoutSemicolon: Map<string, string> | undefined;

/** BeautifulSoup knows every HTML5 name with or without its semicolon. */
function textEntity(name: string): string | undefined {
  if (!namesWithoutSemicolon) {
    namesWithoutSemicolon = new Map();
    for (const [key, value] of Object.entries(NAMED)) namesWithoutSemicolon.set(key.endsWith(';') ? key.slice(0, -1) : key, value);
  }
  return namesWithoutSemicolon.get(name);
}

/** A numeric reference in text, as BeautifulSoup resolves it (the HTML spec's rules). */
function textCharacter(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\uFFFD';
  return String.fromCodePoint(CP1252[code] ?? code);
}

/** A numeric reference in an attribute value, as Python's html.unescape resolves it. */
function attributeCharacter(code: number): string {
  if (code === 0) return '\uFFFD';
  if (code === 0x0d) return '\r';
  if (code >= 0x80 && code <= 0x9f) return String.fromCodePoint(CP1252[code] ?? code);
  if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\uFFFD';
  const noncharacter = (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe;
  if ((code >= 0x01 && code <= 0x08) || code === 0x0b || (code >= 0x0e && code <= 0x1f) || code === 0x7f || noncharacter) return '';
  return String.fromCodePoint(code);
}

const ATTRIBUTE_REFERENCE = /&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)/g;

/** Python's html.unescape, which html.parser applies to attribute values. */
function unescapeAttribute(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(ATTRIBUTE_REFERENCE, (whole, ref: string) => {
    if (ref[0] === '#') {
      const hex = ref[1] === 'x' || ref[1] === 'X';
      return attributeCharacter(parseInt(ref.slice(hex ? 2 : 1).replace(/;$/, ''), hex ? 16 : 10));
    }
    const known = NAMED[ref];
    if (known !== undefined) return known;
    // The longest known name it starts with (the legacy names need no semicolon).
    for (let length = ref.length - 1; length > 1; length--) {
      const prefix = NAMED[ref.slice(0, length)];
      if (prefix !== undefined) return prefix + ref.slice(length);
    }
    return whole;
  });
}

const escapeXml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function writeAttribute(tag: string, name: string, raw: string | null): string {
  let value = raw === null ? '' : unescapeAttribute(raw);
  const wordList = WORD_LISTS['*']!.has(name) || WORD_LISTS[tag]?.has(name);
  // An empty list of words is no empty string, so it is not written as a bare attribute.
  if (wordList) value = value.split(/\s+/).filter(Boolean).join(' ');
  else if (value === '') return ` ${name}`;
  let text = escapeXml(value);
  let quote = '"';
  if (text.includes('"')) {
    if (text.includes("'")) text = text.replace(/"/g, '&quot;');
    else quote = "'";
  }
  return ` ${name}=${quote}${text}${quote}`;
}

const TAG = /^<([a-zA-Z][^\t\n\r\f />\x00]*)/;
const ATTRIBUTE = /^[\s/]*([^\s/>][^\s/=>]*)(?:\s*=+\s*('[^']*'|"[^"]*"|(?!['"])[^>\s]*))?/;
const CHARREF = /^&#(?:([0-9]+)|[xX]([0-9a-fA-F]+))([^0-9a-fA-F]|$)/;
const ENTITYREF = /^&([a-zA-Z][-.a-zA-Z0-9]*)([^a-zA-Z0-9]|$)/;

/** Python's str.strip(): its whitespace, not JavaScript's. */
const PYTHON_SPACE = '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PYTHON_STRIP = new RegExp(`^${PYTHON_SPACE}+|${PYTHON_SPACE}+$`, 'g');

/** The message as BeautifulSoup reads and writes it back. */
export function asBeautifulSoupWrites(html: string): string {
  let out = '';
  let i = 0;
  const n = html.length;
  while (i < n) {
    const next = html.slice(i).search(/[<&]/);
    if (next !== 0) {
      const end = next < 0 ? n : i + next;
      out += escapeXml(html.slice(i, end));
      i = end;
      continue;
    }
    const rest = html.slice(i);
    if (rest[0] === '&') {
      const charref = CHARREF.exec(rest);
      const entityref = charref ? null : ENTITYREF.exec(rest);
      if (charref) {
        out += escapeXml(textCharacter(charref[1] !== undefined ? parseInt(charref[1], 10) : parseInt(charref[2]!, 16)));
        i += charref[0].length - (charref[3] === ';' ? 0 : charref[3]!.length);
      } else if (entityref) {
        out += escapeXml(textEntity(entityref[1]!) ?? `&${entityref[1]}`);
        i += entityref[0].length - (entityref[2] === ';' ? 0 : entityref[2]!.length);
      } else {
        out += '&amp;';
        i += 1;
      }
      continue;
    }
    if (rest.startsWith('<!--')) {
      const close = rest.indexOf('-->', 4);
      const end = close < 0 ? rest.length : close + 3;
      out += rest.slice(0, end);
      i += end;
      continue;
    }
    const closing = /^<\/([a-zA-Z][^\t\n\r\f />\x00]*)\s*>/.exec(rest);
    if (closing) {
      const name = closing[1]!.toLowerCase();
      if (!VOID.has(name)) out += `</${name}>`;
      i += closing[0].length;
      continue;
    }
    const open = TAG.exec(rest);
    if (!open) {
      out += '&lt;';
      i += 1;
      continue;
    }
    const tag = open[1]!.toLowerCase();
    let at = open[0].length;
    const seen = new Map<string, string | null>();
    for (;;) {
      const attribute = ATTRIBUTE.exec(rest.slice(at));
      if (!attribute || attribute[0] === '') break;
      let value: string | null = attribute[2] ?? null;
      if (value !== null && /^(['"]).*\1$/s.test(value)) value = value.slice(1, -1);
      const name = attribute[1]!.toLowerCase();
      seen.set(name, value);
      at += attribute[0].length;
    }
    const tail = /^\s*(\/?)>/.exec(rest.slice(at));
    at += tail ? tail[0].length : 0;
    const attributes = [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out += `<${tag}${attributes.map(([name, value]) => writeAttribute(tag, name, value)).join('')}>`;
    // A self-closed element that is not void still gets its end tag.
    if (tail?.[1] === '/' && !VOID.has(tag)) out += `</${tag}>`;
    i += at;
  }
  return out.replace(PYTHON_STRIP, '');
}
