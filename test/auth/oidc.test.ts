// OpenID Connect single sign-on against a real, certified provider (oidc-provider from npm) started
// here on a free port: server_settings' external_authentication_methods, the login button, logging
// in an existing account, auto sign-up where the provider and the organization allow it, the
// mobile app's flow through the provider; and what is refused with a clear page and nothing
// created: an address the provider does not vouch for, a login this browser did not start, a
// replayed answer, and ID tokens with a bad signature, another audience, another issuer, expired.
// A small proxy in front of the provider (the issuer's address) can rewrite its token answers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, decodeJwt, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';
import { decodeMobileRedirect, MOBILE_OTP } from '../helpers/web-login.ts';

interface Person {
  email: string;
  email_verified: boolean;
  name: string;
}

let server: RunningServer;
let realm: TestRealm;
let realmUrl: string;
let issuer: string;
let provider: http.Server;
let front: http.Server;
const people = new Map<string, Person>();
/** Who the provider's login page logs in next. */
let nextLogin = '';
/** Rewrites the claims of the next ID tokens; `forge` signs with a key the provider never published. */
let tamper: { claims?: (c: Record<string, unknown>) => Record<string, unknown>; forge?: boolean } | null = null;
let signingKey: JWK;
let rogueKey: CryptoKey;

function listen(s: http.Server): Promise<number> {
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
}

/** Forwards to the provider, rewriting the ID token of token answers while `tamper` says so. */
function proxy(target: number): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forwarded = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', async () => {
          let body = Buffer.concat(parts);
          if (req.url === '/token' && tamper && answer.statusCode === 200) body = Buffer.from(JSON.stringify(await rewrite(JSON.parse(body.toString()))));
          const headers = { ...answer.headers, 'content-length': String(body.length) };
          res.writeHead(answer.statusCode ?? 500, headers);
          res.end(body);
        });
      });
      forwarded.end(Buffer.concat(chunks));
    });
  };
}

async function rewrite(tokens: { id_token: string }): Promise<unknown> {
  const claims = tamper!.claims ? tamper!.claims(decodeJwt(tokens.id_token)) : decodeJwt(tokens.id_token);
  const { importJWK } = await import('jose');
  const key = tamper!.forge ? rogueKey : await importJWK(signingKey, 'RS256');
  const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signingKey.kid! }).sign(key);
  return { ...tokens, id_token: idToken };
}

test.before(async () => {
  front = http.createServer();
  issuer = `http://127.0.0.1:${await listen(front)}`;
  const settings = (name: string, autoSignup: boolean) => ({
    name,
    issuer,
    client_id: `chat-${name}`,
    secret: `secret of ${name}`,
    display_name: `${name} SSO`,
    auto_signup: autoSignup,
  });
  server = await startTestServer({ OIDC_PROVIDERS: JSON.stringify([settings('corp', false), settings('open', true)]) });
  realm = await newRealm(server);
  realmUrl = server.app.realms.url(server.app.realms.byId(realm.id)!);

  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = { ...(await exportJWK(pair.privateKey)), kid: 'signing', alg: 'RS256', use: 'sig' };
  rogueKey = (await generateKeyPair('RS256')).privateKey;
  const oidc = new Provider(issuer, {
    clients: ['corp', 'open'].map((name) => ({
      client_id: `chat-${name}`,
      client_secret: `secret of ${name}`,
      redirect_uris: [`${realmUrl}/complete/oidc/${name}`],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    jwks: { keys: [signingKey] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, ...people.get(sub)! }) }),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['a cookie key for the test provider'] },
  });
  const callback = oidc.callback();
  // The provider's login page: logs in `nextLogin` at once and consents to everything asked.
  provider = http.createServer(async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    const details = await oidc.interactionDetails(req, res);
    const grant = new oidc.Grant({ accountId: nextLogin, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    await oidc.interactionFinished(req, res, { login: { accountId: nextLogin }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
  });
  front.on('request', proxy(await listen(provider)));
});

test.after(async () => {
  await server?.stop();
  front?.close();
  provider?.close();
});

/** One browser: follows redirects across the chat server and the provider, keeping each host's cookies. */
class Browser {
  readonly jars = new Map<string, Map<string, string>>();
  /** The last callback URL visited, to replay. */
  callback = '';

  request(url: URL): Promise<{ status: number; location?: string; text: string; headers: http.IncomingHttpHeaders }> {
    const jar = this.jars.get(url.host) ?? new Map<string, string>();
    this.jars.set(url.host, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: url.port, path: url.pathname + url.search, headers: { Host: url.host, ...(cookie ? { Cookie: cookie } : {}) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            for (const line of (res.headers['set-cookie'] as string[] | undefined) ?? []) {
              const [pair = ''] = line.split(';');
              const eq = pair.indexOf('=');
              if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) jar.delete(pair.slice(0, eq));
              else jar.set(pair.slice(0, eq), pair.slice(eq + 1));
            }
            resolve({ status: res.statusCode ?? 0, location: res.headers.location, text: Buffer.concat(chunks).toString(), headers: res.headers });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** Follows redirects from `start` until an answer that is not one, or one to the app. */
  async visit(start: string, rewriteCallback?: (url: URL) => URL) {
    let url = new URL(start, realmUrl);
    for (let hops = 0; hops < 20; hops++) {
      if (url.pathname.startsWith('/complete/oidc/')) {
        if (rewriteCallback) url = rewriteCallback(url);
        this.callback = url.href;
      }
      const answer = await this.request(url);
      if (answer.status < 300 || answer.status >= 400 || !answer.location) return answer;
      const next = new URL(answer.location, url);
      // Into the app (or out to zulip://): the login is over.
      if (next.protocol !== 'http:' || (next.origin === realmUrl && next.pathname === '/')) return answer;
      url = next;
    }
    throw new Error('too many redirects');
  }

  session(): string | undefined {
    return this.jars.get(new URL(realmUrl).host)?.get('sessionid');
  }
}

async function whoIs(browser: Browser): Promise<number | null> {
  const sessionid = browser.session();
  if (!sessionid) return null;
  const r = await new Client(server.port, realm.host).request('GET', '/json/users/me', { headers: { Cookie: `sessionid=${sessionid}` } });
  return r.status === 200 ? r.body.user_id : null;
}

function person(sub: string, p: Person): void {
  people.set(sub, p);
  nextLogin = sub;
}

test('server_settings lists each provider as Zulip does, and the login page has a button for each', async () => {
  const settings = await realm.anonymous.get('/server_settings');
  assert.is(settings.body.authentication_methods['openid connect'], true);
  assert.equal(settings.body.external_authentication_methods, [
    {
      name: 'oidc:corp',
      display_name: 'corp SSO',
      display_icon: null,
      login_url: '/accounts/login/social/oidc/corp',
      signup_url: '/accounts/register/social/oidc/corp',
    },
    {
      name: 'oidc:open',
      display_name: 'open SSO',
      display_icon: null,
      login_url: '/accounts/login/social/oidc/open',
      signup_url: '/accounts/register/social/oidc/open',
    },
  ]);
  const page = await new Browser().visit('/login/?next=%2F%23inbox');
  assert.match(page.text, /<a class="sso" href="\/accounts\/login\/social\/oidc\/corp\?next=%2F%23inbox">Log in with corp SSO<\/a>/);
});

test('an existing account logs in through the provider, which vouches for its address: a session, then on to `next`', async () => {
  const ann = await realm.addUser({ name: 'Ann' });
  person('ann', { email: ann.email.toUpperCase(), email_verified: true, name: 'Ann at Corp' });
  const browser = new Browser();
  const done = await browser.visit('/accounts/login/social/oidc/corp?next=%2F%23inbox');
  assert.is(done.status, 302, done.text);
  assert.is(done.location, `${realmUrl}/#inbox`);
  assert.is(await whoIs(browser), ann.id);
});

test("the mobile app's flow through the provider ends in zulip://login with the key XORed with its pad", async () => {
  const bea = await realm.addUser({ name: 'Bea' });
  person('bea', { email: bea.email, email_verified: true, name: 'Bea' });
  const browser = new Browser();
  const done = await browser.visit(`/accounts/login/social/oidc/corp?mobile_flow_otp=${MOBILE_OTP}`);
  assert.is(done.status, 302);
  assert.equal(decodeMobileRedirect(done.location!), { realm: realmUrl, email: bea.email, user_id: String(bea.id), api_key: bea.apiKey });
  assert.is(browser.session(), undefined);
  const bad = await new Browser().visit('/accounts/login/social/oidc/corp?mobile_flow_otp=abc');
  assert.equal([bad.status, JSON.parse(bad.text)], [400, { result: 'error', msg: 'Invalid OTP', code: 'BAD_REQUEST' }]);
});

/** Users, and sessions, before and after: a refusal changes neither. */
async function counts() {
  return [await server.app.prisma.user.count({ where: { realmId: realm.id } }), await server.app.prisma.webSession.count()];
}

async function assertRefused(start: string, message: RegExp, rewriteCallback?: (url: URL) => URL): Promise<Browser> {
  const before = await counts();
  const browser = new Browser();
  const page = await browser.visit(start, rewriteCallback);
  assert.is(page.status, 400, page.text);
  assert.match(page.text, /<h1>Login failed<\/h1>/);
  assert.match(page.text, message);
  assert.is(browser.session(), undefined);
  assert.equal(await counts(), before);
  return browser;
}

test('an address the provider does not vouch for (email_verified false) is refused', async () => {
  const cat = await realm.addUser({ name: 'Cat' });
  person('cat', { email: cat.email, email_verified: false, name: 'Cat' });
  await assertRefused('/accounts/login/social/oidc/corp', /does not vouch for the address/);
});

test('no account: refused where the provider has no auto_signup, or the organization wants invitations; made where both allow', async () => {
  const email = `newcomer@${realm.subdomain}.test`;
  person('newcomer', { email, email_verified: true, name: 'Nia Newcomer' });
  await assertRefused('/accounts/login/social/oidc/corp', /does not have an account/);
  await assertRefused('/accounts/register/social/oidc/open', /Please request an invite for newcomer@/);
  assert.is((await realm.owner.client.patch('/realm', { invite_required: false })).status, 200);
  const browser = new Browser();
  const done = await browser.visit('/accounts/register/social/oidc/open');
  assert.is(done.status, 302, done.text);
  const user = await server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: email } });
  assert.equal([user.fullName, user.role, user.passwordHash], ['Nia Newcomer', 400, null]);
  assert.is(await whoIs(browser), user.id);
  assert.is((await realm.owner.client.patch('/realm', { invite_required: true })).status, 200);
});

test('refused: a wrong state, an answer this browser did not start, a replayed answer, an unknown provider', async () => {
  const dan = await realm.addUser({ name: 'Dan' });
  person('dan', { email: dan.email, email_verified: true, name: 'Dan' });
  await assertRefused('/accounts/login/social/oidc/corp', /could not be verified/, (url) => {
    url.searchParams.set('state', 'not-the-state');
    return url;
  });
  // The flow's cookie went with the first answer: the same answer again is not this browser's login.
  const browser = new Browser();
  const done = await browser.visit('/accounts/login/social/oidc/corp');
  assert.is(done.status, 302);
  const replay = await browser.visit(browser.callback);
  assert.is(replay.status, 400);
  assert.match(replay.text, /was not started in this browser/);
  // With the flow's cookie kept (a stolen one), the provider refuses the spent code.
  const thief = new Browser();
  await thief.visit('/accounts/login/social/oidc/corp', (url) => url);
  const host = new URL(realmUrl).host;
  const flowCookie = thief.jars.get(host)!.get('oidc_flow');
  assert.is(flowCookie, undefined, 'the cookie is cleared at the callback');
  const victim = new Browser();
  const started = await victim.request(new URL('/accounts/login/social/oidc/corp', realmUrl));
  const kept = victim.jars.get(host)!.get('oidc_flow')!;
  await victim.visit(started.location!);
  victim.jars.get(host)!.set('oidc_flow', kept);
  const before = await counts();
  const again = await victim.visit(victim.callback);
  assert.is(again.status, 400);
  assert.match(again.text, /The identity provider refused the login \(invalid_grant\)/);
  assert.equal(await counts(), before);
  const unknown = await new Browser().visit('/accounts/login/social/oidc/nobody');
  assert.is(unknown.status, 404);
});

test('refused: ID tokens with a bad signature, for another audience, from another issuer, expired', async () => {
  const eve = await realm.addUser({ name: 'Eve' });
  // These claims come in the ID token itself, so the tampered token is all there is to trust.
  person('eve', { email: eve.email, email_verified: true, name: 'Eve' });
  const cases: [typeof tamper, RegExp][] = [
    [{ forge: true }, /could not be verified/],
    [{ claims: (c) => ({ ...c, aud: 'another-client' }) }, /could not be verified/],
    [{ claims: (c) => ({ ...c, iss: 'http://127.0.0.1:1/elsewhere' }) }, /could not be verified/],
    [{ claims: (c) => ({ ...c, exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }) }, /could not be verified/],
  ];
  try {
    for (const [how, message] of cases) {
      tamper = how;
      try {
        await assertRefused('/accounts/login/social/oidc/corp', message);
      } catch (err) {
        throw new Error(`${JSON.stringify(how)}: ${String(err)}`);
      }
    }
  } finally {
    tamper = null;
  }
  // The same login untampered goes through.
  const browser = new Browser();
  assert.is((await browser.visit('/accounts/login/social/oidc/corp')).status, 302);
  assert.is(await whoIs(browser), eve.id);
});

test.run();
