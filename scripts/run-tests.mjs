// `npm test`: the uvu suite through tsx (see test/run.ts), with any filter passed along. The whole
// suite runs as TEST_SHARDS processes side by side (2 unless set; a filter runs in one), each on
// its own server and scratch databases; their closing lines add up to the one CI reads.
// `npm test -- --update-durations` rewrites test/durations.json, the files' times the split uses.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const updateDurations = args.includes('--update-durations');
const filter = args.filter((a) => a !== '--update-durations');
const shards = Number(process.env.TEST_SHARDS ?? (filter.length ? 1 : 2));

if (!(shards >= 1)) throw new Error(`TEST_SHARDS must be a positive number, not ${process.env.TEST_SHARDS}`);
const dir = mkdtempSync(path.join(tmpdir(), 'test-shards-'));
const children = [];
const runs = Array.from({ length: shards }, (_, i) => run(i + 1));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => children.forEach((c) => c.kill(signal)));
const results = await Promise.all(runs);
if (shards === 1) finish(results, results[0].code);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const r of results) {
  const closing = [...r.output.matchAll(/^(\d+) passed, (\d+) failed, (\d+) skipped$/gm)].at(-1);
  if (closing) {
    passed += Number(closing[1]);
    failed += Number(closing[2]);
    skipped += Number(closing[3]);
  } else failed += 1;
  if (r.code !== 0 && closing && Number(closing[2]) === 0) failed += 1;
}
process.stdout.write(`\nAll ${shards} parts:\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
finish(results, failed > 0 ? 1 : 0);

/** Keeps the files' times if asked, and exits. */
function finish(results, code) {
  const durations = {};
  for (const r of results) {
    try {
      Object.assign(durations, JSON.parse(readFileSync(r.durationsFile, 'utf8')));
    } catch {}
  }
  if (updateDurations) writeFileSync('test/durations.json', `${JSON.stringify(sortedKeys(durations), null, 2)}\n`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}

/** Runs part `k`; with one part its output streams, with several each part's shows whole when it ends. */
function run(k) {
  const durationsFile = path.join(dir, `durations-${k}.json`);
  const shardArgs = shards > 1 ? ['--shard', `${k}/${shards}`] : [];
  const child = spawn('npx', ['tsx', 'test/run.ts', ...filter, ...shardArgs], {
    stdio: ['ignore', shards > 1 ? 'pipe' : 'inherit', 'inherit'],
    env: { ...process.env, TEST_DURATIONS_OUT: durationsFile },
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      // The part's own closing line is named as the part's, so that the last such line is the whole run's.
      const shown = output.replace(/^\d+ passed, \d+ failed, \d+ skipped$/gm, (line) => `part ${k}: ${line}`);
      if (shards > 1) process.stdout.write(`\n===== part ${k} of ${shards} (exit ${code}) =====\n${shown}`);
      resolve({ code: code ?? 1, output: shards > 1 ? output : '', durationsFile });
    });
  });
}

function sortedKeys(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
}
