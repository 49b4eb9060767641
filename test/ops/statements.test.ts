// Database statements per request, for the request kinds a person of the capacity bench makes
// (bench/lib/people.ts): read from /metrics around each request on a server of its own, where
// nothing else runs. The counts do not depend on load, so each is held to a budget; a change that
// adds a round trip to a hot path fails here. `STATEMENTS_TABLE=1` prints the table
// (docs/benchmarks.md, "Statements per request").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { forgetPresence } from '../../src/actions/presence.ts';
import type { RunningServer } from '../../src/server.ts';
import type { Client, Reply } from '../helpers/client.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';

const TOKEN = 'metrics-token-for-statements-0123';
const STATEMENTS = 'chat_db_query_duration_seconds_count';
const TRANSACTIONS = 'chat_db_transactions_total';

/** The most statements (BEGIN and COMMIT included) and transactions each kind may take. */
const BUDGET: Record<string, [statements: number, transactions: number]> = {
  register: [7, 1],
  'presence: first ping': [4, 0],
  'presence: again at once': [1, 0],
  // Its copy of the stored times dropped first, so one statement more than a real minute later.
  'presence: a minute later': [3, 0],
  'GET /messages: a channel, newest 20': [2, 0],
  'POST /messages/flags: read': [1, 0],
  'typing: start': [1, 0],
  'typing: stop': [1, 0],
  send: [2, 0],
  react: [9, 1],
  'GET /events: with events waiting': [0, 0],
  // Not a capacity person's: what a web or mobile client registers for (issue 25), to bring down.
  'register: all data, member lists cached': [36, 1],
};

let server: RunningServer;
let realm: TestRealm;

async function counters(): Promise<{ statements: number; transactions: number }> {
  const reply = await realm.anonymous.request('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.is(reply.status, 200, reply.text);
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(reply.text)?.[1] ?? Number.NaN);
  return { statements: read(STATEMENTS), transactions: read(TRANSACTIONS) };
}

const measured: [string, number, number][] = [];

/** Runs one request and records what it cost the database, BEGINs included. */
async function measure(kind: string, request: () => Promise<Reply>): Promise<Reply> {
  const before = await counters();
  const reply = await request();
  assert.is(reply.status, 200, `${kind}: ${reply.text}`);
  // Work a request leaves behind (deliveries, caches) is its own too.
  await new Promise((r) => setTimeout(r, 100));
  const after = await counters();
  const transactions = after.transactions - before.transactions;
  const statements = after.statements - before.statements + transactions;
  measured.push([kind, statements, transactions]);
  return reply;
}

test.before(async () => {
  server = await startTestServer({ METRICS_TOKEN: TOKEN });
  // The background work (outgoing webhook calls, history upkeep, scheduled messages, emails) polls
  // its tables every few seconds; a poll inside a request's window would count as the request's.
  const { scheduler, upkeep, outgoingWebhooks, notificationEmails } = server.app;
  await Promise.all([scheduler, upkeep, outgoingWebhooks, notificationEmails].map((work) => work.stop()));
  realm = await newRealm(server);
});

test.after(async () => {
  if (process.env.STATEMENTS_TABLE) {
    console.log('| request | statements | transactions |\n| --- | --- | --- |');
    for (const [kind, s, t] of measured) console.log(`| ${kind} | ${s} | ${t} |`);
  }
  await server?.stop();
});

test('each request kind of the capacity bench stays within its statements', async () => {
  const reader = await realm.addUser();
  const owner: Client = realm.owner.client;
  for (const user of [owner, reader.client]) assert.is((await user.post('/users/me/subscriptions', { subscriptions: [{ name: 'cap' }] })).status, 200);
  const channelId = (await owner.get('/get_stream_id', { stream: 'cap' })).body.stream_id as number;
  const sent: number[] = [];
  for (let i = 0; i < 3; i++) sent.push((await owner.post('/messages', { type: 'stream', to: 'cap', topic: 't', content: `m${i}` })).body.id as number);
  // The caches a running server has warm (the user, the realm's lists) are filled by a first round.
  await reader.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: 'cap' }] });

  const registered = await measure('register', () =>
    reader.client.post('/register', {
      event_types: ['message', 'reaction', 'typing', 'update_message_flags', 'presence'],
      slim_presence: true,
      client_gravatar: true,
    }),
  );
  const presenceId = registered.body.presence_last_update_id as number;
  const ping = () => reader.client.post('/users/me/presence', { status: 'active', slim_presence: true, last_update_id: presenceId });
  await measure('presence: first ping', ping);
  await measure('presence: again at once', ping);
  // A minute later the stored times are old enough to be written again.
  const { app } = server;
  const minuteAgo = new Date(Date.now() - 61_000);
  await app.prisma.presence.update({ where: { userId: reader.id }, data: { lastActiveTime: minuteAgo, lastConnectedTime: minuteAgo } });
  forgetPresence(app, reader.id);
  await ping(); // reloads the stored times into the copy, and writes
  await app.prisma.presence.update({ where: { userId: reader.id }, data: { lastActiveTime: minuteAgo, lastConnectedTime: minuteAgo } });
  forgetPresence(app, reader.id);
  await measure('presence: a minute later', ping);

  const narrow = await measure('GET /messages: a channel, newest 20', () =>
    reader.client.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow: [{ operator: 'channel', operand: 'cap' }] }),
  );
  assert.equal(
    narrow.body.messages.map((m: { id: number }) => m.id),
    sent,
  );
  await measure('POST /messages/flags: read', () => reader.client.post('/messages/flags', { messages: sent, op: 'add', flag: 'read' }));
  const typing = { type: 'stream', stream_id: channelId, topic: 't' };
  await measure('typing: start', () => reader.client.post('/typing', { ...typing, op: 'start' }));
  await measure('typing: stop', () => reader.client.post('/typing', { ...typing, op: 'stop' }));
  await measure('send', () => reader.client.post('/messages', { type: 'stream', to: 'cap', topic: 't', content: 'from the reader' }));
  await measure('react', () => reader.client.post(`/messages/${sent[0]}/reactions`, { emoji_name: 'tada' }));
  await measure('GET /events: with events waiting', () =>
    reader.client.get('/events', { queue_id: registered.body.queue_id, last_event_id: registered.body.last_event_id }),
  );
  // What a web or mobile client asks for; the first fills the organization's member lists.
  assert.is((await reader.client.post('/register', {})).status, 200);
  await measure('register: all data, member lists cached', () => reader.client.post('/register', {}));

  for (const [kind, statements, transactions] of measured) {
    const [maxStatements, maxTransactions] = BUDGET[kind]!;
    assert.ok(statements <= maxStatements && transactions <= maxTransactions, `${kind}: ${statements} statements, ${transactions} transactions`);
  }
});

test('register with all data makes its statements one at a time, never as a batch Prisma compiles whole', async () => {
  const reader = await realm.addUser();
  // Prisma's engine: a batch is compiled as a whole unless the same batch was seen before
  // (a raw statement first or a changing value in one, and it never is).
  const engine = (server.app.prisma as unknown as { _engine: { requestBatch: (...args: unknown[]) => unknown } })._engine;
  const requestBatch = engine.requestBatch;
  let batches = 0;
  engine.requestBatch = (...args: unknown[]) => {
    batches++;
    return requestBatch.apply(engine, args);
  };
  try {
    for (let i = 0; i < 2; i++) assert.is((await reader.client.post('/register', {})).status, 200);
  } finally {
    engine.requestBatch = requestBatch;
  }
  assert.is(batches, 0);
});

test.run();
