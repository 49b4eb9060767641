// POST /jwt/fetch_api_key (Zulip's jwt_fetch_api_key): an organization listed in JWT_AUTH_KEYS
// gives an API key for a JSON web token its key signed, naming the user by its `email` claim; a
// shared secret (HS256) and a public key (RS256) each, and Zulip's answers for what is refused.
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../src/server.ts';
import { Client } from './helpers/client.ts';
import { newRealm, startTestServer, type TestRealm } from './helpers/server.ts';
import { errorBody } from './messages-helpers.ts';

const SECRET = 'a shared secret of the identity service';
let server: RunningServer;
let hs: TestRealm;
let rs: TestRealm;
let rsaPrivate: CryptoKey;

test.before(async () => {
  const pair = await generateKeyPair('RS256');
  rsaPrivate = pair.privateKey;
  const [hsOrg, rsOrg] = [`jwths${process.pid}`, `jwtrs${process.pid}`];
  server = await startTestServer({
    JWT_AUTH_KEYS: JSON.stringify({ [hsOrg]: { key: SECRET, algorithms: ['HS256'] }, [rsOrg]: { key: await exportSPKI(pair.publicKey), algorithms: ['RS256'] } }),
  });
  hs = await newRealm(server, { subdomain: hsOrg });
  rs = await newRealm(server, { subdomain: rsOrg });
});

test.after(async () => {
  await server?.stop();
});

const anonymous = (realm: TestRealm) => new Client(server.port, realm.owner.client.host);
const hsToken = (claims: Record<string, unknown>, secret = SECRET) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(secret));

test('a token signed with the organization\'s secret gives the user\'s API key, and the profile when asked', async () => {
  const alice = await hs.addUser({ name: 'Alice' });
  const r = await anonymous(hs).post('/jwt/fetch_api_key', { token: await hsToken({ email: alice.email.toUpperCase() }) });
  assert.equal(r.body, { result: 'success', msg: '', api_key: alice.apiKey, email: alice.email });
  const withProfile = await anonymous(hs).post('/jwt/fetch_api_key', { token: await hsToken({ email: alice.email }), include_profile: true });
  assert.is(withProfile.status, 200, withProfile.text);
  assert.equal([withProfile.body.user.user_id, withProfile.body.user.full_name, withProfile.body.user.delivery_email], [alice.id, 'Alice', alice.email]);
  // The key works.
  assert.is((await new Client(server.port, hs.owner.client.host, { email: alice.email, apiKey: r.body.api_key }).get('/users/me')).status, 200);
});

test('a token signed with the organization\'s private key (RS256)', async () => {
  const token = await new SignJWT({ email: rs.owner.email }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('5m').sign(rsaPrivate);
  assert.equal((await anonymous(rs).post('/jwt/fetch_api_key', { token })).body, { result: 'success', msg: '', api_key: rs.owner.apiKey, email: rs.owner.email });
  // The secret of another organization, or an algorithm this one does not allow, is refused.
  assert.equal((await anonymous(rs).post('/jwt/fetch_api_key', { token: await hsToken({ email: rs.owner.email }) })).body, errorBody('Bad JSON web token'));
});

test('refused: no JWT for the organization, no token, bad signature, expired, no email claim, unknown or deactivated user', async () => {
  const other = await newRealm(server);
  assert.equal((await anonymous(other).post('/jwt/fetch_api_key', { token: await hsToken({ email: other.owner.email }) })).body, errorBody('JWT authentication is not enabled for this organization'));
  const client = anonymous(hs);
  assert.equal((await client.post('/jwt/fetch_api_key', {})).body, errorBody('No JSON web token passed in request'));
  assert.equal((await client.post('/jwt/fetch_api_key', { token: await hsToken({ email: hs.owner.email }, 'another secret') })).body, errorBody('Bad JSON web token'));
  assert.equal((await client.post('/jwt/fetch_api_key', { token: 'not.a.token' })).body, errorBody('Bad JSON web token'));
  const expired = await new SignJWT({ email: hs.owner.email }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(new TextEncoder().encode(SECRET));
  assert.equal((await client.post('/jwt/fetch_api_key', { token: expired })).body, errorBody('Bad JSON web token'));
  assert.equal((await client.post('/jwt/fetch_api_key', { token: await hsToken({ sub: 'someone' }) })).body, errorBody('No email specified in JSON web token claims'));
  const unknown = await client.post('/jwt/fetch_api_key', { token: await hsToken({ email: 'nobody@example.com' }) });
  assert.equal([unknown.status, unknown.body], [401, { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' }]);
  const bob = await hs.addUser();
  assert.is((await hs.owner.client.delete(`/users/${bob.id}`)).status, 200);
  const deactivated = await client.post('/jwt/fetch_api_key', { token: await hsToken({ email: bob.email }) });
  assert.equal([deactivated.status, deactivated.body.code], [401, 'USER_DEACTIVATED']);
});

test.run();
