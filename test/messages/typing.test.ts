// Typing notifications: direct and channel typing events, their recipients, and the errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents, eventAs } from '../helpers/events.ts';
import { newRealm, type TestRealm } from '../helpers/server.ts';

const err = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
const ok = { result: 'success', msg: '' };

async function setSetting(realm: TestRealm, userId: number, settings: Record<string, boolean>) {
  await realm.server.app.prisma.user.update({ where: { id: userId }, data: { settings } });
  realm.server.app.auth.forget(userId);
}

test('direct typing: sender plus recipients, sender last when not listed; op stop; legacy "private"', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const carol = await realm.addUser();
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await alice.client.post('/typing', { op: 'start', to: [bob.id, carol.id] })).body, ok);
  assert.equal((await alice.client.post('/typing', { type: 'private', op: 'stop', to: [bob.id] })).body, ok);
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [
        {
          type: 'typing',
          op: 'start',
          message_type: 'direct',
          sender: { user_id: alice.id, email: alice.email },
          recipients: [
            { user_id: bob.id, email: bob.email },
            { user_id: carol.id, email: carol.email },
            { user_id: alice.id, email: alice.email },
          ],
        },
        [alice.id, bob.id, carol.id],
      ],
      [
        {
          type: 'typing',
          op: 'stop',
          message_type: 'direct',
          sender: { user_id: alice.id, email: alice.email },
          recipients: [
            { user_id: bob.id, email: bob.email },
            { user_id: alice.id, email: alice.email },
          ],
        },
        [alice.id, bob.id],
      ],
    ],
  );
});

test('direct typing errors send nothing', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const events = captureEvents(realm.server.app, realm.id);
  const cases: [Record<string, unknown>, object][] = [
    [{ op: 'start' }, err("Missing 'to' argument")],
    [{ op: 'start', to: [] }, err("Empty 'to' list")],
    [{ op: 'start', to: [999999] }, err('Invalid user ID 999999')],
    [
      { op: 'begin', to: [realm.owner.id] },
      { ...err('Invalid op'), var_name: 'op' },
    ],
    [
      { type: 'email', op: 'start', to: [realm.owner.id] },
      { ...err('Invalid type'), var_name: 'type' },
    ],
    [{ to: [realm.owner.id] }, { result: 'error', msg: "Missing 'op' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'op' }],
  ];
  for (const [params, body] of cases) {
    const r = await alice.client.post('/typing', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  await setSetting(realm, alice.id, { send_private_typing_notifications: false });
  const off = await alice.client.post('/typing', { op: 'start', to: [realm.owner.id] });
  assert.equal(off.body, err('User has disabled typing notifications for direct messages'));
  events.stop();
  assert.equal(events.envelopes, []);
});

test('channel typing: the subscribers, the typist too; access and settings', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const outsider = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  await alice.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'room' }], principals: [alice.id, bob.id] });
  const id = (await alice.client.get('/get_stream_id', { stream: 'room' })).body.stream_id;
  await alice.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'closed' }], invite_only: true });
  const closed = (await alice.client.get('/get_stream_id', { stream: 'closed' })).body.stream_id;

  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await alice.client.post('/typing', { type: 'channel', op: 'start', stream_id: id, topic: 'plans' })).body, ok);
  assert.equal((await outsider.client.post('/typing', { type: 'stream', op: 'stop', stream_id: id, topic: 'general chat' })).body, ok);
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [
        { type: 'typing', op: 'start', message_type: 'stream', sender: { user_id: alice.id, email: alice.email }, stream_id: id, topic: 'plans' },
        [alice.id, bob.id],
      ],
      [
        { type: 'typing', op: 'stop', message_type: 'stream', sender: { user_id: outsider.id, email: outsider.email }, stream_id: id, topic: '' },
        [alice.id, bob.id],
      ],
    ],
  );

  const failing = captureEvents(realm.server.app, realm.id);
  const cases: [typeof alice, Record<string, unknown>, object][] = [
    [alice, { type: 'stream', op: 'start', topic: 'x' }, err("Missing 'stream_id' argument")],
    [alice, { type: 'stream', op: 'start', stream_id: id }, err('Missing topic')],
    [outsider, { type: 'stream', op: 'start', stream_id: closed, topic: 'x' }, err('Invalid channel ID')],
    [guest, { type: 'stream', op: 'start', stream_id: id, topic: 'x' }, err('Invalid channel ID')],
  ];
  for (const [user, params, body] of cases) {
    const r = await user.client.post('/typing', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  await alice.client.patch(`/streams/${id}`, { can_send_message_group: { new: realm.server.app.realms.byId(realm.id)!.systemGroups['role:administrators'] } });
  const muted = await bob.client.post('/typing', { type: 'stream', op: 'start', stream_id: id, topic: 'x' });
  assert.equal(muted.body, err('You do not have permission to post in this channel.'));
  await setSetting(realm, alice.id, { send_stream_typing_notifications: false });
  const off = await alice.client.post('/typing', { type: 'stream', op: 'start', stream_id: id, topic: 'x' });
  assert.equal(off.body, err('User has disabled typing notifications for channel messages'));
  failing.stop();
  assert.equal(failing.ofType('typing'), []);
});

test('nobody hears who turned receives_typing_notifications off; channels over 100 subscribers hear nothing', async () => {
  const realm = await newRealm();
  const [alice, bob, carol] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  await setSetting(realm, carol.id, { receives_typing_notifications: false });
  await alice.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'small' }], principals: [alice.id, bob.id, carol.id] });
  const small = (await alice.client.get('/get_stream_id', { stream: 'small' })).body.stream_id;
  const crowd = await Promise.all(Array.from({ length: 99 }, () => realm.addUser()));
  await alice.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'big' }], principals: [alice.id, bob.id, ...crowd.map((u) => u.id)] });
  const big = (await alice.client.get('/get_stream_id', { stream: 'big' })).body.stream_id;

  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await alice.client.post('/typing', { op: 'start', to: [bob.id, carol.id] })).body, ok);
  assert.equal((await alice.client.post('/typing', { type: 'stream', op: 'start', stream_id: small, subject: ' plans ' })).body, ok);
  assert.equal((await alice.client.post('/typing', { type: 'stream', op: 'start', stream_id: big, topic: 'x' })).body, ok);
  events.stop();
  assert.equal(
    events.envelopes.map(({ event, userIds }) => {
      const typing = eventAs(event, 'typing');
      return [typing.message_type, 'topic' in typing ? typing.topic : undefined, userIds];
    }),
    [
      ['direct', undefined, [alice.id, bob.id]],
      ['stream', 'plans', [alice.id, bob.id]],
    ],
  );
});

test.run();
