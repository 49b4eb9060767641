// Pygments' JsonLexer, which is a hand-written scanner rather than a RegexLexer: a string is a
// key (Name.Tag) when a colon follows it, comments are allowed, and nothing is validated.
import type { Token } from './token.ts';

const INTEGERS = new Set('-0123456789');
const FLOATS = new Set('.eE+');
const CONSTANTS = new Set('truefalsenull');
const HEX = new Set('0123456789abcdefABCDEF');
const PUNCTUATION = new Set('{}[],');
const WHITESPACE = new Set(' \n\r\t');

export function tokenizeJson(text: string, out: Token[]): void {
  let inString = false;
  let inEscape = false;
  let inUnicodeEscape = 0;
  let inWhitespace = false;
  let inConstant = false;
  let inNumber = false;
  let inFloat = false;
  let inPunctuation = false;
  let inCommentSingle = false;
  let inCommentMultiline = false;
  let expectingCommentOpener = false;
  let expectingCommentCloser = false;
  let start = 0;
  // Strings, whitespace and comments wait here until what follows says whether a string is a key.
  let queue: Token[] = [];
  const flush = () => {
    out.push(...queue);
    queue = [];
  };
  const emit = (token: Token) => (queue.length ? queue.push(token) : out.push(token));
  for (let stop = 0; stop < text.length; stop++) {
    const c = text[stop]!;
    if (inString) {
      if (inUnicodeEscape) {
        if (HEX.has(c)) {
          inUnicodeEscape--;
          if (!inUnicodeEscape) inEscape = false;
        } else {
          inUnicodeEscape = 0;
          inEscape = false;
        }
      } else if (inEscape) {
        if (c === 'u') inUnicodeEscape = 4;
        else inEscape = false;
      } else if (c === '\\') {
        inEscape = true;
      } else if (c === '"') {
        queue.push(['s2', text.slice(start, stop + 1)]);
        inString = false;
        inEscape = false;
        inUnicodeEscape = 0;
      }
      continue;
    } else if (inWhitespace) {
      if (WHITESPACE.has(c)) continue;
      emit(['w', text.slice(start, stop)]);
      inWhitespace = false;
    } else if (inConstant) {
      if (CONSTANTS.has(c)) continue;
      out.push(['kc', text.slice(start, stop)]);
      inConstant = false;
    } else if (inNumber) {
      if (INTEGERS.has(c)) continue;
      if (FLOATS.has(c)) {
        inFloat = true;
        continue;
      }
      out.push([inFloat ? 'mf' : 'mi', text.slice(start, stop)]);
      inNumber = false;
      inFloat = false;
    } else if (inPunctuation) {
      if (PUNCTUATION.has(c)) continue;
      out.push(['p', text.slice(start, stop)]);
      inPunctuation = false;
    } else if (inCommentSingle) {
      if (c !== '\n') continue;
      emit(['c1', text.slice(start, stop)]);
      inCommentSingle = false;
    } else if (inCommentMultiline) {
      if (c === '*') {
        expectingCommentCloser = true;
      } else if (expectingCommentCloser) {
        expectingCommentCloser = false;
        if (c === '/') {
          emit(['cm', text.slice(start, stop + 1)]);
          inCommentMultiline = false;
        }
      }
      continue;
    } else if (expectingCommentOpener) {
      expectingCommentOpener = false;
      if (c === '/') {
        inCommentSingle = true;
        continue;
      }
      if (c === '*') {
        inCommentMultiline = true;
        continue;
      }
      flush();
      out.push(['err', text.slice(start, stop)]);
    }
    start = stop;
    if (c === '"') {
      inString = true;
    } else if (WHITESPACE.has(c)) {
      inWhitespace = true;
    } else if (c === 'f' || c === 'n' || c === 't') {
      flush();
      inConstant = true;
    } else if (INTEGERS.has(c)) {
      flush();
      inNumber = true;
    } else if (c === ':') {
      for (const [cls, value] of queue) out.push([cls === 's2' ? 'nt' : cls, value]);
      queue = [];
      inPunctuation = true;
    } else if (PUNCTUATION.has(c)) {
      flush();
      inPunctuation = true;
    } else if (c === '/') {
      expectingCommentOpener = true;
    } else {
      flush();
      out.push(['err', c]);
    }
  }
  flush();
  const rest = text.slice(start);
  if (inString) out.push(['err', rest]);
  else if (inFloat) out.push(['mf', rest]);
  else if (inNumber) out.push(['mi', rest]);
  else if (inConstant) out.push(['kc', rest]);
  else if (inWhitespace) out.push(['w', rest]);
  else if (inPunctuation) out.push(['p', rest]);
  else if (inCommentSingle) out.push(['c1', rest]);
  else if (inCommentMultiline || expectingCommentOpener) out.push(['err', rest]);
}
