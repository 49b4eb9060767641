// Bundles the server (src/main.ts and everything it imports, npm packages left as imports) into
// build/main.mjs (and build/chunks/ for what it imports lazily) for `npm start`: a running server
// then carries neither the tsx loader's worker nor the compiled copy of every module it keeps
// (about 40 MB of the idle RSS). Takes well under a second, so `npm start` rebuilds every time;
// tests and the CLI run the sources through tsx.
// No source map: Node's --enable-source-maps would hold it in memory (another 40-50 MB), and the
// bundle keeps names and marks each module's start, so a stack trace still reads.
// It builds the web client too (scripts/build-web.mjs), which the server serves at `/`.
// `npm start` also sets glibc's malloc to two arenas that return freed memory early: without
// that, memory freed after start-up on Node's other threads stays mapped (measured: about 40 MB).
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What the bundles are made of, and what they are: a bundle older than a source is stale. */
const SOURCES = ['src', 'web', 'packages', 'package.json', 'scripts/build.mjs', 'scripts/build-web.mjs'];
const OUTPUTS = ['build/main.mjs', 'build/web/index.html'];

function newestMtime(file) {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(file).reduce((newest, name) => Math.max(newest, newestMtime(path.join(file, name))), stat.mtimeMs);
}

function upToDate() {
  try {
    return Math.min(...OUTPUTS.map((f) => statSync(f).mtimeMs)) >= Math.max(...SOURCES.map(newestMtime));
  } catch (err) {
    if (err.code === 'ENOENT') return false;
    throw err;
  }
}

if (process.argv.includes('--if-stale') && upToDate()) process.exit(0);
// Loaded only now: the check above is all a restart with nothing to build pays.
const { build } = await import('esbuild');
const { buildWeb } = await import('./build-web.mjs');

// npm packages stay imports, resolved by Node at run time, except those whose entry is JSON
// (tlds): Node's ESM loader would want an import attribute for them, so they are inlined.
const JSON_PACKAGES = ['tlds'];
const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8'));
const external = Object.keys(dependencies).filter((name) => !JSON_PACKAGES.includes(name));

// Prisma's client loads its query compiler from a module holding the WebAssembly as one base64
// string literal, which V8 then keeps twice for the life of the process (the module's source and
// the string: 9 MB of heap). The bundle reads the binary from build/ instead.
const PRISMA_WASM = 'build/query-compiler.wasm';
const WASM_IMPORT = /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/[^"]+\.wasm-base64\.mjs)"\)\s*return await decodeBase64AsWasm\(wasm\)/;
const prismaWasmFromFile = {
  name: 'prisma-wasm-from-file',
  setup(bundler) {
    bundler.onLoad({ filter: /db[\\/]generated[\\/]internal[\\/]class\.ts$/ }, async (file) => {
      const source = readFileSync(file.path, 'utf8');
      const found = WASM_IMPORT.exec(source);
      if (!found) throw new Error(`${file.path}: Prisma's query compiler import changed; update scripts/build.mjs`);
      const { wasm } = await import(found[1]);
      mkdirSync('build', { recursive: true });
      writeFileSync(PRISMA_WASM, Buffer.from(wasm, 'base64'));
      const paths = JSON.stringify(path.resolve('src/paths.ts'));
      const read = `const { readFile } = await import('node:fs/promises');
    const { PROJECT_ROOT } = await import(${paths});
    return new WebAssembly.Module(await readFile(PROJECT_ROOT + '/${PRISMA_WASM}'))`;
      return { contents: source.replace(WASM_IMPORT, read), loader: 'ts' };
    });
  },
};

// Chunk names carry a hash: the last build's would otherwise pile up beside the new ones.
rmSync('build/chunks', { recursive: true, force: true });

// Split where the code imports a module lazily: the cluster's side (and NATS's client with it) is
// a chunk of its own, loaded only by a node of a cluster.
await build({
  entryPoints: ['src/main.ts'],
  outdir: 'build',
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: [...external, ...external.map((name) => `${name}/*`)],
  logLevel: 'warning',
  plugins: [prismaWasmFromFile],
});

await buildWeb();
