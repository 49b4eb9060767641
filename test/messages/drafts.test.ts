// Drafts: GET/POST /drafts, PATCH/DELETE /drafts/{id}, their errors and `drafts` events
// (mirrors Zulip's test_drafts.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import type { TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, ownerBobZoe } from './messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const createDrafts = (u: TestUser, drafts: unknown) => u.client.post('/drafts', { drafts });
const listDrafts = async (u: TestUser) => {
  const r = await u.client.get('/drafts');
  assert.is(r.status, 200, r.text);
  return r.body;
};

test('POST /drafts creates a batch in order; GET /drafts lists them, least recently edited first', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const drafts = [
    { type: 'stream', to: [channelId], topic: 'sync drafts', content: 'Channel draft', timestamp: 1595479019 },
    { type: 'private', to: [zoe.id], topic: 'ignored for DMs', content: 'One to one', timestamp: 1595479020 },
    { type: 'private', to: [zoe.id, bob.id, realm.owner.id], topic: '', content: '  Group, with me listed  ', timestamp: 1595479021.7 },
    { type: 'private', to: [], topic: 'x', content: 'Nobody yet', timestamp: 1595479022 },
    { type: '', to: [zoe.id], topic: 'x', content: 'Unaddressed', timestamp: 1595479023 },
    { type: 'private', to: [bob.id], topic: '', content: 'Note to self', timestamp: 1595479024 },
  ];
  const r = await createDrafts(bob, drafts);
  assert.is(r.status, 200, r.text);
  const ids = r.body.ids as number[];
  assert.equal(r.body, { ...SUCCESS, ids });
  assert.is(ids.length, 6);
  assert.equal(await listDrafts(bob), {
    ...SUCCESS,
    count: 6,
    drafts: [
      { id: ids[0], type: 'stream', to: [channelId], topic: 'sync drafts', content: 'Channel draft', timestamp: 1595479019 },
      { id: ids[1], type: 'private', to: [zoe.id], topic: '', content: 'One to one', timestamp: 1595479020 },
      { id: ids[2], type: 'private', to: [realm.owner.id, zoe.id], topic: '', content: 'Group, with me listed', timestamp: 1595479021 },
      { id: ids[3], type: '', to: [], topic: '', content: 'Nobody yet', timestamp: 1595479022 },
      { id: ids[4], type: '', to: [], topic: '', content: 'Unaddressed', timestamp: 1595479023 },
      { id: ids[5], type: 'private', to: [bob.id], topic: '', content: 'Note to self', timestamp: 1595479024 },
    ],
  });
  assert.equal(await listDrafts(zoe), { ...SUCCESS, count: 0, drafts: [] }, 'only the owner sees them');
});

test('POST /drafts: server time when no timestamp; long topics truncated; empty batch', async () => {
  const { bob, channelId } = await ownerBobZoe();
  const before = Math.floor(Date.now() / 1000);
  const r = await createDrafts(bob, [{ type: 'stream', to: [channelId], topic: 't'.repeat(70), content: 'hi' }]);
  assert.is(r.status, 200, r.text);
  const [draft] = (await listDrafts(bob)).drafts;
  assert.ok(draft.timestamp >= before && draft.timestamp <= Math.ceil(Date.now() / 1000));
  assert.is(draft.topic, `${'t'.repeat(57)}...`);
  assert.equal((await createDrafts(bob, [])).body, { ...SUCCESS, ids: [] });
});

test('POST /drafts errors: each rejected, and a batch with one bad draft creates nothing', async () => {
  const { realm, bob, channelId } = await ownerBobZoe();
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const gone = await realm.addUser({ name: 'Gone' });
  await realm.server.app.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } });
  const good = { type: 'stream', to: [channelId], topic: 't', content: 'fine', timestamp: 1595479019 };
  const cases: [unknown, string][] = [
    [[good, { ...good, timestamp: -10.1 }], 'Timestamp must not be negative.'],
    [[{ ...good, to: [] }], 'Must specify exactly 1 channel ID for channel messages'],
    [[{ ...good, to: [channelId, secret] }], 'Must specify exactly 1 channel ID for channel messages'],
    [[{ ...good, to: [secret] }], 'Invalid channel ID'],
    [[{ ...good, to: [99999999] }], 'Invalid channel ID'],
    [[{ type: 'private', to: [99999999], topic: '', content: 'x' }], 'Invalid user ID 99999999'],
    [[{ type: 'private', to: [gone.id], topic: '', content: 'x' }], `'${gone.email}' is no longer using Zulip.`],
    [[{ type: '', to: [], topic: '', content: 'Some \u0000 content' }], 'Message must not contain null bytes'],
    [[{ ...good, topic: 'thinking \u0000' }], 'Topic must not contain null bytes'],
    [[good, { ...good, type: 'channel' }], 'Invalid drafts[1]["type"]'],
    [[{ ...good, content: '   ' }], 'drafts[0]["content"] cannot be blank'],
    [[{ ...good, to: 5 }], 'drafts[0]["to"] is not a list'],
    [[{ ...good, to: ['5'] }], 'drafts[0]["to"][0] is not an integer'],
    [[{ ...good, topic: 3 }], 'drafts[0]["topic"] is not a string'],
    [[{ ...good, extra: 1 }], 'Argument "extra" at drafts[0]["extra"] is unexpected'],
    [[{ type: 'stream', to: [channelId], content: 'x' }], 'drafts[0]["topic"] field is missing'],
    [['draft'], 'drafts[0] is not a dict'],
    [{ not: 'a list' }, 'drafts is not a list'],
  ];
  for (const [drafts, msg] of cases) {
    const r = await createDrafts(bob, drafts);
    assert.equal([r.status, r.body], [400, errorBody(msg, 'BAD_REQUEST', msg === 'drafts is not a list' ? { var_name: 'drafts' } : {})], msg);
  }
  assert.is((await listDrafts(bob)).count, 0, 'no draft was created by a failing batch');
  const missing = await bob.client.post('/drafts', {});
  assert.equal([missing.status, missing.body], [400, errorBody("Missing 'drafts' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'drafts' })]);
});

test("PATCH /drafts/{id} replaces the draft; missing or someone else's is a 404", async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const other = await makeChannel(realm, 'other', [bob]);
  const [id] = (await createDrafts(bob, [{ type: 'stream', to: [channelId], topic: 'drafts', content: 'The API should be good', timestamp: 1595505700 }])).body
    .ids;
  const edited = { type: 'stream', to: [other], topic: 'designing drafts', content: 'Structured yet simple.', timestamp: 1595505800 };
  const r = await bob.client.patch(`/drafts/${id}`, { draft: edited });
  assert.equal([r.status, r.body], [200, SUCCESS]);
  assert.equal((await listDrafts(bob)).drafts, [{ id, ...edited }]);
  const notFound = errorBody('Draft does not exist', 'BAD_REQUEST');
  for (const [who, path] of [
    [bob, '/drafts/999999999'],
    [zoe, `/drafts/${id}`],
    [bob, '/drafts/abc'],
  ] as const) {
    const denied = await who.client.patch(path, { draft: { ...edited, content: '???' } });
    assert.equal([denied.status, denied.body], [404, notFound], path);
  }
  const badShape = await bob.client.patch(`/drafts/${id}`, { draft: { ...edited, to: 'x' } });
  assert.equal([badShape.status, badShape.body], [400, errorBody('draft["to"] is not a list')]);
  const badChannel = await bob.client.patch(`/drafts/${id}`, { draft: { ...edited, to: [] } });
  assert.equal([badChannel.status, badChannel.body], [400, errorBody('Must specify exactly 1 channel ID for channel messages')]);
  assert.equal((await listDrafts(bob)).drafts, [{ id, ...edited }], 'failed edits changed nothing');
});

test("DELETE /drafts/{id}; missing or someone else's is a 404", async () => {
  const { bob, zoe, channelId } = await ownerBobZoe();
  const [id] = (await createDrafts(bob, [{ type: 'stream', to: [channelId], topic: 't', content: 'x' }])).body.ids;
  const stolen = await zoe.client.delete(`/drafts/${id}`);
  assert.equal([stolen.status, stolen.body], [404, errorBody('Draft does not exist', 'BAD_REQUEST')]);
  assert.is((await listDrafts(bob)).count, 1);
  assert.equal((await bob.client.delete(`/drafts/${id}`)).body, SUCCESS);
  const again = await bob.client.delete(`/drafts/${id}`);
  assert.equal([again.status, again.body], [404, errorBody('Draft does not exist', 'BAD_REQUEST')]);
  assert.is((await listDrafts(bob)).count, 0);
});

test('enable_drafts_synchronization=false: every draft endpoint refuses, and stored drafts are dropped', async () => {
  const { bob, channelId } = await ownerBobZoe();
  const [id] = (await createDrafts(bob, [{ type: 'stream', to: [channelId], topic: 't', content: 'x' }])).body.ids;
  assert.equal((await bob.client.patch('/settings', { enable_drafts_synchronization: false })).body, SUCCESS);
  const refusal = [400, errorBody('User has disabled synchronizing drafts.')];
  for (const r of [
    await bob.client.get('/drafts'),
    await createDrafts(bob, []),
    await bob.client.patch(`/drafts/${id}`, { draft: {} }),
    await bob.client.delete(`/drafts/${id}`),
  ]) {
    assert.equal([r.status, r.body], refusal);
  }
  assert.equal((await bob.client.patch('/settings', { enable_drafts_synchronization: true })).body, SUCCESS);
  assert.equal(await listDrafts(bob), { ...SUCCESS, count: 0, drafts: [] });
});

test("drafts events: add, update and remove reach only the owner's queues; register has the drafts", async () => {
  const { bob, zoe, channelId } = await ownerBobZoe();
  const mine = await openQueue(bob, { event_types: ['drafts'] });
  const theirs = await openQueue(zoe, { event_types: ['drafts'] });
  const draft = { type: 'stream', to: [channelId], topic: 't', content: 'first', timestamp: 1600000000 };
  const [id] = (await createDrafts(bob, [draft])).body.ids;
  assert.equal(await mine.next(), [{ type: 'drafts', op: 'add', drafts: [{ id, ...draft }] }]);
  await bob.client.patch(`/drafts/${id}`, { draft: { ...draft, content: 'second' } });
  assert.equal(await mine.next(), [{ type: 'drafts', op: 'update', draft: { id, ...draft, content: 'second' } }]);
  const registered = await openQueue(bob, { fetch_event_types: ['drafts'], event_types: ['drafts'] });
  assert.equal(registered.state.drafts, [{ id, ...draft, content: 'second' }]);
  await bob.client.delete(`/drafts/${id}`);
  assert.equal(await mine.next(), [{ type: 'drafts', op: 'remove', draft_id: id }]);
  assert.equal(await theirs.pending(), []);
});

test.run();
