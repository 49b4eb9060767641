// Channels: listing with every include_* source, one channel, lookup by name, changing settings
// (permissions, {new, old} group settings, events), archiving, and topics.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents, opOf } from '../helpers/events.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const err = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

async function create(user: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await user.client.post('/users/me/subscriptions', { subscriptions: [{ name }], ...extra });
  assert.is(r.status, 200, JSON.stringify(r.body));
  return (await user.client.get('/get_stream_id', { stream: name })).body.stream_id;
}

const groupId = (realm: TestRealm, name: string) => realm.server.app.realms.byId(realm.id)!.systemGroups[name as 'role:nobody'];
const names = (r: { body: { streams: { name: string }[] } }) => r.body.streams.map((s) => s.name);

async function enableSpectators(realm: TestRealm) {
  await realm.server.app.prisma.realm.update({ where: { id: realm.id }, data: { settings: { enable_spectator_access: true } } });
  await realm.server.app.realms.reload(realm.id);
}

test('GET /streams: public and subscribed by default, private only for subscribers, guests only theirs', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  await create(member, 'beta');
  await create(member, 'alpha');
  await create(member, 'private', { invite_only: true });
  await create(realm.owner, 'guests', { principals: [guest.id] });
  assert.equal(names(await member.client.get('/streams')), ['alpha', 'beta', 'guests', 'private']);
  assert.equal(names(await other.client.get('/streams')), ['alpha', 'beta', 'guests']);
  assert.equal(names(await guest.client.get('/streams')), ['guests']);
  assert.equal(names(await member.client.get('/streams', { include_public: false })), ['alpha', 'beta', 'private']);
  assert.equal(names(await other.client.get('/streams', { include_public: false })), []);
  assert.equal(names(await realm.owner.client.get('/streams', { include_all: true })), ['alpha', 'beta', 'guests', 'private']);
  assert.equal(names(await other.client.get('/streams', { include_all: true })), ['alpha', 'beta', 'guests']);
  assert.equal(names(await realm.owner.client.get('/streams', { include_can_access_content: true })), ['alpha', 'beta', 'guests']);
  const withDefault = await other.client.get('/streams', { include_default: true });
  assert.is(withDefault.body.streams[0].is_default, false);
  const stream = (await other.client.get('/streams')).body.streams[0];
  assert.equal(Object.keys(stream).sort(), [
    'can_add_subscribers_group',
    'can_administer_channel_group',
    'can_create_topic_group',
    'can_delete_any_message_group',
    'can_delete_own_message_group',
    'can_move_messages_out_of_channel_group',
    'can_move_messages_within_channel_group',
    'can_remove_subscribers_group',
    'can_resolve_topics_group',
    'can_send_message_group',
    'can_subscribe_group',
    'creator_id',
    'date_created',
    'description',
    'first_message_id',
    'folder_id',
    'history_public_to_subscribers',
    'invite_only',
    'is_announcement_only',
    'is_archived',
    'is_recently_active',
    'is_web_public',
    'message_retention_days',
    'name',
    'rendered_description',
    'stream_id',
    'stream_post_policy',
    'stream_weekly_traffic',
    'subscriber_count',
    'topics_policy',
  ]);
});

test('web-public channels: visible to guests with include_web_public and readable by id', async () => {
  const realm = await newRealm();
  await enableSpectators(realm);
  const guest = await realm.addUser({ role: 600 });
  const id = await create(realm.owner, 'world', { is_web_public: true });
  assert.equal(names(await guest.client.get('/streams')), []);
  assert.equal(names(await guest.client.get('/streams', { include_web_public: true })), ['world']);
  const one = await guest.client.get(`/streams/${id}`);
  assert.equal([one.status, one.body.stream.is_web_public], [200, true]);
  const members = await guest.client.get(`/streams/${id}/members`);
  assert.equal(members.body.subscribers, [realm.owner.id]);
});

test('GET /streams/{id} and /get_stream_id: private channels are invisible to outsiders', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const outsider = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const publicId = await create(member, 'Town Square', { subscriptions: [{ name: 'Town Square', description: 'Say *hi* <b>' }] });
  const privateId = await create(member, 'cellar', { invite_only: true });
  const one = await outsider.client.get(`/streams/${publicId}`);
  assert.is(one.status, 200);
  assert.equal(
    [one.body.stream.name, one.body.stream.description, one.body.stream.rendered_description],
    ['Town Square', 'Say *hi* <b>', '<p>Say <em>hi</em> &lt;b&gt;</p>'],
  );
  for (const [client, id] of [
    [outsider, privateId],
    [guest, publicId],
    [member, 999999],
  ] as const) {
    const r = await client.client.get(`/streams/${id}`);
    assert.equal([r.status, r.body], [400, err('Invalid channel ID')]);
  }
  const bad = await member.client.get('/streams/abc');
  assert.equal(bad.body, err('Invalid channel ID'));
  assert.equal((await outsider.client.get('/get_stream_id', { stream: 'town square' })).body, { result: 'success', msg: '', stream_id: publicId });
  assert.equal((await outsider.client.get('/get_stream_id', { stream: 'cellar' })).body, err("Invalid channel name 'cellar'"));
  assert.equal((await realm.owner.client.get(`/streams/${privateId}`)).body.stream.name, 'cellar', 'administrators see private channels');
  const missing = await member.client.get('/get_stream_id');
  assert.equal(missing.body, { result: 'error', msg: "Missing 'stream' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'stream' });
});

test('PATCH /streams/{id}: rename and description with events to everyone who sees the channel', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const id = await create(member, 'old');
  await create(member, 'taken');
  const events = captureEvents(realm.server.app, realm.id);
  const r = await member.client.patch(`/streams/${id}`, { new_name: 'new', description: 'About\n**this**' });
  assert.equal(r.body, { result: 'success', msg: '' });
  events.stop();
  const audience = [realm.owner.id, member.id, other.id];
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      // The description changes first, so its event names the channel by the old name (as in Zulip).
      [
        {
          type: 'stream',
          op: 'update',
          stream_id: id,
          name: 'old',
          property: 'description',
          value: 'About **this**',
          rendered_description: '<p>About <strong>this</strong></p>',
        },
        audience,
      ],
      [{ type: 'stream', op: 'update', stream_id: id, name: 'old', property: 'name', value: 'new' }, audience],
    ],
  );
  assert.not.ok(events.envelopes.some((e) => e.userIds.includes(guest.id)));
  const same = await member.client.patch(`/streams/${id}`, { new_name: 'new' });
  assert.equal(same.body, err('Channel already has that name.'));
  const clash = await member.client.patch(`/streams/${id}`, { new_name: 'TAKEN' });
  assert.equal([clash.status, clash.body], [409, { ...err("Channel 'TAKEN' already exists", 'CHANNEL_ALREADY_EXISTS'), channel_name: 'TAKEN' }]);
  const recase = await member.client.patch(`/streams/${id}`, { new_name: 'New' });
  assert.is(recase.status, 200);
  const tooLong = await member.client.patch(`/streams/${id}`, { description: 'x'.repeat(1025) });
  assert.equal(tooLong.body, { ...err('description is too long (limit: 1024 characters)'), var_name: 'description' });
});

test('PATCH /streams/{id}: who may administer; content access for privacy and join settings', async () => {
  const realm = await newRealm();
  const creator = await realm.addUser();
  const member = await realm.addUser();
  const outsider = await realm.addUser();
  const publicId = await create(creator, 'pub');
  const privateId = await create(creator, 'priv', { invite_only: true });
  assert.equal((await member.client.patch(`/streams/${publicId}`, { description: 'x' })).body, err('You do not have permission to administer this channel.'));
  assert.equal((await outsider.client.patch(`/streams/${privateId}`, { description: 'x' })).body, err('Invalid channel ID'));
  assert.equal((await outsider.client.delete(`/streams/${privateId}`)).body, err('Invalid channel ID'));
  assert.equal((await realm.owner.client.patch(`/streams/${privateId}`, { description: 'by admin' })).status, 200);
  // An organization administrator who is not subscribed may not change what the channel's content is open to.
  assert.equal((await realm.owner.client.patch(`/streams/${privateId}`, { is_private: false })).body, err('Channel content access is required.'));
  assert.equal(
    (await realm.owner.client.patch(`/streams/${privateId}`, { can_subscribe_group: { new: groupId(realm, 'role:members') } })).body,
    err('Channel content access is required.'),
  );
  // Making the creator an administrator of the channel by group.
  const grant = await creator.client.patch(`/streams/${publicId}`, {
    can_administer_channel_group: { new: { direct_members: [member.id], direct_subgroups: [] } },
  });
  assert.equal(grant.body, { result: 'success', msg: '' });
  assert.equal((await member.client.patch(`/streams/${publicId}`, { description: 'mine now' })).status, 200);
  assert.equal((await creator.client.patch(`/streams/${publicId}`, { description: 'x' })).body, err('You do not have permission to administer this channel.'));
  const retention = await member.client.patch(`/streams/${publicId}`, { message_retention_days: 10 });
  assert.equal(retention.body, err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  const owner = await realm.owner.client.patch(`/streams/${publicId}`, { message_retention_days: JSON.stringify('unlimited') });
  assert.is(owner.status, 200);
  assert.is((await member.client.get(`/streams/${publicId}`)).body.stream.message_retention_days, -1);
});

test('PATCH /streams/{id}: group settings with {new, old}, normalization and the posting-policy events', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const id = await create(member, 'settings');
  const admins = groupId(realm, 'role:administrators');
  const everyone = groupId(realm, 'role:everyone');
  const mismatch = await member.client.patch(`/streams/${id}`, { can_send_message_group: { new: admins, old: admins } });
  assert.equal(mismatch.body, err("'old' value does not match the expected value."));
  const forbidden = await member.client.patch(`/streams/${id}`, { can_add_subscribers_group: { new: everyone } });
  assert.equal(forbidden.body, err("'can_add_subscribers_group' setting cannot be set to 'role:everyone' group."));
  const badUser = await member.client.patch(`/streams/${id}`, { can_send_message_group: { new: { direct_members: [999999], direct_subgroups: [] } } });
  assert.equal(badUser.body, err('Invalid user ID: 999999'));
  assert.is((await member.client.get(`/streams/${id}`)).body.stream.can_send_message_group, everyone, 'failed changes change nothing');

  const events = captureEvents(realm.server.app, realm.id);
  const ok = await member.client.patch(`/streams/${id}`, {
    can_send_message_group: { new: { direct_members: [], direct_subgroups: [admins] }, old: everyone },
  });
  assert.equal(ok.body, { result: 'success', msg: '' });
  events.stop();
  const audience = [realm.owner.id, member.id];
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [{ type: 'stream', op: 'update', stream_id: id, name: 'settings', property: 'can_send_message_group', value: admins }, audience],
      [{ type: 'stream', op: 'update', stream_id: id, name: 'settings', property: 'stream_post_policy', value: 2 }, audience],
      [{ type: 'stream', op: 'update', stream_id: id, name: 'settings', property: 'is_announcement_only', value: true }, audience],
    ],
  );
  const stream = (await member.client.get(`/streams/${id}`)).body.stream;
  assert.equal([stream.can_send_message_group, stream.stream_post_policy, stream.is_announcement_only], [admins, 2, true]);
  const unchanged = captureEvents(realm.server.app, realm.id);
  assert.is((await member.client.patch(`/streams/${id}`, { can_send_message_group: { new: admins } })).status, 200);
  unchanged.stop();
  assert.equal(unchanged.envelopes, [], 'setting the current value sends nothing');
});

test('PATCH /streams/{id}: making a channel private and public again moves who sees it', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const id = await create(member, 'flip');
  const toPrivate = captureEvents(realm.server.app, realm.id);
  assert.is((await member.client.patch(`/streams/${id}`, { is_private: true })).status, 200);
  toPrivate.stop();
  assert.equal(
    toPrivate.envelopes.map((e) => [e.event.type, opOf(e.event), e.userIds]),
    [
      ['stream', 'update', [realm.owner.id, member.id]],
      ['stream', 'delete', [other.id]],
    ],
  );
  assert.equal(toPrivate.envelopes[0]!.event, {
    type: 'stream',
    op: 'update',
    stream_id: id,
    name: 'flip',
    property: 'invite_only',
    value: true,
    history_public_to_subscribers: false,
    is_web_public: false,
  });
  assert.equal((await other.client.get(`/streams/${id}`)).body, err('Invalid channel ID'));

  const toPublic = captureEvents(realm.server.app, realm.id);
  assert.is((await member.client.patch(`/streams/${id}`, { is_private: false })).status, 200);
  toPublic.stop();
  assert.equal(
    toPublic.envelopes.map((e) => [e.event.type, opOf(e.event), e.userIds]),
    [
      ['stream', 'update', [realm.owner.id, member.id]],
      ['stream', 'create', [other.id]],
      ['subscription', 'peer_add', [other.id]],
    ],
  );
  const invalid = await member.client.patch(`/streams/${id}`, { history_public_to_subscribers: false });
  assert.equal(invalid.body, err('Invalid parameters'));
  const webPublic = await member.client.patch(`/streams/${id}`, { is_web_public: true });
  assert.equal(webPublic.body, err('Web-public channels are not enabled.'));
});

test('PATCH /streams/{id}: topics_policy and folder_id', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const id = await create(member, 'policy');
  assert.equal((await member.client.patch(`/streams/${id}`, { topics_policy: 'sometimes' })).body, {
    ...err('Invalid topics_policy'),
    var_name: 'topics_policy',
  });
  assert.equal((await member.client.patch(`/streams/${id}`, { topics_policy: 'disable_empty_topic' })).body, err('Insufficient permission'));
  const events = captureEvents(realm.server.app, realm.id);
  assert.is((await realm.owner.client.patch(`/streams/${id}`, { topics_policy: 'disable_empty_topic' })).status, 200);
  events.stop();
  assert.equal(events.envelopes[0]!.event, {
    type: 'stream',
    op: 'update',
    stream_id: id,
    name: 'policy',
    property: 'topics_policy',
    value: 'disable_empty_topic',
  });

  assert.equal((await member.client.patch(`/streams/${id}`, { folder_id: 424242 })).body, err('Invalid channel folder ID'));
  const folder = await realm.server.app.prisma.channelFolder.create({ data: { realmId: realm.id, name: 'Teams' } });
  assert.is((await member.client.patch(`/streams/${id}`, { folder_id: folder.id })).status, 200);
  assert.is((await member.client.get(`/streams/${id}`)).body.stream.folder_id, folder.id);
  assert.is((await member.client.patch(`/streams/${id}`, { folder_id: null })).status, 200);
  assert.is((await member.client.get(`/streams/${id}`)).body.stream.folder_id, null);
});

test('DELETE /streams/{id} archives the channel', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const other = await realm.addUser();
  const id = await create(member, 'attic');
  assert.equal((await other.client.delete(`/streams/${id}`)).body, err('You do not have permission to administer this channel.'));
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await member.client.delete(`/streams/${id}`)).body, { result: 'success', msg: '' });
  events.stop();
  const audience = [realm.owner.id, member.id, other.id];
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    [
      [{ type: 'stream', op: 'update', stream_id: id, name: 'attic', property: 'is_archived', value: true }, audience],
      [{ type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id], for_archiving: true }, audience],
    ],
  );
  assert.equal((await member.client.delete(`/streams/${id}`)).body, err('Channel is already deactivated'));
  assert.equal(names(await member.client.get('/streams')), []);
  const archived = await member.client.get('/streams', { exclude_archived: false });
  assert.equal(
    archived.body.streams.map((s: { name: string; is_archived: boolean }) => [s.name, s.is_archived]),
    [['attic', true]],
  );
  assert.equal((await member.client.get(`/streams/${id}`)).body, err('Invalid channel ID'));
});

test('GET /users/me/{id}/topics: newest first, case-insensitive, protected history limited to received messages', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const late = await realm.addUser();
  const { prisma } = realm.server.app;
  const id = await create(member, 'chat');
  const privateId = await create(member, 'inner', { invite_only: true, principals: [member.id, late.id] });
  const send = async (channelId: number, topic: string, receivers: number[]) => {
    const m = await prisma.message.create({ data: { realmId: realm.id, senderId: member.id, channelId, topic, content: 'x', renderedContent: '<p>x</p>' } });
    await prisma.userMessage.createMany({ data: receivers.map((userId) => ({ userId, messageId: m.id })) });
    return m.id;
  };
  await send(id, 'Lunch', [member.id]);
  const greetings = await send(id, 'greetings', [member.id]);
  const lunch = await send(id, 'lunch', [member.id]);
  const empty = await send(id, '', [member.id]);
  const r = await late.client.get(`/users/me/${id}/topics`);
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    topics: [
      { name: 'general chat', max_id: empty },
      { name: 'lunch', max_id: lunch },
      { name: 'greetings', max_id: greetings },
    ],
  });
  const raw = await late.client.get(`/users/me/${id}/topics`, { allow_empty_topic_name: true });
  assert.equal(raw.body.topics[0], { name: '', max_id: empty });

  const before = await send(privateId, 'old news', [member.id]);
  const after = await send(privateId, 'new news', [member.id, late.id]);
  assert.equal((await member.client.get(`/users/me/${privateId}/topics`)).body.topics, [
    { name: 'new news', max_id: after },
    { name: 'old news', max_id: before },
  ]);
  assert.equal((await late.client.get(`/users/me/${privateId}/topics`)).body.topics, [{ name: 'new news', max_id: after }]);
  assert.equal((await realm.owner.client.get(`/users/me/${privateId}/topics`)).body, err('Invalid channel ID'), 'metadata access is not content access');
});

test.run();
