// POST /messages/{id}/typing (Zulip's send_message_edit_notification_backend): typing_edit_message
// events to the message's channel subscribers or conversation members who receive typing
// notifications; only the sender may say they are editing, within the edit limit without grace.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm } from '../helpers/server.ts';
import { age, errorBody, makeChannel, send, sendDm, setRealmSettings } from './messages-helpers.ts';

const ok = { result: 'success', msg: '' };

async function setSettings(realm: TestRealm, userId: number, settings: Record<string, boolean>) {
  await realm.server.app.prisma.user.update({ where: { id: userId }, data: { settings } });
  realm.server.app.auth.forget(userId);
}

test('a channel message: its subscribers hear it, the editor too, not those who turned typing off', async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'edits', [ann, bob, cat]);
  const id = await send(ann, channel, 'plans', 'draft');
  await setSettings(realm, cat.id, { receives_typing_notifications: false });
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await ann.client.post(`/messages/${id}/typing`, { op: 'start' })).body, ok);
  assert.equal((await ann.client.post(`/messages/${id}/typing`, { op: 'stop' })).body, ok);
  events.stop();
  const recipient = { type: 'channel', channel_id: channel, topic: 'plans' };
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [{ type: 'typing_edit_message', op: 'start', sender_id: ann.id, message_id: id, recipient }, [ann.id, bob.id]],
      [{ type: 'typing_edit_message', op: 'stop', sender_id: ann.id, message_id: id, recipient }, [ann.id, bob.id]],
    ],
  );
});

test('direct messages: the members who receive typing notifications, named in the event', async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const dm = await sendDm(ann, [bob.id], 'one');
  const group = await sendDm(ann, [bob.id, cat.id], 'many');
  await setSettings(realm, cat.id, { receives_typing_notifications: false });
  const events = captureEvents(realm.server.app, realm.id);
  await ann.client.post(`/messages/${dm}/typing`, { op: 'start' });
  await ann.client.post(`/messages/${group}/typing`, { op: 'stop' });
  events.stop();
  const pair = [ann.id, bob.id].sort((a, b) => a - b);
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [{ type: 'typing_edit_message', op: 'start', sender_id: ann.id, message_id: dm, recipient: { type: 'direct', user_ids: pair } }, pair],
      [{ type: 'typing_edit_message', op: 'stop', sender_id: ann.id, message_id: group, recipient: { type: 'direct', user_ids: pair } }, pair],
    ],
  );
});

test('clients without empty_topic_name see the empty topic by its display name', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'edits', [ann, realm.owner]);
  const id = await send(ann, channel, '', 'no topic');
  const modern = await openQueue(realm.owner, { event_types: ['typing_edit_message'], client_capabilities: { empty_topic_name: true } });
  const old = await openQueue(realm.owner, { event_types: ['typing_edit_message'] });
  await ann.client.post(`/messages/${id}/typing`, { op: 'start' });
  const event = (topic: string) => ({
    type: 'typing_edit_message',
    op: 'start',
    sender_id: ann.id,
    message_id: id,
    recipient: { type: 'channel', channel_id: channel, topic },
  });
  assert.equal(await modern.next(), [event('')]);
  assert.equal(await old.next(), [event('general chat')]);
});

test('errors: only the sender, while editing is allowed and in time; settings; parameters', async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'edits', [ann, bob]);
  const id = await send(ann, channel, 'plans', 'draft');
  const dm = await sendDm(ann, [ann.id], 'to self');
  const events = captureEvents(realm.server.app, realm.id);
  const expect = async (user: typeof ann, messageId: number, params: Record<string, unknown>, body: object) => {
    const r = await user.client.post(`/messages/${messageId}/typing`, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  };
  await expect(ann, id, {}, errorBody("Missing 'op' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'op' }));
  await expect(ann, id, { op: 'begin' }, errorBody('Invalid op', 'BAD_REQUEST', { var_name: 'op' }));
  await expect(bob, id, { op: 'start' }, errorBody("You don't have permission to edit this message"));
  await expect(bob, dm, { op: 'start' }, errorBody('Invalid message(s)'));
  await expect(ann, 999999, { op: 'start' }, errorBody('Invalid message(s)'));
  // No grace period: 610 s after sending, with the default 600 s limit (an edit still has 20 s).
  await age(realm, [id], 610);
  await expect(ann, id, { op: 'start' }, errorBody('The time limit for editing this message has passed'));
  assert.is((await ann.client.patch(`/messages/${id}`, { content: 'still editable' })).status, 200);
  await setRealmSettings(realm, { allow_message_editing: false });
  await expect(ann, dm, { op: 'start' }, errorBody('Your organization has turned off message editing'));
  await setRealmSettings(realm, { allow_message_editing: true, message_content_edit_limit_seconds: null });
  await setSettings(realm, ann.id, { send_stream_typing_notifications: false, send_private_typing_notifications: false });
  await expect(ann, id, { op: 'start' }, errorBody('User has disabled typing notifications for channel messages'));
  await expect(ann, dm, { op: 'start' }, errorBody('User has disabled typing notifications for direct messages'));
  events.stop();
  assert.equal(events.ofType('typing_edit_message'), []);
});

test.run();
