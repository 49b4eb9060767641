// Push notifications end to end: a registered phone gets what Zulip would send it, sealed with its
// key, through a test relay that opens it as the phone would (crypto_secretbox_open_easy): new
// direct and channel messages (mentions, group mentions, followed topics, channel settings),
// removals when a message is read or deleted, nothing while the user is active elsewhere when they
// asked so, and nothing lost while the relay is down.
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually, newTestDevice, openNotification, registered, relayAndServer, type TestDevice } from '../helpers/push-relay.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

const suite = relayAndServer(test);
const { relay } = suite;

interface Phone {
  device: TestDevice;
  /** Every notification the phone got so far, opened. */
  received(): Record<string, unknown>[];
  /** Waits for the n-th notification (from 0). */
  nth(n: number): Promise<Record<string, unknown>>;
}

async function phoneOf(user: TestUser): Promise<Phone> {
  const device = newTestDevice();
  const id = await registered(user, device);
  const relayId = Number((await suite.server.app.prisma.device.findUniqueOrThrow({ where: { id } })).relayDeviceId);
  const received = () =>
    relay.requestsFor(relayId).map((r) => {
      assert.is(r.payload.push_key_id, device.pushKeyId);
      return openNotification(device.pushKey, r.payload.encrypted_data);
    });
  return { device, received, nth: (n) => eventually(() => received()[n], 15_000, `notification ${n}`) };
}

/** Waits until the push worker has taken all of the organization's work. */
const drained = (realm: TestRealm) =>
  eventually(
    async () => ((await suite.server.app.prisma.pushOutbox.count({ where: { realmId: realm.id } })) === 0 ? true : undefined),
    20_000,
    'an empty outbox',
  );

const realmUrl = (realm: TestRealm) => suite.server.app.realms.url(suite.server.app.realms.byId(realm.id)!);
const avatar = (email: string) => `https://secure.gravatar.com/avatar/${createHash('md5').update(email.toLowerCase()).digest('hex')}?d=identicon&version=1`;

test('a direct message reaches the phone, sealed with its key, with sender and content', async () => {
  const realm = await newRealm(suite.server);
  const bob = await realm.addUser({ name: 'Bob Builder' });
  const phone = await phoneOf(realm.owner);
  const id = await sendDm(bob, [realm.owner.id], 'Can we **fix** it? :smile:');
  const got = await phone.nth(0);
  assert.equal(got, {
    realm_name: suite.server.app.realms.byId(realm.id)!.name,
    realm_url: realmUrl(realm),
    user_id: realm.owner.id,
    type: 'message',
    message_id: id,
    sender_id: bob.id,
    sender_full_name: 'Bob Builder',
    sender_avatar_url: avatar(bob.email),
    time: got.time,
    content: 'Can we fix it? 😄',
    recipient_type: 'direct',
    recipient_user_ids: [realm.owner.id, bob.id].sort((a, b) => a - b),
  });
  const row = await suite.server.app.prisma.message.findUniqueOrThrow({ where: { id } });
  assert.is(got.time, Math.floor(row.dateSent.getTime() / 1000));
  // FCM requests go out at high priority, as Zulip's.
  assert.is(relay.notifications.at(-1)!.push_requests[0]!.fcm_priority, 'high');
});

test('channel messages: a mention, a group mention, a followed topic; the rest stays quiet', async () => {
  const realm = await newRealm(suite.server);
  const bob = await realm.addUser({ name: 'Bob' });
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  const phone = await phoneOf(realm.owner);
  // A plain message in a channel without push notifications: nothing; the DM after it proves it was looked at.
  await send(bob, channel, 'chatter', 'nothing for phones');
  const mention = await send(bob, channel, 'plans', 'hi @**Olivia Owner**, see <this> & that');
  const got = await phone.nth(0);
  assert.equal(got, {
    realm_name: got.realm_name,
    realm_url: realmUrl(realm),
    user_id: realm.owner.id,
    type: 'message',
    message_id: mention,
    sender_id: bob.id,
    sender_full_name: 'Bob',
    sender_avatar_url: avatar(bob.email),
    time: got.time,
    content: 'hi @Olivia Owner, see <this> & that',
    recipient_type: 'channel',
    channel_id: channel,
    channel_name: 'general',
    topic: 'plans',
  });
  const group = (await realm.owner.client.post('/user_groups/create', { name: 'crew', description: '', members: [realm.owner.id] })).body.group_id;
  const groupMention = await send(bob, channel, '', 'ping @*crew*');
  const viaGroup = await phone.nth(1);
  assert.equal(
    [viaGroup.message_id, viaGroup.mentioned_user_group_id, viaGroup.mentioned_user_group_name, viaGroup.topic],
    [groupMention, group, 'crew', 'general chat'],
  );
  // Followed as POST /user_topics would (not served here yet) leave it: visibility policy 3.
  await suite.server.app.prisma.userTopic.create({ data: { userId: realm.owner.id, channelId: channel, topic: 'followed', visibility: 3 } });
  const followed = await send(bob, channel, 'followed', 'news in a followed topic');
  assert.is((await phone.nth(2)).message_id, followed);
  // The owner's own messages and messages in an unfollowed topic do not notify.
  await send(realm.owner, channel, 'followed', 'my own');
  await send(bob, channel, 'chatter', 'still nothing');
  const dm = await sendDm(bob, [realm.owner.id], 'barrier');
  assert.is((await phone.nth(3)).message_id, dm);
  assert.is(phone.received().length, 4);
  // A channel set to push notifications notifies of every message.
  assert.is(
    (
      await realm.owner.client.post('/users/me/subscriptions/properties', {
        subscription_data: [{ stream_id: channel, property: 'push_notifications', value: true }],
      })
    ).status,
    200,
  );
  const loud = await send(bob, channel, 'chatter', 'now it notifies');
  assert.is((await phone.nth(4)).message_id, loud);
});

test('reading and deleting messages withdraws their notifications', async () => {
  const realm = await newRealm(suite.server);
  const bob = await realm.addUser({ name: 'Bob' });
  const phone = await phoneOf(realm.owner);
  const first = await sendDm(bob, [realm.owner.id], 'one');
  const second = await sendDm(bob, [realm.owner.id], 'two');
  await phone.nth(1);
  assert.is((await realm.owner.client.post('/messages/flags', { messages: [first], op: 'add', flag: 'read' })).status, 200);
  const removal = await phone.nth(2);
  assert.equal(removal, { realm_name: removal.realm_name, realm_url: realmUrl(realm), user_id: realm.owner.id, type: 'remove', message_ids: [first] });
  // Removals go out at normal priority.
  assert.is(relay.notifications.at(-1)!.push_requests[0]!.fcm_priority, 'normal');
  // Reading it again withdraws nothing more.
  assert.is((await realm.owner.client.post('/messages/flags', { messages: [first], op: 'remove', flag: 'read' })).status, 200);
  assert.is((await realm.owner.client.post('/messages/flags', { messages: [first], op: 'add', flag: 'read' })).status, 200);
  assert.is((await bob.client.delete(`/messages/${second}`)).status, 200);
  const deleted = await phone.nth(3);
  assert.equal([deleted.type, deleted.message_ids], ['remove', [second]]);
  // Marking everything read withdraws what is still shown, once.
  const third = await sendDm(bob, [realm.owner.id], 'three');
  await phone.nth(4);
  assert.is((await realm.owner.client.post('/mark_all_as_read')).status, 200);
  assert.equal((await phone.nth(5)).message_ids, [third]);
  assert.is(phone.received().length, 6);
});

test('a message read before the worker sends it is not notified', async () => {
  const realm = await newRealm(suite.server);
  const bob = await realm.addUser({ name: 'Bob' });
  const phone = await phoneOf(realm.owner);
  await relay.stop();
  let read: number;
  try {
    read = await sendDm(bob, [realm.owner.id], 'read on the web');
    assert.is((await realm.owner.client.post('/messages/flags', { messages: [read], op: 'add', flag: 'read' })).status, 200);
  } finally {
    await relay.start();
  }
  const barrier = await sendDm(bob, [realm.owner.id], 'barrier');
  const got = await eventually(() => phone.received().find((p) => p.message_id === barrier), 20_000, 'the barrier');
  assert.ok(got);
  assert.is(
    phone.received().some((p) => p.message_id === read),
    false,
  );
});

test('with online notifications off: nothing while the user is active in another client, a notification when they are not', async () => {
  const realm = await newRealm(suite.server);
  const bob = await realm.addUser({ name: 'Bob' });
  const owner = realm.owner;
  assert.is((await owner.client.patch('/settings', { enable_online_push_notifications: false })).status, 200);
  const phone = await phoneOf(owner);
  const queue = (await owner.client.post('/register', { event_types: ['message'] })).body.queue_id as string;
  assert.is((await owner.client.post('/users/me/presence', { status: 'active' })).status, 200);
  const quiet = await sendDm(bob, [owner.id], 'you are here anyway');
  // The worker decides after the message is sent: the queue must outlive that.
  await drained(realm);
  // Away from every client: the next one notifies; the first never did.
  assert.is((await owner.client.delete('/events', { queue_id: queue })).status, 200);
  const loud = await sendDm(bob, [owner.id], 'you left');
  assert.is((await phone.nth(0)).message_id, loud);
  assert.is(
    phone.received().some((p) => p.message_id === quiet),
    false,
  );
  // Offline notifications off too: no direct message notifies at all.
  assert.is((await owner.client.patch('/settings', { enable_offline_push_notifications: false })).status, 200);
  await sendDm(bob, [owner.id], 'silence');
  await drained(realm);
  assert.is((await owner.client.patch('/settings', { enable_offline_push_notifications: true })).status, 200);
  const last = await sendDm(bob, [owner.id], 'hello again');
  assert.is((await phone.nth(1)).message_id, last);
});

test('a relay that is down loses nothing: the notification goes once it is back', async () => {
  const realm = await newRealm(suite.server);
  const bob = await realm.addUser({ name: 'Bob' });
  const phone = await phoneOf(realm.owner);
  await relay.stop();
  let id: number;
  try {
    id = await sendDm(bob, [realm.owner.id], 'while the relay sleeps');
    // The worker tried and failed at least once, and kept the work.
    const row = await eventually(
      async () => {
        const r = await suite.server.app.prisma.pushOutbox.findFirst({ where: { realmId: realm.id, messageId: id } });
        return r && r.attempts >= 1 ? r : undefined;
      },
      15_000,
      'a failed attempt',
    );
    assert.is(row.kind, 'message');
    await new Promise((r) => setTimeout(r, 1500));
    assert.is(phone.received().length, 0);
  } finally {
    await relay.start();
  }
  const got = await eventually(() => phone.received()[0], 30_000, 'the delivery after recovery');
  assert.equal([got.message_id, got.content], [id, 'while the relay sleeps']);
  await drained(realm);
});

test.run();
