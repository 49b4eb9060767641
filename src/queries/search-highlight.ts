// The match_content and match_subject of search results (Zulip's get_search_fields and
// highlight_string): the rendered content and the HTML-escaped topic with every word the search
// matched wrapped in <span class="highlight">. Matching happens on the text between tags, with
// entities decoded, so a highlight never cuts a tag or an entity in two. Our search matches
// substrings; a highlight covers the whole word around each match, as Zulip's full-text search
// highlights whole words.
import { djangoEscape } from '../markdown/tex.ts';
import { CANONICAL_OPERATORS, searchWords, type NarrowTerm } from './narrow.ts';

const START = '<span class="highlight">';
const STOP = '</span>';
const ENTITY = /&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/iy;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const WORD = /[\p{L}\p{N}_]/u;

/** The words and phrases of the narrow's search terms; null when the narrow is no search. */
export function searchTermsOf(narrow: readonly NarrowTerm[]): string[] | null {
  const terms = narrow.filter((t) => (CANONICAL_OPERATORS[t.operator] ?? t.operator) === 'search');
  if (terms.length === 0) return null;
  return terms.filter((t) => !t.negated).flatMap((t) => searchWords(String(t.operand)));
}

/** The text between tags, entities decoded, each character with the span of HTML it came from. */
function decodedText(html: string): { text: string; from: number[]; to: number[] } {
  let text = '';
  const from: number[] = [];
  const to: number[] = [];
  let i = 0;
  while (i < html.length) {
    if (html[i] === '<') {
      const close = html.indexOf('>', i);
      i = close === -1 ? html.length : close + 1;
      // A tag separates words: a match never runs across one.
      text += '\0';
      from.push(i);
      to.push(i);
      continue;
    }
    ENTITY.lastIndex = i;
    const entity = html[i] === '&' ? ENTITY.exec(html) : null;
    const ch = entity ? decodeEntity(entity[1]!) : String.fromCodePoint(html.codePointAt(i)!);
    const length = entity ? entity[0].length : ch.length;
    for (const unit of ch.split('')) {
      text += unit;
      from.push(i);
      to.push(i + length);
    }
    i += length;
  }
  return { text, from, to };
}

function decodeEntity(body: string): string {
  if (body[0] !== '#') return NAMED[body.toLowerCase()]!;
  const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD';
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Spans of `html` to highlight: each match widened to its whole words, merged, in order. */
function matchSpans(html: string, terms: string[]): [number, number][] {
  if (terms.length === 0) return [];
  const { text, from, to } = decodedText(html);
  const spans: [number, number][] = [];
  for (const term of terms) {
    const re = new RegExp(escapeRegExp(term), 'giu');
    for (const m of text.matchAll(re)) {
      if (m[0].length === 0) continue;
      let start = m.index!;
      let end = start + m[0].length;
      while (start > 0 && WORD.test(text[start - 1]!)) start--;
      while (end < text.length && WORD.test(text[end]!)) end++;
      spans.push([from[start]!, to[end - 1]!]);
    }
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const s of spans) {
    const last = merged.at(-1);
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else merged.push([...s]);
  }
  return merged;
}

/** `html` with the search's words highlighted. */
export function highlightHtml(html: string, terms: string[]): string {
  let out = '';
  let pos = 0;
  for (const [start, end] of matchSpans(html, terms)) {
    out += html.slice(pos, start) + START + html.slice(start, end) + STOP;
    pos = end;
  }
  return out + html.slice(pos);
}

/** A search result's match_content and match_subject. */
export function searchFields(renderedContent: string, topic: string, terms: string[]): { match_content: string; match_subject: string } {
  return { match_content: highlightHtml(renderedContent, terms), match_subject: highlightHtml(djangoEscape(topic), terms) };
}
