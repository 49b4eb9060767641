// history: the reads a client makes (register, GET /messages for each kind of narrow and anchor,
// search, topics, subscriptions) and send throughput, against organizations with --sizes messages
// of history (default 10 thousand, 1 million and 10 million), each seeded straight into a fresh
// database (bench/lib/history-seed.ts). 20 clients, one per bench user, make each request back to
// back for --duration seconds; the report gives every figure against the same request on the
// smallest history, the baseline of this scenario, and register with all data against its floor:
// raw uWebSockets.js answering the same clients with a real answer's bytes (registerFloor).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { historySettings } from '../../src/db/embedded.ts';
import { scratchServer, type ScratchServer } from '../../src/db/scratch.ts';
import { BaselineTarget } from '../lib/baseline-target.ts';
import { HttpConnection, parseEndpoint, type Endpoint } from '../lib/http-client.ts';
import { COMMON_WORD, NEVER_WRITTEN, seedHistory, type BenchUser, type SeedReport } from '../lib/history-seed.ts';
import { sendThroughput, type SenderSpec, type ServerHandle } from '../lib/measure.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import { BENCH_SERVER_ENV, initOrganization, startServing } from '../lib/self-server.ts';
import { onEarlyStop } from '../lib/server-process.ts';
import { FORM_HEADERS, ZulipClient, basicAuth, formEncode } from '../lib/zulip-api.ts';

export type Request = { method: 'GET' | 'POST'; path: string; body: string };

const get = (path: string, params: Record<string, unknown> = {}): Request => {
  const query = formEncode(params);
  return { method: 'GET', path: query ? `${path}?${query}` : path, body: '' };
};
const channel = (u: BenchUser) => ({ operator: 'channel', operand: u.channelId });
const newest = (narrow: unknown[]) => get('/api/v1/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow });

const REGISTER_ALL = { name: 'register (all data)', request: (): Request => ({ method: 'POST', path: '/api/v1/register', body: '' }) };

/** Each request a client makes, as bench user `u` would make it. */
export const REQUESTS: { name: string; request: (u: BenchUser) => Request }[] = [
  REGISTER_ALL,
  {
    name: 'register (message, subscription, flags)',
    request: () => ({ method: 'POST', path: '/api/v1/register', body: formEncode({ fetch_event_types: ['message', 'subscription', 'update_message_flags'] }) }),
  },
  { name: 'GET subscriptions', request: () => get('/api/v1/users/me/subscriptions') },
  { name: 'GET channel topics', request: (u) => get(`/api/v1/users/me/${u.channelId}/topics`) },
  {
    name: 'messages: combined feed, first unread',
    request: () => get('/api/v1/messages', { anchor: 'first_unread', num_before: 25, num_after: 25, narrow: [] }),
  },
  { name: 'messages: channel + topic, newest', request: (u) => newest([channel(u), { operator: 'topic', operand: u.topic }]) },
  { name: 'messages: channel, oldest', request: (u) => get('/api/v1/messages', { anchor: 'oldest', num_before: 0, num_after: 50, narrow: [channel(u)] }) },
  {
    name: 'messages: channel, around an id',
    request: (u) => get('/api/v1/messages', { anchor: u.middleMessageId, num_before: 25, num_after: 25, narrow: [channel(u)] }),
  },
  { name: 'messages: DMs with one person', request: (u) => newest([{ operator: 'dm', operand: u.dmPartnerEmail }]) },
  { name: 'messages: is:starred', request: () => newest([{ operator: 'is', operand: 'starred' }]) },
  { name: 'messages: is:mentioned', request: () => newest([{ operator: 'is', operand: 'mentioned' }]) },
  { name: 'messages: is:unread', request: () => newest([{ operator: 'is', operand: 'unread' }]) },
  { name: 'search: a word nobody wrote', request: () => newest([{ operator: 'search', operand: NEVER_WRITTEN }]) },
  { name: 'search: a common word', request: () => newest([{ operator: 'search', operand: COMMON_WORD }]) },
  { name: 'search: in a channel', request: (u) => newest([channel(u), { operator: 'search', operand: COMMON_WORD }]) },
  {
    name: 'matches_narrow: search',
    request: (u) =>
      get('/api/v1/messages/matches_narrow', {
        msg_ids: Array.from({ length: 20 }, (_, i) => u.middleMessageId + i),
        narrow: [{ operator: 'search', operand: COMMON_WORD }],
      }),
  },
];

const TEMPLATE_EMAIL = 'template@bench.example.com';

export async function historyScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const databases = await scratchServer(process.env.DATABASE_URL || undefined);
  const forget = onEarlyStop(() => databases.close());
  const results: CaseResult[] = [];
  try {
    for (const size of opts.sizes) results.push(...(await measureSize(databases, size, opts)));
  } finally {
    forget();
    await databases.close();
  }
  return results;
}

async function measureSize(databases: ScratchServer, size: number, opts: BenchOptions): Promise<CaseResult[]> {
  const say = (line: string) => process.stderr.write(`history ${size.toLocaleString('en')}: ${line}\n`);
  const kept = opts.reuseSeeded ? await keptDatabase(databases.url, size) : undefined;
  const databaseUrl = kept?.url ?? (await databases.createDatabase());
  await plannerSettings(databaseUrl);
  const dir = await mkdtemp(join(tmpdir(), 'bench-history-'));
  const env = { ...BENCH_SERVER_ENV, DATABASE_URL: databaseUrl, CLUSTER: 'off', DATA_DIR: dir };
  try {
    let seeded = kept?.seeded;
    if (seeded) say(`measuring the database seeded before (${kept!.name})`);
    else {
      seeded = await seedOrganization(env, databaseUrl, size, say);
      if (kept) await keepSeeded(databases.url, kept.name, seeded);
    }
    const server = await startServing('server', env);
    let results: CaseResult[];
    let answer: string | undefined;
    try {
      const handle: ServerHandle = { target: 'server', url: server.url, pid: server.process.pid, memory: () => server.process.memory() };
      results = await measureRequests(handle, seeded, size, opts);
      if (size === Math.min(...opts.sizes)) answer = await saveRegisterAnswer(server.url, seeded.benchUsers[0]!, dir);
    } finally {
      await server.process.stop();
    }
    if (answer) results.push(await registerFloor(answer, seeded, opts));
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function seedOrganization(env: Record<string, string>, databaseUrl: string, size: number, say: (line: string) => void): Promise<SeedReport> {
  say('creating the organization...');
  const admin = await initOrganization(env);
  // The rows the seed copies are made the way clients make them, then the server stops: the
  // seed writes behind its back, and a fresh start reads everything anew.
  const server = await startServing('server', env);
  try {
    const client = await ZulipClient.open(parseEndpoint(server.url), admin);
    try {
      await client.createUser(TEMPLATE_EMAIL, 'template-password', 'Template');
      await client.subscribe('general', [TEMPLATE_EMAIL]);
    } finally {
      client.close();
    }
  } finally {
    await server.process.stop();
  }
  say('seeding...');
  const seeded = await seedHistory(databaseUrl, await templatesOf(databaseUrl), size);
  say(
    `${seeded.messages.toLocaleString('en')} messages, ${seeded.userMessages.toLocaleString('en')} UserMessage rows (heaviest user ${seeded.heaviestRows.toLocaleString('en')}) in ${Object.values(
      seeded.seconds,
    )
      .reduce((a, b) => a + b, 0)
      .toFixed(0)} s ${JSON.stringify(seeded.seconds)}`,
  );
  return seeded;
}

/**
 * --reuse-seeded: the database kept for this size, history_bench_<size>, and what its seed reported
 * (kept as the database's comment once the seed finished); a database without one is seeded anew.
 * HISTORY_BENCH_PREFIX names another set (a copy made with `CREATE DATABASE … TEMPLATE`), so a
 * change with migrations of its own can be measured without altering the kept one.
 */
async function keptDatabase(serverUrl: string, size: number): Promise<{ name: string; url: string; seeded?: SeedReport }> {
  const name = `${process.env.HISTORY_BENCH_PREFIX || 'history_bench_'}${size}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const seeded = await onServer(serverUrl, async (db) => {
    const {
      rows: [row],
    } = await db.query<{ comment: string | null }>(`SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`, [name]);
    if (row?.comment) return JSON.parse(row.comment) as SeedReport;
    await db.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await db.query(`CREATE DATABASE ${name}`);
    return undefined;
  });
  return { name, url: url.toString(), seeded };
}

async function keepSeeded(serverUrl: string, name: string, seeded: SeedReport): Promise<void> {
  await onServer(serverUrl, (db) => db.query(`COMMENT ON DATABASE ${name} IS ${pg.escapeLiteral(JSON.stringify(seeded))}`));
}

/**
 * The settings docs/operations.md asks of a PostgreSQL holding a long history (those of the embedded one,
 * historySettings) that a database may carry itself, set on the bench's database: a shared
 * server, or the bench's own scratch PostgreSQL, keeps its defaults for the rest (shared_buffers).
 */
async function plannerSettings(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  await onServer(databaseUrl, async (db) => {
    const { rows } = await db.query<{ name: string }>(`SELECT name FROM pg_settings WHERE context = 'user' AND name = ANY($1::text[])`, [
      Object.keys(historySettings()),
    ]);
    for (const { name: setting } of rows)
      await db.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} SET ${setting} = ${pg.escapeLiteral(historySettings()[setting]!)}`);
  });
}

async function onServer<T>(url: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

async function templatesOf(databaseUrl: string) {
  return onServer(databaseUrl, async (db) => {
    const {
      rows: [row],
    } = await db.query<{ realmId: number; userId: number; channelId: number; subscriptionId: number }>(
      `SELECT u."realmId", u.id AS "userId", s."channelId", s.id AS "subscriptionId"
         FROM "User" u JOIN "Subscription" s ON s."userId" = u.id WHERE u."deliveryEmail" = $1`,
      [TEMPLATE_EMAIL],
    );
    if (!row) throw new Error('history: the template user or its channel is missing');
    return row;
  });
}

async function measureRequests(handle: ServerHandle, seeded: SeedReport, size: number, opts: BenchOptions): Promise<CaseResult[]> {
  const endpoint = parseEndpoint(handle.url);
  const results: CaseResult[] = [];
  const tag = (r: CaseResult, request: string): CaseResult => ({ ...r, request, history: size });
  for (const { name, request } of REQUESTS) results.push(tag(await measureReads(handle, endpoint, readers(seeded, request), opts), name));
  const durationMs = opts.durationS * 1000;
  // Sending: each sender into a channel of its own (about 200 subscribers each).
  const senders: SenderSpec[] = seeded.benchUsers.slice(1, 1 + opts.senders).map((u) => ({
    headers: { ...FORM_HEADERS, Authorization: basicAuth(u) },
    request: (content) => ({ method: 'POST', path: '/api/v1/messages', body: formEncode({ type: 'stream', to: u.channelId, topic: 'bench', content }) }),
  }));
  results.push(tag(await sendThroughput(handle, endpoint, senders, { maxMessages: opts.messages, durationMs }), 'send'));
  return results;
}

/** Each bench user making `request` back to back. */
function readers(seeded: SeedReport, request: (u: BenchUser) => Request): SenderSpec[] {
  return seeded.benchUsers.map((u) => {
    const req = request(u);
    return { headers: { ...FORM_HEADERS, Authorization: basicAuth(u) }, request: () => req };
  });
}

async function measureReads(handle: ServerHandle, endpoint: Endpoint, clients: SenderSpec[], opts: BenchOptions): Promise<CaseResult> {
  const durationMs = opts.durationS * 1000;
  // A short unmeasured round first: the first request of a kind fills caches and plans.
  await sendThroughput(handle, endpoint, clients, { maxMessages: clients.length, durationMs }, 'read');
  return sendThroughput(handle, endpoint, clients, { maxMessages: opts.messages, durationMs }, 'read');
}

/** The first bench user's register (all data) answer, as the server gave it, saved in `dir`; the floor answers with it. */
async function saveRegisterAnswer(url: string, user: BenchUser, dir: string): Promise<string> {
  const conn = await HttpConnection.open(parseEndpoint(url));
  try {
    const { method, path, body } = REGISTER_ALL.request();
    const res = await conn.request(method, path, { ...FORM_HEADERS, Authorization: basicAuth(user) }, body);
    if (res.status !== 200) throw new Error(`history: register answered ${res.status}`);
    const file = join(dir, 'register-answer.json');
    await writeFile(file, res.body);
    return file;
  } finally {
    conn.close();
  }
}

/**
 * The floor under register with all data on this machine: raw uWebSockets.js answering the same
 * clients with the bytes of a real answer and doing nothing else (bench/baseline/server.ts).
 * The report gives register's figures against it.
 */
async function registerFloor(answer: string, seeded: SeedReport, opts: BenchOptions): Promise<CaseResult> {
  const floor = await BaselineTarget.start(answer);
  try {
    return { ...(await measureReads(floor.handle, floor.endpoint, readers(seeded, REGISTER_ALL.request), opts)), request: REGISTER_ALL.name };
  } finally {
    await floor.stop();
  }
}
