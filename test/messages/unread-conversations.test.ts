// register's unread_msgs reads each unread message's conversation from its UserMessage row
// (migration 20261129113000): after every change that moves a message or makes it unread again,
// the answer must be the one the messages themselves give.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { makeChannel, send, sendDm } from './messages-helpers.ts';

const unreadOf = async (user: TestUser) => (await user.client.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).body.unread_msgs;

const flags = async (user: TestUser, messages: number[], op: 'add' | 'remove') => {
  const r = await user.client.post('/messages/flags', { messages, op, flag: 'read' });
  assert.is(r.status, 200, r.text);
};

const move = async (user: TestUser, id: number, to: Record<string, unknown>) => {
  const r = await user.client.patch(`/messages/${id}`, {
    ...to,
    propagate_mode: 'change_all',
    send_notification_to_old_thread: false,
    send_notification_to_new_thread: false,
  });
  assert.is(r.status, 200, r.text);
};

test('unread messages follow topic renames and channel moves, read ones too once marked unread', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const lobby = await makeChannel(realm, 'lobby', [bob]);
  const attic = await makeChannel(realm, 'attic', [bob]);
  const a = await send(realm.owner, lobby, 'plans', 'one');
  const b = await send(realm.owner, lobby, 'plans', 'two');
  const c = await send(realm.owner, lobby, 'other', 'three');
  // b is read while its topic is renamed and moved, then unread again.
  await flags(bob, [b], 'add');
  await move(realm.owner, a, { topic: 'schemes' });
  await move(realm.owner, c, { stream_id: attic, topic: 'moved' });
  await flags(bob, [b], 'remove');
  assert.equal(await unreadOf(bob), {
    count: 3,
    pms: [],
    streams: [
      { stream_id: lobby, topic: 'schemes', unread_message_ids: [a, b] },
      { stream_id: attic, topic: 'moved', unread_message_ids: [c] },
    ],
    huddles: [],
    mentions: [],
    old_unreads_missing: false,
  });
});

test('topics differing in case are one conversation named by its oldest message; mentions by kind and mute', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const cy = await realm.addUser();
  const lobby = await makeChannel(realm, 'lobby', [bob, cy]);
  const first = await send(realm.owner, lobby, 'Plans', 'upper');
  const second = await send(realm.owner, lobby, 'plans', `@**Bob|${bob.id}** lower`);
  const muted = await send(realm.owner, lobby, 'quiet', '@**all** in a muted topic');
  const loud = await send(realm.owner, lobby, 'loud', '@**all** counted');
  const r = await bob.client.post('/user_topics', { stream_id: lobby, topic: 'quiet', visibility_policy: 1 });
  assert.is(r.status, 200, r.text);
  const dm = await sendDm(realm.owner, [bob.id], 'hello');
  const group = await sendDm(cy, [bob.id, realm.owner.id], '@**all** in a group');
  assert.equal(await unreadOf(bob), {
    count: 5,
    pms: [{ other_user_id: realm.owner.id, sender_id: realm.owner.id, unread_message_ids: [dm] }],
    streams: [
      { stream_id: lobby, topic: 'loud', unread_message_ids: [loud] },
      { stream_id: lobby, topic: 'Plans', unread_message_ids: [first, second] },
      { stream_id: lobby, topic: 'quiet', unread_message_ids: [muted] },
    ],
    huddles: [{ user_ids_string: [realm.owner.id, bob.id, cy.id].sort((x, y) => x - y).join(','), unread_message_ids: [group] }],
    mentions: [second, loud, group],
    old_unreads_missing: false,
  });
});

test('unread rows from before the migration, their conversation not yet filled in, are listed the same', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const lobby = await makeChannel(realm, 'lobby', [bob]);
  const old = await send(realm.owner, lobby, 'history', 'old');
  const dm = await sendDm(realm.owner, [bob.id], 'an old secret');
  const fresh = await send(realm.owner, lobby, 'history', 'new');
  const expected = await unreadOf(bob);
  assert.equal(expected.streams, [{ stream_id: lobby, topic: 'history', unread_message_ids: [old, fresh] }]);
  await realm.server.app.prisma
    .$executeRaw`UPDATE "UserMessage" SET "channelId" = NULL, topic = NULL, "directGroupId" = NULL WHERE "userId" = ${bob.id} AND "messageId" IN (${old}, ${dm})`;
  assert.equal(await unreadOf(bob), expected);
});

test.run();
