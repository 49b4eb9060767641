// Zulip's render_tex: KaTeX to HTML+MathML, or null when the TeX does not parse.
import { createRequire } from 'node:module';

// Loaded at the first formula rather than at start: KaTeX holds about 10 MB that a server whose
// users write no math never needs.
let katex: typeof import('katex').default | undefined;
const loadKatex = () => (katex ??= createRequire(import.meta.url)('katex') as typeof import('katex').default);

const cache = new Map<string, string | null>();
const CACHE_LIMIT = 1000;

export function renderTex(tex: string, isInline: boolean): string | null {
  const key = (isInline ? 'i' : 'd') + tex;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let html: string | null;
  try {
    html = loadKatex().renderToString(tex, { displayMode: !isInline, throwOnError: true, trust: false, maxExpand: 1000, maxSize: 100 });
  } catch {
    // A TeX syntax error is shown to the reader as the source text, as Zulip does.
    html = null;
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, html);
  return html;
}

/** Django's escape(), used for the fenced-math error message. */
export function djangoEscape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}
