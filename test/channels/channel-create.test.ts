// POST /channels/create (Zulip's create_channel, test_channel_creation.py): a new channel with
// its settings and subscribers, `{"id": ...}`, the events channel creation sends, and its errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, systemGroup } from '../messages/messages-helpers.ts';

const create = (u: TestUser, params: Record<string, unknown>) => u.client.post('/channels/create', { subscribers: [], ...params });
const channel = async (u: TestUser, id: number) => (await u.client.get(`/streams/${id}`)).body.stream;
const exists = async (realm: TestRealm, name: string) => (await realm.server.app.prisma.channel.count({ where: { realmId: realm.id, name } })) > 0;

test('creates a channel with subscribers: {id}, the settings asked for, events to subscribers and onlookers', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const carol = await realm.addUser({ name: 'Carol' });
  const bobQueue = await openQueue(bob, { event_types: ['stream', 'subscription'] });
  const carolQueue = await openQueue(carol, { event_types: ['stream', 'subscription'] });
  const r = await create(realm.owner, {
    name: ' engineering ',
    description: 'Build\nthings',
    subscribers: [realm.owner.id, bob.id],
    topics_policy: JSON.stringify('disable_empty_topic'),
  });
  assert.is(r.status, 200, r.text);
  const id = r.body.id as number;
  assert.equal(r.body, { result: 'success', msg: '', id });
  const stream = await channel(bob, id);
  assert.equal(
    [
      stream.name,
      stream.description,
      stream.rendered_description,
      stream.invite_only,
      stream.history_public_to_subscribers,
      stream.creator_id,
      stream.topics_policy,
      stream.subscriber_count,
    ],
    ['engineering', 'Build things', '<p>Build things</p>', false, true, realm.owner.id, 'disable_empty_topic', 2],
  );
  assert.equal(stream.can_administer_channel_group, { direct_members: [realm.owner.id], direct_subgroups: [] });
  const bobEvents = [...(await bobQueue.next()), ...(await bobQueue.pending())];
  assert.equal(
    bobEvents.map((e) => `${e.type}/${e.op}`),
    ['stream/create', 'subscription/add'],
  );
  assert.equal(bobEvents[0]!.streams, [{ ...stream, subscriber_count: 2 }]);
  assert.equal(
    bobEvents[1]!.subscriptions.map((s: Record<string, unknown>) => [s.stream_id, s.subscribers]),
    [[id, [realm.owner.id, bob.id]]],
  );
  assert.equal(
    [...(await carolQueue.next()), ...(await carolQueue.pending())],
    [
      { type: 'stream', op: 'create', streams: [{ ...stream, subscriber_count: 2 }] },
      { type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: [realm.owner.id, bob.id] },
    ],
  );
  const subscriptions = (await bob.client.get('/users/me/subscriptions')).body.subscriptions;
  assert.equal(
    subscriptions.map((s: Record<string, unknown>) => s.stream_id),
    [id],
  );
});

test('with nobody subscribed: public channels are announced to members, private ones to who administers them', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: Role.GUEST });
  const memberQueue = await openQueue(member, { event_types: ['stream', 'subscription'] });
  const guestQueue = await openQueue(guest, { event_types: ['stream', 'subscription'] });
  const open = await create(realm.owner, { name: 'lobby' });
  assert.is(open.status, 200, open.text);
  assert.equal(
    (await memberQueue.next()).map((e) => [e.type, e.op, e.streams[0].stream_id, e.streams[0].subscriber_count]),
    [['stream', 'create', open.body.id, 0]],
  );
  assert.equal((await member.client.get(`/streams/${open.body.id}/members`)).body.subscribers, []);
  const hidden = await create(member, { name: 'secret', invite_only: true });
  assert.is(hidden.status, 200, hidden.text);
  const secret = await channel(member, hidden.body.id);
  assert.equal([secret.invite_only, secret.history_public_to_subscribers, secret.subscriber_count], [true, false, 0]);
  assert.equal(
    (await memberQueue.next()).map((e) => [e.type, e.op, e.streams[0].name]),
    [['stream', 'create', 'secret']],
    'its creator administers it',
  );
  assert.equal(await guestQueue.pending(), [], 'guests see neither');
  const shared = await create(realm.owner, { name: 'shared history', invite_only: true, history_public_to_subscribers: true, subscribers: [member.id] });
  assert.equal((await channel(member, shared.body.id)).history_public_to_subscribers, true);
});

test('errors: taken names, blank and bad names, unknown subscribers, guests, permissions; nothing is created', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: Role.GUEST });
  const former = await realm.addUser();
  await realm.owner.client.delete(`/users/${former.id}`);
  assert.equal((await create(realm.owner, { name: 'taken' })).status, 200);
  const taken = await create(member, { name: ' TAKEN ' });
  assert.equal([taken.status, taken.body], [409, errorBody("Channel 'TAKEN' already exists", 'CHANNEL_ALREADY_EXISTS', { channel_name: 'TAKEN' })]);
  await realm.owner.client.patch('/realm', { can_create_private_channel_group: JSON.stringify({ new: systemGroup(realm, 'role:administrators') }) });
  const cases: [TestUser, Record<string, unknown>, Record<string, unknown>][] = [
    [member, { name: '   ' }, errorBody('name cannot be blank', 'BAD_REQUEST', { var_name: 'name' })],
    [member, { name: 'x'.repeat(61) }, errorBody('Channel name too long (limit: 60 characters).')],
    [member, { name: 'bad\u0001name' }, errorBody('Invalid character in channel name, at position 4.')],
    [
      member,
      { name: 'd', description: 'x'.repeat(1025) },
      errorBody('description is too long (limit: 1024 characters)', 'BAD_REQUEST', { var_name: 'description' }),
    ],
    [member, { name: 'u', subscribers: [member.id, 999999] }, errorBody('No such user')],
    [member, { name: 'u', subscribers: [former.id] }, errorBody('User is deactivated')],
    [member, { name: 'u', subscribers: 'all' }, errorBody('Argument "subscribers" is not valid JSON.', 'BAD_REQUEST', { var_name: 'subscribers' })],
    [guest, { name: 'g' }, errorBody('Not allowed for guest users')],
    [member, { name: 'p', invite_only: true }, errorBody('Insufficient permission')],
    [admin, { name: 'w', is_web_public: true }, errorBody('Web-public channels are not enabled.')],
    [admin, { name: 'r', message_retention_days: 30 }, errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL')],
    [member, { name: 'f', folder_id: 999999 }, errorBody('Invalid channel folder ID')],
    [member, { name: 'i', is_web_public: true, invite_only: true }, errorBody('Invalid parameters')],
  ];
  for (const [user, params, body] of cases) {
    const r = await create(user, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  for (const name of ['u', 'g', 'p', 'w', 'r', 'f', 'i', 'd']) assert.not.ok(await exists(realm, name), name);
  const missingName = await realm.owner.client.post('/channels/create', { subscribers: '[]' });
  assert.equal([missingName.status, missingName.body], [400, errorBody("Missing 'name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'name' })]);
  const missingSubscribers = await realm.owner.client.post('/channels/create', { name: 'nosubs' });
  assert.equal(
    [missingSubscribers.status, missingSubscribers.body],
    [400, errorBody("Missing 'subscribers' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'subscribers' })],
  );
  assert.equal((await create(admin, { name: 'p', invite_only: true })).status, 200, 'administrators still may');
});

test('two requests for one name at once: one channel, one CHANNEL_ALREADY_EXISTS', async () => {
  const realm = await newRealm();
  const replies = await Promise.all([create(realm.owner, { name: 'race' }), create(realm.owner, { name: 'RACE' })]);
  assert.equal(replies.map((r) => r.status).sort(), [200, 409]);
  assert.is(await realm.server.app.prisma.channel.count({ where: { realmId: realm.id, name: { in: ['race', 'RACE'] } } }), 1);
});

test.run();
