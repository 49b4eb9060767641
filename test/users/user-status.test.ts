// User status: POST /users/me/status, POST /users/{id}/status (administrators), GET
// /users/{id}/status, `user_status` events and register's `user_status` (Zulip's
// test_user_status.py): only the parts that are set; `away` is presence_enabled turned around.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const OCTOPUS = { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' };

const setStatus = (u: TestUser, params: Record<string, unknown>) => u.client.post('/users/me/status', params);
const getStatus = async (viewer: TestUser, target: TestUser) => (await viewer.client.get(`/users/${target.id}/status`)).body;

test('status text and emoji: stored, shown, announced to everyone, in register', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const queue = await openQueue(bob, { event_types: ['user_status'] });
  assert.equal(await getStatus(bob, ann), { ...SUCCESS, status: {} });
  assert.equal((await setStatus(ann, { status_text: '  in a meeting  ', emoji_name: 'octopus' })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'user_status', user_id: ann.id, status_text: 'in a meeting', ...OCTOPUS }]);
  assert.equal(await getStatus(bob, ann), { ...SUCCESS, status: { status_text: 'in a meeting', ...OCTOPUS } });
  const state = (await bob.client.post('/register', { fetch_event_types: ['user_status'] })).body;
  assert.equal(state.user_status, { [ann.id]: { status_text: 'in a meeting', ...OCTOPUS } });
  // Only the text: the emoji stays.
  assert.equal((await setStatus(ann, { status_text: 'lunch' })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'user_status', user_id: ann.id, status_text: 'lunch' }]);
  assert.equal((await getStatus(bob, ann)).status, { status_text: 'lunch', ...OCTOPUS });
  // Empty values clear; a user with nothing set leaves register's map.
  assert.equal((await setStatus(ann, { status_text: '', emoji_name: '' })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'user_status', user_id: ann.id, status_text: '', emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' }]);
  assert.equal((await getStatus(bob, ann)).status, {});
  assert.equal((await bob.client.post('/register', { fetch_event_types: ['user_status'] })).body.user_status, {});
});

test('away: the presence_enabled setting, with its settings event', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const own = await openQueue(ann, { event_types: ['user_status', 'user_settings'] });
  assert.equal((await setStatus(ann, { away: true })).body, SUCCESS);
  const events = [...(await own.next()), ...(await own.pending())];
  assert.equal(events, [
    { type: 'user_settings', op: 'update', property: 'presence_enabled', value: false },
    { type: 'user_status', user_id: ann.id, away: true },
  ]);
  assert.equal((await getStatus(realm.owner, ann)).status, { away: true });
  const state = (await ann.client.post('/register', { fetch_event_types: ['user_status', 'user_settings'] })).body;
  assert.equal([state.user_status, state.user_settings.presence_enabled], [{ [ann.id]: { away: true } }, false]);
  assert.equal((await setStatus(ann, { away: false })).body, SUCCESS);
  assert.equal((await getStatus(realm.owner, ann)).status, {});
});

test('POST /users/me/status errors change nothing', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bot = await realm.addUser({ bot: true });
  const cases: [TestUser, Record<string, unknown>, object][] = [
    [ann, {}, errorBody('Client did not pass any new values.')],
    [ann, { emoji_code: '1f419' }, errorBody('Client did not pass any new values.')],
    [ann, { status_text: 'x', reaction_type: 'unicode_emoji' }, errorBody('Client must pass emoji_name if they pass either emoji_code or reaction_type.')],
    [ann, { status_text: 'x'.repeat(61) }, errorBody('status_text is too long (limit: 60 characters)', 'BAD_REQUEST', { var_name: 'status_text' })],
    [ann, { status_text: 'ok', emoji_name: 'no_such_emoji' }, errorBody("Emoji 'no_such_emoji' does not exist")],
    [ann, { emoji_name: 'octopus', emoji_code: '1f600' }, errorBody('Invalid emoji name.')],
    [ann, { emoji_name: 'octopus', reaction_type: 'nonsense' }, errorBody('Invalid emoji type.')],
    [ann, { away: '1' }, errorBody('away is not a boolean', 'BAD_REQUEST', { var_name: 'away' })],
    [bot, { status_text: 'beep' }, errorBody('This endpoint does not accept bot requests.')],
  ];
  for (const [user, params, body] of cases) {
    const r = await setStatus(user, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  assert.equal((await getStatus(realm.owner, ann)).status, {});
  assert.is(await realm.server.app.prisma.userStatus.count({ where: { userId: { in: [ann.id, bot.id] } } }), 0);
});

test('POST /users/{id}/status: administrators only; GET refuses bots and unknown users', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const bot = await realm.addUser({ bot: true });
  const queue = await openQueue(ann, { event_types: ['user_status'] });
  const denied = await bob.client.post(`/users/${ann.id}/status`, { status_text: 'hacked' });
  assert.equal([denied.status, denied.body], [400, errorBody('Insufficient permission')]);
  assert.equal((await admin.client.post(`/users/${ann.id}/status`, { status_text: 'on leave', emoji_name: 'octopus' })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'user_status', user_id: ann.id, status_text: 'on leave', ...OCTOPUS }]);
  const noAway = await admin.client.post(`/users/${ann.id}/status`, { away: true });
  assert.equal([noAway.status, noAway.body.msg, noAway.body.ignored_parameters_unsupported], [400, 'Client did not pass any new values.', undefined]);
  for (const path of [`/users/${bot.id}/status`, '/users/99999999/status', '/users/abc/status']) {
    const r = await ann.client.get(path);
    assert.equal([r.status, r.body], [400, errorBody('No such user')], path);
  }
  const botSet = await admin.client.post(`/users/${bot.id}/status`, { status_text: 'x' });
  assert.equal([botSet.status, botSet.body], [400, errorBody('No such user')]);
});

test.run();
