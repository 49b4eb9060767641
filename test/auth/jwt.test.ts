// POST /jwt/fetch_api_key (Zulip's jwt_fetch_api_key): an organization listed in JWT_AUTH_KEYS
// gives an API key for a JSON web token its key signed, naming the user by its `email` claim; a
// shared secret (HS256) and a public key (RS256) each, and Zulip's answers for what is refused.
// And the web login with such a token (POST /accounts/login/jwt/): a browser session, the apps'
// flows decoded as the apps do, sign-up where the organization allows it.
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';
import { encodeForm } from '../helpers/client.ts';
import { BrowserJar, decodeDesktopPage, decodeMobileRedirect, DESKTOP_OTP, MOBILE_OTP } from '../helpers/web-login.ts';

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
    JWT_AUTH_KEYS: JSON.stringify({
      [hsOrg]: { key: SECRET, algorithms: ['HS256'] },
      [rsOrg]: { key: await exportSPKI(pair.publicKey), algorithms: ['RS256'] },
    }),
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

test("a token signed with the organization's secret gives the user's API key, and the profile when asked", async () => {
  const alice = await hs.addUser({ name: 'Alice' });
  const r = await anonymous(hs).post('/jwt/fetch_api_key', { token: await hsToken({ email: alice.email.toUpperCase() }) });
  assert.equal(r.body, { result: 'success', msg: '', api_key: alice.apiKey, email: alice.email });
  const withProfile = await anonymous(hs).post('/jwt/fetch_api_key', { token: await hsToken({ email: alice.email }), include_profile: true });
  assert.is(withProfile.status, 200, withProfile.text);
  assert.equal([withProfile.body.user.user_id, withProfile.body.user.full_name, withProfile.body.user.delivery_email], [alice.id, 'Alice', alice.email]);
  // The key works.
  assert.is((await new Client(server.port, hs.owner.client.host, { email: alice.email, apiKey: r.body.api_key }).get('/users/me')).status, 200);
});

test("a token signed with the organization's private key (RS256)", async () => {
  const token = await new SignJWT({ email: rs.owner.email }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('5m').sign(rsaPrivate);
  assert.equal((await anonymous(rs).post('/jwt/fetch_api_key', { token })).body, {
    result: 'success',
    msg: '',
    api_key: rs.owner.apiKey,
    email: rs.owner.email,
  });
  // The secret of another organization, or an algorithm this one does not allow, is refused.
  assert.equal((await anonymous(rs).post('/jwt/fetch_api_key', { token: await hsToken({ email: rs.owner.email }) })).body, errorBody('Bad JSON web token'));
});

test('refused: no JWT for the organization, no token, bad signature, expired, no email claim, unknown or deactivated user', async () => {
  const other = await newRealm(server);
  assert.equal(
    (await anonymous(other).post('/jwt/fetch_api_key', { token: await hsToken({ email: other.owner.email }) })).body,
    errorBody('JWT authentication is not enabled for this organization'),
  );
  const client = anonymous(hs);
  assert.equal((await client.post('/jwt/fetch_api_key', {})).body, errorBody('No JSON web token passed in request'));
  assert.equal(
    (await client.post('/jwt/fetch_api_key', { token: await hsToken({ email: hs.owner.email }, 'another secret') })).body,
    errorBody('Bad JSON web token'),
  );
  assert.equal((await client.post('/jwt/fetch_api_key', { token: 'not.a.token' })).body, errorBody('Bad JSON web token'));
  const expired = await new SignJWT({ email: hs.owner.email })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
    .sign(new TextEncoder().encode(SECRET));
  assert.equal((await client.post('/jwt/fetch_api_key', { token: expired })).body, errorBody('Bad JSON web token'));
  assert.equal(
    (await client.post('/jwt/fetch_api_key', { token: await hsToken({ sub: 'someone' }) })).body,
    errorBody('No email specified in JSON web token claims'),
  );
  const unknown = await client.post('/jwt/fetch_api_key', { token: await hsToken({ email: 'nobody@example.com' }) });
  assert.equal([unknown.status, unknown.body], [401, { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' }]);
  const bob = await hs.addUser();
  assert.is((await hs.owner.client.delete(`/users/${bob.id}`)).status, 200);
  const deactivated = await client.post('/jwt/fetch_api_key', { token: await hsToken({ email: bob.email }) });
  assert.equal([deactivated.status, deactivated.body.code], [401, 'USER_DEACTIVATED']);
});

const jwtLogin = (realm: TestRealm, fields: Record<string, string>, jar = new BrowserJar(anonymous(realm))) =>
  jar.post('/accounts/login/jwt/', encodeForm(fields));

test("JWT web login: a browser session and on to `next`; the apps' flows hand over the key, or a one-time token", async () => {
  const carl = await hs.addUser({ name: 'Carl' });
  const jar = new BrowserJar(anonymous(hs));
  const done = await jwtLogin(hs, { token: await hsToken({ email: carl.email }), next: '/#inbox' }, jar);
  assert.is(done.status, 302, done.text);
  assert.is(done.headers.location, `${server.app.realms.url(server.app.realms.byId(hs.id)!)}/#inbox`);
  assert.is((await jar.get('/json/users/me')).body.user_id, carl.id);
  const mobile = await jwtLogin(hs, { token: await hsToken({ email: carl.email }), mobile_flow_otp: MOBILE_OTP });
  assert.equal(decodeMobileRedirect(String(mobile.headers.location)), {
    realm: server.app.realms.url(server.app.realms.byId(hs.id)!),
    email: carl.email,
    user_id: String(carl.id),
    api_key: carl.apiKey,
  });
  const desktop = await jwtLogin(hs, { token: await hsToken({ email: carl.email }), desktop_flow_otp: DESKTOP_OTP });
  assert.is(desktop.status, 200, desktop.text);
  const appBrowser = new BrowserJar(anonymous(hs));
  assert.is((await appBrowser.get(`/accounts/login/subdomain/${decodeDesktopPage(desktop.text)}`)).status, 302);
  assert.is((await appBrowser.get('/json/users/me')).body.user_id, carl.id);
});

test("JWT web login refused, nothing started: a bad pad first, then Zulip's token errors; no invitation, no account", async () => {
  const before = await server.app.prisma.webSession.count();
  const expired = await new SignJWT({ email: hs.owner.email })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
    .sign(new TextEncoder().encode(SECRET));
  const cases: [Record<string, string>, string][] = [
    [{ token: 'not.a.token', mobile_flow_otp: 'abc' }, 'Invalid OTP'],
    [{}, 'No JSON web token passed in request'],
    [{ token: expired }, 'Bad JSON web token'],
    [{ token: await hsToken({ email: hs.owner.email }, 'another secret') }, 'Bad JSON web token'],
    [{ token: await hsToken({ name: 'No Address' }) }, 'No email specified in JSON web token claims'],
  ];
  for (const [fields, msg] of cases) {
    const r = await jwtLogin(hs, fields);
    assert.equal([r.status, r.body], [400, errorBody(msg)], msg);
  }
  // The organization requires invitations (the default): a stranger gets a page saying so.
  const stranger = await jwtLogin(hs, { token: await hsToken({ email: `stranger@${hs.subdomain}.test`, name: 'Stranger' }) });
  assert.is(stranger.status, 400);
  assert.match(stranger.text, /Please request an invite for stranger@/);
  assert.is(await server.app.prisma.user.count({ where: { realmId: hs.id, deliveryEmail: `stranger@${hs.subdomain}.test` } }), 0);
  assert.is(await server.app.prisma.webSession.count(), before);
});

test("JWT web login makes the account where anyone may join, with the token's name", async () => {
  assert.is((await rs.owner.client.patch('/realm', { invite_required: false })).status, 200);
  const token = await new SignJWT({ email: `dana@${rs.subdomain}.test`, name: 'Dana Newcomer' })
    .setProtectedHeader({ alg: 'RS256' })
    .setExpirationTime('5m')
    .sign(rsaPrivate);
  const jar = new BrowserJar(anonymous(rs));
  const done = await jwtLogin(rs, { token }, jar);
  assert.is(done.status, 302, done.text);
  const me = (await jar.get('/json/users/me')).body;
  assert.equal([me.email, me.full_name, me.role], [`dana@${rs.subdomain}.test`, 'Dana Newcomer', 400]);
});

test.run();
