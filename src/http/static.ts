// The web client's files (built into build/web by scripts/build-web.mjs), served from memory:
// `/` is index.html, revalidated on every visit (ETag, `no-cache`), and `/static/<name>-<hash>.<ext>`
// are the bundles and fonts it names, cached for good since a new build gives them new names.
// `/static/base.css`, the look server-rendered pages share, keeps its name and is revalidated.
// Compressed twins made by the build are sent to clients that accept them.
import { acceptedEncodings } from './compression.ts';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type uWS from 'uWebSockets.js';
import { attachEmojiImages } from './emoji-images.ts';
import { statusLine } from './exchange.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

// The page runs only its own script; KaTeX's output carries inline style attributes.
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'same-origin',
};

interface StaticFile {
  type: string;
  etag: string;
  cacheControl: string;
  /** Keyed by Content-Encoding; '' is the file as it is. */
  bodies: Map<string, Buffer>;
}

export interface WebAssets {
  index: StaticFile;
  /** By path under /static/. */
  files: Map<string, StaticFile>;
}

function loadFile(dir: string, name: string, cacheControl: string): StaticFile {
  const full = path.join(dir, name);
  const body = readFileSync(full);
  const bodies = new Map([['', body]]);
  for (const [encoding, ext] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ] as const)
    if (existsSync(full + ext)) bodies.set(encoding, readFileSync(full + ext));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { type: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream', etag, cacheControl, bodies };
}

/** Reads a build into memory; null when there is none (the client was never built). */
export function loadWebAssets(dir: string): WebAssets | null {
  const manifestPath = path.join(dir, 'stable-names.json');
  if (!existsSync(manifestPath)) return null;
  const files = new Map<string, StaticFile>();
  for (const entry of readdirSync(dir, { recursive: true })) {
    const name = String(entry).split(path.sep).join('/');
    if (!(path.extname(name) in CONTENT_TYPES) || name === 'index.html' || name === 'stable-names.json') continue;
    files.set(name, loadFile(dir, name, IMMUTABLE));
  }
  const stableNames = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, string>;
  for (const [stable, hashed] of Object.entries(stableNames)) files.set(stable, { ...files.get(hashed)!, cacheControl: 'no-cache' });
  return { index: loadFile(dir, 'index.html', 'no-cache'), files };
}

/**
 * Answers GET, and HEAD with the same headers and no body. (This uWS build aborts the process on
 * `endWithoutBody(length)`, so the length of a HEAD answer is written as a header.)
 */
function send(res: uWS.HttpResponse, req: uWS.HttpRequest, file: StaticFile, extraHeaders: Readonly<Record<string, string>>): void {
  const head = req.getCaseSensitiveMethod() === 'HEAD';
  const notModified = req
    .getHeader('if-none-match')
    .split(',')
    .some((tag) => tag.trim() === file.etag);
  const accepted = acceptedEncodings(req.getHeader('accept-encoding'));
  const encoding = ['br', 'gzip'].find((e) => accepted.has(e) && file.bodies.has(e)) ?? '';
  const body = file.bodies.get(encoding)!;
  res.cork(() => {
    res.writeStatus(statusLine(notModified ? 304 : 200));
    res.writeHeader('ETag', file.etag);
    res.writeHeader('Cache-Control', file.cacheControl);
    res.writeHeader('Vary', 'Accept-Encoding');
    res.writeHeader('X-Content-Type-Options', 'nosniff');
    for (const k in extraHeaders) res.writeHeader(k, extraHeaders[k]!);
    if (notModified) {
      res.endWithoutBody();
      return;
    }
    res.writeHeader('Content-Type', file.type);
    if (encoding) res.writeHeader('Content-Encoding', encoding);
    if (!head) {
      res.end(body);
      return;
    }
    res.writeHeader('Content-Length', String(body.length));
    res.endWithoutBody();
  });
}

const NOT_BUILT = 'The web client is not built. Run `npm run build` (npm install and npm start do it too), then restart the server.\n';

/** Mounts `/`, `/static/*` and the emoji images; paths under /static/ that name no file go on to the router's 404. */
export function attachWebClient(uws: uWS.TemplatedApp, assets: WebAssets | null): void {
  attachEmojiImages(uws);
  for (const mount of [uws.get.bind(uws), uws.head.bind(uws)]) {
    mount('/', (res, req) => {
      if (assets) return send(res, req, assets.index, PAGE_HEADERS);
      const head = req.getCaseSensitiveMethod() === 'HEAD';
      res.cork(() => {
        res.writeStatus(statusLine(503)).writeHeader('Content-Type', 'text/plain; charset=utf-8');
        if (head) res.writeHeader('Content-Length', String(Buffer.byteLength(NOT_BUILT))).endWithoutBody();
        else res.end(NOT_BUILT);
      });
    });
    mount('/static/*', (res, req) => {
      const file = assets?.files.get(req.getUrl().slice('/static/'.length));
      if (!file) {
        req.setYield(true);
        return;
      }
      send(res, req, file, {});
    });
  }
}
