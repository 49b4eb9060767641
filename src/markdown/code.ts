// Code block HTML as Zulip's codehilite produces it: Pygments' token spans inside the
// `codehilite` wrapper, and for a fence that names a language, the lexer's display name in
// data-code-language (an unknown name is kept as typed, for playgrounds).
import { highlight, highlighter, lexerName } from './highlight/index.ts';

/** The value Zulip puts in data-code-language for a fence's language. */
export function codeLanguageName(lang: string): string {
  return lexerName(lang) ?? lang;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `:::lang`, `#!lang` or `#!/path/lang` on a block's first line. */
const SHEBANG_RE = /^(?:(?:::+)|(#!))((?:\/[\p{L}\p{N}_]+)*[/ ])?([\p{L}\p{N}_#.+-]*)/u;

/**
 * A fenced code block. With a language, Zulip re-serializes the block through lxml (quotes are
 * left unescaped) and tags it; without one, a `#!lang` or `:::lang` first line still picks the
 * lexer, and the line stays (Zulip turns off upstream's hiding of it).
 */
export function renderCodeBlock(lang: string | undefined, code: string): string {
  if (lang) {
    return `<div class="codehilite" data-code-language="${escapeAttribute(codeLanguageName(lang))}">${highlight(highlighter(lang), code, true)}</div>`;
  }
  const header = SHEBANG_RE.exec(code.replace(/^\n+/, '').split('\n', 1)[0]!);
  return `<div class="codehilite">${highlight(header ? highlighter(header[3]!) : undefined, code, false)}</div>`;
}

/** An indented code block: upstream codehilite drops a `:::lang` / `#!lang` first line (one with a path stays). */
export function renderIndentedCodeBlock(code: string): string {
  const lines = code.replace(/^\n+/, '').split('\n');
  const header = SHEBANG_RE.exec(lines[0]!);
  if (header && !header[2]) lines.shift();
  return `<div class="codehilite">${highlight(header ? highlighter(header[3]!) : undefined, lines.join('\n'), false)}</div>`;
}
