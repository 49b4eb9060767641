// New API keys: POST /users/me/api_key/regenerate and /bots/{id}/api_key/regenerate. The old key
// stops working at once (also after it was cached), and a bot's new key reaches its owner and
// the administrators as a `realm_bot` update.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';
import { Role } from '../../src/domain/roles.ts';

const INVALID_KEY = errorBody('Invalid API key', 'UNAUTHORIZED');

async function assertKeyWorks(u: TestUser, apiKey: string, works: boolean): Promise<void> {
  const r = await u.client.withCredentials(u.email, apiKey).get('/users/me');
  if (works) assert.is(r.status, 200, r.text);
  else assert.equal([r.status, r.body], [401, INVALID_KEY]);
}

test('POST /users/me/api_key/regenerate: a new key; the old one is refused at once', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  await assertKeyWorks(ann, ann.apiKey, true);
  const r = await ann.client.post('/users/me/api_key/regenerate');
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['api_key', 'msg', 'result']);
  assert.match(r.body.api_key, /^[A-Za-z0-9]{32}$/);
  assert.is.not(r.body.api_key, ann.apiKey);
  await assertKeyWorks(ann, ann.apiKey, false);
  await assertKeyWorks(ann, r.body.api_key, true);
  const login = await realm.anonymous.post('/fetch_api_key', { username: ann.email, password: ann.password });
  assert.is(login.body.api_key, r.body.api_key, 'a password login hands out the new key');
});

test('requests with the old key racing the regeneration leave nothing cached: the old key is refused after it', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  let oldKey = ann.apiKey;
  for (let round = 0; round < 5; round++) {
    const racing = Array.from({ length: 20 }, () => ann.client.withCredentials(ann.email, oldKey).get('/users/me'));
    const r = await ann.client.withCredentials(ann.email, oldKey).post('/users/me/api_key/regenerate');
    assert.is(r.status, 200, r.text);
    await Promise.all(racing);
    await assertKeyWorks(ann, oldKey, false);
    oldKey = r.body.api_key;
  }
});

test('POST /bots/{id}/api_key/regenerate: owner or administrator; realm_bot update to them', async () => {
  const realm = await newRealm();
  const owner = await realm.addUser();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const other = await realm.addUser();
  const bot = await realm.addUser({ bot: true, botOwnerId: owner.id });
  await assertKeyWorks(bot, bot.apiKey, true);
  const [ownerQueue, adminQueue, otherQueue] = await Promise.all([owner, admin, other].map((u) => openQueue(u, { event_types: ['realm_bot'] })));

  const r = await owner.client.post(`/bots/${bot.id}/api_key/regenerate`);
  assert.is(r.status, 200, r.text);
  const apiKey = r.body.api_key as string;
  assert.equal(r.body, { result: 'success', msg: '', api_key: apiKey });
  await assertKeyWorks(bot, bot.apiKey, false);
  await assertKeyWorks(bot, apiKey, true);
  const expected = [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: apiKey } }];
  assert.equal(await ownerQueue.next(), expected);
  assert.equal(await adminQueue.next(), expected);
  assert.equal(await otherQueue.pending(), []);

  const byAdmin = await admin.client.post(`/bots/${bot.id}/api_key/regenerate`);
  assert.is(byAdmin.status, 200, byAdmin.text);
  await assertKeyWorks(bot, byAdmin.body.api_key, true);
});

test('POST /bots/{id}/api_key/regenerate errors: not a bot, unknown, not permitted; the key stays', async () => {
  const realm = await newRealm();
  const owner = await realm.addUser();
  const other = await realm.addUser();
  const bot = await realm.addUser({ bot: true, botOwnerId: owner.id });
  const elsewhere = await (await newRealm()).addUser({ bot: true });
  const cases: [TestUser, string, string][] = [
    [other, `/bots/${bot.id}/api_key/regenerate`, 'Insufficient permission'],
    [owner, `/bots/${other.id}/api_key/regenerate`, 'No such bot'],
    [realm.owner, `/bots/${elsewhere.id}/api_key/regenerate`, 'No such bot'],
    [realm.owner, '/bots/99999999/api_key/regenerate', 'No such bot'],
  ];
  for (const [user, path, msg] of cases) {
    const r = await user.client.post(path);
    assert.equal([r.status, r.body], [400, errorBody(msg)], path);
  }
  await assertKeyWorks(bot, bot.apiKey, true);
  await assertKeyWorks(other, other.apiKey, true);
});

test.run();
