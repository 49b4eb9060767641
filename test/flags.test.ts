// Read state: POST /messages/flags, /messages/flags/narrow, /mark_all_as_read, /mark_stream_as_read, /mark_topic_as_read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from './helpers/events.ts';
import { newRealm } from './helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from './messages-helpers.ts';

const flagsOf = async (client: { get: Function }, id: number) => (await client.get(`/messages/${id}`)).body.message.flags;

test('POST /messages/flags: add/remove, events, validation', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const [a, b] = [await send(realm.owner, sid, 't', 'one'), await send(realm.owner, sid, 't', 'two @**Olivia Owner**')];
  const dm = await sendDm(realm.owner, [alice.id], 'dm');
  const events = captureEvents(realm.server.app, realm.id);
  const r = await alice.client.post('/messages/flags', { messages: [a, b, dm], op: 'add', flag: 'starred' });
  assert.equal(r.body, { result: 'success', msg: '', messages: [a, b, dm], ignored_because_not_subscribed_channels: [] });
  await alice.client.post('/messages/flags', { messages: [a, dm], op: 'add', flag: 'read' });
  await alice.client.post('/messages/flags', { messages: [a, dm], op: 'remove', flag: 'read' });
  events.stop();
  const [star, read, unread] = events.ofType('update_message_flags');
  assert.equal([star!.userIds, star!.event], [[alice.id], { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [a, b, dm], all: false }]);
  assert.equal(read!.event.messages, [a, dm]);
  assert.equal(unread!.event, {
    type: 'update_message_flags', op: 'remove', operation: 'remove', flag: 'read', messages: [a, dm], all: false,
    message_details: { [a]: { type: 'stream', stream_id: sid, topic: 't', unmuted_stream_msg: true }, [dm]: { type: 'private', user_ids: [realm.owner.id] } },
  });
  assert.equal(await flagsOf(alice.client, a), ['starred']);
  const errors: [Record<string, unknown>, string][] = [
    [{ messages: [a], op: 'add', flag: 'bogus' }, "Invalid flag: 'bogus'"],
    [{ messages: [a], op: 'add', flag: 'mentioned' }, "Flag not editable: 'mentioned'"],
    [{ messages: [a], op: 'toggle', flag: 'read' }, "Invalid message flag operation: 'toggle'"],
    [{ messages: [999999], op: 'add', flag: 'read' }, 'Invalid message(s)'],
  ];
  for (const [params, msg] of errors) assert.equal((await alice.client.post('/messages/flags', params)).body, errorBody(msg));
});

test('flags on unsubscribed public-channel messages: historical rows; unread is ignored', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const id = await send(realm.owner, sid, 't', 'x');
  await member.client.post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' });
  assert.equal(await flagsOf(member.client, id), ['read', 'starred', 'historical']);
  const unread = await member.client.post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' });
  assert.equal(unread.body.ignored_because_not_subscribed_channels, [sid]);
  assert.equal(await flagsOf(member.client, id), ['read', 'starred', 'historical']);
  assert.equal((await guest.client.post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' })).body, errorBody('Invalid message(s)'));
});

test('POST /messages/flags/narrow: counts and range', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await send(realm.owner, sid, i < 2 ? 'a' : 'b', `m${i}`));
  const r = await alice.client.post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'topic', operand: 'a' }], op: 'add', flag: 'read' });
  assert.equal(r.body, {
    result: 'success', msg: '', processed_count: 2, updated_count: 2, first_processed_id: ids[0], last_processed_id: ids[1],
    found_oldest: true, found_newest: true, ignored_because_not_subscribed_channels: [],
  });
  const again = await alice.client.post('/messages/flags/narrow', { anchor: ids[1], include_anchor: true, num_before: 1, num_after: 1, narrow: [], op: 'add', flag: 'read' });
  assert.equal([again.body.processed_count, again.body.updated_count, again.body.first_processed_id, again.body.last_processed_id], [3, 1, ids[0], ids[2]]);
  const bad = await alice.client.post('/messages/flags/narrow', { anchor: ids[1], include_anchor: false, num_before: 1, num_after: 1, op: 'add', flag: 'read' });
  assert.equal(bad.body, errorBody('The anchor can only be excluded at an end of the range'));
  const none = await alice.client.post('/messages/flags/narrow', { anchor: 'newest', num_before: 0, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }], op: 'add', flag: 'read' });
  assert.equal([none.body.processed_count, none.body.first_processed_id, none.body.last_processed_id], [0, null, null]);
});

test('mark_all_as_read, mark_stream_as_read, mark_topic_as_read', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const s1 = await makeChannel(realm, 'one', [realm.owner, alice]);
  const s2 = await makeChannel(realm, 'two', [realm.owner, alice]);
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const [a, b, c, d] = [await send(realm.owner, s1, 'x', '1'), await send(realm.owner, s1, 'Y', '2'), await send(realm.owner, s2, 'x', '3'), await sendDm(realm.owner, [alice.id], '4')];
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await alice.client.post('/mark_topic_as_read', { stream_id: s1, topic_name: 'y' })).body, { result: 'success', msg: '' });
  assert.equal(await flagsOf(alice.client, b), ['read']);
  assert.equal(await flagsOf(alice.client, a), []);
  assert.equal((await alice.client.post('/mark_topic_as_read', { stream_id: s1, topic_name: 'nope' })).body, errorBody("No such topic 'nope'"));
  await alice.client.post('/mark_stream_as_read', { stream_id: s1 });
  assert.equal(await flagsOf(alice.client, a), ['read']);
  assert.equal(await flagsOf(alice.client, c), []);
  assert.equal((await alice.client.post('/mark_stream_as_read', { stream_id: secret })).body, errorBody('Invalid channel ID'));
  const all = await alice.client.post('/mark_all_as_read');
  events.stop();
  assert.equal(all.body, { result: 'success', msg: '', complete: true });
  assert.equal([await flagsOf(alice.client, c), await flagsOf(alice.client, d)], [['read'], ['read']]);
  assert.equal(events.ofType('update_message_flags').map((e) => [e.event.messages, e.event.all]), [[[b], false], [[a], false], [[], true]]);
});

test.run();
