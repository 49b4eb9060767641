// Writes that touch a long history go in batches, each its own transaction, so none holds a
// transaction or a lock for long and other writes go on between them. Checked on one topic of
// 100,000 messages written in bulk, step by step (each test takes the history as the one before
// left it), with exact results and the events Zulip sends. Deleting a topic goes 100 messages a
// transaction as Zulip's (test/messages/delete-topic.test.ts): 1,000 of them for this topic took 100 s on
// the loaded 2-core machine, too long for the suite.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { makeChannel, send } from './messages-helpers.ts';

const TOPIC_SIZE = 100_000;
/** These requests work through the whole topic: the client waits longer than its default 30 s. */
const LONG = { timeoutMs: 300_000 };

/**
 * `count` messages from `sender` in one topic, written in one statement as an import would, each
 * unread for `reader` (the sender holds no rows: the channel's history is shared). Their ids, in order.
 */
async function bulkTopic(realm: TestRealm, channelId: number, sender: TestUser, topic: string, count: number, reader: TestUser): Promise<number[]> {
  const rows = await realm.server.app.prisma.$queryRaw<{ id: number }[]>`
    WITH m AS (
      INSERT INTO "Message" ("realmId", "senderId", "channelId", topic, content, "renderedContent")
      SELECT ${realm.id}, ${sender.id}, ${channelId}, ${topic}, 'bulk ' || i, '<p>bulk ' || i || '</p>' FROM generate_series(1, ${count}::int) i
      RETURNING id),
    r AS (INSERT INTO "UserMessage" ("userId", "messageId", flags) SELECT ${reader.id}, id, 0 FROM m)
    SELECT id FROM m ORDER BY id`;
  // As autovacuum does after a bulk load: the planner's statistics must know the history is there.
  await realm.server.app.prisma.$executeRawUnsafe('ANALYZE "Message", "UserMessage"');
  return rows.map((r) => r.id);
}

/** register's unread count, and whether older unread messages were left out of it (over 50,000). */
async function unreadCount(user: TestUser): Promise<[number, boolean]> {
  const { unread_msgs: unread } = (await user.client.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).body;
  return [unread.count, unread.old_unreads_missing];
}

const flagsOf = async (user: TestUser, id: number) => (await user.client.get(`/messages/${id}`)).body.message.flags;
const topicNarrow = (channelId: number, topic: string) => [
  { operator: 'channel', operand: channelId },
  { operator: 'topic', operand: topic },
];

let realm: TestRealm;
let ann: TestUser;
let cy: TestUser;
let big: number;
let other: number;
let flood: number[];
let elsewhere: number[];

test.before(async () => {
  realm = await newRealm();
  ann = await realm.addUser({ name: 'Ann' });
  cy = await realm.addUser({ name: 'Cy' });
  big = await makeChannel(realm, 'big', [realm.owner, ann]);
  other = await makeChannel(realm, 'other', [realm.owner, ann]);
  flood = await bulkTopic(realm, big, realm.owner, 'flood', TOPIC_SIZE, ann);
  elsewhere = [await send(realm.owner, big, 'quiet', 'not in the topic'), await send(realm.owner, other, 'flood', 'another channel')];
});

test('flags by narrow: 5,000 messages a request; reading history one never received writes nothing, starring it writes historical rows', async () => {
  const range = { anchor: 'oldest', num_before: 0, num_after: 5000, narrow: topicNarrow(big, 'flood') };
  const events = captureEvents(realm.server.app, realm.id);
  const read = await cy.client.post('/messages/flags/narrow', { ...range, op: 'add', flag: 'read' });
  const star = await cy.client.post('/messages/flags/narrow', { ...range, op: 'add', flag: 'starred' });
  events.stop();
  const answer = (updated: number) => ({
    result: 'success',
    msg: '',
    processed_count: 5000,
    updated_count: updated,
    first_processed_id: flood[0],
    last_processed_id: flood[4999],
    found_oldest: true,
    found_newest: false,
    ignored_because_not_subscribed_channels: [],
  });
  assert.equal([read.body, star.body], [answer(0), answer(5000)]);
  assert.equal(
    events.ofType('update_message_flags').map((e) => [e.userIds, e.event.flag, e.event.messages]),
    [
      [[cy.id], 'read', []],
      [[cy.id], 'starred', flood.slice(0, 5000)],
    ],
  );
  assert.equal(
    [await flagsOf(cy, flood[4999]!), await flagsOf(cy, flood[5000]!)],
    [
      ['read', 'starred', 'historical'],
      ['read', 'historical'],
    ],
  );
});

test('mark_topic_as_read and mark_stream_as_read of 100,000 unread messages: a batch of 2,000 per transaction, each announced with its messages', async () => {
  assert.equal(await unreadCount(ann), [50_000, true]);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await ann.client.post('/mark_topic_as_read', { stream_id: big, topic_name: 'FLOOD' }, LONG)).body, { result: 'success', msg: '' });
  events.stop();
  const batches = events.ofType('update_message_flags').map((e) => {
    assert.equal(e.userIds, [ann.id]);
    const { messages, ...rest } = e.event as { messages: number[] };
    assert.equal(rest, { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', all: false });
    return messages;
  });
  assert.equal(
    batches.map((b) => b.length),
    Array(TOPIC_SIZE / 2000).fill(2000),
  );
  assert.equal(batches.flat(), flood, 'every message of the topic once, oldest first');
  assert.equal(await unreadCount(ann), [2, false], 'the rest of the channel and the other channel stay unread');

  const channelEvents = captureEvents(realm.server.app, realm.id);
  await ann.client.post('/mark_stream_as_read', { stream_id: big });
  channelEvents.stop();
  assert.equal(
    channelEvents.ofType('update_message_flags').map((e) => e.event.messages),
    [[elsewhere[0]]],
  );
  assert.equal(await unreadCount(ann), [1, false]);
  const again = captureEvents(realm.server.app, realm.id);
  await ann.client.post('/mark_stream_as_read', { stream_id: big });
  again.stop();
  assert.equal(again.ofType('update_message_flags'), [], 'nothing left to mark: no event, as Zulip');
});

test('moving a topic of 100,000 messages: 1,000 a transaction, each announced, and sends to the channel go on meanwhile', async () => {
  const events = captureEvents(realm.server.app, realm.id);
  let sentMeanwhile: Promise<number> | undefined;
  let moveAnswered = false;
  // Once the first batch is announced, someone writes in the channel: the send waits for one batch, not for the move.
  const watch = realm.server.app.bus.subscribe((e) => {
    if (e.realmId === realm.id && e.event.type === 'update_message' && !sentMeanwhile) {
      sentMeanwhile = send(ann, big, 'chat', 'while the topic moves').then((id) => (assert.not.ok(moveAnswered, 'the send is answered before the move'), id));
    }
  });
  const move = await realm.owner.client.patch(
    `/messages/${flood[0]}`,
    { topic: 'moved', propagate_mode: 'change_all', send_notification_to_old_thread: false, send_notification_to_new_thread: false },
    LONG,
  );
  moveAnswered = true;
  watch();
  events.stop();
  assert.equal(move.body, { result: 'success', msg: '', detached_uploads: [] });
  const chat = await sentMeanwhile!;
  const updates = events.ofType('update_message').map((e) => e.event as { message_ids: number[]; orig_subject: string; subject: string });
  assert.equal(
    updates.map((u) => u.message_ids.length),
    Array(TOPIC_SIZE / 1000).fill(1000),
  );
  assert.equal(
    updates.flatMap((u) => u.message_ids),
    flood,
  );
  assert.ok(updates.every((u) => u.orig_subject === 'flood' && u.subject === 'moved'));
  const newest = async (topic: string) =>
    (await ann.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: topicNarrow(big, topic) })).body.messages.map(
      (m: { id: number }) => m.id,
    );
  assert.equal([await newest('flood'), await newest('moved'), await newest('chat')], [[], [flood.at(-1)], [chat]]);
});

test('muting a user marks their 5,000 unread messages read 2,000 a transaction: the first batch commits with the mute, each announced', async () => {
  const di = await realm.addUser({ name: 'Di' });
  const channel = await makeChannel(realm, 'muting', [realm.owner, cy, di]);
  const fromCy = await bulkTopic(realm, channel, cy, 'chatter', 5000, di);
  await send(realm.owner, channel, 'chatter', 'not muted');
  assert.equal(await unreadCount(di), [5001, false]);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await di.client.post(`/users/me/muted_users/${cy.id}`)).body, { result: 'success', msg: '' });
  events.stop();
  const read = (messages: number[]) => ({ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages, all: false });
  assert.equal(
    events.envelopes.map((e) => [e.userIds, e.event.type === 'muted_users' ? 'muted_users' : e.event]),
    [
      [[di.id], read(fromCy.slice(0, 2000))],
      [[di.id], 'muted_users'],
      [[di.id], read(fromCy.slice(2000, 4000))],
      [[di.id], read(fromCy.slice(4000))],
    ],
  );
  assert.equal(await unreadCount(di), [1, false], "only the other sender's message stays unread");
});

test('deactivating a user who holds 100,000 rows touches none of them', async () => {
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await realm.owner.client.delete(`/users/${ann.id}`)).body, { result: 'success', msg: '' });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => e.event),
    [
      { type: 'subscription', op: 'peer_remove', stream_ids: [big], user_ids: [ann.id] },
      { type: 'subscription', op: 'peer_remove', stream_ids: [other], user_ids: [ann.id] },
      { type: 'realm_user', op: 'update', person: { user_id: ann.id, is_active: false } },
    ],
  );
});

test('archiving a channel of 100,000 messages touches none of them', async () => {
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await realm.owner.client.delete(`/streams/${big}`)).body, { result: 'success', msg: '' });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => e.event),
    [
      { type: 'stream', op: 'update', stream_id: big, name: 'big', property: 'is_archived', value: true },
      { type: 'stream', op: 'delete', streams: [{ stream_id: big }], stream_ids: [big], for_archiving: true },
    ],
  );
  const { body } = await realm.owner.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: topicNarrow(big, 'moved') });
  assert.equal(
    body.messages.map((m: { id: number }) => m.id),
    [flood.at(-1)],
    'its history stays readable',
  );
});

test.run();
