// --self: the project's own server on a fresh embedded database, rate limits off, loopback only
// (and the pieces the cluster scenario starts its nodes with, cluster-server.ts).
// Everything that depends on the server's CLI contract lives here:
//   node --import tsx src/main.ts init --org NAME --email E --password P   → JSON {user_id, email, api_key, ...}
//   the start script of package.json (built bundle, its env and Node flags)   with env PORT, HOST=127.0.0.1, DATA_DIR, RATE_LIMIT=off
// (node itself rather than npm or the tsx CLI, which fork: the bench must sample the server's own PID.)
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { PROJECT_ROOT, ServerProcess, scaledTimeout } from './server-process.ts';
import { HttpConnection, parseEndpoint } from './http-client.ts';
import { sleep } from './concurrency.ts';
import { readFileSync } from 'node:fs';
import type { Credentials } from './zulip-api.ts';

/**
 * The server as `npm start` runs it (package.json: `node scripts/build.mjs && VAR=value ... exec
 * node [flags] build/main.mjs serve`): its environment settings, Node flags and entry, so the
 * bench measures what users run. The build step is run by startServing.
 */
const START = (() => {
  const script = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = script.split('&&').pop()!.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0]?.includes('=')) {
    const [name, value] = words.shift()!.split('=') as [string, string];
    env[name] = value;
  }
  if (words[0] === 'exec') words.shift();
  const node = words.indexOf('node');
  const entry = words.findIndex((w, i) => i > node && !w.startsWith('-'));
  if (node !== 0 || entry < 0) throw new Error(`bench: cannot read the start script: ${script}`);
  return { env, nodeFlags: words.slice(1, entry), entry: words[entry]! };
})();

const CLI_ENTRY = 'src/main.ts';
const ADMIN_EMAIL = 'admin@bench.example.com';
const START_TIMEOUT_MS = scaledTimeout(120_000); // a fresh embedded database takes seconds to create

export interface SelfServer {
  url: string;
  admin: Credentials;
  process: ServerProcess;
  stop(): Promise<void>;
}

/** A port nothing listens on now (on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    timeout: START_TIMEOUT_MS,
  });
  const line = stdout
    .split('\n')
    .reverse()
    .find((l) => l.trim().startsWith('{'));
  if (!line) throw new Error(`${CLI_ENTRY} ${args[0]} printed no JSON:\n${stdout.slice(-2000)}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/** Waits until the server answers HTTP with anything but 503 (its answer while it starts), or fails with its log. */
async function waitUntilServing(url: string, proc: ServerProcess): Promise<void> {
  const end = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < end) {
    if (proc.exitCode !== null) throw new Error(`server exited with code ${proc.exitCode}\n${proc.logTail}`);
    try {
      const conn = await HttpConnection.open(parseEndpoint(url), 1000);
      try {
        if ((await conn.request('GET', '/api/v1/server_settings', {}, '', scaledTimeout(5000))).status !== 503) return;
      } finally {
        conn.close();
      }
    } catch {
      // Not listening yet.
    }
    await sleep(250);
  }
  throw new Error(`server did not answer within ${START_TIMEOUT_MS / 1000} s\n${proc.logTail}`);
}

/**
 * Settings of every server the bench starts: loopback only, rate limits off, and a cheap password
 * hash, since setup creates many users by password (it is not measured).
 */
export const BENCH_SERVER_ENV = { HOST: '127.0.0.1', RATE_LIMIT: 'off', PASSWORD_HASH_COST: '1024' };

/** Makes the first organization through the CLI (`init`, with `env` naming the database); returns its administrator. */
export async function initOrganization(env: NodeJS.ProcessEnv): Promise<Credentials> {
  const init = await runCli(['init', '--org', 'bench', '--email', ADMIN_EMAIL, '--password', randomBytes(12).toString('hex')], env);
  if (typeof init.api_key !== 'string') throw new Error(`init printed no api_key: ${JSON.stringify(init)}`);
  return { email: String(init.email ?? ADMIN_EMAIL), apiKey: init.api_key };
}

/**
 * BENCH_SERVER_FLAGS: more Node flags for the servers the bench starts, such as
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` for a profile of the server alone (Node refuses
 * --cpu-prof in NODE_OPTIONS).
 */
function extraServerFlags(): string[] {
  return (process.env.BENCH_SERVER_FLAGS ?? '').split(/\s+/).filter(Boolean);
}

let built: Promise<unknown> | undefined;

/**
 * The server as `npm start` runs it (its bundle built once per bench run), with `env`, on a free port; resolves once it answers.
 * `root`: another checkout's bundle, as built there (a micro bench comparing two commits).
 */
export async function startServing(name: string, env: NodeJS.ProcessEnv, root = PROJECT_ROOT): Promise<{ url: string; process: ServerProcess }> {
  if (resolve(root) === resolve(PROJECT_ROOT)) await (built ??= promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd: PROJECT_ROOT }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = ServerProcess.start(name, join(root, START.entry), ['serve'], { ...START.env, ...env, PORT: String(port) }, [
    ...START.nodeFlags,
    ...extraServerFlags(),
  ]);
  try {
    await waitUntilServing(url, proc);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, process: proc };
}

/**
 * BENCH_PG_STAT_STATEMENTS=1: the embedded PostgreSQL loads pg_stat_statements, so that
 * `psql -h DATA_DIR/postgres -U postgres -c 'CREATE EXTENSION pg_stat_statements'` and then its view
 * show which statements a run spends PostgreSQL's time on. Set in the cluster's own configuration,
 * which `init` has just made, so the server is measured as users run it otherwise.
 */
async function loadStatementStatistics(dataDir: string): Promise<void> {
  await appendFile(join(dataDir, 'postgres', 'postgresql.auto.conf'), "shared_preload_libraries = 'pg_stat_statements'\n");
  process.stderr.write(`server: pg_stat_statements loaded; psql -h ${join(dataDir, 'postgres')} -U postgres\n`);
}

export async function startSelfServer(): Promise<SelfServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-data-'));
  // DATABASE_URL emptied: the server runs on its embedded PostgreSQL even where one is set; and as
  // one process even where NATS_URL is set.
  const env = { ...BENCH_SERVER_ENV, DATA_DIR: dataDir, DATABASE_URL: '', CLUSTER: 'off' };
  let proc: ServerProcess | undefined;
  const stop = async () => {
    await proc?.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    process.stderr.write('server: creating the organization...\n');
    const admin = await initOrganization(env);
    if (process.env.BENCH_PG_STAT_STATEMENTS === '1') await loadStatementStatistics(dataDir);
    process.stderr.write('server: starting...\n');
    const server = await startServing('server', env);
    proc = server.process;
    return { url: server.url, admin, process: proc, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
