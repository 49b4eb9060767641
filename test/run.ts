// Runs every test file in one process (so they share one server and PostgreSQL), then
// prints the closing line CI reads: `N passed, N failed`. A file that fails to load counts as a
// failure, which uvu alone would not report.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCheck } from './helpers/openapi-check.ts';
import { endTestRun } from './helpers/server.ts';

// A hung run ends here rather than at CI's limit; the suite takes about 10 minutes on a quiet 2-core machine.
const WATCHDOG_MS = 14 * 60_000;
const filter = process.argv[2] ? new RegExp(process.argv[2]) : null;
const dir = path.dirname(new URL(import.meta.url).pathname);
const files = readdirSync(dir, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts') && (!filter || filter.test(f)))
  .sort();

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
  process.stdout.write(`\nTest run exceeded ${WATCHDOG_MS / 60000} minutes\n0 passed, 1 failed\n`);
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();
// Stopped from outside, the run still exits through process.exit, whose handlers drop its scratch databases.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(1));

// uvu prints its totals but returns nothing, so read them from what it writes.
let output = '';
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  output += String(chunk);
  return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;
await uvu.exec(false);
process.stdout.write = write;

await endTestRun();
// Answers that do not conform to the OpenAPI document fail the run, whichever test got them.
const violations = runCheck.violations();
for (const { problem, body } of violations) process.stdout.write(`\nOPENAPI VIOLATION ${problem}\n  body: ${body}\n`);
process.stdout.write(`${runCheck.checked} success answers and WebSocket frames checked against the OpenAPI document, ${violations.length} not conforming\n`);
const total = Number(/Total:\s+(\d+)/.exec(output)?.[1] ?? NaN);
const passed = Number(/Passed:\s+(?:\x1b\[\d+m)?(\d+)/.exec(output)?.[1] ?? NaN);
const skipped = Number(/Skipped:\s+(?:\x1b\[\d+m)?(\d+)/.exec(output)?.[1] ?? 0);
const summaryMissing = Number.isNaN(total) || Number.isNaN(passed);
const failed = (summaryMissing ? 1 : total - passed) + loadFailures + violations.length;
process.stdout.write(`${summaryMissing ? 0 : passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(failed > 0 ? 1 : 0);
