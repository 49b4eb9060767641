// npm run bench -- <scenario> [--self | --url URL --email E --api-key K] [options]
// The load generator runs in this process; every server it measures is a child process.
import { FD_MARGIN, openFileLimit, parseOptions, type BenchOptions } from './lib/options.ts';
import { describeMachine, machineFacts, renderTables, writeReport } from './lib/report.ts';
import type { CaseResult } from './lib/results.ts';
import { serverProblems, tearDownEarly } from './lib/server-process.ts';
import { baselineScenario, fanoutScenario } from './scenarios/fanout.ts';
import { renderScenario } from './scenarios/render.ts';
import { sendScenario } from './scenarios/send.ts';
import { flagsScenario, reactScenario } from './scenarios/reactions-flags.ts';
import { mixedScenario } from './scenarios/mixed.ts';
import { clusterScenario } from './scenarios/cluster.ts';
import { clusterKillScenario } from './scenarios/cluster-kill.ts';
import { idleScenario } from './scenarios/idle.ts';
import { historyScenario } from './scenarios/history.ts';
import { capacityScenario } from './scenarios/capacity.ts';

/** How long an early stop waits for what it must undo (stopping a cluster, removing its stream). */
const EARLY_TEARDOWN_MS = 15_000;

function run(opts: BenchOptions): Promise<CaseResult[]> {
  switch (opts.scenario) {
    case 'longpoll-fanout':
      return fanoutScenario(opts, 'longpoll');
    case 'ws-fanout':
      return fanoutScenario(opts, 'ws');
    case 'send':
      return sendScenario(opts);
    case 'react':
      return reactScenario(opts);
    case 'flags':
      return flagsScenario(opts);
    case 'mixed':
      return mixedScenario(opts);
    case 'cluster':
      return opts.kill ? clusterKillScenario(opts) : clusterScenario(opts);
    case 'idle':
      return idleScenario(opts);
    case 'baseline':
      return baselineScenario(opts);
    case 'render':
      return renderScenario(opts);
    case 'history':
      return historyScenario(opts);
    case 'capacity':
      return capacityScenario(opts);
  }
}

/**
 * Each client connection is a file descriptor here; fail before connecting rather than halfway.
 * (idle sizes its connection count to the limit itself, its queues need no descriptor; capacity
 * leaves out the steps above it.)
 */
function checkFileLimit(opts: BenchOptions): void {
  if (opts.scenario === 'idle' || opts.scenario === 'capacity') return;
  const needed = (opts.scenario === 'mixed' ? opts.counts[1]! + opts.counts[2]! : Math.max(0, ...opts.counts)) + FD_MARGIN;
  const limit = openFileLimit();
  if (needed > limit) throw new Error(`${needed} file descriptors needed, the limit is ${limit} (ulimit -n): lower --queues`);
}

/** Results are files people share: they must not carry the API key. */
function redactApiKey(args: string[]): string[] {
  return args.map((arg, i) => (args[i - 1] === '--api-key' ? '***' : arg.startsWith('--api-key=') ? '--api-key=***' : arg));
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseOptions(process.argv.slice(2));
    checkFileLimit(opts);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const command = `npm run bench -- ${redactApiKey(process.argv.slice(2)).join(' ')}`;
  // Hard bound on the whole run; exiting kills the servers (see server-process.ts) after what
  // must be undone otherwise.
  const stopEarly = (code: number) => void tearDownEarly(EARLY_TEARDOWN_MS).then(() => process.exit(code));
  setTimeout(() => {
    console.error(`\nbench: --max-time ${opts.maxTimeS} s reached, stopping`);
    stopEarly(3);
  }, opts.maxTimeS * 1000).unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopEarly(130));

  const startedAt = new Date();
  // Taken before the run: afterwards the figures would mostly show the bench's own load.
  const machine = machineFacts();
  const results = await run(opts);
  console.log(`\n${command}\n${describeMachine(machine)}\n\n${renderTables(results)}\n`);
  const paths = await writeReport(opts, command, startedAt, machine, results);
  console.log(`results: ${paths.join(', ')}`);
  if (!results.some((r) => r.errors > 0)) return 0;
  reportServerProblems();
  return 1;
}

/** After a failure: what the servers said of it (written to stderr, like the failure). */
function reportServerProblems(): void {
  const problems = serverProblems();
  if (problems) console.error(`\n${problems}`);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    reportServerProblems();
    process.exit(1);
  },
);
