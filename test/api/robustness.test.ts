// Bad input on every endpoint: wrong types, malformed JSON, junk path parameters. Each answer must
// be a Zulip-style error or success (never a 500), and the server must keep serving.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/api/index.ts';
import { RawSuccess } from '../../src/http/route.ts';
import { newRealm } from '../helpers/server.ts';

const JUNK = ['', 'null', '{', '[1,', '"x"', '-1', '1e309', '{"a":1}', '[[["deep"]]]', '\u0000', 'x'.repeat(5000)];

test('no bad input makes any endpoint fail with a 500', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const failures: string[] = [];
  // Replacing the caller's own key would lock the rest of the loop out; it takes no parameters.
  for (const route of allRoutes.filter((r) => r.path !== '/api/v1/users/me/api_key/regenerate')) {
    const path = route.path.replace(/:\w+/g, (_m, i) => (i % 2 ? '99999' : 'junk%20value')).replace(/\/\*$/, '/1/x/y.txt');
    for (const [i, junk] of JUNK.entries()) {
      const params = Object.fromEntries(Object.keys(route.params).map((name) => [name, junk]));
      const client = i % 2 ? member.client : realm.owner.client;
      const query = route.method === 'GET' ? `?${new URLSearchParams(params)}` : '';
      const body = route.method === 'GET' ? undefined : new URLSearchParams(params).toString();
      const r = await client.request(route.method, `${path}${query}`, { body });
      // A raw success (a file, the OpenAPI document) is not an envelope.
      const rawSuccess = r.status < 400 && route.response instanceof RawSuccess;
      const badJson = r.headers['content-type'] === 'application/json' && !rawSuccess && !['success', 'error'].includes(r.body?.result);
      if (r.status >= 500 || badJson) {
        failures.push(`${route.method} ${route.path} junk#${i}: ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
  }
  assert.equal(failures, []);
  const alive = await realm.owner.client.get('/users/me');
  assert.is(alive.status, 200);
});

test('NUL bytes where the database refuses them: a 400, not a 500', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.post('/fetch_api_key', { username: 'a\u0000b', password: 'x' });
  assert.equal([r.status, r.body], [400, { result: 'error', msg: 'Null bytes are not allowed', code: 'BAD_REQUEST' }]);
});

test('ids beyond the database integer in the path answer as ids that name nothing, on every route', async () => {
  const realm = await newRealm();
  const huge = await realm.owner.client.post('/user_groups/9223372036854775808/subgroups', { add: '[1]' });
  assert.equal([huge.status, huge.body], [400, { result: 'error', msg: 'Invalid user group', code: 'BAD_REQUEST' }]);
  const user = await realm.owner.client.get('/users/2147483648');
  assert.equal([user.status, user.body], [400, { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' }]);
  const failures: string[] = [];
  for (const route of allRoutes.filter((r) => /:\w+/.test(r.path))) {
    for (const big of ['2147483648', '9223372036854775808', '1'.repeat(400)]) {
      const r = await realm.owner.client.request(route.method, route.path.replace(/:\w+/g, big));
      if (r.status >= 500) failures.push(`${route.method} ${route.path} ${big}: ${r.status} ${r.text.slice(0, 120)}`);
    }
  }
  assert.equal(failures, []);
});

test.run();
