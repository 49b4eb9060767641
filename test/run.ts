// Runs the test files in one process (so they share one server and PostgreSQL), then prints the
// closing line CI reads: `N passed, N failed, N skipped`. A file that fails to load counts as a
// failure, which uvu alone would not report. `--shard K/N` runs the K-th of N parts of the files,
// split by their recorded durations (test/durations.json), so that scripts/run-tests.mjs can run
// the parts side by side.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCheck } from './helpers/openapi-check.ts';
import { endTestRun } from './helpers/server.ts';
import { shardOf } from './lib/shards.ts';

// A hung run ends here rather than at CI's limit; a shard of the suite takes about 7 minutes on a quiet 2-core machine.
const WATCHDOG_MS = 14 * 60_000;
const args = process.argv.slice(2);
const shardArg = args.indexOf('--shard');
const shard = shardArg >= 0 ? args.splice(shardArg, 2)[1] : undefined;
const filter = args[0] ? new RegExp(args[0]) : null;
const dir = path.dirname(new URL(import.meta.url).pathname);
const durationsFile = path.join(dir, 'durations.json');
const allFiles = readdirSync(dir, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts') && (!filter || filter.test(f)))
  .sort();
const files = shard ? shardOf(allFiles, shard, readDurations()) : allFiles;

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(durationsFile, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

const globals = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: unknown[][] };
globals.UVU_DEFER = 1;
globals.UVU_QUEUE = [];
const uvu = await import('uvu');

let loadFailures = 0;
for (const [index, file] of files.entries()) {
  globals.UVU_INDEX = index;
  globals.UVU_QUEUE.push([file]);
  try {
    await import(pathToFileURL(path.join(dir, file)).href);
  } catch (err) {
    loadFailures++;
    process.stdout.write(`\nFAILED TO LOAD ${file}: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
}

const watchdog = setTimeout(() => {
  saveDurations();
  process.stdout.write(`\nTest run exceeded ${WATCHDOG_MS / 60000} minutes\n0 passed, 1 failed, 0 skipped\n`);
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();
// Stopped from outside, the run still exits through process.exit, whose handlers drop its scratch databases.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(1));

// uvu prints its totals but returns nothing, so read them from what it writes; it names each file
// as it starts it, which times the files for the next split.
let output = '';
const started = new Map<string, number>();
let next = 0;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = String(chunk);
  output += text;
  if (next < files.length && text.includes(files[next])) started.set(files[next++], performance.now());
  return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;
let ended: number | undefined;
await uvu.exec(false);
process.stdout.write = write;
ended = performance.now();

await endTestRun();
// Answers that do not conform to the OpenAPI document fail the run, whichever test got them.
const violations = runCheck.violations();
for (const { problem, body } of violations) process.stdout.write(`\nOPENAPI VIOLATION ${problem}\n  body: ${body}\n`);
process.stdout.write(`${runCheck.checked} success answers and WebSocket frames checked against the OpenAPI document, ${violations.length} not conforming\n`);
saveDurations();
const total = Number(/Total:\s+(\d+)/.exec(output)?.[1] ?? NaN);
const passed = Number(/Passed:\s+(?:\x1b\[\d+m)?(\d+)/.exec(output)?.[1] ?? NaN);
const skipped = Number(/Skipped:\s+(?:\x1b\[\d+m)?(\d+)/.exec(output)?.[1] ?? 0);
const summaryMissing = Number.isNaN(total) || Number.isNaN(passed);
const failed = (summaryMissing ? 1 : total - passed) + loadFailures + violations.length;
process.stdout.write(`${summaryMissing ? 0 : passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(failed > 0 ? 1 : 0);

/** Writes each started file's time in seconds (from its start to the next file's, or the end) where run-tests.mjs asked. */
function saveDurations(): void {
  if (!process.env.TEST_DURATIONS_OUT) return;
  const times = [...started.entries()];
  const end = ended ?? performance.now();
  const seconds = times.map(([file, at], i) => [file, Math.round(((times[i + 1]?.[1] ?? end) - at) / 100) / 10]);
  writeFileSync(process.env.TEST_DURATIONS_OUT, JSON.stringify(Object.fromEntries(seconds)));
}
