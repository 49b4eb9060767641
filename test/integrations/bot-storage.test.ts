// Bot storage: GET/PUT/DELETE /bot_storage (Zulip's test_bots storage cases), and the flow the
// stock Python bots' StateHandler runs (the `incrementor` bot): load all, put, get by key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client, Params } from '../helpers/client.ts';
import { newRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const KEY_MISSING = errorBody('Key does not exist.');

/** The Python client's `update_storage`: PUT with the dict JSON-encoded in a form. */
const put = (c: Client, storage: Params) =>
  c.request('PUT', '/api/v1/bot_storage', { body: new URLSearchParams({ storage: JSON.stringify(storage) }).toString() });
const get = (c: Client, keys?: string[]) => c.get('/bot_storage', keys ? { keys } : {});

test('the incrementor flow: empty storage, put marshalled values, get by key, update', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true });
  assert.equal((await get(bot.client)).body, { ...SUCCESS, storage: {} });
  for (const [key, value] of [
    ['number', '0'],
    ['message_id', 'null'],
  ]) {
    assert.equal((await put(bot.client, { [key]: value })).body, SUCCESS);
  }
  assert.equal((await get(bot.client, ['number'])).body, { ...SUCCESS, storage: { number: '0' } });
  assert.equal((await put(bot.client, { number: '1', message_id: '42' })).body, SUCCESS);
  assert.equal((await get(bot.client)).body, { ...SUCCESS, storage: { message_id: '42', number: '1' } });
  assert.equal((await get(bot.client, ['number', 'message_id'])).body, { ...SUCCESS, storage: { number: '1', message_id: '42' } });
});

test('GET and DELETE /bot_storage: missing keys change nothing; no keys means all', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true });
  await put(bot.client, { a: '1', b: '2', c: '3' });
  const missing = await get(bot.client, ['a', 'nope']);
  assert.equal([missing.status, missing.body], [400, KEY_MISSING]);
  const notRemoved = await bot.client.delete('/bot_storage', { keys: ['a', 'nope'] });
  assert.equal([notRemoved.status, notRemoved.body], [400, KEY_MISSING]);
  assert.equal((await get(bot.client)).body.storage, { a: '1', b: '2', c: '3' }, 'a failed removal removes nothing');
  assert.equal((await bot.client.delete('/bot_storage', { keys: ['a'] })).body, SUCCESS);
  assert.equal((await get(bot.client)).body.storage, { b: '2', c: '3' });
  assert.equal((await bot.client.delete('/bot_storage')).body, SUCCESS);
  assert.equal((await get(bot.client)).body.storage, {});
});

test('PUT /bot_storage validation: a dict of strings', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true });
  const cases: [string | undefined, object][] = [
    [undefined, errorBody("Missing 'storage' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'storage' })],
    ['{"a": 1}', errorBody('storage["a"] is not a string', 'BAD_REQUEST', { var_name: 'storage' })],
    ['["a"]', errorBody('storage is not a dict', 'BAD_REQUEST', { var_name: 'storage' })],
    ['{', errorBody('Argument "storage" is not valid JSON.', 'BAD_REQUEST', { var_name: 'storage' })],
  ];
  for (const [storage, body] of cases) {
    const r = await bot.client.request('PUT', '/api/v1/bot_storage', { body: storage === undefined ? '' : new URLSearchParams({ storage }).toString() });
    assert.equal([r.status, r.body], [400, body], String(storage));
  }
  const badKeys = await bot.client.get('/bot_storage', { keys: 'a' });
  assert.equal([badKeys.status, badKeys.body], [400, errorBody('Argument "keys" is not valid JSON.', 'BAD_REQUEST', { var_name: 'keys' })]);
  assert.equal((await get(bot.client)).body.storage, {});
});

test('PUT /bot_storage: 10,000,000 characters per user, counted in code points; a refused request writes nothing', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true });
  // Nine values of 999,999 characters plus their one-character keys: 9,000,000 in all.
  for (let i = 1; i <= 9; i++) assert.equal((await put(bot.client, { [String(i)]: 'x'.repeat(999_999) })).body, SUCCESS);
  assert.equal((await put(bot.client, { a: 'x'.repeat(999_999) })).body, SUCCESS, 'exactly at the limit');
  // An emoji is one character, as in Python (two UTF-16 units in JavaScript).
  const over = await put(bot.client, { b: '😀', c: 'x' });
  assert.equal([over.status, over.body], [400, errorBody('Request exceeds storage limit by 4 characters. The limit is 10000000 characters.')]);
  const notWritten = await get(bot.client, ['b']);
  assert.equal([notWritten.status, notWritten.body], [400, KEY_MISSING], 'nothing of the refused request was written');
  // Replacing a value counts only its new size.
  assert.equal((await put(bot.client, { 1: 'x'.repeat(999_997), b: '😀' })).body, SUCCESS);
  assert.equal((await get(bot.client, ['b'])).body.storage, { b: '😀' });
});

test('bot storage is per user: another user neither reads nor removes it', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true });
  const other = await realm.addUser();
  await put(bot.client, { secret: 's' });
  const r = await get(other.client, ['secret']);
  assert.equal([r.status, r.body], [400, KEY_MISSING]);
  assert.equal((await get(other.client)).body.storage, {});
  await other.client.delete('/bot_storage');
  assert.equal((await get(bot.client)).body.storage, { secret: 's' });
});

test.run();
