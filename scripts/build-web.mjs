// Bundles the web client (web/) into build/web/, which the server serves at `/` (src/http/static.ts):
// the Preact app and its stylesheet, the shared stylesheet that server-rendered pages link too,
// and KaTeX's fonts, every file named by its content hash so browsers may cache it for good;
// index.html names them and is the one file revalidated. The two stylesheets are written into
// index.html itself (<style data-from="/static/...">, their relative font addresses made absolute),
// so the first paint waits for no other file: the page is revalidated by its ETag anyway, and
// comes back 304 while the build is the same. Text files get .gz and .br twins made
// here, once, so the server compresses nothing at run time. Run by scripts/build.mjs (`npm install`,
// and `npm start` when a source changed); takes about a second.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_OUT_DIR = path.join(ROOT, 'build', 'web');
const COMPRESSIBLE = /\.(js|css|html|svg)$/;
// The emoji images the server serves (src/http/emoji-images.ts), named by the package's version.
const EMOJI_IMAGES = `/static/emoji/google-${createRequire(import.meta.url)('emoji-datasource-google/package.json').version}/`;

// KaTeX's stylesheet offers each font as woff2, woff and ttf; every browser the client runs in
// reads woff2, so only those are bundled (a third of the files).
const woff2Only = {
  name: 'katex-woff2-only',
  setup(b) {
    b.onLoad({ filter: /katex[\\/]dist[\\/]katex\.css$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replace(/,\s*url\([^)]+\.woff\) format\("woff"\),\s*url\([^)]+\.ttf\) format\("truetype"\)/g, ''),
      loader: 'css',
    }));
  },
};

function compress(file) {
  const data = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
  writeFileSync(`${file}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
}

/** Builds into a scratch directory and swaps it in, so a server starting meanwhile never reads half a build. */
export async function buildWeb() {
  const scratch = `${WEB_OUT_DIR}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: 'web/src/main.tsx', base: 'web/styles/base.css' },
    outdir: scratch,
    entryNames: '[name]-[hash]',
    assetNames: 'fonts/[name]-[hash]',
    bundle: true,
    format: 'esm',
    // Parts imported lazily (the channels overlay) become chunks fetched when first used.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { __EMOJI_IMAGES__: JSON.stringify(EMOJI_IMAGES) },
    loader: { '.woff2': 'file' },
    minify: true,
    sourcemap: 'linked',
    metafile: true,
    plugins: [woff2Only],
    logLevel: 'warning',
  });
  const outputs = result.metafile.outputs;
  const relative = (file) => path.relative(scratch, path.resolve(ROOT, file));
  const outputOf = (entry) => {
    const file = Object.keys(outputs).find((f) => outputs[f].entryPoint === entry);
    if (!file) throw new Error(`no output for ${entry}`);
    return file;
  };
  const appJs = outputOf('web/src/main.tsx');
  const names = { 'base.css': relative(outputOf('web/styles/base.css')), 'app.css': relative(outputs[appJs].cssBundle), 'app.js': relative(appJs) };
  // The chunks the app imports at once are fetched beside it, not after it.
  const preloads = outputs[appJs].imports
    .filter((i) => i.kind === 'import-statement')
    .map((i) => `<link rel="modulepreload" href="/static/${relative(i.path)}">`);
  const inline = (name) => {
    const css = readFileSync(path.join(scratch, names[name]), 'utf8').replace(/url\("?\.\//g, (m) => m.replace('./', '/static/'));
    if (css.includes('</style')) throw new Error(`${name} cannot be inlined`);
    return `<style data-from="/static/${names[name]}">${css.trim()}</style>`;
  };
  const html = readFileSync(path.join(ROOT, 'web', 'index.html'), 'utf8')
    .replace('{{preloads}}', preloads.join('\n'))
    .replace(/\{\{inline:([\w.]+)\}\}/g, (_, name) => inline(name))
    .replace(/\{\{([\w.]+)\}\}/g, (_, name) => `/static/${names[name]}`);
  writeFileSync(path.join(scratch, 'index.html'), html);
  // The stylesheet server-rendered pages link keeps a name they can write down: /static/base.css.
  writeFileSync(path.join(scratch, 'stable-names.json'), JSON.stringify({ 'base.css': names['base.css'] }));
  for (const file of [...Object.keys(outputs).map((f) => path.resolve(ROOT, f)), path.join(scratch, 'index.html')]) if (COMPRESSIBLE.test(file)) compress(file);
  mkdirSync(path.dirname(WEB_OUT_DIR), { recursive: true });
  const old = `${WEB_OUT_DIR}.old-${process.pid}`;
  if (existsSync(WEB_OUT_DIR)) renameSync(WEB_OUT_DIR, old);
  renameSync(scratch, WEB_OUT_DIR);
  rmSync(old, { recursive: true, force: true });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildWeb();
