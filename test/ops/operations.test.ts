// What an operator sees of a running server, from outside, on a server process of its own (its
// log is what it writes to stderr): /metrics in Prometheus' text format, counters that move with
// traffic, /health/ready failing while the database is unreachable (a relay the test cuts) or
// lacks a migration and recovering after, and log lines that are JSON, carry request ids (also
// those written deep below the request's handler) and hold no credentials.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { Client, type Reply } from '../helpers/client.ts';
import { DatabaseProxy } from '../helpers/db-proxy.ts';
import { freePort, removeStreamOf } from '../helpers/nats.ts';
import { freshDatabase, sharedServer, tempDir } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'metrics-token-for-the-test-0123456789';
const EMAIL = 'owner@ops.test';
const PASSWORD = 'owner-password-never-logged';
const WRONG_PASSWORD = 'wrong-password-never-logged';
const WRONG_KEY = 'WrongApiKeyWrongApiKeyWrongApiK1';
const START_TIMEOUT_MS = 120_000;

interface ServerProcess {
  child: ChildProcess;
  port: number;
  apiKey: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

let databaseUrl: string;
let dataDir: string;
let proxy: DatabaseProxy;
let server: ServerProcess;
let owner: Client;
let anonymous: Client;

async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...inherited, HOST: '127.0.0.1', PORT: '0', PASSWORD_HASH_COST: '1024', EVENT_SCHEMA_CHECK: 'strict', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c));
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let listening: RegExpExecArray | null;
  while (!(listening = /listening on http:\/\/localhost:(\d+)/.exec(stdout)) || !/API key:/.test(stdout)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${stdout}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const apiKey = /API key:\s+(\S+)/.exec(stdout)![1]!;
  return { child, port: Number(listening[1]), apiKey, stderr: () => stderr, exited };
}

test.before(async () => {
  databaseUrl = await freshDatabase();
  proxy = await DatabaseProxy.start(databaseUrl);
  dataDir = tempDir();
  server = await startServerProcess({
    DATABASE_URL: proxy.url,
    DATA_DIR: dataDir,
    // A free port: nothing listens there, so every mail is refused.
    SMTP_URL: `smtp://mailer:smtp-password-never-logged@127.0.0.1:${await freePort()}`,
    LOG_LEVEL: 'info',
    METRICS_TOKEN: TOKEN,
    INIT_EMAIL: EMAIL,
    INIT_PASSWORD: PASSWORD,
  });
  const host = `localhost:${server.port}`;
  anonymous = new Client(server.port, host);
  owner = anonymous.withCredentials(EMAIL, server.apiKey);
});

test.after(async () => {
  if (server?.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await proxy?.cut();
  if (databaseUrl) await removeStreamOf(databaseUrl);
});

// --- Prometheus' text format (exposition format 0.0.4) ---

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (\\S+)(?: -?\\d+)?$`);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

/** Parses the exposition strictly: every line a comment, a blank or a sample of a family declared before it. */
function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (name: string): Family | undefined => {
    for (const [family, f] of families) {
      if ((SUFFIXES[f.type] ?? ['']).some((suffix) => name === family + suffix)) return f;
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment;
      assert.match(name!, new RegExp(`^${NAME}$`), line);
      const family = families.get(name!) ?? { type: 'untyped', help: '', samples: [] };
      if (kind === 'TYPE') {
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest!), line);
        family.type = rest!;
      } else {
        family.help = rest!;
      }
      families.set(name!, family);
      continue;
    }
    const sample = SAMPLE.exec(line);
    assert.ok(sample, `not a Prometheus sample line: ${line}`);
    const [, name, labelText, valueText] = sample;
    // As Prometheus reads them (Go's ParseFloat): special values in any case (prom-client writes `Nan`).
    const value = /^\+?inf$/i.test(valueText!) ? Infinity : /^-inf$/i.test(valueText!) ? -Infinity : Number(valueText);
    assert.ok(/^nan$/i.test(valueText!) || !Number.isNaN(value), line);
    const labels: Record<string, string> = {};
    for (const m of (labelText ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const family = familyOf(name!);
    assert.ok(family, `sample of an undeclared family: ${line}`);
    family.samples.push({ name: name!, labels, value });
  }
  return families;
}

function histogramsAreCumulative(families: Map<string, Family>): void {
  for (const [name, family] of families) {
    if (family.type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const s of family.samples.filter((s) => s.name === `${name}_bucket`)) {
      const { le: _le, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value, `${name} ${key}: buckets not cumulative`);
      assert.is(buckets.at(-1)!.labels.le, '+Inf', `${name} ${key}: last bucket`);
      const count = family.samples.find((s) => s.name === `${name}_count` && JSON.stringify(s.labels) === key);
      assert.is(count?.value, buckets.at(-1)!.value, `${name} ${key}: _count equals the +Inf bucket`);
    }
  }
}

async function scrape(): Promise<Map<string, Family>> {
  const reply = await anonymous.request('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.is(reply.status, 200, reply.text);
  assert.is(reply.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const families = parsePrometheus(reply.text);
  histogramsAreCumulative(families);
  return families;
}

/** The value of one series (0 when absent: a counter nothing has moved yet). */
function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  const sample = family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample?.value ?? 0;
}

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await probe();
    if (done(result)) return result;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(result)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const ready = () => anonymous.request('GET', '/health/ready');
const ALL_OK = { database: 'ok', migrations: 'ok', bus: 'ok', shutdown: 'ok' };

// --- the tests ---

test('health: /health/live answers while the process runs; /health/ready lists its checks', async () => {
  const live = await anonymous.request('GET', '/health/live');
  assert.equal([live.status, live.body, live.headers['cache-control']], [200, { status: 'live' }, 'no-store']);
  const r = await ready();
  assert.equal([r.status, r.body], [200, { status: 'ready', checks: ALL_OK }]);
});

test('/metrics needs the bearer token of METRICS_TOKEN; a server without one has no /metrics', async () => {
  for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Basic ${Buffer.from(`${EMAIL}:${server.apiKey}`).toString('base64')}`]) {
    const r = await anonymous.request('GET', '/metrics', { headers: authorization ? { Authorization: authorization } : {} });
    assert.equal([r.status, r.headers['www-authenticate']], [401, 'Bearer realm="metrics"'], String(authorization));
  }
  const families = await scrape();
  for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'chat_db_pool_max_connections']) {
    assert.ok(families.get(name)?.samples.length, `${name} is reported`);
  }
  assert.is(families.get('chat_http_requests_total')?.type, 'counter');
  assert.is(families.get('chat_http_request_duration_seconds')?.type, 'histogram');
  assert.ok(value(families, 'process_resident_memory_bytes') > 0);
  assert.is(value(families, 'chat_db_pool_max_connections'), 48, 'DATABASE_POOL_SIZE, its default');

  const plain = await sharedServer();
  const r = await new Client(plain.port, `localhost:${plain.port}`).request('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.is(r.status, 404);
});

test('metrics move with traffic: requests by route and status, latency, queues, readers, events, messages, queries', async () => {
  assert.is((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'ops' }] })).status, 200);
  const polled = await owner.post('/register', { event_types: ['message'] });
  const socketQueue = await owner.post('/register', { event_types: ['message'] });
  const before = await scrape();

  for (let i = 0; i < 3; i++) assert.is((await owner.get('/users/me')).status, 200);
  assert.is((await anonymous.withCredentials(EMAIL, WRONG_KEY).get('/users/me')).status, 401);
  assert.is((await anonymous.request('GET', '/no/such/path')).status, 404);
  const sent = await owner.post('/messages', { type: 'stream', to: 'ops', topic: 'metrics', content: 'counted' });
  assert.is(sent.status, 200);
  const got = await owner.get('/events', { queue_id: polled.body.queue_id, last_event_id: -1 });
  assert.equal(
    got.body.events.map((e: { message: { id: number } }) => e.message.id),
    [sent.body.id],
  );
  // One poll parks, one socket reads the other queue.
  const parked = owner.get('/events', { queue_id: polled.body.queue_id, last_event_id: got.body.events[0].id });
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/v1/events/socket?queue_id=${socketQueue.body.queue_id}`);
  await once(ws, 'open');

  const after = await until('readers attached', scrape, (f) => value(f, 'chat_event_queue_readers', { kind: 'parked_poll' }) === 1);
  const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
  const me = { method: 'GET', route: '/api/v1/users/me' };
  assert.is(delta('chat_http_requests_total', { ...me, status: '200' }), 3);
  assert.is(delta('chat_http_requests_total', { ...me, status: '401' }), 1);
  assert.is(delta('chat_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
  assert.is(delta('chat_http_requests_total', { method: 'POST', route: '/api/v1/messages', status: '200' }), 1);
  assert.is(delta('chat_http_requests_total', { method: 'GET', route: '/api/v1/events/socket', status: '101' }), 1);
  assert.is(delta('chat_http_request_duration_seconds_count', me), 4);
  assert.ok(delta('chat_http_request_duration_seconds_sum', me) > 0);
  assert.is(delta('chat_messages_sent_total', { kind: 'channel' }), 1);
  assert.is(delta('chat_messages_sent_total', { kind: 'direct' }), 0);
  assert.is(delta('chat_events_delivered_total'), 2, 'the message, once into each of the two queues');
  assert.ok(delta('chat_db_query_duration_seconds_count') > 0);
  assert.is(value(after, 'chat_event_queues'), 2);
  assert.is(value(after, 'chat_event_queue_readers', { kind: 'websocket' }), 1);
  assert.ok(value(after, 'chat_db_pool_connections') >= 1);

  ws.close();
  await owner.delete('/events', { queue_id: polled.body.queue_id });
  assert.equal((await parked).body.events, []);
  await owner.delete('/events', { queue_id: socketQueue.body.queue_id });
  const cleared = await until('readers gone', scrape, (f) => value(f, 'chat_event_queues') === 0);
  assert.is(value(cleared, 'chat_event_queue_readers', { kind: 'websocket' }), 0);
});

let failedRequestId = '';

test('readiness fails while the database is unreachable, and recovers when it is back', async () => {
  await proxy.cut();
  const down = await until('readiness fails', ready, (r) => r.status === 503);
  assert.equal(down.body, { status: 'unavailable', checks: { ...ALL_OK, database: 'failed', migrations: 'failed' } });
  assert.is((await anonymous.request('GET', '/health/live')).status, 200, 'still alive: restarting would not bring the database back');
  const failed: Reply = await owner.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
  assert.equal([failed.status, failed.body.msg], [500, 'Internal server error']);
  failedRequestId = String(failed.headers['x-request-id']);

  await proxy.restore();
  const up = await until('readiness recovers', ready, (r) => r.status === 200);
  assert.equal(up.body, { status: 'ready', checks: ALL_OK });
  assert.is((await owner.get('/users/me')).status, 200);
});

test('readiness fails while a migration of this release is not applied', async () => {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const latest = 'SELECT max(migration_name) FROM _prisma_migrations';
    await db.query(`UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = (${latest})`);
    const missing = await until('readiness fails', ready, (r) => r.status === 503);
    assert.equal(missing.body, { status: 'unavailable', checks: { ...ALL_OK, migrations: 'failed' } });
    await db.query('UPDATE _prisma_migrations SET rolled_back_at = NULL');
    await until('readiness recovers', ready, (r) => r.status === 200);
  } finally {
    await db.end();
  }
});

function logRecords(): Record<string, unknown>[] {
  return server
    .stderr()
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

test('lines a request causes far below its handler carry its id: a mail SMTP refused, a file an export missed', async () => {
  assert.is((await owner.post('/invites', { invitee_emails: 'invitee@ops.test', stream_ids: [] })).status, 200);
  const upload = await owner.postMultipart('/user_uploads', {}, [
    { field: 'file', filename: 'gone.txt', contentType: 'text/plain', data: Buffer.from('gone') },
  ]);
  assert.is(upload.status, 200);
  const url = upload.body.url as string;
  assert.is((await owner.post('/messages', { type: 'stream', to: 'ops', topic: 'files', content: `[gone.txt](${url})` })).status, 200);
  await rm(path.join(dataDir, 'uploads', url.slice('/user_uploads/'.length)));
  assert.is((await owner.post('/export/realm')).status, 200);

  const records = await until(
    'the mail and the export have said what went wrong',
    async () => logRecords(),
    (rs) => rs.some((r) => r.msg === 'mail not sent') && rs.some((r) => r.msg === 'export: file missing on disk'),
  );
  const line = (msg: string) => records.find((r) => r.msg === msg)!;
  const accessLine = (route: string) => records.find((r) => r.msg === 'request' && r.route === route && r.status === 200)!;
  assert.is(line('mail not sent').request_id, accessLine('/api/v1/invites').request_id);
  assert.match(String(line('mail not sent').error), /ECONNREFUSED/);
  assert.is(line('export: file missing on disk').request_id, accessLine('/api/v1/export/realm').request_id);

  // The refused mail went to mail.log instead; its link (a secret, as a password is) stays out of the log.
  const link = /http\S+\/accounts\/do_confirm\/\S+/.exec(await readFile(path.join(dataDir, 'mail.log'), 'utf8'))?.[0];
  assert.ok(link, 'the invitation link is in mail.log');
  assert.not.ok(server.stderr().includes(link.split('/').at(-1)!), 'no invitation key in the log');
  assert.not.ok(server.stderr().includes('smtp-password-never-logged'), 'no SMTP password in the log');
});

test('log lines are JSON; each request has an access line with its id; no key, password or Authorization in any', async () => {
  const login = await anonymous.post('/fetch_api_key', { username: EMAIL, password: PASSWORD });
  assert.is(login.status, 200);
  const refused = await anonymous.post('/fetch_api_key', { username: EMAIL, password: WRONG_PASSWORD });
  assert.is(refused.status, 401);
  // Credentials in the query string too, where careless access logs pick them up.
  const me = await owner.get('/users/me', { api_key: server.apiKey, password: PASSWORD });
  assert.is(me.status, 200);
  const ownerId = me.body.user_id as number;
  server.child.kill('SIGTERM');
  assert.is(await server.exited, 0);

  const stderr = server.stderr();
  const secrets = [server.apiKey, PASSWORD, WRONG_PASSWORD, WRONG_KEY, TOKEN, Buffer.from(`${EMAIL}:${server.apiKey}`).toString('base64')];
  for (const secret of secrets) assert.not.ok(stderr.includes(secret), `the log holds a secret: ${secret.slice(0, 6)}…`);
  assert.not.ok(/authorization/i.test(stderr), 'no Authorization header in the log');

  const records = logRecords();
  for (const r of records) assert.ok(typeof r.level === 'string' && typeof r.time === 'number' && typeof r.msg === 'string', JSON.stringify(r));

  const access = records.filter((r) => r.msg === 'request');
  for (const r of access) {
    assert.equal(
      Object.keys(r).sort(),
      ['hostname', 'level', 'method', 'ms', 'msg', 'pid', 'request_id', 'route', 'status', 'time', 'user_id'],
      JSON.stringify(r),
    );
    assert.match(String(r.request_id), /^[0-9a-f]{6}-[0-9a-z]+$/);
  }
  const ids = access.map((r) => r.request_id);
  assert.is(new Set(ids).size, ids.length, 'one access line per request, each with its own id');

  assert.ok(access.filter((r) => r.route === '/api/v1/users/me' && r.status === 200).every((r) => r.user_id === ownerId));
  const logins = access.filter((r) => r.route === '/api/v1/fetch_api_key').map((r) => [r.method, r.status, r.user_id]);
  assert.equal(logins, [
    ['POST', 200, null],
    ['POST', 401, null],
  ]);
  const socket = access.find((r) => r.route === '/api/v1/events/socket');
  assert.equal([socket?.status, socket?.user_id], [101, ownerId]);
  assert.ok(
    access.some((r) => r.route === '/no/such/path' && r.status === 404),
    'a request no route took is logged with its path',
  );

  // The failed request's lines: the error with its stack, and its access line, under the id the client got.
  const failure = records.filter((r) => r.request_id === failedRequestId);
  assert.equal(
    failure.map((r) => [r.level, r.msg, r.status ?? null]),
    [
      ['error', 'unhandled error', null],
      ['info', 'request', 500],
    ],
  );
  assert.ok(records.some((r) => r.msg === 'readiness check failed' && r.check === 'database'));
  assert.ok(records.some((r) => r.msg === 'readiness check passes again' && r.check === 'database'));
});

test.run();
