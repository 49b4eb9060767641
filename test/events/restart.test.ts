// Queues survive a graceful restart: same queue id, unacknowledged events kept, a `restart`
// event added, and a client polling across the restart loses nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { saveEventQueues } from '../../src/actions/event-queues.ts';
import type { RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { freshDatabase, newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import { makeChannel } from '../messages/messages-helpers.ts';
import { partialMessage } from '../helpers/events.ts';

test('a queue keeps its id and unacknowledged events across a restart', async () => {
  const database = { DATABASE_URL: await freshDatabase() };
  const first = await startTestServer(database);
  const realm = await newRealm(first);
  const bob = await realm.addUser();
  const reg = await bob.client.post('/register', { event_types: ['message'] });
  const queueId = reg.body.queue_id as string;
  for (const content of ['before one', 'before two']) {
    const r = await realm.owner.client.post('/messages', { type: 'direct', to: [bob.id], content });
    assert.is(r.status, 200, r.text);
  }
  const seen = await bob.client.get('/events', { queue_id: queueId, last_event_id: -1 });
  assert.equal(
    seen.body.events.map((e: { id: number }) => e.id),
    [0, 1],
  );
  // The client acknowledged event 0 only, then parks a poll that the shutdown answers.
  const parked = bob.client.get('/events', { queue_id: queueId, last_event_id: 0 });
  await new Promise((r) => setTimeout(r, 50));
  await first.stop();
  const answered = await parked;
  assert.is(answered.status, 200);

  const second = await startTestServer(database);
  try {
    const host = realm.host.replace(/:\d+$/, `:${second.port}`);
    const bobAgain = new Client(second.port, host, bob.client.credentials);
    const r = await bobAgain.get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
    assert.is(r.status, 200, r.text);
    const events = r.body.events as { id: number; type: string; message?: { content: string } }[];
    assert.equal(
      events.map((e) => [e.id, e.type]),
      [
        [1, 'message'],
        [2, 'restart'],
      ],
    );
    assert.is(events[0]!.message!.content, 'before two');
    assert.equal(Object.keys(events[1]!).sort(), ['id', 'immediate', 'server_generation', 'type', 'zulip_feature_level', 'zulip_merge_base', 'zulip_version']);
    const owner = new Client(second.port, host, realm.owner.client.credentials);
    await owner.post('/messages', { type: 'direct', to: [bob.id], content: 'after' });
    const next = await bobAgain.get('/events', { queue_id: queueId, last_event_id: 2 });
    assert.equal(
      next.body.events.map((e: { id: number; message: { content: string } }) => [e.id, e.message.content]),
      [[3, 'after']],
    );
    assert.is(await second.app.prisma.savedEventQueue.count(), 0, 'saved rows are consumed');
  } finally {
    await second.stop();
  }
});

// The tests below share one database, each restarting the server on it.
const database = freshDatabase();
const start = async () => startTestServer({ DATABASE_URL: await database });

/** `user`'s client on a later server of the same data. */
const clientOn = (server: RunningServer, realm: TestRealm, user: TestUser) =>
  new Client(server.port, realm.host.replace(/:\d+$/, `:${server.port}`), user.client.credentials);

async function registerQueues(users: TestUser[], perUser: number): Promise<Map<string, TestUser>> {
  const queues = new Map<string, TestUser>();
  for (const user of users) {
    for (let i = 0; i < perUser; i++) {
      const r = await user.client.post('/register', { event_types: ['message'], fetch_event_types: [] });
      assert.is(r.status, 200, r.text);
      queues.set(r.body.queue_id, user);
    }
  }
  return queues;
}

// In CI 200 queues x 300 events; QUEUE_SAVE_SCALE=1000x5000 runs the size that once exhausted memory.
const [QUEUES, EVENTS] = (process.env.QUEUE_SAVE_SCALE ?? '200x300').split('x').map(Number) as [number, number];

test(`${QUEUES} queues with ${EVENTS} pending events each are all saved and restored whole`, async () => {
  const first = await start();
  const realm = await newRealm(first);
  const users: TestUser[] = [];
  for (let i = 0; i < 20; i++) users.push(await realm.addUser());
  const queues = await registerQueues(users, QUEUES / users.length);
  const content = 'x'.repeat(2000);
  const perUser = Object.fromEntries(users.map((u, i) => [u.id, { flags: i % 2 ? ['read'] : [] }]));
  for (let n = 0; n < EVENTS; n++) {
    first.app.bus.publish({
      realmId: realm.id,
      userIds: users.map((u) => u.id),
      perUser,
      event: { type: 'message', message: partialMessage({ id: n, type: 'private', content: `${content}${n}`, raw_content: content, display_recipient: [] }) },
    });
  }
  await first.stop();

  const second = await start();
  try {
    assert.is(second.app.queues.size, QUEUES);
    // Every queue when the size is small, a sample otherwise (each reply is EVENTS x 2 KB).
    const step = Math.max(1, Math.floor((QUEUES * EVENTS) / 100_000));
    const ids = [...queues.keys()].filter((_, i) => i % step === 0);
    for (const queueId of ids) {
      const user = queues.get(queueId)!;
      const r = await clientOn(second, realm, user).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.is(r.status, 200, r.text.slice(0, 200));
      const events = r.body.events as { id: number; type: string; message?: { id: number }; flags?: string[] }[];
      assert.is(events.length, EVENTS + 1);
      assert.ok(
        events.every((e, i) => e.id === i && (i === EVENTS ? e.type === 'restart' : e.message!.id === i)),
        'ids and messages in order',
      );
      assert.equal(events[0]!.flags, perUser[user.id]!.flags);
    }
  } finally {
    await second.stop();
  }
});

test('a queue the shutdown deadline left unsaved is gone after the restart (BAD_EVENT_QUEUE_ID)', async () => {
  const first = await start();
  const realm = await newRealm(first);
  const bob = await realm.addUser();
  const [queueId] = (await registerQueues([bob], 1)).keys();
  // (The server also holds the queues earlier tests left.)
  const held = first.app.queues.size;
  const result = await saveEventQueues(first.app, Date.now() - 1);
  await first.stop();
  assert.equal(result, { saved: 0, dropped: held });
  const second = await start();
  try {
    const r = await clientOn(second, realm, bob).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal([r.status, r.body.code], [400, 'BAD_EVENT_QUEUE_ID']);
  } finally {
    await second.stop();
  }
});

test('messages acknowledged while the server stops are in every restored queue exactly once', async () => {
  const first = await start();
  const realm = await newRealm(first);
  const users: TestUser[] = [];
  for (let i = 0; i < 5; i++) users.push(await realm.addUser());
  const channelId = await makeChannel(realm, 'busy', [realm.owner, ...users]);
  const queues = await registerQueues(users, 10);
  // The channel's writer is kept busy until the stop has begun, so every send is in flight then.
  const channels = first.app.channels;
  let release!: () => void;
  void channels.run(channelId, () => new Promise<void>((r) => (release = r)));
  const inBatch = channels.inBatch.bind(channels);
  let waiting = 0;
  channels.inBatch = (id, kind, item, writeAll) => (waiting++, inBatch(id, kind, item, writeAll));
  const sends = Array.from({ length: 20 }, (_, n) =>
    realm.owner.client.post('/messages', { type: 'stream', to: 'busy', topic: 't', content: `m${n}` }).catch(() => null),
  );
  for (let i = 0; waiting < sends.length; i++) {
    assert.ok(i < 1000, 'the sends reach the channel writer');
    await new Promise((r) => setTimeout(r, 10));
  }
  const stopping = first.stop();
  release();
  await stopping;
  const acknowledged = (await Promise.all(sends)).filter((r) => r?.status === 200).map((r) => r!.body.id as number);
  assert.is(acknowledged.length, sends.length, 'sends in flight at the stop are answered');

  const second = await start();
  try {
    for (const [queueId, user] of queues) {
      const r = await clientOn(second, realm, user).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.is(r.status, 200, r.text);
      const received = (r.body.events as { type: string; message?: { id: number } }[]).filter((e) => e.type === 'message').map((e) => e.message!.id);
      for (const id of acknowledged) assert.is(received.filter((m) => m === id).length, 1, `message ${id} once in queue of user ${user.id}`);
    }
  } finally {
    await second.stop();
  }
});

test.run();
