// CPU per request of the hot request kinds of the capacity bench, without the bench: a server
// started in-process as the tests start it (DATABASE_URL, or an embedded PostgreSQL), then N
// requests of each kind one after another after 50 to warm up; process.cpuUsage() of the process
// (server and client together) divided by N. Less sensitive to the machine's load than latency.
// Usage: N=300 npx tsx bench/micro/request-cpu.ts
// BENCH_NATS_URL=nats://127.0.0.1:4222: the server is a one-node cluster (register writes its queue's row).
import { endTestRun, newRealm, startTestServer } from '../../test/helpers/server.ts';
const N = Number(process.env.N ?? 400);
const natsUrl = process.env.BENCH_NATS_URL;
const server = await startTestServer(natsUrl ? { NATS_URL: natsUrl, NODE_ID: 'bench' } : {});
const realm = await newRealm(server);
const reader = await realm.addUser();
const owner = realm.owner.client;
for (const c of [owner, reader.client]) await c.post('/users/me/subscriptions', { subscriptions: [{ name: 'cap' }] });
const channelId = (await owner.get('/get_stream_id', { stream: 'cap' })).body.stream_id;
const sent: number[] = [];
for (let i = 0; i < 20; i++) sent.push((await owner.post('/messages', { type: 'stream', to: 'cap', topic: 't', content: `m${i}` })).body.id as number);
// PRESENCE_OTHERS=1500: that many other users pinged in the last minute, as at a capacity step of
// 3,000 people (two devices an account), so each presence ping answers with all of them.
const others = Number(process.env.PRESENCE_OTHERS ?? 0);
if (others > 0) {
  const tag = `${Date.now()}`;
  await server.app.db.query(
    `WITH u AS (
       INSERT INTO "User" ("realmId", "deliveryEmail", "fullName", "apiKey")
       SELECT $1, 'other-' || $2 || '-' || i || '@bench.example.com', 'Other ' || i, 'key-' || $2 || '-' || i FROM generate_series(1, $3::int) i
       RETURNING id)
     INSERT INTO "Presence" ("userId", "lastActiveTime", "lastConnectedTime", "lastUpdateId")
     SELECT id, now() - interval '30 seconds', now() - interval '30 seconds', 1 + row_number() OVER (ORDER BY id) FROM u`,
    [realm.id, tag, others],
  );
  await server.app.db.query(
    `INSERT INTO "PresenceSequence" ("realmId", "lastUpdateId") VALUES ($1, $2) ON CONFLICT ("realmId") DO UPDATE SET "lastUpdateId" = $2`,
    [realm.id, others + 1],
  );
}
let toggle = 0;
// A queue read without waiting: the long-poll path's own work (placement, acknowledge, answer).
const polled = (await reader.client.post('/register', { event_types: ['message'] })).body.queue_id as string;
const kinds: Record<string, () => Promise<unknown>> = {
  typing: () => reader.client.post('/typing', { type: 'stream', stream_id: channelId, topic: 't', op: 'start' }),
  messages: () => reader.client.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow: [{ operator: 'channel', operand: 'cap' }] }),
  // Add and take back in turn, so every request changes something.
  react: () =>
    toggle++ % 2
      ? reader.client.delete(`/messages/${sent[0]}/reactions`, { emoji_name: 'tada' })
      : reader.client.post(`/messages/${sent[0]}/reactions`, { emoji_name: 'tada' }),
  flags: () => reader.client.post('/messages/flags', { messages: sent.slice(0, 5), op: toggle++ % 2 ? 'remove' : 'add', flag: 'read' }),
  flagsNarrow: () =>
    reader.client.post('/messages/flags/narrow', {
      anchor: 'newest',
      num_before: 20,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: 'cap' }],
      op: toggle++ % 2 ? 'remove' : 'add',
      flag: 'starred',
    }),
  // As a capacity person registers (bench/lib/people.ts); each leaves a queue behind.
  register: () =>
    reader.client.post('/register', {
      event_types: ['message', 'reaction', 'typing', 'update_message_flags', 'presence'],
      slim_presence: true,
      client_gravatar: true,
    }),
  poll: () => reader.client.get('/events', { queue_id: polled, last_event_id: -1, dont_block: true }),
  presence: () => reader.client.post('/users/me/presence', { status: 'active', slim_presence: true, last_update_id: 1 }),
};
// KINDS=flags,messages: only those.
const only = process.env.KINDS?.split(',');
for (const [kind, run] of Object.entries(kinds)) {
  if (only && !only.includes(kind)) continue;
  for (let i = 0; i < 50; i++) await run();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const r = (await run()) as { status: number };
    if (r.status !== 200) throw new Error(`${kind} ${r.status}`);
  }
  const c = process.cpuUsage(c0);
  console.log(
    `${kind}: ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU/request (process: server+client), ${((performance.now() - t0) / N).toFixed(2)} ms wall`,
  );
}
// A cluster's stream outlives its processes: removed as the cluster tests remove theirs.
await server.app.cluster?.bus.destroy();
await server.stop();
await endTestRun();
process.exit(0);
