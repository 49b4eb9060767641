// The few pages this server renders itself (registration through invitation links): one small
// layout and stylesheet, every interpolated value escaped, and headers that keep the pages inert
// (no scripts at all, no framing, no referrer that would carry a link's secret elsewhere).
import { createHash } from 'node:crypto';
import { RawResponse } from '../http/route.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** HTML built from escaped parts; only `html` marks a string as markup. */
export class Html {
  constructor(readonly markup: string) {}
}

/** A template literal whose values are escaped unless they are Html already. */
export function html(strings: TemplateStringsArray, ...values: (string | number | Html | Html[])[]): Html {
  const part = (v: string | number | Html | Html[]): string =>
    Array.isArray(v) ? v.map(part).join('') : v instanceof Html ? v.markup : escapeHtml(String(v));
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? part(values[i]!) : ''), ''));
}

const STYLE = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f4f5f7; color: #1f2328; }
main { box-sizing: border-box; width: min(26rem, 100% - 2rem); margin: 2rem 0; padding: 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 4px #0002; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
label { display: block; margin: 1rem 0 0.25rem; font-weight: 600; }
input { box-sizing: border-box; width: 100%; padding: 0.55rem 0.7rem; border: 1px solid #c8ccd1; border-radius: 6px; font: inherit; }
button { margin-top: 1.5rem; width: 100%; padding: 0.65rem; border: 0; border-radius: 6px; background: #2f6fdb; color: #fff; font: inherit; font-weight: 600; cursor: pointer; }
.muted { color: #59636e; }
.error { padding: 0.6rem 0.8rem; border-radius: 6px; background: #fdecea; color: #a4161a; }
@media (prefers-color-scheme: dark) {
  body { background: #16181c; color: #e6e8eb; }
  main { background: #202329; box-shadow: none; }
  input { background: #16181c; color: inherit; border-color: #3c414a; }
  .muted { color: #9aa3ad; }
  .error { background: #3d1c1e; color: #ffb4b0; }
}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** A whole page: `title` in the tab and as its heading, `body` below it. */
export function page(status: number, title: string, body: Html, headers: Record<string, string> = {}): RawResponse {
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
  return new RawResponse(status, { ...HEADERS, ...headers }, doc.markup);
}
