// Queues survive a graceful restart: same queue id, unacknowledged events kept, a `restart`
// event added, and a client polling across the restart loses nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from './helpers/client.ts';
import { freshDatabase, newRealm, startTestServer } from './helpers/server.ts';

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
  assert.equal(seen.body.events.map((e: { id: number }) => e.id), [0, 1]);
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
    assert.equal(events.map((e) => [e.id, e.type]), [[1, 'message'], [2, 'restart']]);
    assert.is(events[0]!.message!.content, 'before two');
    assert.equal(Object.keys(events[1]!).sort(), ['id', 'immediate', 'server_generation', 'type', 'zulip_feature_level', 'zulip_merge_base', 'zulip_version']);
    const owner = new Client(second.port, host, realm.owner.client.credentials);
    await owner.post('/messages', { type: 'direct', to: [bob.id], content: 'after' });
    const next = await bobAgain.get('/events', { queue_id: queueId, last_event_id: 2 });
    assert.equal(next.body.events.map((e: { id: number; message: { content: string } }) => [e.id, e.message.content]), [[3, 'after']]);
    assert.is(await second.app.prisma.savedEventQueue.count(), 0, 'saved rows are consumed');
  } finally {
    await second.stop();
  }
});

test.run();
