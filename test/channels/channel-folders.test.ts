// Channel folders (spec 4.5): create, list, rename, describe, archive and order them; errors,
// `channel_folder` events to every active user, and register's channel_folders.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm } from '../helpers/server.ts';
import { errorBody, setChannelRow } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };

async function create(realm: TestRealm, name: string, description = ''): Promise<number> {
  const r = await realm.owner.client.post('/channel_folders/create', { name, description });
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['channel_folder_id', 'msg', 'result']);
  return r.body.channel_folder_id;
}

test('create: the folder as GET, register and the add event show it, rendered description, last in order', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const queue = await openQueue(member, { event_types: ['channel_folder'] });
  const before = Math.floor(Date.now() / 1000);
  const first = await create(realm, 'Engineering', 'All **engineering** channels');
  const second = await create(realm, 'Marketing');
  const list = (await member.client.get('/channel_folders')).body;
  const [a, b] = list.channel_folders;
  assert.ok(a.date_created >= before && a.date_created <= Math.floor(Date.now() / 1000));
  assert.equal(list, {
    ...SUCCESS,
    channel_folders: [
      {
        id: first,
        name: 'Engineering',
        description: 'All **engineering** channels',
        rendered_description: '<p>All <strong>engineering</strong> channels</p>',
        order: 0,
        date_created: a.date_created,
        creator_id: realm.owner.id,
        is_archived: false,
      },
      {
        id: second,
        name: 'Marketing',
        description: '',
        rendered_description: '',
        order: 1,
        date_created: b.date_created,
        creator_id: realm.owner.id,
        is_archived: false,
      },
    ],
  });
  assert.equal(
    [...(await queue.next()), ...(await queue.pending())],
    [
      { type: 'channel_folder', op: 'add', channel_folder: a },
      { type: 'channel_folder', op: 'add', channel_folder: b },
    ],
  );
  const state = (await member.client.post('/register', { fetch_event_types: ['channel_folders', 'realm'] })).body;
  assert.equal(state.channel_folders, [a, b]);
  assert.equal([state.max_channel_folder_name_length, state.max_channel_folder_description_length], [60, 1024]);
});

test('create errors: administrators only, names empty, unprintable, taken (case-insensitive), too long; description required', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  await create(realm, 'Sales');
  const cases: [Record<string, unknown>, object][] = [
    [{ name: ' ', description: '' }, errorBody("Channel folder name can't be empty.")],
    [{ name: 'Bad\u0007name', description: '' }, errorBody('Invalid character in channel folder name, at position 4.')],
    [{ name: 'sales', description: '' }, errorBody('Channel folder name already in use')],
    [{ name: 'x'.repeat(61), description: '' }, errorBody('name is too long (limit: 60 characters)', 'BAD_REQUEST', { var_name: 'name' })],
    [
      { name: 'Docs', description: 'd'.repeat(1025) },
      errorBody('description is too long (limit: 1024 characters)', 'BAD_REQUEST', { var_name: 'description' }),
    ],
    [{ name: 'Docs' }, errorBody("Missing 'description' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'description' })],
  ];
  for (const [params, body] of cases) {
    const r = await realm.owner.client.post('/channel_folders/create', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  const denied = await member.client.post('/channel_folders/create', { name: 'Mine', description: '' });
  assert.equal([denied.status, denied.body], [400, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')]);
  assert.equal(
    (await realm.owner.client.get('/channel_folders')).body.channel_folders.map((f: { name: string }) => f.name),
    ['Sales'],
  );
});

test('PATCH /channel_folders/{id}: one update event with what changed; archiving frees the name; checks', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const id = await create(realm, 'Ops', 'old');
  const other = await create(realm, 'Support');
  const queue = await openQueue(member, { event_types: ['channel_folder'] });
  assert.equal((await admin.client.patch(`/channel_folders/${id}`, { name: 'Operations', description: 'New *text*' })).body, SUCCESS);
  assert.equal(await queue.next(), [
    {
      type: 'channel_folder',
      op: 'update',
      channel_folder_id: id,
      data: { name: 'Operations', description: 'New *text*', rendered_description: '<p>New <em>text</em></p>' },
    },
  ]);
  assert.equal((await admin.client.patch(`/channel_folders/${id}`, { name: 'Operations' })).body, SUCCESS, 'no change, no event');
  assert.equal((await admin.client.patch(`/channel_folders/${id}`, { is_archived: true })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'channel_folder', op: 'update', channel_folder_id: id, data: { is_archived: true } }]);
  assert.equal(
    (await admin.client.get('/channel_folders')).body.channel_folders.map((f: { id: number }) => f.id),
    [other],
  );
  assert.equal(
    (await admin.client.get('/channel_folders', { include_archived: true })).body.channel_folders.map((f: { id: number }) => f.id),
    [id, other],
  );
  // An archived folder's name may be used again, and then the archived one cannot come back under it.
  const reused = await create(realm, 'operations');
  const clash = await admin.client.patch(`/channel_folders/${id}`, { is_archived: false });
  assert.equal([clash.status, clash.body], [400, errorBody('Channel folder name already in use')]);
  const cases: [string, Record<string, unknown>, object][] = [
    [`/channel_folders/${reused}`, { name: 'SUPPORT' }, errorBody('Channel folder name already in use')],
    [`/channel_folders/${reused}`, { name: '' }, errorBody("Channel folder name can't be empty.")],
    ['/channel_folders/99999999', { name: 'x' }, errorBody('Invalid channel folder ID')],
    [
      `/channel_folders/${(await (await newRealm()).owner.client.post('/channel_folders/create', { name: 'Elsewhere', description: '' })).body.channel_folder_id}`,
      { name: 'x' },
      errorBody('Invalid channel folder ID'),
    ],
  ];
  for (const [path, params, body] of cases) {
    const r = await admin.client.patch(path, params);
    assert.equal([r.status, r.body], [400, body], `${path} ${JSON.stringify(params)}`);
  }
  const denied = await member.client.patch(`/channel_folders/${other}`, { name: 'Mine' });
  assert.equal([denied.status, denied.body], [400, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')]);
  assert.equal(await queue.pending(), [
    {
      type: 'channel_folder',
      op: 'add',
      channel_folder: (await admin.client.get('/channel_folders')).body.channel_folders.find((f: { id: number }) => f.id === reused),
    },
  ]);
});

test('archiving needs the folder empty of channels in use', async () => {
  const realm = await newRealm();
  const id = await create(realm, 'Busy');
  const r = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'busy-channel' }] });
  assert.is(r.status, 200, r.text);
  const channel = await realm.server.app.prisma.channel.findFirstOrThrow({ where: { realmId: realm.id, name: 'busy-channel' } });
  await setChannelRow(realm, channel.id, { folderId: id });
  const refused = await realm.owner.client.patch(`/channel_folders/${id}`, { is_archived: true });
  assert.equal([refused.status, refused.body], [400, errorBody('You need to remove all the channels from this folder to archive it.')]);
  await setChannelRow(realm, channel.id, { isArchived: true });
  assert.equal((await realm.owner.client.patch(`/channel_folders/${id}`, { is_archived: true })).body, SUCCESS, 'archived channels do not count');
});

test('PATCH /channel_folders: every folder placed, reorder event', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const [a, b, c] = [await create(realm, 'A'), await create(realm, 'B'), await create(realm, 'C')];
  const queue = await openQueue(member, { event_types: ['channel_folder'] });
  const missing = await realm.owner.client.patch('/channel_folders', { order: [c, a] });
  assert.equal([missing.status, missing.body], [400, errorBody('Invalid order mapping.')]);
  const denied = await member.client.patch('/channel_folders', { order: [c, a, b] });
  assert.equal([denied.status, denied.body.code], [400, 'UNAUTHORIZED_PRINCIPAL']);
  assert.equal((await realm.owner.client.patch('/channel_folders', { order: [c, a, b] })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'channel_folder', op: 'reorder', order: [c, a, b] }]);
  const folders = (await member.client.get('/channel_folders')).body.channel_folders;
  assert.equal(
    folders.map((f: { id: number; order: number }) => [f.id, f.order]),
    [
      [c, 0],
      [a, 1],
      [b, 2],
    ],
  );
});

test('spectators see only the folders holding a web-public channel in use', async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  await app.prisma.realm.update({ where: { id: realm.id }, data: { settings: { enable_spectator_access: true } } });
  await app.realms.reload(realm.id);
  const [open, closed, empty] = [await create(realm, 'Open'), await create(realm, 'Closed'), await create(realm, 'Empty')];
  await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'web' }, { name: 'members-only' }] });
  const channel = (name: string) => app.prisma.channel.findFirstOrThrow({ where: { realmId: realm.id, name } });
  await setChannelRow(realm, (await channel('web')).id, { folderId: open, isWebPublic: true });
  await setChannelRow(realm, (await channel('members-only')).id, { folderId: closed });
  const spectator = await realm.anonymous.post('/register', { client_gravatar: false, fetch_event_types: ['channel_folders'] });
  assert.is(spectator.status, 200, spectator.text);
  assert.equal(
    spectator.body.channel_folders.map((f: { id: number }) => f.id),
    [open],
  );
  const member = (await realm.owner.client.post('/register', { fetch_event_types: ['channel_folders'] })).body;
  assert.equal(
    member.channel_folders.map((f: { id: number }) => f.id),
    [open, closed, empty],
  );
});

test.run();
