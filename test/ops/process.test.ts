// The server as a user runs it: `npm start` (its script, run by sh as npm does, so the server is
// the child itself: the script ends with `exec node`) and the CLI as child processes on
// one embedded data directory (PostgreSQL in DATA_DIR/postgres), reused across the steps because
// creating one costs seconds.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isRunning, startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { Client } from '../helpers/client.ts';
import { NATS_URL, removeStreamOf } from '../helpers/nats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'chat-process-test-'));
// The embedded database always: the PostgreSQL suite is test/ops/postgres.test.ts.
const { DATABASE_URL: _ignored, ...inherited } = process.env;
const ENV = { ...inherited, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', PASSWORD_HASH_COST: '1024', LOG_LEVEL: 'warn' };
const START_TIMEOUT_MS = 120_000;

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const START_SCRIPT = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;

/** `npm start` for ['serve'], else the CLI with these arguments. */
function run(args: string[]): { child: ChildProcess; output: { stdout: string; stderr: string }; exited: Promise<Finished> } {
  const [command, argv] = args[0] === 'serve' ? ['sh', ['-c', START_SCRIPT]] : [process.execPath, ['--import', 'tsx', 'src/main.ts', ...args]];
  const child = spawn(command, argv, { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (output.stdout += c));
  child.stderr!.on('data', (c: Buffer) => (output.stderr += c));
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, ...output }));
  return { child, output, exited };
}

const cli = (...args: string[]) => run(args).exited;

interface ServerProcess {
  child: ChildProcess;
  port: number;
  stdout: string;
  exited: Promise<Finished>;
}

async function startServerProcess(): Promise<ServerProcess> {
  const { child, output, exited } = run(['serve']);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let match: RegExpExecArray | null = null;
  while (!(match = /listening on http:\/\/localhost:(\d+)/.exec(output.stdout))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const pgLog = path.join(dataDir, 'postgres.log');
      const status = child.exitCode === null ? `no answer within ${START_TIMEOUT_MS / 1000} s` : `exit code ${child.exitCode}`;
      throw new Error(
        `server did not start (${status}):\n${output.stdout}\n${output.stderr}\n${existsSync(pgLog) ? readFileSync(pgLog, 'utf8').slice(-2000) : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, port: Number(match[1]), stdout: output.stdout, exited };
}

async function stop(server: ServerProcess): Promise<Finished> {
  server.child.kill('SIGTERM');
  return server.exited;
}

let server: ServerProcess;
let printed: { url: string; email: string; password: string; apiKey: string };

test.after(async () => {
  if (server?.child.exitCode === null) await stop(server);
  // With NATS_URL set the servers joined a cluster: its stream's name is in the stopped database.
  if (NATS_URL) {
    const db = await startEmbeddedPostgres(dataDir);
    try {
      await removeStreamOf(db.url);
    } finally {
      await db.stop();
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

test('npm start on an empty data directory: one organization, its credentials printed once, login with them', async () => {
  server = await startServerProcess();
  const field = (name: string) => new RegExp(`^  ${name}:\\s+(\\S+)$`, 'm').exec(server.stdout)?.[1] ?? '';
  printed = { url: field('URL'), email: field('Email'), password: field('Password'), apiKey: field('API key') };
  assert.is(printed.url, `http://localhost:${server.port}`);
  assert.match(printed.apiKey, /^[A-Za-z0-9]{32}$/);
  assert.ok(printed.password.length >= 12, server.stdout);
  // Without SMTP_URL, the banner says where invitation mail goes.
  assert.ok(server.stdout.includes(`Mail (invitations): not sent (no SMTP_URL): written to ${path.join(dataDir, 'mail.log')}\n`), server.stdout);

  // As curl would: password login, then Basic auth with the key.
  const anonymous = new Client(server.port, new URL(printed.url).host);
  const login = await anonymous.post('/fetch_api_key', { username: printed.email, password: printed.password });
  assert.equal([login.status, login.body.api_key, login.body.email], [200, printed.apiKey, printed.email]);
  const me = await anonymous.withCredentials(printed.email, printed.apiKey).get('/users/me');
  assert.equal([me.status, me.body.role, me.body.email], [200, 100, printed.email]);
  // The organization lives at `localhost`, which cannot form an address: the Notification Bot
  // that reports a resolved topic gets one at FAKE_EMAIL_DOMAIN instead (Zulip's get_fake_email_domain).
  const owner = anonymous.withCredentials(printed.email, printed.apiKey);
  const channel = 'general';
  assert.is((await owner.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: channel }]) })).status, 200);
  const sent = await owner.post('/messages', { type: 'stream', to: channel, topic: 'question', content: 'anyone?' });
  const resolved = await owner.patch(`/messages/${sent.body.id}`, { topic: '✔ question', propagate_mode: 'change_all' });
  assert.is(resolved.status, 200, JSON.stringify(resolved.body));
  const notice = await owner.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
  assert.equal([notice.body.messages[0].sender_email, notice.body.messages[0].subject], ['notification-bot@fake-domain.invalid', '✔ question']);

  assert.is(statSync(path.join(dataDir, 'admin-token')).mode & 0o777, 0o600);
  // PostgreSQL logs to its file, not to the server's output.
  assert.match(readFileSync(path.join(dataDir, 'postgres.log'), 'utf8'), /database system is ready to accept connections/);
  assert.not.match(server.stdout, /database system/);
  // PostgreSQL runs without the malloc settings npm start gives Node (db/embedded.ts).
  const postmaster = readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0];
  assert.equal(
    readFileSync(`/proc/${postmaster}/environ`, 'latin1')
      .split('\0')
      .filter((v) => v.startsWith('MALLOC_')),
    [],
  );
  const published = JSON.parse(readFileSync(path.join(dataDir, 'server.json'), 'utf8'));
  assert.equal([published.pid, published.url], [server.child.pid, `http://127.0.0.1:${server.port}`]);
});

test('CLI init and create-user on a running server go through it and print one JSON object', async () => {
  const init = await cli('init', '--org', 'Second', '--email', 'boss@second.test', '--password', 'boss-password', '--subdomain', 'second');
  assert.is(init.code, 0, init.stderr);
  const org = JSON.parse(init.stdout);
  assert.equal(Object.keys(org).sort(), ['api_key', 'email', 'realm_id', 'url', 'user_id']);
  assert.equal([org.email, org.url], ['boss@second.test', `http://second.localhost:${server.port}`]);

  const created = await cli('create-user', '--email', 'admin@second.test', '--name', 'Ada Admin', '--role', '200', '--subdomain', 'second');
  assert.is(created.code, 0, created.stderr);
  const user = JSON.parse(created.stdout);
  assert.equal(Object.keys(user).sort(), ['api_key', 'email', 'user_id']);

  // The server knows the new organization at once: its cache was updated, not bypassed.
  const second = new Client(server.port, `second.localhost:${server.port}`, { email: 'admin@second.test', apiKey: user.api_key });
  const members = await second.get('/users');
  assert.is(members.status, 200, members.text);
  const people = members.body.members.filter((m: { is_bot: boolean }) => !m.is_bot);
  assert.equal(
    people.map((m: { user_id: number; role: number }) => [m.user_id, m.role]),
    [
      [org.user_id, 100],
      [user.user_id, 200],
    ],
  );
  // The new organization has its starting channels (test/organization/new-organization.test.ts), and the new user joined them.
  const subs = await second.get('/users/me/subscriptions');
  assert.equal(
    subs.body.subscriptions.map((s: { name: string }) => s.name),
    ['general', 'sandbox'],
  );

  const duplicate = await cli('create-user', '--email', 'admin@second.test', '--name', 'Again', '--subdomain', 'second');
  assert.equal([duplicate.code, duplicate.stderr.trim()], [1, "Error: Email 'admin@second.test' already in use"]);
});

test('the control route refuses requests without the admin token', async () => {
  const c = new Client(server.port, `localhost:${server.port}`);
  const body = JSON.stringify({ command: 'create-user', email: 'intruder@example.com', name: 'Intruder' });
  const refused: Record<string, string>[] = [
    {},
    { Authorization: 'Bearer wrong-token' },
    { Authorization: `Basic ${Buffer.from(`${printed.email}:${printed.apiKey}`).toString('base64')}` },
  ];
  for (const headers of refused) {
    const r = await c.request('POST', '/api/internal/cli', { body, contentType: 'application/json', headers });
    assert.equal([r.status, r.body], [403, { result: 'error', msg: 'Access denied', code: 'BAD_REQUEST' }]);
  }
});

test('CLI: bad arguments exit with 2 and the usage', async () => {
  const runs = await Promise.all([
    cli('frobnicate'),
    cli('create-user', '--email', 'x@example.com', '--name', 'X', '--role', '250'),
    cli('init', '--org', 'O', '--email', 'x@example.com', '--password', 'pw', '--bogus'),
    cli('init', '--org', 'O', '--email'),
  ]);
  for (const r of runs) {
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /Usage:\n/);
    assert.is(r.stdout, '');
  }
});

test('SIGTERM: exit 0, published files removed, PostgreSQL stopped, data directory released', async () => {
  const done = await stop(server);
  assert.is(done.code, 0, done.stderr);
  for (const file of ['admin-token', 'server.json', 'server.pid', 'postgres/postmaster.pid']) assert.not.ok(existsSync(path.join(dataDir, file)), file);
});

test('CLI without a server: a locked directory is named, a free one is written directly; a restart prints nothing', async () => {
  // A live process (this one) holding the directory, as a server that published no files would.
  const pidFile = path.join(dataDir, 'server.pid');
  writeFileSync(pidFile, `${process.pid}\n`);
  const locked = await cli('create-user', '--email', 'late@example.com', '--name', 'Late', '--password', 'late-password');
  rmSync(pidFile);
  assert.is(locked.code, 1);
  assert.match(locked.stderr, new RegExp(`data directory .* is in use by process ${process.pid}`));

  const direct = await cli('create-user', '--email', 'late@example.com', '--name', 'Late', '--password', 'late-password');
  assert.is(direct.code, 0, direct.stderr);
  assert.is(JSON.parse(direct.stdout).email, 'late@example.com');

  server = await startServerProcess();
  assert.not.match(server.stdout, /Password:|API key:/);
  const login = await new Client(server.port, `localhost:${server.port}`).post('/fetch_api_key', { username: 'late@example.com', password: 'late-password' });
  assert.equal([login.status, login.body.api_key], [200, JSON.parse(direct.stdout).api_key]);
  assert.is((await stop(server)).code, 0);
});

const postmasterPid = () => Number.parseInt(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8'), 10);

test('SIGKILL leaves PostgreSQL running; the next start stops it and finds the data', async () => {
  server = await startServerProcess();
  const leftover = postmasterPid();
  server.child.kill('SIGKILL');
  await server.exited;
  assert.ok(isRunning(leftover), 'the killed server left its PostgreSQL behind');

  server = await startServerProcess();
  assert.not.ok(isRunning(leftover), 'the leftover PostgreSQL was stopped');
  assert.is.not(postmasterPid(), leftover);
  const anonymous = new Client(server.port, `localhost:${server.port}`);
  const login = await anonymous.post('/fetch_api_key', { username: printed.email, password: printed.password });
  assert.equal([login.status, login.body.api_key], [200, printed.apiKey]);
  const stopped = await stop(server);
  assert.is(stopped.code, 0, stopped.stderr);
  const line = stopped.stderr.split('\n').find((l) => l.includes('an earlier run left behind'))!;
  assert.is(line.match(/"pid":/g)?.length, 1, `one pid key, the server's: ${line}`);
  assert.equal([JSON.parse(line).pid, JSON.parse(line).postgres_pid], [server.child.pid, leftover]);
});

test.run();
