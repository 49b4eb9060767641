// The web client's files as the server serves them: content types, caching (immutable hashed
// names, a revalidated page with its ETag), compression, and the router's 404 for anything else.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { EMOJI_SET } from '../../src/http/emoji-images.ts';
import { attachWebClient, loadWebAssets } from '../../src/http/static.ts';
import uWS, { closeApp, listenExclusive } from '../../src/http/uws.ts';
import type { RunningServer } from '../../src/server.ts';
import { startTestServer } from '../helpers/server.ts';
import { buildWebClient } from '../helpers/web.ts';

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function raw(port: number, urlPath: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const test = suite<{ server: RunningServer; page: string; script: string; stylesheet: string }>('web-static', {} as never);

test.before(async (ctx) => {
  await buildWebClient();
  ctx.server = await startTestServer();
  ctx.page = (await raw(ctx.server.port, '/')).body.toString();
  ctx.script = /<script type="module" src="\/static\/([^"]+)"/.exec(ctx.page)![1]!;
  ctx.stylesheet = /<style data-from="\/static\/(base-[^"]+)"/.exec(ctx.page)![1]!;
});

test.after(async (ctx) => {
  await ctx.server?.stop();
});

test('/ is the page, revalidated by its ETag, with a content security policy', async ({ server, page }) => {
  const r = await raw(server.port, '/');
  assert.is(r.status, 200);
  assert.is(r.headers['content-type'], 'text/html; charset=utf-8');
  assert.is(r.headers['cache-control'], 'no-cache');
  assert.match(String(r.headers['content-security-policy']), "script-src 'self'");
  assert.is(r.headers['x-content-type-options'], 'nosniff');
  assert.match(page, '<div id="root">');
  const etag = r.headers.etag!;
  assert.match(etag, /^"[\w-]{22}"$/);
  const again = await raw(server.port, '/', { 'If-None-Match': etag });
  assert.is(again.status, 304);
  assert.is(again.body.length, 0);
  assert.is(again.headers.etag, etag);
  const changed = await raw(server.port, '/', { 'If-None-Match': '"something-else"' });
  assert.is(changed.status, 200);
});

test('HEAD answers the headers alone', async ({ server, page, script }) => {
  const r = await raw(server.port, '/', {}, 'HEAD');
  assert.is(r.status, 200);
  assert.is(r.headers['content-type'], 'text/html; charset=utf-8');
  assert.is(Number(r.headers['content-length']), Buffer.byteLength(page));
  assert.is(r.body.length, 0);
  const js = await raw(server.port, `/static/${script}`, { 'Accept-Encoding': 'gzip' }, 'HEAD');
  const gzip = await raw(server.port, `/static/${script}`, { 'Accept-Encoding': 'gzip' });
  assert.is(js.headers['content-encoding'], 'gzip');
  assert.is(Number(js.headers['content-length']), gzip.body.length);
  // The connection is still usable: nothing was sent after the headers.
  assert.is((await raw(server.port, '/')).status, 200);
});

test('hashed bundles are cached for good, and sent compressed to clients that accept it', async ({ server, script }) => {
  assert.match(script, /^app-[A-Z0-9]{8}\.js$/);
  const plain = await raw(server.port, `/static/${script}`);
  assert.is(plain.status, 200);
  assert.is(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.is(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.is(plain.headers['content-encoding'], undefined);
  assert.is(plain.headers.vary, 'Accept-Encoding');
  const br = await raw(server.port, `/static/${script}`, { 'Accept-Encoding': 'gzip, deflate, br' });
  assert.is(br.headers['content-encoding'], 'br');
  assert.ok(br.body.length < plain.body.length / 2);
  assert.equal(brotliDecompressSync(br.body), plain.body);
  const gzip = await raw(server.port, `/static/${script}`, { 'Accept-Encoding': 'gzip, br;q=0' });
  assert.is(gzip.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gzip.body), plain.body);
  assert.is(gzip.headers.etag, plain.headers.etag);
});

test('the stylesheets are in the page itself, so its first paint waits for no other file; their fonts are addressed from /static/', async ({
  server,
  page,
}) => {
  assert.not.match(page, /<link[^>]+stylesheet/);
  const inline = [...page.matchAll(/<style data-from="\/static\/([\w-]+\.css)">([^<]*)<\/style>/g)];
  assert.equal(
    inline.map(([, name]) => name!.replace(/-\w{8}\.css$/, '')),
    ['base', 'app'],
  );
  for (const [, name, css] of inline) {
    const file = (await raw(server.port, `/static/${name}`)).body.toString().trim();
    assert.is(
      css,
      file.replace(/url\("?\.\//g, (m) => m.replace('./', '/static/')),
    );
  }
  const font = /url\("(\/static\/fonts\/[^"]+\.woff2)"\)/.exec(page)![1]!;
  assert.is((await raw(server.port, font)).status, 200);
  // The page, stylesheets and all, is small on the wire.
  const br = await raw(server.port, '/', { 'Accept-Encoding': 'br' });
  assert.is(br.headers['content-encoding'], 'br');
  assert.ok(br.body.length < 12_000, `${br.body.length} bytes`);
});

test('KaTeX fonts are served locally as woff2', async ({ server, page }) => {
  const appCss = /data-from="\/static\/(app-[^"]+\.css)"/.exec(page)![1]!;
  const stylesheet = (await raw(server.port, `/static/${appCss}`)).body.toString();
  const fonts = [...stylesheet.matchAll(/url\("?\.\/(fonts\/[^")]+)"?\)/g)].map((m) => m[1]!);
  assert.ok(fonts.length >= 15, `${fonts.length} fonts`);
  assert.ok(fonts.every((f) => f.endsWith('.woff2')));
  const font = await raw(server.port, `/static/${fonts[0]}`);
  assert.is(font.status, 200);
  assert.is(font.headers['content-type'], 'font/woff2');
  assert.ok(font.body.subarray(0, 4).equals(Buffer.from('wOF2')));
});

test('/static/base.css, the stylesheet other pages share, keeps its name and is revalidated', async ({ server, stylesheet }) => {
  const stable = await raw(server.port, '/static/base.css');
  assert.is(stable.status, 200);
  assert.is(stable.headers['content-type'], 'text/css; charset=utf-8');
  assert.is(stable.headers['cache-control'], 'no-cache');
  const hashed = await raw(server.port, `/static/${stylesheet}`);
  assert.equal(stable.body, hashed.body);
  assert.is((await raw(server.port, '/static/base.css', { 'If-None-Match': stable.headers.etag! })).status, 304);
});

test("Zulip's emoji images, one file per emoji code, cached for good; the page's scripts name the same set", async ({ server, page }) => {
  const scripts = [...page.matchAll(/\/static\/[\w-]+\.js/g)].map(([name]) => name);
  const bundle = (await Promise.all(scripts.map(async (name) => (await raw(server.port, name)).body.toString()))).join('\n');
  const base = /\/static\/emoji\/google-[\d.]+\//.exec(bundle)?.[0];
  assert.ok(base, 'the bundle names where the images are');
  assert.is(base, `/static/emoji/${EMOJI_SET}/`);
  // 2764 (heart) is stored as 2764-fe0f.png: codes are Zulip's, without U+FE0F.
  for (const code of ['1f389', '2764', '1f1e9-1f1ea']) {
    const r = await raw(server.port, `${base}${code}.png`);
    assert.is(r.status, 200, code);
    assert.is(r.headers['content-type'], 'image/png');
    assert.is(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal([...r.body.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  }
  for (const p of [`${base}fffff.png`, `${base}1f389.gif`, `${base}..%2Fpackage.json`, '/static/emoji/google-1.0.0/1f389.png']) {
    const r = await raw(server.port, p);
    assert.is(r.status, 404, p);
  }
});

test('other paths under /static/ get the API router 404', async ({ server }) => {
  for (const p of ['/static/nothing.js', '/static/', '/static/stable-names.json', '/static/../package.json']) {
    const r = await raw(server.port, p);
    assert.is(r.status, 404, p);
    assert.equal(JSON.parse(r.body.toString()), { result: 'error', msg: 'Not Found', code: 'NOT_FOUND' }, p);
  }
});

test('without a build, / says how to make one', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'web-'));
  writeFileSync(path.join(dir, 'index.html'), '<p>');
  const assets = loadWebAssets(dir);
  assert.is(assets, null, 'a build is marked by its stable-names.json');
  const app = uWS.App();
  attachWebClient(app, assets);
  const port = await new Promise<number>((resolve, reject) =>
    listenExclusive(app, '127.0.0.1', 0, (s) => (s ? resolve(uWS.us_socket_local_port(s)) : reject(new Error('listen')))),
  );
  try {
    const r = await raw(port, '/');
    assert.is(r.status, 503);
    assert.is(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(r.body.toString(), 'npm run build');
  } finally {
    closeApp(app);
    rmSync(dir, { recursive: true });
  }
});

test.run();
