// Subscriptions: subscribing (and creating channels), unsubscribing, per-user properties, the
// subscription list with every field, and the subscription/stream events with their recipients.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents, eventAs, opOf } from '../helpers/events.ts';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const err = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

async function create(user: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await user.client.post('/users/me/subscriptions', { subscriptions: [{ name }], ...extra });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const id = await user.client.get('/get_stream_id', { stream: name });
  return id.body.stream_id;
}

const groupId = (realm: TestRealm, name: string) => realm.server.app.realms.byId(realm.id)!.systemGroups[name as 'role:nobody'];

test('POST /users/me/subscriptions creates a channel, subscribes the creator, reports by user id', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const r = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: ' Design ', description: 'Line one\nline two' }] });
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '', subscribed: { [member.id]: ['Design'] }, already_subscribed: {} }]);
  const again = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] });
  assert.equal(again.body.already_subscribed, { [member.id]: ['Design'] });
  assert.equal(again.body.subscribed, {});

  const subs = await member.client.get('/users/me/subscriptions', { include_subscribers: true });
  assert.is(subs.status, 200);
  const [sub] = subs.body.subscriptions;
  const everyone = groupId(realm, 'role:everyone');
  const nobody = groupId(realm, 'role:nobody');
  assert.equal(
    { ...sub, date_created: 0 },
    {
      stream_id: sub.stream_id,
      name: 'Design',
      is_archived: false,
      description: 'Line one line two',
      rendered_description: '<p>Line one line two</p>',
      date_created: 0,
      creator_id: member.id,
      invite_only: false,
      is_web_public: false,
      history_public_to_subscribers: true,
      message_retention_days: null,
      first_message_id: null,
      folder_id: null,
      topics_policy: 'inherit',
      is_recently_active: true,
      stream_weekly_traffic: null,
      subscriber_count: 1,
      stream_post_policy: 1,
      is_announcement_only: false,
      can_add_subscribers_group: nobody,
      can_administer_channel_group: { direct_members: [member.id], direct_subgroups: [] },
      can_delete_any_message_group: nobody,
      can_delete_own_message_group: nobody,
      can_move_messages_out_of_channel_group: nobody,
      can_move_messages_within_channel_group: nobody,
      can_remove_subscribers_group: groupId(realm, 'role:administrators'),
      can_resolve_topics_group: nobody,
      can_send_message_group: everyone,
      can_subscribe_group: nobody,
      can_create_topic_group: everyone,
      color: '#76ce90',
      is_muted: false,
      in_home_view: true,
      pin_to_top: false,
      desktop_notifications: null,
      audible_notifications: null,
      push_notifications: null,
      email_notifications: null,
      wildcard_mentions_notify: null,
      subscribers: [member.id],
    },
  );
  assert.ok(Math.abs(sub.date_created - Date.now() / 1000) < 60);
  const withoutSubscribers = await member.client.get('/users/me/subscriptions');
  assert.not.ok('subscribers' in withoutSubscribers.body.subscriptions[0]);
});

test('subscribe events: stream create, subscription add with subscribers, peer_add to everyone else who may see', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const id = await create(member, 'general');
  const events = captureEvents(realm.server.app, realm.id);
  const r = await other.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'general', color: '#abcdef' }] });
  assert.equal(r.body.subscribed, { [other.id]: ['general'] });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [e.event.type, opOf(e.event), e.userIds]),
    [
      ['subscription', 'add', [other.id]],
      ['subscription', 'peer_add', [realm.owner.id, member.id]],
    ],
  );
  const add = events.envelopes[0]!.event as { subscriptions: Record<string, unknown>[] };
  assert.is(add.subscriptions[0]!.color, '#abcdef');
  assert.equal(add.subscriptions[0]!.subscribers, [member.id, other.id]);
  assert.equal(events.envelopes[1]!.event, { type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: [other.id] });

  // A new public channel is announced to all non-guests; the guest learns nothing.
  const created = captureEvents(realm.server.app, realm.id);
  await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'fresh' }] });
  created.stop();
  const streamCreate = created.ofType('stream')[0]!;
  assert.equal([streamCreate.event.op, streamCreate.userIds], ['create', [realm.owner.id, member.id, other.id]]);
  const { streams, for_unarchiving } = eventAs(streamCreate.event, 'stream', 'create');
  assert.is(streams[0]!.name, 'fresh');
  assert.is(for_unarchiving, false);
  assert.not.ok(created.envelopes.some((e) => e.userIds.includes(guest.id)));
});

test('subscribing others needs can_add_subscribers_group; principals by id or email; bad principals change nothing', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const target = await realm.addUser();
  await create(member, 'club');
  const byId = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [target.id] });
  assert.equal(byId.body.subscribed, { [target.id]: ['club'] });
  const byEmail = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [target.email] });
  assert.equal(byEmail.body.already_subscribed, { [target.id]: ['club'] });

  const bad = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'newone' }], principals: [target.id, 999999] });
  assert.equal([bad.status, bad.body], [400, err('No such user')]);
  const stillMissing = await member.client.get('/get_stream_id', { stream: 'newone' });
  assert.equal(stillMissing.body, err("Invalid channel name 'newone'"));

  // Only administrators may add subscribers when the organization says so.
  await realm.server.app.prisma.realm.update({
    where: { id: realm.id },
    data: { permissions: { can_add_subscribers_group: groupId(realm, 'role:administrators') } },
  });
  await realm.server.app.realms.reload(realm.id);
  const third = await realm.addUser();
  const denied = await target.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [third.id] });
  assert.equal([denied.status, denied.body], [400, err('Insufficient permission')]);
  const asAdmin = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [third.id] });
  assert.equal(asAdmin.body.subscribed, { [third.id]: ['club'] });
});

test('private channels: outsiders cannot join; unauthorized list when errors are not fatal; guests cannot subscribe', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const outsider = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  await create(member, 'secret', { invite_only: true });
  const fatal = await outsider.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }] });
  assert.equal([fatal.status, fatal.body], [400, err('Unable to access channel (secret).')]);
  const lenient = await outsider.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'secret' }, { name: 'open' }],
    authorization_errors_fatal: false,
  });
  assert.equal(lenient.body, { result: 'success', msg: '', subscribed: { [outsider.id]: ['open'] }, already_subscribed: {}, unauthorized: ['secret'] });
  const asGuest = await guest.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'open' }] });
  assert.equal([asGuest.status, asGuest.body], [400, err('Not allowed for guest users')]);
});

test('private channel creation: events only to admins and subscribers; invited users get the channel first', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const invited = await realm.addUser();
  const bystander = await realm.addUser();
  const events = captureEvents(realm.server.app, realm.id);
  const r = await member.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'hidden' }],
    invite_only: true,
    principals: [member.id, invited.id],
  });
  assert.equal(r.body.subscribed, { [member.id]: ['hidden'], [invited.id]: ['hidden'] });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [e.event.type, opOf(e.event), e.userIds]),
    [
      ['stream', 'create', [realm.owner.id, member.id, invited.id]],
      ['subscription', 'add', [member.id]],
      ['subscription', 'add', [invited.id]],
      ['subscription', 'peer_add', [realm.owner.id]],
    ],
  );
  assert.not.ok(events.envelopes.some((e) => e.userIds.includes(bystander.id)));
  const stream = eventAs(events.envelopes[0]!.event, 'stream', 'create').streams[0]!;
  assert.equal([stream.invite_only, stream.history_public_to_subscribers], [true, false]);
});

test('channel creation permissions and settings on creation', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const webPublic = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'www' }], is_web_public: true });
  assert.equal(webPublic.body, err('Web-public channels are not enabled.'));
  const retention = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'r' }], message_retention_days: 30 });
  assert.equal(retention.body, err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  const badRetention = await realm.owner.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'r' }],
    message_retention_days: JSON.stringify('forever'),
  });
  assert.equal(badRetention.body, err("Bad value for 'message_retention_days': forever"));
  const everyone = await member.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'g' }],
    can_subscribe_group: groupId(realm, 'role:everyone'),
  });
  assert.equal(everyone.body, err("'can_subscribe_group' setting cannot be set to 'role:everyone' group."));
  const internet = await member.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'g' }],
    can_send_message_group: groupId(realm, 'role:internet'),
  });
  assert.equal(internet.body, err("'can_send_message_group' setting cannot be set to 'role:internet' group."));
  const badGroup = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'g' }], can_send_message_group: 987654 });
  assert.equal(badGroup.body, err('Invalid user group'));
  const protectedTopics = await member.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'g' }],
    invite_only: true,
    can_create_topic_group: groupId(realm, 'role:members'),
  });
  assert.equal(protectedTopics.body, err('Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group'));
  for (const [name, msg] of [
    ['', "Channel name can't be empty."],
    ['x'.repeat(61), 'Channel name too long (limit: 60 characters).'],
    ['a\u0007b', 'Invalid character in channel name, at position 2.'],
  ]) {
    const r = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name }] });
    assert.equal([r.status, r.body], [400, err(msg!)]);
  }
  const none = await realm.owner.client.get('/streams', { include_all: true });
  assert.equal(none.body.streams, [], 'no failed request created a channel');

  await realm.server.app.prisma.realm.update({
    where: { id: realm.id },
    data: { permissions: { can_create_public_channel_group: groupId(realm, 'role:administrators') } },
  });
  await realm.server.app.realms.reload(realm.id);
  const denied = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'g' }] });
  assert.equal(denied.body, err('Insufficient permission'));
  const privateOk = await member.client.post('/users/me/subscriptions', {
    subscriptions: [{ name: 'g' }],
    invite_only: true,
    history_public_to_subscribers: true,
    message_retention_days: JSON.stringify('realm_default'),
    can_send_message_group: { direct_members: [member.id], direct_subgroups: [groupId(realm, 'role:administrators')] },
  });
  assert.is(privateOk.status, 200, JSON.stringify(privateOk.body));
  const sub = (await member.client.get('/users/me/subscriptions')).body.subscriptions[0];
  assert.equal([sub.invite_only, sub.history_public_to_subscribers], [true, true]);
  assert.equal(sub.can_send_message_group, { direct_members: [member.id], direct_subgroups: [groupId(realm, 'role:administrators')] });
});

test('each message reaches the subscribers of its moment: joins, leaves, deactivation and reactivation in between', async () => {
  const realm = await newRealm();
  const [ann, ben] = [await realm.addUser({ name: 'Ann' }), await realm.addUser({ name: 'Ben' })];
  const channelId = await makeChannel(realm, 'busy', [realm.owner]);
  const events = captureEvents(realm.server.app, realm.id);
  const step = async (change: () => Promise<unknown>) => {
    await change();
    await send(realm.owner, channelId, 't', 'm');
    return [...events.ofType('message').at(-1)!.userIds].sort((a, b) => a - b);
  };
  const subscribe = (u: TestUser) => u.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'busy' }] });
  assert.equal(await step(async () => undefined), [realm.owner.id]);
  assert.equal(await step(() => subscribe(ann)), [realm.owner.id, ann.id]);
  assert.equal(await step(() => subscribe(ben)), [realm.owner.id, ann.id, ben.id]);
  assert.equal(await step(() => ann.client.delete('/users/me/subscriptions', { subscriptions: ['busy'] })), [realm.owner.id, ben.id]);
  assert.equal(await step(() => realm.owner.client.delete(`/users/${ben.id}`)), [realm.owner.id]);
  assert.equal(await step(() => realm.owner.client.post(`/users/${ben.id}/reactivate`)), [realm.owner.id, ben.id]);
  events.stop();
});

test('DELETE /users/me/subscriptions: removed/not_removed, events, permission to remove others', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const id = await create(member, 'room');
  await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'room' }], principals: [other.id] });

  const missing = await member.client.delete('/users/me/subscriptions', { subscriptions: ['room', 'nowhere'] });
  assert.equal([missing.status, missing.body], [400, err('Channel(s) (nowhere) do not exist')]);
  // The creator administers the channel; other members may not remove anyone else.
  const denied = await other.client.delete('/users/me/subscriptions', { subscriptions: ['room'], principals: [member.id] });
  assert.equal(denied.body, err('Insufficient permission'));

  const events = captureEvents(realm.server.app, realm.id);
  const r = await member.client.delete('/users/me/subscriptions', { subscriptions: ['room'] });
  assert.equal(r.body, { result: 'success', msg: '', removed: ['room'], not_removed: [] });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [{ type: 'subscription', op: 'remove', subscriptions: [{ name: 'room', stream_id: id }] }, [member.id]],
      [{ type: 'subscription', op: 'peer_remove', stream_ids: [id], user_ids: [member.id] }, [realm.owner.id, other.id]],
    ],
  );
  const again = await member.client.delete('/users/me/subscriptions', { subscriptions: ['room'] });
  assert.equal(again.body, { result: 'success', msg: '', removed: [], not_removed: ['room'] });

  const byAdmin = await realm.owner.client.delete('/users/me/subscriptions', { subscriptions: ['room'], principals: [other.email] });
  assert.equal(byAdmin.body.removed, ['room']);
  // Resubscribing keeps the old color.
  const before = await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'room' }] });
  assert.equal(before.body.subscribed, { [member.id]: ['room'] });
  assert.is((await member.client.get('/users/me/subscriptions')).body.subscriptions[0].color, '#76ce90');
});

test('leaving a private channel removes it from the leaver (stream delete)', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const id = await create(realm.owner, 'vault', { invite_only: true, principals: [realm.owner.id, member.id] });
  const events = captureEvents(realm.server.app, realm.id);
  await member.client.delete('/users/me/subscriptions', { subscriptions: ['vault'] });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [e.event.type, opOf(e.event), e.userIds]),
    [
      ['subscription', 'remove', [member.id]],
      ['stream', 'delete', [member.id]],
      ['subscription', 'peer_remove', [realm.owner.id]],
    ],
  );
  assert.equal(events.envelopes[1]!.event, { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id], for_archiving: false });
  const gone = await member.client.get(`/streams/${id}`);
  assert.equal(gone.body, err('Invalid channel ID'));
});

test('POST /users/me/subscriptions/properties: each property, validation, events', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const outsider = await realm.addUser();
  const id = await create(member, 'prefs');
  const events = captureEvents(realm.server.app, realm.id);
  const r = await member.client.post('/users/me/subscriptions/properties', {
    subscription_data: [
      { stream_id: id, property: 'color', value: '#123456' },
      { stream_id: id, property: 'in_home_view', value: false },
      { stream_id: id, property: 'pin_to_top', value: true },
      { stream_id: id, property: 'desktop_notifications', value: true },
      { stream_id: id, property: 'audible_notifications', value: false },
      { stream_id: id, property: 'push_notifications', value: true },
      { stream_id: id, property: 'email_notifications', value: false },
      { stream_id: id, property: 'wildcard_mentions_notify', value: true },
    ],
  });
  assert.equal(r.body, { result: 'success', msg: '' });
  events.stop();
  assert.equal(
    events.envelopes.map((e) => [eventAs(e.event, 'subscription', 'update').property, eventAs(e.event, 'subscription', 'update').value, e.userIds]),
    [
      ['color', '#123456', [member.id]],
      ['in_home_view', false, [member.id]],
      ['is_muted', true, [member.id]],
      ['pin_to_top', true, [member.id]],
      ['desktop_notifications', true, [member.id]],
      ['audible_notifications', false, [member.id]],
      ['push_notifications', true, [member.id]],
      ['email_notifications', false, [member.id]],
      ['wildcard_mentions_notify', true, [member.id]],
    ],
  );
  assert.equal(events.envelopes[0]!.event, { type: 'subscription', op: 'update', property: 'color', value: '#123456', stream_id: id });
  const sub = (await member.client.get('/users/me/subscriptions')).body.subscriptions[0];
  assert.equal(
    [
      sub.color,
      sub.is_muted,
      sub.in_home_view,
      sub.pin_to_top,
      sub.desktop_notifications,
      sub.audible_notifications,
      sub.push_notifications,
      sub.email_notifications,
      sub.wildcard_mentions_notify,
    ],
    ['#123456', true, false, true, true, false, true, false, true],
  );

  const cases: [Record<string, unknown>, string][] = [
    [{ stream_id: id, property: 'color', value: 'red' }, 'color is not a valid hex color code'],
    [{ stream_id: id, property: 'is_muted', value: 'yes' }, 'is_muted is not a boolean'],
    [{ stream_id: id, property: 'volume', value: true }, 'Unknown subscription property: volume'],
    [{ stream_id: 999999, property: 'is_muted', value: true }, 'Invalid channel ID'],
  ];
  for (const [change, msg] of cases) {
    const bad = await member.client.post('/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: id, property: 'pin_to_top', value: false }, change],
    });
    assert.equal([bad.status, bad.body], [400, err(msg)]);
  }
  const notSubscribed = await outsider.client.post('/users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: id, property: 'is_muted', value: true }],
  });
  assert.equal(notSubscribed.body, err(`Not subscribed to channel ID ${id}`));
  assert.is((await member.client.get('/users/me/subscriptions')).body.subscriptions[0].pin_to_top, true, 'failed batches change nothing');
});

test('GET /users/{id}/subscriptions/{stream_id} and GET /streams/{id}/members', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const id = await create(member, 'lobby');
  const yes = await other.client.get(`/users/${member.id}/subscriptions/${id}`);
  assert.equal(yes.body, { result: 'success', msg: '', is_subscribed: true });
  const no = await other.client.get(`/users/${other.id}/subscriptions/${id}`);
  assert.is(no.body.is_subscribed, false);
  const noUser = await other.client.get(`/users/999999/subscriptions/${id}`);
  assert.equal(noUser.body, err('No such user'));
  const members = await other.client.get(`/streams/${id}/members`);
  assert.equal(members.body, { result: 'success', msg: '', subscribers: [member.id] });
  const asGuest = await guest.client.get(`/streams/${id}/members`);
  assert.equal([asGuest.status, asGuest.body], [400, err('Invalid channel ID')]);

  const privateId = await create(member, 'inner', { invite_only: true });
  const hidden = await other.client.get(`/streams/${privateId}/members`);
  assert.equal(hidden.body, err('Invalid channel ID'));
  const admin = await realm.owner.client.get(`/streams/${privateId}/members`);
  assert.equal(admin.body.subscribers, [member.id]);
});

test.run();
