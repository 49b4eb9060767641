// --self: the project's own server on a fresh embedded database, rate limits off, loopback only.
// Everything that depends on the server's CLI contract lives here:
//   node --import tsx src/main.ts init --org NAME --email E --password P   → JSON {user_id, email, api_key, ...}
//   node --import tsx src/main.ts serve   with env PORT, HOST=127.0.0.1, DATA_DIR, RATE_LIMIT=off
// (node --import tsx rather than the tsx CLI, which forks: the bench must sample the server's own PID.)
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { PROJECT_ROOT, ServerProcess } from './server-process.ts';
import { HttpConnection, parseEndpoint } from './http-client.ts';
import { sleep } from './concurrency.ts';
import { readFileSync } from 'node:fs';

/** The Node flags `npm start` gives the server (package.json), so the bench runs what users run. */
const SERVER_NODE_FLAGS: string[] = (() => {
  const start = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return start[0] === 'node' ? start.slice(1, start.indexOf('--import')) : [];
})();
import type { Credentials } from './zulip-api.ts';

const SERVER_ENTRY = 'src/main.ts';
const ADMIN_EMAIL = 'admin@bench.example.com';
const START_TIMEOUT_MS = 120_000; // a fresh embedded database takes seconds to create

export interface SelfServer {
  url: string;
  admin: Credentials;
  process: ServerProcess;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
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
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SERVER_ENTRY, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    timeout: START_TIMEOUT_MS,
  });
  const line = stdout.split('\n').reverse().find((l) => l.trim().startsWith('{'));
  if (!line) throw new Error(`${SERVER_ENTRY} ${args[0]} printed no JSON:\n${stdout.slice(-2000)}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/** Waits until the server answers HTTP at all (any status), or fails with its log. */
async function waitUntilServing(url: string, proc: ServerProcess): Promise<void> {
  const end = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < end) {
    if (proc.exitCode !== null) throw new Error(`server exited with code ${proc.exitCode}\n${proc.logTail}`);
    try {
      const conn = await HttpConnection.open(parseEndpoint(url), 1000);
      try {
        await conn.request('GET', '/api/v1/server_settings', {}, '', 5000);
        return;
      } finally {
        conn.close();
      }
    } catch {
      await sleep(250);
    }
  }
  throw new Error(`server did not answer within ${START_TIMEOUT_MS / 1000} s\n${proc.logTail}`);
}

export async function startSelfServer(): Promise<SelfServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-data-'));
  // Setup creates many users by password: a cheap hash cost keeps that out of the way (it is not measured).
  // DATABASE_URL emptied: the server runs on its embedded PostgreSQL even where one is set.
  const env = { HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: '', RATE_LIMIT: 'off', PASSWORD_HASH_COST: '1024' };
  let proc: ServerProcess | undefined;
  const stop = async () => {
    await proc?.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    process.stderr.write('server: creating the organization...\n');
    const init = await runCli(['init', '--org', 'bench', '--email', ADMIN_EMAIL, '--password', randomBytes(12).toString('hex')], env);
    if (typeof init.api_key !== 'string') throw new Error(`init printed no api_key: ${JSON.stringify(init)}`);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    process.stderr.write('server: starting...\n');
    proc = ServerProcess.start('server', SERVER_ENTRY, ['serve'], { ...env, PORT: String(port) }, SERVER_NODE_FLAGS);
    await waitUntilServing(url, proc);
    return { url, admin: { email: String(init.email ?? ADMIN_EMAIL), apiKey: init.api_key }, process: proc, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
