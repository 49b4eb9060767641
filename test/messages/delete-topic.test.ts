// POST /streams/{id}/delete_topic (Zulip's delete_in_topic): administrators delete every message of
// a topic they can read, in batches of 100 (one delete_message event each), then the topic's
// visibility settings; the answer says whether the topic is gone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { errorBody, makeChannel, send } from './messages-helpers.ts';
import { eventAs } from '../helpers/events.ts';

const complete = { result: 'success', msg: '', complete: true };

test('deletes the topic (any letter case), nothing else; one event per batch of 100', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const o = realm.owner.client;
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  const first = await send(bob, channel, 'Plans', 'one');
  const second = await send(realm.owner, channel, 'plans', 'two');
  const kept = await send(bob, channel, 'other', 'stays');
  const events = await verifyAction(realm, () => o.post(`/streams/${channel}/delete_topic`, { topic_name: 'PLANS' }), ['delete_message', 'stream/update']);
  assert.equal(events[0]!.event, { type: 'delete_message', message_ids: [first, second], message_type: 'stream', stream_id: channel, topic: 'Plans' });
  assert.equal(
    events[0]!.userIds.slice().sort((a, b) => a - b),
    [realm.owner.id, bob.id].sort((a, b) => a - b),
  );
  // The channel's first message went: its new first message is news.
  assert.equal(events[1]!.event, { type: 'stream', op: 'update', stream_id: channel, name: 'general', property: 'first_message_id', value: kept });
  const left = await realm.server.app.prisma.message.findMany({ where: { channelId: channel }, select: { id: true } });
  assert.equal(
    left.map((m) => m.id),
    [kept],
  );

  for (let i = 0; i < 101; i++) await send(bob, channel, 'big', `m${i}`);
  const batches = await verifyAction(realm, () => o.post(`/streams/${channel}/delete_topic`, { topic_name: 'big' }), ['delete_message', 'delete_message']);
  assert.equal(
    batches.map((e) => eventAs(e.event, 'delete_message').message_ids.length),
    [100, 1],
  );
  const r = await o.post(`/streams/${channel}/delete_topic`, { topic_name: 'nothing here' });
  assert.equal(r.body, complete);
});

test('"general chat" is the empty topic; the topic\'s mute and follow settings go with it', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  await send(bob, channel, '', 'no topic');
  await realm.server.app.prisma.userTopic.create({ data: { userId: bob.id, channelId: channel, topic: '', visibility: 1 } });
  const events = await verifyAction(realm, () => realm.owner.client.post(`/streams/${channel}/delete_topic`, { topic_name: 'general chat' }), [
    'delete_message',
    'stream/update',
    'user_topic',
  ]);
  const { last_updated: updated, ...event } = eventAs(events[2]!.event, 'user_topic');
  assert.equal(event, { type: 'user_topic', stream_id: channel, topic_name: '', visibility_policy: 0 });
  assert.ok(Math.abs((updated as number) - Date.now() / 1000) < 60);
  assert.equal(events[2]!.userIds, [bob.id]);
  assert.is(await realm.server.app.prisma.userTopic.count({ where: { channelId: channel } }), 0);
});

test('protected history: only what the administrator received goes; others keep their settings while they can read some', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const o = realm.owner.client;
  const channel = await makeChannel(realm, 'secret', [bob], { invite_only: true, history_public_to_subscribers: false });
  const early = await send(bob, channel, 'plans', 'before the owner came');
  await realm.server.app.prisma.userTopic.create({ data: { userId: bob.id, channelId: channel, topic: 'plans', visibility: 3 } });
  // Not subscribed: the owner cannot read the channel.
  assert.equal((await o.post(`/streams/${channel}/delete_topic`, { topic_name: 'plans' })).body, errorBody('Invalid channel ID'));
  assert.is((await bob.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [realm.owner.id] })).status, 200);
  const late = await send(bob, channel, 'plans', 'after');
  const events = await verifyAction(realm, () => o.post(`/streams/${channel}/delete_topic`, { topic_name: 'plans' }), ['delete_message']);
  assert.equal(eventAs(events[0]!.event, 'delete_message').message_ids, [late]);
  assert.equal(
    (await realm.server.app.prisma.message.findMany({ where: { channelId: channel }, select: { id: true } })).map((m) => m.id),
    [early],
  );
  assert.is(await realm.server.app.prisma.userTopic.count({ where: { channelId: channel } }), 1);
});

test('errors: administrators only; an active channel the caller can read', async () => {
  const realm = await newRealm();
  const moderator = await realm.addUser({ role: 300 });
  const channel = await makeChannel(realm, 'general', [realm.owner, moderator]);
  await send(moderator, channel, 'plans', 'x');
  // Zulip's access_stream_by_id requires an active channel: an archived one's topics stay.
  const archived = await makeChannel(realm, 'old', [realm.owner]);
  await send(realm.owner, archived, 'plans', 'kept');
  assert.is((await realm.owner.client.delete(`/streams/${archived}`)).status, 200);
  const cases: [typeof moderator, string, Record<string, unknown>, object][] = [
    [moderator, `/streams/${channel}/delete_topic`, { topic_name: 'plans' }, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')],
    [realm.owner, '/streams/999999/delete_topic', { topic_name: 'plans' }, errorBody('Invalid channel ID')],
    [realm.owner, `/streams/${archived}/delete_topic`, { topic_name: 'plans' }, errorBody('Invalid channel ID')],
    [realm.owner, `/streams/${channel}/delete_topic`, {}, errorBody("Missing 'topic_name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'topic_name' })],
  ];
  for (const [user, path, params, body] of cases) {
    const r = await user.client.post(path, params);
    assert.equal([r.status, r.body], [400, body], path);
  }
  assert.is(await realm.server.app.prisma.message.count({ where: { channelId: channel } }), 1);
  assert.is(await realm.server.app.prisma.message.count({ where: { channelId: archived } }), 1);
});

test.run();
