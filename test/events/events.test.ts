// The real-time API over HTTP: register, long-poll, acknowledgement, errors, expiry, heartbeats,
// filters and capabilities, as zulip-js and the Python client use them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { registerDuringWrites } from '../helpers/register-race.ts';

const register = async (user: TestUser, params: Record<string, unknown> = {}) => {
  const r = await user.client.post('/register', params);
  assert.is(r.status, 200, r.text);
  return r.body as { queue_id: string; last_event_id: number } & Record<string, any>;
};
const poll = (user: TestUser, queue_id: string, last_event_id: number, extra: Record<string, unknown> = {}) =>
  user.client.get('/events', { queue_id, last_event_id, ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('register: queue, versions, idle timeout and the requested state only', async () => {
  const realm = await newRealm();
  const r = await register(realm.owner, { fetch_event_types: ['message', 'realm'], idle_queue_timeout: 120 });
  assert.match(r.queue_id, /^[0-9a-f-]{36}$/);
  assert.is(r.last_event_id, -1);
  assert.is(r.zulip_feature_level, 491);
  assert.type(r.zulip_version, 'string');
  assert.type(r.zulip_merge_base, 'string');
  assert.is(r.idle_queue_timeout_secs, 120);
  assert.is(r.max_message_id, -1);
  assert.is(r.max_message_length, 10000);
  assert.is(r.max_topic_length, 60);
  assert.is(r.realm_empty_topic_display_name, 'general chat');
  assert.not.ok('unread_msgs' in r, 'unread counts come only with update_message_flags too');
  assert.not.ok('realm_users' in r);
  assert.not.ok('subscriptions' in r);
  const all = await register(realm.owner);
  assert.is(all.idle_queue_timeout_secs, 600);
  for (const key of [
    'realm_users',
    'subscriptions',
    'never_subscribed',
    'unread_msgs',
    'recent_private_conversations',
    'navigation_views',
    'saved_snippets',
    'channel_folders',
    'drafts',
    'presences',
    'realm_linkifiers',
    'user_settings',
    'realm_user_groups',
  ]) {
    assert.ok(key in all, key);
  }
  assert.equal(all.realm_linkifiers, []);
});

test('register: subscriptions, include_subscribers and notification_settings_null', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  await makeChannel(realm, 'other', [realm.owner]);
  const plain = await register(bob, { fetch_event_types: ['subscription'] });
  assert.equal(
    plain.subscriptions.map((s: { stream_id: number }) => s.stream_id),
    [channelId],
  );
  assert.not.ok('subscribers' in plain.subscriptions[0]);
  assert.is(plain.subscriptions[0].desktop_notifications, false, 'null replaced by the user default');
  assert.equal(
    plain.never_subscribed.map((s: { name: string }) => s.name),
    ['other'],
  );
  const modern = await register(bob, {
    fetch_event_types: ['subscription'],
    include_subscribers: true,
    client_capabilities: { notification_settings_null: true },
  });
  assert.equal(modern.subscriptions[0].subscribers, [realm.owner.id, bob.id]);
  assert.is(modern.subscriptions[0].desktop_notifications, null);
  const partial = await register(bob, { fetch_event_types: ['subscription'], include_subscribers: 'partial' });
  assert.equal(partial.subscriptions[0].subscribers, [realm.owner.id, bob.id], 'small channels list everyone');
  // Later subscription events follow the same rule.
  const legacyQueue = await register(bob, { event_types: ['subscription'] });
  const modernQueue = await register(bob, { event_types: ['subscription'], client_capabilities: { notification_settings_null: true } });
  assert.is((await bob.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'third' }] })).status, 200);
  const added = async (queueId: string) => {
    const events = (await poll(bob, queueId, -1, { dont_block: true })).body.events.filter((e: { op: string }) => e.op === 'add');
    assert.is(events.length, 1);
    assert.not.ok('inherited_notification_settings' in events[0]);
    return events[0].subscriptions[0];
  };
  assert.is((await added(legacyQueue.queue_id)).desktop_notifications, false);
  assert.is((await added(modernQueue.queue_id)).desktop_notifications, null);
});

test('register during sends: every message is in the state or in the queue, never both', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const sent: number[] = [];
  let sending = true;
  const sender = (async () => {
    while (sending) sent.push(await sendDm(realm.owner, [bob.id], `m${sent.length}`));
  })();
  const snapshots = [];
  for (let i = 0; i < 8; i++) snapshots.push(await register(bob, { fetch_event_types: ['message'], event_types: ['message'] }));
  sending = false;
  await sender;
  for (const snap of snapshots) {
    const r = await poll(bob, snap.queue_id, -1, { dont_block: true });
    const queued = r.body.events.map((e: { message: { id: number } }) => e.message.id);
    assert.ok(
      queued.every((id: number) => id > snap.max_message_id),
      'no message twice',
    );
    const expected = sent.filter((id) => id > snap.max_message_id);
    assert.equal(queued, expected, 'no message lost');
  }
});

test('register during other changes: snippets, drafts and groups are in the state or in the queue, never both', async () => {
  await registerDuringWrites(await newRealm());
});

test('long-poll: a message from another user arrives with the reference shape', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  const q = await register(bob, { event_types: ['message'], apply_markdown: true });
  const parked = poll(bob, q.queue_id, -1);
  await sleep(50);
  const id = await send(realm.owner, channelId, 'greetings', 'hello **world**');
  const r = await parked;
  assert.is(r.status, 200);
  assert.is(r.body.result, 'success');
  assert.is(r.body.queue_id, q.queue_id);
  assert.is(r.body.events.length, 1);
  const event = r.body.events[0];
  assert.equal(Object.keys(event).sort(), ['flags', 'id', 'message', 'type']);
  assert.is(event.id, 0);
  assert.is(event.type, 'message');
  assert.equal(event.flags, []);
  const m = event.message;
  assert.is(m.id, id);
  assert.is(m.content, '<p>hello <strong>world</strong></p>');
  assert.is(m.content_type, 'text/html');
  assert.is(m.subject, 'greetings');
  assert.is(m.display_recipient, 'general');
  assert.is(m.stream_id, channelId);
  assert.is(m.type, 'stream');
  assert.is(m.sender_id, realm.owner.id);
  assert.is(m.avatar_url, null, 'client_gravatar defaults to true');
  assert.not.ok('raw_content' in m);
  const again = await poll(bob, q.queue_id, 0, { dont_block: true });
  assert.equal(again.body, { result: 'success', msg: '', events: [] });
});

test('apply_markdown=false gives the source; sender gets local_message_id and read flag', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  const mine = await register(realm.owner, { event_types: ['message'], client_gravatar: false });
  const theirs = await register(bob, { event_types: ['message'] });
  const r = await realm.owner.client.post('/messages', {
    type: 'stream',
    to: channelId,
    topic: 't',
    content: '*hi*',
    queue_id: mine.queue_id,
    local_id: '1.01',
  });
  assert.is(r.status, 200, r.text);
  const own = (await poll(realm.owner, mine.queue_id, -1)).body.events[0];
  assert.is(own.local_message_id, '1.01');
  assert.equal(own.flags, ['read']);
  assert.is(own.message.content, '*hi*');
  assert.is(own.message.content_type, 'text/x-markdown');
  assert.type(own.message.avatar_url, 'string');
  const other = (await poll(bob, theirs.queue_id, -1)).body.events[0];
  assert.not.ok('local_message_id' in other);
});

test('acknowledgement prunes; the two last_event_id errors', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const q = await register(bob, { event_types: ['message'] });
  for (let i = 0; i < 3; i++) await sendDm(realm.owner, [bob.id], `m${i}`);
  const first = await poll(bob, q.queue_id, -1);
  assert.equal(
    first.body.events.map((e: { id: number }) => e.id),
    [0, 1, 2],
  );
  const afterAck = await poll(bob, q.queue_id, 1, { dont_block: true });
  assert.equal(
    afterAck.body.events.map((e: { id: number }) => e.id),
    [2],
  );
  const pruned = await poll(bob, q.queue_id, 0, { dont_block: true });
  assert.equal([pruned.status, pruned.body], [400, { result: 'error', msg: 'An event newer than 1 has already been pruned!', code: 'BAD_REQUEST' }]);
  const missing = await poll(bob, q.queue_id, 7, { dont_block: true });
  assert.equal([missing.status, missing.body], [400, { result: 'error', msg: 'Event 7 was not in this queue', code: 'BAD_REQUEST' }]);
});

test('missing arguments; dont_block without queue_id creates a queue', async () => {
  const realm = await newRealm();
  const noQueue = await realm.owner.client.get('/events', { last_event_id: -1 });
  assert.equal(
    [noQueue.status, noQueue.body],
    [400, { result: 'error', msg: "Missing 'queue_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'queue_id' }],
  );
  const q = await register(realm.owner);
  const noId = await realm.owner.client.get('/events', { queue_id: q.queue_id });
  assert.equal([noId.status, noId.body.msg], [400, "Missing 'last_event_id' argument"]);
  const created = await realm.owner.client.get('/events', { dont_block: true });
  assert.is(created.status, 200);
  assert.match(created.body.queue_id, /^[0-9a-f-]{36}$/);
  assert.equal(created.body.events, []);
});

test("BAD_EVENT_QUEUE_ID: unknown, another user's, deleted", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const unknown = await poll(bob, 'hamster', -1);
  assert.equal([unknown.status, unknown.body], [400, { result: 'error', msg: 'Bad event queue ID: hamster', code: 'BAD_EVENT_QUEUE_ID', queue_id: 'hamster' }]);
  const q = await register(realm.owner);
  const stolen = await poll(bob, q.queue_id, -1);
  assert.equal([stolen.status, stolen.body.code, stolen.body.queue_id], [400, 'BAD_EVENT_QUEUE_ID', q.queue_id]);
  const stolenDelete = await bob.client.delete('/events', { queue_id: q.queue_id });
  assert.equal([stolenDelete.status, stolenDelete.body.code], [400, 'BAD_EVENT_QUEUE_ID']);
  const del = await realm.owner.client.delete('/events', { queue_id: q.queue_id });
  assert.equal([del.status, del.body], [200, { result: 'success', msg: '' }]);
  const gone = await poll(realm.owner, q.queue_id, -1);
  assert.equal([gone.status, gone.body.code], [400, 'BAD_EVENT_QUEUE_ID']);
});

test('a second GET completes the parked one with [] and queue_id', async () => {
  const realm = await newRealm();
  const q = await register(realm.owner);
  const first = poll(realm.owner, q.queue_id, -1);
  await sleep(50);
  const second = poll(realm.owner, q.queue_id, -1, { dont_block: true });
  const r = await first;
  assert.equal(r.body, { result: 'success', msg: '', events: [], queue_id: q.queue_id });
  assert.equal((await second).body.events, []);
});

test('DELETE /events completes a parked poll', async () => {
  const realm = await newRealm();
  const q = await register(realm.owner);
  const parked = poll(realm.owner, q.queue_id, -1);
  await sleep(50);
  await realm.owner.client.delete('/events', { queue_id: q.queue_id });
  assert.equal((await parked).body.events, []);
});

test('heartbeat: ignores event_types and takes no id, repeating the newest handed out (test server beats every 2 s)', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const q = await register(bob, { event_types: ['message'] });
  const first = await poll(bob, q.queue_id, -1);
  assert.equal(first.body.events, [{ id: -1, type: 'heartbeat' }]);
  await sendDm(realm.owner, [bob.id], 'one');
  const one = await poll(bob, q.queue_id, -1);
  assert.equal(
    one.body.events.map((e: { id: number; type: string }) => [e.id, e.type]),
    [[0, 'message']],
  );
  // Acknowledged or not, the newest event's id is what the heartbeat carries.
  const again = await poll(bob, q.queue_id, -1);
  assert.equal(
    again.body.events.map((e: { id: number; type: string }) => [e.id, e.type]),
    [[0, 'message']],
  );
  assert.equal((await poll(bob, q.queue_id, 0)).body.events, [{ id: 0, type: 'heartbeat' }]);
  await sendDm(realm.owner, [bob.id], 'two');
  const two = await poll(bob, q.queue_id, 0);
  assert.equal(
    two.body.events.map((e: { id: number; type: string }) => [e.id, e.type]),
    [[1, 'message']],
  );
});

test('idle queues expire and leave nothing behind', async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  const before = app.queues.size;
  const q = await register(realm.owner, { idle_queue_timeout: 1 });
  assert.is(app.queues.size, before + 1);
  await sleep(2300);
  const r = await poll(realm.owner, q.queue_id, -1, { dont_block: true });
  assert.equal([r.status, r.body.code], [400, 'BAD_EVENT_QUEUE_ID']);
  assert.is(app.queues.get(q.queue_id, realm.owner.id), undefined);
  assert.is(app.queues.queuesOf(realm.owner.id).size, 0);
});

test('a parked queue does not expire while its client waits', async () => {
  const realm = await newRealm();
  const q = await register(realm.owner, { idle_queue_timeout: 1, event_types: ['message'] });
  const r = await poll(realm.owner, q.queue_id, -1);
  assert.equal(r.body.events, [{ id: -1, type: 'heartbeat' }]);
  const again = await poll(realm.owner, q.queue_id, -1, { dont_block: true });
  assert.is(again.status, 200);
});

test('narrow filters message events', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const a = await makeChannel(realm, 'alpha', [realm.owner, bob]);
  const b = await makeChannel(realm, 'beta', [realm.owner, bob]);
  const q = await register(bob, { event_types: ['message'], narrow: [['stream', 'Alpha']] });
  const dm = await register(bob, { event_types: ['message'], narrow: [['is', 'dm']] });
  await send(realm.owner, b, 't', 'in beta');
  const inAlpha = await send(realm.owner, a, 't', 'in alpha');
  const direct = await sendDm(realm.owner, [bob.id], 'direct');
  const r = await poll(bob, q.queue_id, -1, { dont_block: true });
  assert.equal(
    r.body.events.map((e: { message: { id: number } }) => e.message.id),
    [inAlpha],
  );
  const d = await poll(bob, dm.queue_id, -1, { dont_block: true });
  assert.equal(
    d.body.events.map((e: { message: { id: number } }) => e.message.id),
    [direct],
  );
});

test('guests may not use all_public_streams; members get public channel messages with it', async () => {
  const realm = await newRealm();
  const guest = await realm.addUser({ role: 600 });
  const denied = await guest.client.post('/register', { all_public_streams: true });
  assert.equal([denied.status, denied.body], [400, { result: 'error', msg: 'User not authorized for this query', code: 'BAD_REQUEST' }]);
  const outsider = await realm.addUser();
  const open = await makeChannel(realm, 'open', [realm.owner]);
  const closed = await makeChannel(realm, 'closed', [realm.owner], { invite_only: true });
  const q = await register(outsider, { event_types: ['message'], all_public_streams: true });
  const plain = await register(outsider, { event_types: ['message'] });
  const visible = await send(realm.owner, open, 't', 'public');
  await send(realm.owner, closed, 't', 'private');
  const r = await poll(outsider, q.queue_id, -1, { dont_block: true });
  assert.equal(
    r.body.events.map((e: { message: { id: number } }) => e.message.id),
    [visible],
  );
  assert.equal((await poll(outsider, plain.queue_id, -1, { dont_block: true })).body.events, []);
});

test('empty topic: shown as realm_empty_topic_display_name unless empty_topic_name', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  const legacy = await register(bob, { event_types: ['message'] });
  const modern = await register(bob, { event_types: ['message'], client_capabilities: { empty_topic_name: true } });
  await send(realm.owner, channelId, '', 'no topic');
  assert.is((await poll(bob, legacy.queue_id, -1)).body.events[0].message.subject, 'general chat');
  assert.is((await poll(bob, modern.queue_id, -1)).body.events[0].message.subject, '');
});

test('bulk_message_deletion decides the delete_message form', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  const id = await send(realm.owner, channelId, 't', 'doomed');
  const bulk = await register(bob, { event_types: ['delete_message'], client_capabilities: { bulk_message_deletion: true } });
  const single = await register(bob, { event_types: ['delete_message'] });
  const del = await realm.owner.client.delete(`/messages/${id}`);
  assert.is(del.status, 200, del.text);
  const b = (await poll(bob, bulk.queue_id, -1)).body.events;
  assert.equal(b, [{ id: 0, type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: channelId, topic: 't' }]);
  const s = (await poll(bob, single.queue_id, -1)).body.events;
  assert.equal(s, [{ id: 0, type: 'delete_message', message_id: id, message_type: 'stream', stream_id: channelId, topic: 't' }]);
});

test('spectators: 401 unless the organization is web-public', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.post('/register');
  assert.equal([r.status, r.body.code], [401, 'UNAUTHORIZED']);
  const app = realm.server.app;
  await app.prisma.realm.update({ where: { id: realm.id }, data: { settings: { enable_spectator_access: true } } });
  await app.realms.reload(realm.id);
  const spectator = await realm.anonymous.post('/register', { client_gravatar: false });
  assert.is(spectator.status, 200, spectator.text);
  assert.is(spectator.body.queue_id, null);
  const gravatar = await realm.anonymous.post('/register', { client_gravatar: true });
  assert.equal([gravatar.status, gravatar.body.msg], [400, "Invalid 'client_gravatar' parameter for anonymous request"]);
  const subs = await realm.anonymous.post('/register', { client_gravatar: false, include_subscribers: true });
  assert.equal([subs.status, subs.body.msg], [400, "Invalid 'include_subscribers' parameter for anonymous request"]);
});

test.run();
