// DELETE /messages/{id}: realm and channel permissions, the time limit without grace, events.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { newRealm } from '../helpers/server.ts';
import { age, errorBody, makeChannel, send, sendDm, setRealmSettings, systemGroup, setChannelRow } from './messages-helpers.ts';

test('deleting own messages: event to subscribers, then gone', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const id = await send(alice, sid, 'topic', 'oops');
  const events = captureEvents(realm.server.app, realm.id);
  const r = await alice.client.delete(`/messages/${id}`);
  events.stop();
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '' }]);
  const [env] = events.ofType('delete_message');
  assert.equal(env!.userIds.slice().sort(), [realm.owner.id, alice.id].sort());
  assert.equal(env!.event, { type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: sid, topic: 'topic' });
  assert.equal((await alice.client.delete(`/messages/${id}`)).body, errorBody('Invalid message(s)'));
  const dm = await sendDm(alice, [realm.owner.id], 'private oops');
  const dmEvents = captureEvents(realm.server.app, realm.id);
  await alice.client.delete(`/messages/${dm}`);
  dmEvents.stop();
  assert.equal(dmEvents.ofType('delete_message')[0]!.event, { type: 'delete_message', message_ids: [dm], message_type: 'private' });
});

test("deleting a channel's first message moves first_message_id to the oldest left, and says so (Zulip's check_update_first_message_id)", async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const first = await send(alice, sid, 't', 'first');
  const second = await send(alice, sid, 't', 'second');
  const events = captureEvents(realm.server.app, realm.id);
  assert.is((await alice.client.delete(`/messages/${first}`)).status, 200);
  events.stop();
  const [update] = events.ofType('stream');
  assert.equal(update!.event, { type: 'stream', op: 'update', stream_id: sid, name: 'general', property: 'first_message_id', value: second });
  assert.ok(update!.userIds.includes(realm.owner.id) && update!.userIds.includes(alice.id));
  assert.is((await alice.client.get(`/streams/${sid}`)).body.stream.first_message_id, second);
});

test('delete permissions: others, time limit without grace, admins any time, channel settings', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [alice, bob]);
  const id = await send(alice, sid, 't', 'x');
  assert.equal((await bob.client.delete(`/messages/${id}`)).body, errorBody("You don't have permission to delete this message"));
  await age(realm, [id], 600 + 2);
  assert.equal((await alice.client.delete(`/messages/${id}`)).body, errorBody('The time limit for deleting this message has passed'));
  await age(realm, [id], 600 - 5);
  await setRealmSettings(realm, {}, { can_delete_own_message_group: systemGroup(realm, 'role:nobody') });
  assert.equal((await alice.client.delete(`/messages/${id}`)).body, errorBody("You don't have permission to delete this message"));
  await setChannelRow(realm, sid, { permissions: { can_delete_own_message_group: systemGroup(realm, 'role:members') } });
  assert.is((await alice.client.delete(`/messages/${id}`)).status, 200, 'the channel-level own-message permission applies');

  const other = await send(alice, sid, 't', 'y');
  await setChannelRow(realm, sid, { permissions: { can_delete_any_message_group: systemGroup(realm, 'role:members') } });
  await age(realm, [other], 86400 * 30);
  assert.is((await bob.client.delete(`/messages/${other}`)).status, 200, 'can_delete_any_message_group has no time limit');
  const old = await send(alice, sid, 't', 'z');
  await age(realm, [old], 86400 * 365);
  assert.is((await realm.owner.client.delete(`/messages/${old}`)).status, 200, 'administrators delete any message any time');
});

test.run();
