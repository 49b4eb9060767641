// The few pages this server renders itself (logging in, registration through invitation links): one small
// layout and stylesheet, every interpolated value escaped, and headers that keep the pages inert
// (no scripts at all, no framing, no referrer that would carry a link's secret elsewhere). They share
// the web client's stylesheet.
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
  const part = (v: string | number | Html | Html[]): string => (Array.isArray(v) ? v.map(part).join('') : v instanceof Html ? v.markup : escapeHtml(String(v)));
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? part(values[i]!) : ''), ''));
}

// The look is the web client's (web/styles/base.css, served as /static/base.css: colours, type,
// light and dark); this only lays the one-card page out with its variables.
const STYLE = `
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--text); font-family: var(--font); line-height: 1.5; }
main { box-sizing: border-box; width: min(26rem, 100% - 2rem); margin: 2rem 0; padding: 2rem; background: var(--surface); border-radius: var(--radius); box-shadow: var(--shadow); }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
label { display: block; margin: 1rem 0 0.25rem; font-weight: 600; }
input { box-sizing: border-box; width: 100%; padding: 0.55rem 0.7rem; border: 1px solid var(--border); border-radius: var(--radius); background: var(--surface); color: inherit; font: inherit; }
button { margin-top: 1.5rem; width: 100%; padding: 0.65rem; border: 0; border-radius: var(--radius); background: var(--accent); color: var(--accent-text); font: inherit; font-weight: 600; cursor: pointer; }
.muted { color: var(--text-muted); }
code { word-break: break-all; }
dt { margin-top: 1.25rem; font-weight: 600; }
dd { margin: 0.25rem 0 0; }
.sso { display: block; margin-top: 0.75rem; padding: 0.6rem; border: 1px solid var(--border); border-radius: var(--radius); color: inherit; text-align: center; text-decoration: none; font-weight: 600; }
.or { margin: 1.25rem 0 0; text-align: center; color: var(--text-muted); }
.error { padding: 0.6rem 0.8rem; border-radius: var(--radius); background: var(--danger-soft); color: var(--danger); }`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** `formTargets`: where a form may send the browser besides here (a login form's redirect to an app's zulip:// address). */
export const contentSecurityPolicy = (formTargets = '') =>
  `default-src 'none'; style-src 'self' 'sha256-${STYLE_HASH}'; form-action 'self'${formTargets}; frame-ancestors 'none'; base-uri 'none'`;

const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': contentSecurityPolicy(),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** A whole page: `title` in the tab and as its heading, `body` below it. */
export function page(status: number, title: string, body: Html, headers: Record<string, string> = {}, cookies: string[] = []): RawResponse {
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="/static/base.css">
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
  return new RawResponse(status, { ...HEADERS, ...headers }, doc.markup, cookies);
}
