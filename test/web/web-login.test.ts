// The web login (GET /login/, POST /accounts/login/ as Zulip's) and what it starts: a browser
// session in an HttpOnly cookie that authenticates the /json/ API with Zulip's CSRF token, ended
// by logging out and by a password change; and the apps' flows, decoded as the apps decode them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { Client, encodeForm } from '../helpers/client.ts';
import { newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import { BrowserJar, MOBILE_OTP, DESKTOP_OTP, decodeDesktopPage, decodeMobileRedirect, hiddenField, logIn } from '../helpers/web-login.ts';

let server: RunningServer;
let realm: TestRealm;
let ann: TestUser;

test.before(async () => {
  server = await startTestServer({
    RATE_LIMIT: 'on',
    RATE_LIMIT_LOGIN_FAILURES: '3',
    RATE_LIMIT_IP_PER_MINUTE: '100000',
    RATE_LIMIT_USER_PER_MINUTE: '100000',
  });
  realm = await newRealm(server);
  ann = await realm.addUser({ name: 'Ann' });
});

test.after(async () => {
  await server?.stop();
});

const browser = () => new BrowserJar(new Client(server.port, realm.host));

test('the login page: a form posting username and password to /accounts/login/, under a strict CSP, setting the CSRF cookie', async () => {
  const jar = browser();
  const page = await jar.get('/login/');
  assert.is(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
  assert.match(page.text, /<form method="post" action="\/accounts\/login\/">/);
  assert.match(page.text, /name="username"/);
  assert.match(page.text, /name="password" type="password"/);
  assert.is(hiddenField(page.text, 'csrfmiddlewaretoken'), jar.cookies.get('csrftoken'));
  const cookie = String(page.headers['set-cookie']);
  assert.match(cookie, /^csrftoken=[\w-]{43}; Path=\/; Max-Age=\d+; SameSite=Lax$/);
  // No script, no external asset.
  assert.not.match(page.text, /<script|https?:\/\//);
});

test('a good password logs in: an HttpOnly SameSite=Lax session cookie, stored hashed, that the /json/ API accepts', async () => {
  const jar = browser();
  const done = await logIn(jar, ann, '?next=%2F%23narrow%2Fchannel%2F1-general');
  assert.is(done.status, 302, done.text);
  assert.is(done.headers.location, `${server.app.realms.url(server.app.realms.byId(realm.id)!)}/#narrow/channel/1-general`);
  const setCookies = done.headers['set-cookie'] as string[];
  const session = setCookies.find((c) => c.startsWith('sessionid='))!;
  assert.match(session, /^sessionid=[\w-]{43}; Path=\/; Max-Age=1209600; SameSite=Lax; HttpOnly$/);
  const id = jar.cookies.get('sessionid')!;
  const rows = await server.app.prisma.webSession.findMany({ where: { userId: ann.id } });
  assert.is(rows.length, 1);
  assert.is.not(rows[0]!.idHash, id, 'only a hash is stored');
  const me = await jar.get('/json/users/me');
  assert.is(me.status, 200, me.text);
  assert.is(me.body.user_id, ann.id);
  // The login page now leads straight to the app.
  const again = await jar.get('/login/');
  assert.is(again.status, 302);
});

test("a wrong password shows the form again with Zulip's message; repeated failures hit the rate limit", async () => {
  const bob = await realm.addUser({ name: 'Bob' });
  const jar = browser();
  for (let i = 0; i < 3; i++) {
    const r = await logIn(jar, { email: bob.email, password: `wrong-${i}` });
    assert.is(r.status, 200);
    assert.match(r.text, /Please enter a correct email and password\. Note that both fields may be case-sensitive\./);
    assert.match(r.text, new RegExp(`value="${bob.email.replace(/[.]/g, '\\.')}"`), 'the email stays filled in');
  }
  const limited = await logIn(jar, bob);
  assert.is(limited.status, 429);
  assert.match(limited.text, /You&#39;re making too many attempts to sign in\. Try again in \d+ seconds or restart your browser\./);
  assert.is(jar.cookies.get('sessionid'), undefined);
});

test("the form is refused without its CSRF token, or with another browser's", async () => {
  const jar = browser();
  await jar.get('/login/');
  const missing = await jar.post('/accounts/login/', encodeForm({ username: ann.email, password: ann.password }));
  assert.is(missing.status, 403);
  assert.match(missing.text, /Your login form had expired/);
  const forged = await jar.post('/accounts/login/', encodeForm({ username: ann.email, password: ann.password, csrfmiddlewaretoken: 'x'.repeat(43) }));
  assert.is(forged.status, 403);
  assert.is(jar.cookies.get('sessionid'), undefined);
});

test('/json/ writes need the X-CSRFToken header equal to the csrftoken cookie; /json/ without a session is not logged in', async () => {
  const jar = browser();
  await logIn(jar, ann);
  const body = encodeForm({ content: 'hi' });
  const noToken = await jar.request('POST', '/json/messages/render', body);
  assert.equal(
    [noToken.status, noToken.body],
    [403, { result: 'error', msg: 'CSRF error: CSRF token missing.', code: 'CSRF_FAILED', reason: 'CSRF token missing.' }],
  );
  const wrong = await jar.request('POST', '/json/messages/render', body, { 'X-CSRFToken': 'y'.repeat(43) });
  assert.equal(wrong.body.reason, 'CSRF token incorrect.');
  const good = await jar.request('POST', '/json/messages/render', body, { 'X-CSRFToken': jar.cookies.get('csrftoken')! });
  assert.equal([good.status, good.body.rendered], [200, '<p>hi</p>']);
  const stranger = await new Client(server.port, realm.host).request('GET', '/json/users/me');
  assert.equal(
    [stranger.status, stranger.body],
    [401, { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' }],
  );
  // Zulip's Session challenge: a Basic one would make the browser show its own login prompt.
  assert.is(stranger.headers['www-authenticate'], 'Session realm="zulip"');
  // The cookie is no API key: /api/v1/ still wants Basic credentials.
  const api = await jar.get('/api/v1/users/me');
  assert.equal([api.status, api.headers['www-authenticate']], [401, 'Basic realm="zulip"']);
});

test('logging out ends the session (the cookie no longer works, even replayed) and needs the CSRF token', async () => {
  const jar = browser();
  await logIn(jar, ann);
  const stolen = jar.cookies.get('sessionid')!;
  const refused = await jar.request('POST', '/accounts/logout/', '');
  assert.is(refused.status, 403);
  const out = await jar.request('POST', '/accounts/logout/', '', { 'X-CSRFToken': jar.cookies.get('csrftoken')! });
  assert.is(out.status, 302);
  assert.match(String(out.headers.location), /\/login\/$/);
  assert.match((out.headers['set-cookie'] as string[])[0]!, /^sessionid=; Path=\/; Max-Age=0/);
  jar.cookies.set('sessionid', stolen);
  assert.is((await jar.get('/json/users/me')).status, 401);
});

test("a password change ends the user's other sessions and keeps the one that made it", async () => {
  const carol = await realm.addUser({ name: 'Carol' });
  const [laptop, phone] = [browser(), browser()];
  await logIn(laptop, carol);
  await logIn(phone, carol);
  const change = await laptop.request('PATCH', '/json/settings', encodeForm({ old_password: carol.password, new_password: 'a new secret' }), {
    'X-CSRFToken': laptop.cookies.get('csrftoken')!,
  });
  assert.is(change.status, 200, change.text);
  assert.is((await laptop.get('/json/users/me')).status, 200);
  assert.is((await phone.get('/json/users/me')).status, 401);
  // Through the API (no session), every session ends.
  const dave = await realm.addUser({ name: 'Dave' });
  const tablet = browser();
  await logIn(tablet, dave);
  assert.is((await dave.client.patch('/settings', { old_password: dave.password, new_password: 'another secret' })).status, 200);
  assert.is((await tablet.get('/json/users/me')).status, 401);
});

test("a deactivated user's session stops working", async () => {
  const erin = await realm.addUser({ name: 'Erin' });
  const jar = browser();
  await logIn(jar, erin);
  assert.is((await realm.owner.client.delete(`/users/${erin.id}`)).status, 200);
  assert.is((await jar.get('/json/users/me')).status, 401);
});

test('mobile flow: the login ends in zulip://login with the API key XORed with the pad, as the app decodes it', async () => {
  const jar = browser();
  const page = await jar.get(`/login/?mobile_flow_otp=${MOBILE_OTP}`);
  assert.is(hiddenField(page.text, 'mobile_flow_otp'), MOBILE_OTP);
  assert.match(String(page.headers['content-security-policy']), /form-action 'self' zulip:/);
  const done = await logIn(jar, ann, `?mobile_flow_otp=${MOBILE_OTP}`);
  assert.is(done.status, 302);
  const result = decodeMobileRedirect(String(done.headers.location));
  assert.equal(result, { realm: server.app.realms.url(server.app.realms.byId(realm.id)!), email: ann.email, user_id: String(ann.id), api_key: ann.apiKey });
  assert.is(jar.cookies.get('sessionid'), undefined, 'no browser session for an app login');
});

test('desktop flow: a page with the login token AES-GCM-encrypted to the pad; the token logs in once, then is spent', async () => {
  const jar = browser();
  const done = await logIn(jar, ann, `?desktop_flow_otp=${DESKTOP_OTP}`);
  assert.is(done.status, 200, done.text);
  const token = decodeDesktopPage(done.text);
  assert.match(token, /^[A-Za-z0-9]{32}$/);
  assert.is(jar.cookies.get('sessionid'), undefined);
  // The app's own browser opens it and is logged in.
  const app = browser();
  const login = await app.get(`/accounts/login/subdomain/${token}`);
  assert.is(login.status, 302);
  assert.is((await app.get('/json/users/me')).body.user_id, ann.id);
  const replay = await browser().get(`/accounts/login/subdomain/${token}`);
  assert.is(replay.status, 400);
  assert.match(replay.text, /expired or was already used/);
  assert.is((await browser().get('/accounts/login/subdomain/not-a-token')).status, 400);
});

test('a bad pad (wrong length, not hex, both flows) is refused before any login', async () => {
  const before = await server.app.prisma.webSession.count();
  for (const query of [
    `mobile_flow_otp=${MOBILE_OTP.slice(2)}`,
    `mobile_flow_otp=${'g'.repeat(64)}`,
    `desktop_flow_otp=${DESKTOP_OTP}0`,
    `mobile_flow_otp=${MOBILE_OTP}&desktop_flow_otp=${DESKTOP_OTP}`,
  ]) {
    const msg = query.includes('&') ? "Can't use both mobile_flow_otp and desktop_flow_otp together." : 'Invalid OTP';
    const page = await browser().get(`/login/?${query}`);
    assert.equal([page.status, page.body], [400, { result: 'error', msg, code: 'BAD_REQUEST' }], query);
    const jar = browser();
    await jar.get('/login/');
    const fields = Object.fromEntries(new URLSearchParams(query));
    const post = await jar.post(
      '/accounts/login/',
      encodeForm({ ...fields, csrfmiddlewaretoken: jar.cookies.get('csrftoken')!, username: ann.email, password: ann.password }),
    );
    assert.equal([post.status, post.body], [400, { result: 'error', msg, code: 'BAD_REQUEST' }], query);
  }
  assert.is(await server.app.prisma.webSession.count(), before);
});

test('Secure cookies when the organization is served over TLS (EXTERNAL_URL https)', async () => {
  const tls = await startTestServer({ EXTERNAL_URL: 'https://chat.example.test' });
  try {
    const org = await newRealm(tls);
    const jar = new BrowserJar(new Client(tls.port, org.host));
    const page = await jar.get('/login/');
    assert.match(String(page.headers['set-cookie']), /; Secure$/);
    const done = await jar.post(
      '/accounts/login/',
      encodeForm({ csrfmiddlewaretoken: jar.cookies.get('csrftoken')!, username: org.owner.email, password: org.owner.password }),
    );
    assert.ok((done.headers['set-cookie'] as string[]).every((c) => c.endsWith('; Secure')));
  } finally {
    await tls.stop();
  }
});

test.run();
