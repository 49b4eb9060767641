// Default channels and default channel groups: POST/DELETE /default_streams, the
// /default_stream_groups endpoints, their events (to members, not guests), register's
// realm_default_streams and realm_default_stream_groups, is_default_stream on channel creation and
// update, archiving, and new users joining the default channels with their recent history.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '../helpers/client.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const GUEST = 600;
const ADMIN = 200;
const NOT_ADMIN = errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');

async function expectError(reply: Promise<{ status: number; body: unknown }>, body: object, status = 400): Promise<void> {
  const r = await reply;
  assert.equal([r.status, r.body], [status, body]);
}

async function ok(reply: Promise<{ status: number; body: unknown; text: string }>): Promise<void> {
  const r = await reply;
  assert.equal([r.status, r.body], [200, SUCCESS], r.text);
}

async function registerDefaults(user: TestUser) {
  const r = await user.client.post('/register', { fetch_event_types: ['default_streams', 'default_stream_groups'] });
  assert.is(r.status, 200, r.text);
  return [r.body.realm_default_streams, r.body.realm_default_stream_groups];
}

test('POST/DELETE /default_streams: the default_streams event to members, not guests; register data', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: GUEST });
  const [general, random] = [await makeChannel(realm, 'general', [realm.owner]), await makeChannel(realm, 'random', [realm.owner])];
  const [memberQueue, guestQueue] = [
    await openQueue(member, { event_types: ['default_streams'] }),
    await openQueue(guest, { event_types: ['default_streams', 'heartbeat'] }),
  ];
  await ok(realm.owner.client.post('/default_streams', { stream_id: random }));
  assert.equal(await memberQueue.next(), [{ type: 'default_streams', default_streams: [random] }]);
  await ok(realm.owner.client.post('/default_streams', { stream_id: general }));
  assert.equal(await memberQueue.next(), [{ type: 'default_streams', default_streams: [general, random] }]);
  await ok(realm.owner.client.post('/default_streams', { stream_id: general }));
  assert.equal(await memberQueue.pending(), [], 'already a default: nothing changes');
  assert.equal(await registerDefaults(member), [[general, random], []]);
  assert.equal(await registerDefaults(guest), [[], []], 'guests are told there are none');

  const listed = (await member.client.get('/streams', { include_default: true })).body.streams.map((s: { name: string; is_default: boolean }) => [
    s.name,
    s.is_default,
  ]);
  assert.equal(listed, [
    ['general', true],
    ['random', true],
  ]);
  assert.not.ok('is_default' in (await member.client.get('/streams')).body.streams[0]);

  await ok(realm.owner.client.delete('/default_streams', { stream_id: general }));
  assert.equal(await memberQueue.next(), [{ type: 'default_streams', default_streams: [random] }]);
  await ok(realm.owner.client.delete('/default_streams', { stream_id: general }));
  assert.equal(await memberQueue.next(), [{ type: 'default_streams', default_streams: [random] }], 'removing a channel that is no default still tells');
  assert.equal(await guestQueue.pending(), []);
});

test('POST/DELETE /default_streams errors: administrators only, channels they can read, no private or archived ones', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const admin = await realm.addUser({ role: ADMIN });
  const open = await makeChannel(realm, 'open', [realm.owner]);
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const hidden = await makeChannel(realm, 'hidden', [member], { invite_only: true });
  const archived = await makeChannel(realm, 'archived', [realm.owner]);
  await ok(realm.owner.client.delete(`/streams/${archived}`));
  const elsewhere = await makeChannel(await newRealm(), 'elsewhere', []);
  await expectError(member.client.post('/default_streams', { stream_id: open }), NOT_ADMIN);
  await expectError(member.client.delete('/default_streams', { stream_id: open }), NOT_ADMIN);
  await expectError(
    admin.client.post('/default_streams', {}),
    errorBody("Missing 'stream_id' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'stream_id' }),
  );
  await expectError(
    admin.client.post('/default_streams', { stream_id: 'x' }),
    errorBody('Argument "stream_id" is not valid JSON.', 'BAD_REQUEST', { var_name: 'stream_id' }),
  );
  await expectError(realm.owner.client.post('/default_streams', { stream_id: secret }), errorBody('Private channels cannot be made default.'));
  for (const id of [hidden, archived, elsewhere, 999999]) {
    await expectError(admin.client.post('/default_streams', { stream_id: id }), errorBody('Invalid channel ID'));
  }
  for (const id of [archived, elsewhere, 999999])
    await expectError(admin.client.delete('/default_streams', { stream_id: id }), errorBody('Invalid channel ID'));
  assert.equal(await registerDefaults(admin), [[], []]);
});

async function createGroup(realm: TestRealm, name: string, description: string, channels: string[]) {
  return realm.owner.client.post('/default_stream_groups/create', { group_name: name, description, stream_names: channels });
}

test('default channel groups: create, rename, describe, add and remove channels, delete; events and register', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: GUEST });
  const [alpha, beta, gamma] = [
    await makeChannel(realm, 'alpha', [realm.owner]),
    await makeChannel(realm, 'beta', [realm.owner]),
    await makeChannel(realm, 'Gamma', [realm.owner]),
  ];
  const [queue, guestQueue] = [
    await openQueue(member, { event_types: ['default_stream_groups'] }),
    await openQueue(guest, { event_types: ['default_stream_groups'] }),
  ];
  const event = (groups: unknown[]) => [{ type: 'default_stream_groups', default_stream_groups: groups }];

  await ok(createGroup(realm, 'Engineering', 'For engineers', ['gamma', 'beta', 'beta']));
  const [[, [created]]] = [await registerDefaults(member)];
  const id = created.id;
  const engineering = { name: 'Engineering', id, description: 'For engineers', streams: [gamma, beta] };
  assert.equal(created, engineering, 'channels by name, case-insensitively; Gamma sorts before beta');
  assert.equal(await queue.next(), event([engineering]));
  await ok(createGroup(realm, 'Design', '', []));
  const design = { name: 'Design', id: id + 1, description: '', streams: [] };
  assert.equal(await queue.next(), event([design, engineering]), 'groups by name');

  await ok(realm.owner.client.patch(`/default_stream_groups/${id}`, { new_group_name: 'Eng', new_description: 'Builders' }));
  const renamed = { ...engineering, name: 'Eng' };
  assert.equal(
    [...(await queue.next()), ...(await queue.pending())],
    [...event([design, renamed]), ...event([design, { ...renamed, description: 'Builders' }])],
  );
  await ok(realm.owner.client.patch(`/default_stream_groups/${id}/streams`, { op: 'add', stream_names: ['alpha'] }));
  const withAlpha = { ...renamed, description: 'Builders', streams: [gamma, alpha, beta] };
  assert.equal(await queue.next(), event([design, withAlpha]));
  await ok(realm.owner.client.patch(`/default_stream_groups/${id}/streams`, { op: 'remove', stream_names: ['Gamma', 'beta'] }));
  assert.equal(await queue.next(), event([design, { ...withAlpha, streams: [alpha] }]));
  assert.equal((await registerDefaults(member))[1], [design, { ...withAlpha, streams: [alpha] }]);
  assert.equal(await registerDefaults(guest), [[], []]);

  await ok(realm.owner.client.delete(`/default_stream_groups/${design.id}`));
  assert.equal(await queue.next(), event([{ ...withAlpha, streams: [alpha] }]));
  assert.equal(await guestQueue.pending(), []);
});

test('default channel group errors', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  await makeChannel(realm, 'alpha', [realm.owner]);
  const beta = await makeChannel(realm, 'beta', [realm.owner]);
  await makeChannel(realm, 'hidden', [member], { invite_only: true });
  await ok(realm.owner.client.post('/default_streams', { stream_id: beta }));
  await ok(createGroup(realm, 'Existing', '', ['alpha']));
  const id = (await registerDefaults(realm.owner))[1][0].id;

  await expectError(member.client.post('/default_stream_groups/create', { group_name: 'Mine', description: '', stream_names: [] }), NOT_ADMIN);
  await expectError(member.client.patch(`/default_stream_groups/${id}`, { new_description: 'x' }), NOT_ADMIN);
  await expectError(member.client.patch(`/default_stream_groups/${id}/streams`, { op: 'add', stream_names: [] }), NOT_ADMIN);
  await expectError(member.client.delete(`/default_stream_groups/${id}`), NOT_ADMIN);

  const creations: [Record<string, unknown>, object][] = [
    [{ group_name: 'G', description: '', stream_names: ['nope'] }, errorBody("Invalid channel name 'nope'")],
    [{ group_name: 'G', description: '', stream_names: ['hidden'] }, errorBody("Invalid channel name 'hidden'")],
    [{ group_name: 'G', description: '', stream_names: ['alpha', 'beta'] }, errorBody("'beta' is a default channel and cannot be added to 'G'")],
    [{ group_name: ' ', description: '', stream_names: [] }, errorBody("Invalid default channel group name ' '")],
    [{ group_name: 'x'.repeat(61), description: '', stream_names: [] }, errorBody('Default channel group name too long (limit: 60 characters)')],
    [{ group_name: 'abc\u0000', description: '', stream_names: [] }, errorBody("Default channel group name 'abc\u0000' contains NULL (0x00) characters.")],
    [{ group_name: 'Existing', description: 'other', stream_names: [] }, errorBody("Default channel group 'Existing' already exists")],
    [{ group_name: 'G', stream_names: [] }, errorBody("Missing 'description' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'description' })],
    [
      { group_name: 'G', description: '', stream_names: 'alpha' },
      errorBody('Argument "stream_names" is not valid JSON.', 'BAD_REQUEST', { var_name: 'stream_names' }),
    ],
  ];
  for (const [params, body] of creations) await expectError(realm.owner.client.post('/default_stream_groups/create', params), body);

  await ok(createGroup(realm, 'Other', '', []));
  const updates: [string, Record<string, unknown>, object][] = [
    [`/default_stream_groups/${id}`, {}, errorBody('You must pass "new_description" or "new_group_name".')],
    [`/default_stream_groups/${id}`, { new_group_name: '' }, errorBody('You must pass "new_description" or "new_group_name".')],
    ['/default_stream_groups/999999', { new_description: 'x' }, errorBody("Default channel group with id '999999' does not exist.")],
    [`/default_stream_groups/${id}`, { new_group_name: 'Existing' }, errorBody("This default channel group is already named 'Existing'")],
    [`/default_stream_groups/${id}`, { new_group_name: 'Other' }, errorBody("Default channel group 'Other' already exists")],
    [`/default_stream_groups/${id}/streams`, { stream_names: ['alpha'] }, errorBody("Missing 'op' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'op' })],
    [
      `/default_stream_groups/${id}/streams`,
      { op: 'add' },
      errorBody("Missing 'stream_names' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'stream_names' }),
    ],
    [
      `/default_stream_groups/${id}/streams`,
      { op: 'invalid', stream_names: ['alpha'] },
      errorBody('Invalid value for "op". Specify one of "add" or "remove".'),
    ],
    ['/default_stream_groups/999999/streams', { op: 'add', stream_names: ['alpha'] }, errorBody("Default channel group with id '999999' does not exist.")],
    [`/default_stream_groups/${id}/streams`, { op: 'add', stream_names: ['nope'] }, errorBody("Invalid channel name 'nope'")],
    [`/default_stream_groups/${id}/streams`, { op: 'add', stream_names: ['beta'] }, errorBody("'beta' is a default channel and cannot be added to 'Existing'")],
    [
      `/default_stream_groups/${id}/streams`,
      { op: 'add', stream_names: ['alpha'] },
      errorBody("Channel 'alpha' is already present in default channel group 'Existing'"),
    ],
    [
      `/default_stream_groups/${id}/streams`,
      { op: 'remove', stream_names: ['beta'] },
      errorBody("Channel 'beta' is not present in default channel group 'Existing'"),
    ],
  ];
  for (const [path, params, body] of updates) await expectError(realm.owner.client.patch(path, params), body);
  await expectError(realm.owner.client.delete('/default_stream_groups/999999'), errorBody("Default channel group with id '999999' does not exist."));
  const other = await newRealm();
  await ok(createGroup(other, 'Theirs', '', []));
  const theirs = (await registerDefaults(other.owner))[1][0].id;
  await expectError(realm.owner.client.delete(`/default_stream_groups/${theirs}`), errorBody(`Default channel group with id '${theirs}' does not exist.`));
  assert.equal(
    (await registerDefaults(realm.owner))[1].map((g: { name: string }) => g.name),
    ['Existing', 'Other'],
    'nothing changed',
  );
});

test('is_default_stream: on channel creation (administrators, public channels) and PATCH /streams/{id}', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const queue = await openQueue(member, { event_types: ['default_streams'] });
  const create = (user: TestUser, name: string, extra: Record<string, unknown> = {}) =>
    user.client.post('/users/me/subscriptions', { subscriptions: [{ name }], is_default_stream: true, ...extra });
  await expectError(create(member, 'mine'), errorBody('Insufficient permission'));
  await expectError(create(realm.owner, 'closed', { invite_only: true }), errorBody('A default channel cannot be private.'));
  const created = await create(realm.owner, 'lobby');
  assert.is(created.status, 200, created.text);
  const lobby = (await realm.owner.client.get('/get_stream_id', { stream: 'lobby' })).body.stream_id;
  assert.equal(await queue.next(), [{ type: 'default_streams', default_streams: [lobby] }]);

  // A member who administers a channel still may not make it a default.
  assert.is((await member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'theirs' }] })).status, 200);
  const theirs = (await member.client.get('/get_stream_id', { stream: 'theirs' })).body.stream_id;
  await expectError(
    member.client.patch(`/streams/${theirs}`, { is_default_stream: true }),
    errorBody('You do not have permission to change default channels.'),
  );
  await ok(realm.owner.client.patch(`/streams/${theirs}`, { is_default_stream: true }));
  assert.equal(await queue.next(), [{ type: 'default_streams', default_streams: [lobby, theirs] }]);
  await expectError(realm.owner.client.patch(`/streams/${theirs}`, { is_private: true }), errorBody('A default channel cannot be private.'));
  await expectError(
    realm.owner.client.patch(`/streams/${lobby}`, { is_private: true, is_default_stream: true }),
    errorBody('A default channel cannot be private.'),
  );
  await ok(realm.owner.client.patch(`/streams/${theirs}`, { is_private: true, is_default_stream: false }));
  assert.equal(await queue.next(), [{ type: 'default_streams', default_streams: [lobby] }]);
  assert.is((await realm.owner.client.get(`/streams/${theirs}`)).body.stream.invite_only, true);
});

test('archiving a default channel takes it out of the defaults and of every group', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const [old, kept] = [await makeChannel(realm, 'old', [realm.owner, member]), await makeChannel(realm, 'kept', [realm.owner])];
  await ok(realm.owner.client.post('/default_streams', { stream_id: old }));
  await ok(createGroup(realm, 'One', '', ['kept']));
  await ok(createGroup(realm, 'Two', '', []));
  const groups = (await registerDefaults(realm.owner))[1];
  const queue = await openQueue(member, { event_types: ['default_streams', 'default_stream_groups', 'stream'] });
  await realm.server.app.prisma.defaultChannelGroupChannel.create({ data: { groupId: groups[1].id, channelId: old } });
  await ok(realm.owner.client.delete(`/streams/${old}`));
  const events = [...(await queue.next()), ...(await queue.pending())];
  assert.equal(
    events.map((e) => [e.type, e.op ?? '']),
    [
      ['default_streams', ''],
      ['default_stream_groups', ''],
      ['stream', 'delete'],
    ],
  );
  assert.equal(events[0], { type: 'default_streams', default_streams: [] });
  assert.equal(events[1], {
    type: 'default_stream_groups',
    default_stream_groups: [
      { ...groups[0], streams: [kept] },
      { ...groups[1], streams: [] },
    ],
  });
  assert.equal(await registerDefaults(member), [
    [],
    [
      { ...groups[0], streams: [kept] },
      { ...groups[1], streams: [] },
    ],
  ]);
});

test('new users join the default channels, with their recent messages, the newest 20 unread; bots do not', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const lobby = await makeChannel(realm, 'lobby', [realm.owner, member]);
  const other = await makeChannel(realm, 'other', [realm.owner]);
  await ok(realm.owner.client.post('/default_streams', { stream_id: lobby }));
  const ids: number[] = [];
  for (let i = 0; i < 25; i++) ids.push(await send(realm.owner, lobby, 'news', `item ${i}`));
  await send(realm.owner, other, 'elsewhere', 'not for newcomers');
  const queue = await openQueue(member, { event_types: ['subscription', 'realm_user'] });

  const created = await realm.owner.client.post('/users', { email: 'newcomer@example.com', password: 'newcomer-password', full_name: 'New Comer' });
  assert.is(created.status, 200, created.text);
  const newcomerId = created.body.user_id;
  const events = [...(await queue.next()), ...(await queue.pending())];
  assert.equal(
    events.map((e) => [e.type, e.op]),
    [
      ['realm_user', 'add'],
      ['subscription', 'peer_add'],
    ],
  );
  assert.equal(events[0]!.person.profile_data, {});
  assert.equal(events[1], { type: 'subscription', op: 'peer_add', stream_ids: [lobby], user_ids: [newcomerId] });

  const login = await realm.anonymous.post('/fetch_api_key', { username: 'newcomer@example.com', password: 'newcomer-password' });
  const newcomer = new Client(realm.server.port, realm.host, { email: 'newcomer@example.com', apiKey: login.body.api_key });
  assert.equal(
    (await newcomer.get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name),
    ['lobby'],
  );
  const unread = (await newcomer.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).body.unread_msgs;
  assert.equal(unread.streams, [{ stream_id: lobby, topic: 'news', unread_message_ids: ids.slice(5) }]);
  const feed = await newcomer.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [] });
  assert.equal(
    feed.body.messages.map((m: { id: number; flags: string[] }) => [m.id, m.flags]),
    ids.map((id, i) => [id, i < 5 ? ['read', 'historical'] : ['historical']]),
  );

  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  assert.equal(await realm.server.app.prisma.subscription.count({ where: { userId: bot.id } }), 0);
});

test.run();
