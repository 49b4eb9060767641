// A channel's subscriber_count is a column the database keeps as subscriptions and users change:
// every way of changing who is subscribed leaves register (subscriptions, unsubscribed,
// never_subscribed, streams), GET /users/me/subscriptions, GET /streams and GET /streams/{id}
// showing the number of its subscribers, as its subscriber list does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

type Entry = { stream_id: number; subscriber_count: number; subscribers?: number[] };
const find = (list: Entry[], id: number) => list.find((e) => e.stream_id === id);

/** The channel's count wherever `viewer` reads it (undefined where it is not listed), and its subscriber list's length. */
async function counts(viewer: TestUser, id: number) {
  const reg = await viewer.client.post('/register', {
    fetch_event_types: ['subscription', 'stream'],
    include_subscribers: true,
    client_capabilities: { archived_channels: true },
  });
  assert.is(reg.status, 200, reg.text);
  const registered = find([...reg.body.subscriptions, ...reg.body.unsubscribed, ...reg.body.never_subscribed], id);
  const subs = await viewer.client.get('/users/me/subscriptions', { include_subscribers: true });
  const streams = await viewer.client.get('/streams', { include_all: true, exclude_archived: false });
  const one = await viewer.client.get(`/streams/${id}`);
  return {
    register: registered?.subscriber_count,
    registerStreams: find(reg.body.streams, id)?.subscriber_count,
    subscriptions: find(subs.body.subscriptions, id)?.subscriber_count,
    streams: find(streams.body.streams, id)?.subscriber_count,
    stream: one.body.stream?.subscriber_count,
    subscribers: registered?.subscribers?.length,
  };
}

/** Channels whose count is not their active subscriptions of active users counted (all organizations'). */
async function miscounted(realm: TestRealm): Promise<unknown[]> {
  const rows = await realm.server.app.prisma.$queryRawUnsafe<{ id: number; subscriberCount: number; counted: number }[]>(
    `SELECT c.id, c."subscriberCount", (SELECT count(*)::int FROM "Subscription" s JOIN "User" u ON u.id = s."userId"
        WHERE s."channelId" = c.id AND s.active AND u."isActive") AS counted FROM "Channel" c`,
  );
  return rows.filter((c) => c.subscriberCount !== c.counted);
}

const everywhere = (n: number) => ({ register: n, registerStreams: n, subscriptions: n, streams: n, stream: n, subscribers: n });

test('subscriber_count follows subscribing, unsubscribing, deactivating, reactivating and archiving', async () => {
  const realm = await newRealm();
  const { owner } = realm;
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const bot = await realm.addUser({ bot: true, botOwnerId: bob.id });
  const created = await owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted' }] });
  assert.is(created.status, 200, created.text);
  const id = (await owner.client.get('/get_stream_id', { stream: 'counted' })).body.stream_id as number;
  assert.equal(await counts(owner, id), everywhere(1), 'its creator');
  assert.equal((await counts(alice, id)).register, 1, 'in never_subscribed');

  const aliceQueue = await openQueue(alice, { event_types: ['subscription'] });
  const added = await owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted' }], principals: [alice.id, bob.id, bot.id] });
  assert.is(added.status, 200, added.text);
  assert.equal(await counts(owner, id), everywhere(4), 'three subscribed at once');
  assert.equal(
    (await aliceQueue.next()).filter((e) => e.op === 'add').map((e) => e.subscriptions[0].subscriber_count),
    [4],
    'the subscription event counts them',
  );

  assert.is((await alice.client.delete('/users/me/subscriptions', { subscriptions: ['counted'] })).status, 200);
  assert.equal(await counts(owner, id), everywhere(3), 'one left');
  assert.equal((await counts(alice, id)).register, 3, 'in unsubscribed');
  assert.is((await alice.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'counted' }] })).status, 200);
  assert.equal(await counts(owner, id), everywhere(4), 'back on her old subscription');

  const color = await alice.client.post('/users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: id, property: 'color', value: '#000000' }],
  });
  assert.is(color.status, 200, color.text);
  assert.equal(await counts(owner, id), everywhere(4), 'a property change counts nobody');

  assert.is((await owner.client.delete(`/users/${bob.id}`)).status, 200);
  assert.equal(await counts(owner, id), everywhere(2), 'a deactivated user and their bot leave the count');
  assert.is((await owner.client.post(`/users/${bob.id}/reactivate`)).status, 200);
  assert.equal(await counts(owner, id), everywhere(3), 'reactivated, without the bot');

  assert.is((await owner.client.delete(`/streams/${id}`)).status, 200);
  assert.equal(
    await counts(owner, id),
    { ...everywhere(3), subscriptions: undefined, stream: undefined },
    'archived: subscriptions stay, shown to clients that list archived channels',
  );
});

test('subscriber_count of a channel a new user joins by default', async () => {
  const realm = await newRealm();
  const { owner } = realm;
  assert.is((await owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }] })).status, 200);
  const id = (await owner.client.get('/get_stream_id', { stream: 'lobby' })).body.stream_id as number;
  assert.is((await owner.client.post('/default_streams', { stream_id: id })).status, 200);
  const newcomer = await realm.addUser();
  assert.equal(await counts(newcomer, id), everywhere(2));
});

test('a user deleted from the database leaves the counts; every count equals its channel subscriptions counted', async () => {
  const realm = await newRealm();
  const { owner } = realm;
  const gone = await realm.addUser();
  assert.is((await owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'kept' }], principals: [owner.id, gone.id] })).status, 200);
  const id = (await owner.client.get('/get_stream_id', { stream: 'kept' })).body.stream_id as number;
  const db = realm.server.app.prisma;
  await db.$executeRawUnsafe('DELETE FROM "User" WHERE id = $1', gone.id);
  // The channel actors still hold the subscriber list: no action told them.
  assert.equal(await counts(owner, id), { ...everywhere(1), subscribers: 2 });
  assert.equal(await miscounted(realm), [], 'the shared database, after the changes of this file and of others');
});

test('subscribes, unsubscribes, a bulk subscribe and a deactivation at once leave every count right', async () => {
  const realm = await newRealm();
  const { owner } = realm;
  const people: TestUser[] = [];
  for (let i = 0; i < 6; i++) people.push(await realm.addUser());
  const channels = [{ name: 'busy-a' }, { name: 'busy-b' }, { name: 'busy-c' }];
  assert.is((await owner.client.post('/users/me/subscriptions', { subscriptions: channels })).status, 200);
  const results = await Promise.all([
    ...people.flatMap((p) => [
      p.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'busy-a' }, { name: 'busy-b' }] }),
      p.client.delete('/users/me/subscriptions', { subscriptions: ['busy-b'] }),
    ]),
    // The same subscriptions as the people's own requests, added by an admin at the same time.
    owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'busy-a' }, { name: 'busy-c' }], principals: people.map((p) => p.id) }),
    owner.client.delete(`/users/${people[0]!.id}`),
  ]);
  assert.equal(
    results.filter((r) => r.status >= 500).map((r) => r.text),
    [],
  );
  assert.equal(await miscounted(realm), []);
});

test.run();
