// HTTP conventions: envelope, auth errors and statuses, encodings, 405/404, body limits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';

test('missing credentials: 401 UNAUTHORIZED with WWW-Authenticate', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.get('/users/me');
  assert.is(r.status, 401);
  assert.is(r.headers['www-authenticate'], 'Basic realm="zulip"');
  assert.equal(r.body, { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' });
});

test('bad credentials: invalid, malformed key, unknown email, non-basic, broken header', async () => {
  const realm = await newRealm();
  const { owner } = realm;
  const wrong = await realm.anonymous.withCredentials(owner.email, 'a'.repeat(32)).get('/users/me');
  assert.is(wrong.status, 401);
  assert.equal(wrong.body, { result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' });
  assert.is(wrong.headers['www-authenticate'], 'Basic realm="zulip"');
  const malformed = await realm.anonymous.withCredentials(owner.email, 'short').get('/users/me');
  assert.equal([malformed.status, malformed.body.msg], [401, 'Malformed API key']);
  const unknown = await realm.anonymous.withCredentials('nobody@example.com', owner.apiKey).get('/users/me');
  assert.equal([unknown.status, unknown.body.msg], [401, 'Invalid API key']);
  const digest = await realm.anonymous.get('/users/me', {}, { headers: { Authorization: 'Digest abc' } });
  assert.equal([digest.status, digest.body], [400, { result: 'error', msg: 'This endpoint requires HTTP basic authentication.', code: 'BAD_REQUEST' }]);
  const broken = await realm.anonymous.get('/users/me', {}, { headers: { Authorization: 'Basic !!!' } });
  assert.equal([broken.status, broken.body.msg], [401, 'Invalid authorization header for basic auth']);
});

test('a key of another organization is refused', async () => {
  const a = await newRealm();
  const b = await newRealm();
  const r = await b.anonymous.withCredentials(a.owner.email, a.owner.apiKey).get('/users/me');
  assert.equal([r.status, r.body.code], [401, 'UNAUTHORIZED']);
});

test('deactivated users are refused', async () => {
  const realm = await newRealm();
  const user = await realm.addUser();
  await realm.server.app.prisma.user.update({ where: { id: user.id }, data: { isActive: false } });
  realm.server.app.auth.forget(user.id);
  const r = await user.client.get('/users/me');
  assert.equal([r.status, r.body], [401, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' }]);
});

test('wrong method: 405 with allowed_methods; unknown path: 404 JSON', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.request('PUT', '/api/v1/users/me');
  assert.is(r.status, 405);
  assert.equal(r.body, { result: 'error', msg: 'Method Not Allowed', allowed_methods: ['GET', 'DELETE'] });
  const missing = await realm.owner.client.request('GET', '/api/v1/no/such/thing');
  assert.is(missing.status, 404);
  assert.is(missing.body.result, 'error');
});

test('unknown parameters are reported in ignored_parameters_unsupported', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.get('/users/me', { bogus: 1, other: 'x' });
  assert.is(r.status, 200);
  assert.equal(r.body.ignored_parameters_unsupported, ['bogus', 'other']);
  const clean = await realm.owner.client.get('/users/me');
  assert.not.ok('ignored_parameters_unsupported' in clean.body);
});

test('parameters arrive as urlencoded, multipart, JSON body and (PATCH/DELETE) query string alike', async () => {
  const realm = await newRealm();
  const c = realm.owner.client;
  const form = await c.post('/users', { email: 'form@example.com', password: 'pw-form-123', full_name: 'Form' });
  assert.is(form.status, 200, form.text);
  const multi = await c.postMultipart('/users', { email: 'multi@example.com', password: 'pw-multi-123', full_name: 'Multi' });
  assert.is(multi.status, 200, multi.text);
  const json = await c.postJson('/users', { email: 'json@example.com', password: 'pw-json-123', full_name: 'Json' });
  assert.is(json.status, 200, json.text);
  const ids = [form.body.user_id, multi.body.user_id, json.body.user_id];
  assert.ok(ids.every((id) => Number.isInteger(id)) && new Set(ids).size === 3);
  const list = await c.get('/users');
  const names = list.body.members.map((m: { full_name: string }) => m.full_name);
  for (const n of ['Form', 'Multi', 'Json']) assert.ok(names.includes(n), n);
});

test('bad input: missing, wrong type, malformed JSON, oversized body', async () => {
  const realm = await newRealm();
  const c = realm.owner.client;
  const missing = await c.post('/users', { email: 'x@example.com', full_name: 'X' });
  assert.equal(
    [missing.status, missing.body],
    [400, { result: 'error', msg: "Missing 'password' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' }],
  );
  const wrongType = await c.get('/users', { client_gravatar: 'maybe' });
  assert.equal(
    [wrongType.status, wrongType.body],
    [400, { result: 'error', msg: 'Argument "client_gravatar" is not valid JSON.', code: 'BAD_REQUEST', var_name: 'client_gravatar' }],
  );
  const notBool = await c.get('/users', { client_gravatar: 5 });
  assert.equal([notBool.status, notBool.body.msg], [400, 'client_gravatar is not a boolean']);
  const badJson = await c.request('POST', '/api/v1/users', { body: '{"email":', contentType: 'application/json' });
  assert.equal([badJson.status, badJson.body], [400, { result: 'error', msg: 'Malformed JSON', code: 'BAD_REQUEST' }]);
  const huge = await c.request('POST', '/api/v1/users', { body: 'email=' + 'a'.repeat(2 * 1024 * 1024) });
  assert.is(huge.status, 413);
  assert.is(huge.body.result, 'error');
  const count = await realm.server.app.prisma.user.count({ where: { realmId: realm.id, isSystemBot: false } });
  assert.is(count, 1, 'nothing was created by the bad requests');
});

test('server keeps serving after a client aborts mid-body', async () => {
  const realm = await newRealm();
  const net = await import('node:net');
  await new Promise<void>((resolve) => {
    const socket = net.connect(realm.server.port, '127.0.0.1', () => {
      socket.write(
        `POST /api/v1/users HTTP/1.1\r\nHost: ${realm.host}\r\nContent-Length: 1000\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\nemail=abc`,
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 50);
    });
  });
  const r = await realm.owner.client.get('/users/me');
  assert.is(r.status, 200);
});

test.run();
