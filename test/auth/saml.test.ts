// SAML 2.0 single sign-on against identity providers run here (test/helpers/saml-idp.ts: an
// AuthnRequest in, a Response with a signed assertion posted back by the browser): server_settings'
// external_authentication_methods, the login buttons, the SP metadata, logging in an existing
// account, both apps' flows, auto sign-up where the IdP and the organization allow it, IdPs limited
// to other organizations; and what is refused with a clear page and nothing created: a bad or
// foreign signature, a changed assertion, an unsigned one, an expired one, one for another
// audience, one from an unknown issuer, and replays.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { encodeForm } from '../helpers/client.ts';
import { opensslInstalled, TestSamlIdp, type SamlTamper } from '../helpers/saml-idp.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';
import { BrowserJar, decodeDesktopPage, decodeMobileRedirect, DESKTOP_OTP, MOBILE_OTP } from '../helpers/web-login.ts';

let server: RunningServer;
let realm: TestRealm;
let realmUrl: string;
/** `corp` wants accounts to exist; `open` signs people up; both serve this test's organization (`acme`), no IdP serves `third`. */
let corp: TestSamlIdp;
let open: TestSamlIdp;

if (!opensslInstalled()) {
  test.skip("SAML (openssl, which makes the identity providers' certificates, is absent: apt-get install openssl; .ci/run installs it)");
} else {
  test.before(async () => {
    [corp, open] = [await TestSamlIdp.start(), await TestSamlIdp.start()];
    const idps = [
      {
        name: 'corp',
        entity_id: corp.entityId,
        url: corp.url,
        x509cert: corp.cert,
        display_name: 'Corp SSO',
        display_icon: 'https://corp.example/logo.png',
        limit_to_subdomains: ['acme', 'other'],
      },
      // As IdPs' metadata give it: the base64 alone.
      {
        name: 'open',
        entity_id: open.entityId,
        url: open.url,
        x509cert: open.cert.replace(/-----[A-Z ]+-----|\s/g, ''),
        auto_signup: true,
        attr_full_name: 'displayName',
        limit_to_subdomains: ['acme'],
      },
      {
        name: 'elsewhere',
        entity_id: 'https://elsewhere.example/idp',
        url: 'https://elsewhere.example/sso',
        x509cert: corp.cert,
        limit_to_subdomains: ['other'],
      },
    ];
    server = await startTestServer({ SAML_IDPS: JSON.stringify(idps), SAML_SP_ENTITY_ID: 'https://chat.example/saml' });
    realm = await newRealm(server, { subdomain: 'acme' });
    realmUrl = server.app.realms.url(server.app.realms.byId(realm.id)!);
  });

  test.after(async () => {
    await server?.stop();
    corp?.close();
    open?.close();
  });

  const browser = () => new BrowserJar(realm.anonymous);

  /** Follows a login from its start URL through the IdP to the answer of the ACS the IdP's form posts to. */
  async function samlLogin(start: string, idp: TestSamlIdp, jar = browser()) {
    const started = await jar.get(start);
    assert.is(started.status, 302, started.text);
    const location = new URL(started.headers.location!);
    assert.is(`${location.origin}${location.pathname}`, idp.url);
    const idpPage = await (await fetch(location)).text();
    const form = {
      action: /<form method="post" action="([^"]+)"/.exec(idpPage)![1]!,
      SAMLResponse: /name="SAMLResponse" value="([^"]+)"/.exec(idpPage)![1]!,
      RelayState: /name="RelayState" value="([^"]+)"/.exec(idpPage)![1]!,
    };
    const done = await postToAcs(form, jar);
    return { jar, done, form };
  }

  function postToAcs(form: { action: string; SAMLResponse: string; RelayState: string }, jar = browser()) {
    const action = new URL(form.action);
    assert.is(action.origin, realmUrl);
    return jar.post(action.pathname, encodeForm({ SAMLResponse: form.SAMLResponse, RelayState: form.RelayState }));
  }

  async function whoIs(jar: BrowserJar): Promise<number | null> {
    const me = await jar.get('/json/users/me');
    return me.status === 200 ? me.body.user_id : null;
  }

  /** Users and sessions: a refusal changes neither. */
  async function counts() {
    return [await server.app.prisma.user.count({ where: { realmId: realm.id } }), await server.app.prisma.webSession.count()];
  }

  function refusedPage(reply: { status: number; text: string }, message: RegExp): void {
    assert.is(reply.status, 400, reply.text);
    assert.match(reply.text, /<h1>Login failed<\/h1>/);
    assert.match(reply.text, message);
  }

  test("server_settings lists the organization's IdPs as Zulip does, SAML first; the login page has their buttons; the SP metadata names the ACS", async () => {
    const settings = await realm.anonymous.get('/server_settings');
    assert.is(settings.body.authentication_methods.saml, true);
    assert.equal(settings.body.external_authentication_methods, [
      {
        name: 'saml:corp',
        display_name: 'Corp SSO',
        display_icon: 'https://corp.example/logo.png',
        login_url: '/accounts/login/social/saml/corp',
        signup_url: '/accounts/register/social/saml/corp',
      },
      {
        name: 'saml:open',
        display_name: 'SAML',
        display_icon: null,
        login_url: '/accounts/login/social/saml/open',
        signup_url: '/accounts/register/social/saml/open',
      },
    ]);
    const page = await browser().get('/login/?next=%2F%23inbox');
    assert.match(page.text, /<a class="sso" href="\/accounts\/login\/social\/saml\/corp\?next=%2F%23inbox">Log in with Corp SSO<\/a>/);
    assert.not.match(page.text, /saml\/elsewhere/);
    const metadata = await browser().get('/saml/metadata.xml');
    assert.is(metadata.status, 200);
    assert.is(metadata.headers['content-type'], 'application/xml; charset=utf-8');
    assert.match(metadata.text, /entityID="https:\/\/chat\.example\/saml"/);
    assert.ok(
      metadata.text.includes(
        `<AssertionConsumerService index="1" isDefault="true" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${realmUrl}/complete/saml/"/>`,
      ),
      metadata.text,
    );
    // Limited to another organization: not offered here, and its start URL knows nothing of it.
    assert.is((await browser().get('/accounts/login/social/saml/elsewhere')).status, 404);
  });

  test("an existing account logs in: the AuthnRequest names this SP and the organization's ACS; a session, then on to `next`", async () => {
    const ann = await realm.addUser({ name: 'Ann' });
    corp.nextLogin = { nameId: ann.email, attributes: { email: ann.email.toUpperCase(), first_name: 'Ann', last_name: 'Corp' } };
    const { jar, done } = await samlLogin('/accounts/login/social/saml/corp?next=%2F%23inbox', corp);
    assert.is(corp.lastRequest!.issuer, 'https://chat.example/saml');
    assert.is(corp.lastRequest!.acsUrl, `${realmUrl}/complete/saml/`);
    assert.ok(corp.lastRequest!.relayState.length <= 80, 'SAML bindings keep RelayState within 80 bytes');
    assert.is(done.status, 302, done.text);
    assert.is(done.headers.location, `${realmUrl}/#inbox`);
    assert.is(await whoIs(jar), ann.id);
  });

  test('a Response signed as a whole (its assertion inside the signature) is accepted too', async () => {
    const abe = await realm.addUser({ name: 'Abe' });
    corp.nextLogin = { nameId: abe.email, attributes: { email: abe.email } };
    corp.tamper = { signResponse: true };
    try {
      const { jar, done } = await samlLogin('/accounts/login/social/saml/corp', corp);
      assert.is(done.status, 302, done.text);
      assert.is(await whoIs(jar), abe.id);
    } finally {
      corp.tamper = {};
    }
  });

  test("the apps' flows through the IdP: zulip://login with the key XORed with the pad; the desktop app's encrypted token; a bad pad refused first", async () => {
    const bea = await realm.addUser({ name: 'Bea' });
    corp.nextLogin = { nameId: bea.email, attributes: { email: bea.email } };
    const mobile = await samlLogin(`/accounts/login/social/saml/corp?mobile_flow_otp=${MOBILE_OTP}`, corp);
    assert.is(mobile.done.status, 302);
    assert.equal(decodeMobileRedirect(mobile.done.headers.location!), { realm: realmUrl, email: bea.email, user_id: String(bea.id), api_key: bea.apiKey });
    assert.is(mobile.jar.cookies.get('sessionid'), undefined);

    const desktop = await samlLogin(`/accounts/login/social/saml/corp?desktop_flow_otp=${DESKTOP_OTP}`, corp);
    assert.is(desktop.done.status, 200);
    const app = browser();
    const opened = await app.get(`/accounts/login/subdomain/${decodeDesktopPage(desktop.done.text)}`);
    assert.is(opened.status, 302);
    assert.is(await whoIs(app), bea.id);

    const bad = await browser().get('/accounts/login/social/saml/corp?mobile_flow_otp=abc');
    assert.equal([bad.status, bad.body], [400, { result: 'error', msg: 'Invalid OTP', code: 'BAD_REQUEST' }]);
  });

  test('no account: refused where the IdP has no auto_signup, or the organization wants invitations; made where both allow, named by the IdP', async () => {
    const email = 'newcomer@acme.test';
    const person = { nameId: email, attributes: { email, displayName: 'Nia Newcomer', first_name: 'Nia' } };
    [corp.nextLogin, open.nextLogin] = [person, person];
    const before = await counts();
    refusedPage((await samlLogin('/accounts/login/social/saml/corp', corp)).done, /newcomer@acme\.test does not have an account/);
    refusedPage((await samlLogin('/accounts/register/social/saml/open', open)).done, /Please request an invite for newcomer@acme\.test/);
    assert.equal(await counts(), before);
    assert.is((await realm.owner.client.patch('/realm', { invite_required: false })).status, 200);
    try {
      const { jar, done } = await samlLogin('/accounts/register/social/saml/open', open);
      assert.is(done.status, 302, done.text);
      const user = await server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: email } });
      assert.equal([user.fullName, user.role, user.passwordHash], ['Nia Newcomer', 400, null]);
      assert.is(await whoIs(jar), user.id);
    } finally {
      await realm.owner.client.patch('/realm', { invite_required: true });
    }
  });

  test('refused, nothing created: a foreign signature, an assertion changed after signing, none signed, expired, for another audience, from an unknown issuer', async () => {
    const cat = await realm.addUser({ name: 'Cat' });
    const dan = await realm.addUser({ name: 'Dan' });
    corp.nextLogin = { nameId: cat.email, attributes: { email: cat.email } };
    const cases: [SamlTamper, RegExp][] = [
      [{ rogueKey: true }, /could not be verified/],
      [{ alterAfterSigning: dan.email }, /could not be verified/],
      [{ unsigned: true }, /could not be verified/],
      [{ issuedSecondsAgo: 3600 }, /could not be verified/],
      [{ audience: 'https://another-service.example' }, /could not be verified/],
      [{ issuer: 'https://unknown.example/idp', rogueKey: true }, /an identity provider this organization does not use/],
      // Another of the server's IdPs, which this login was not started with.
      [{ issuer: open.entityId }, /another identity provider than the one the login was started with/],
    ];
    try {
      for (const [how, message] of cases) {
        corp.tamper = how;
        const before = await counts();
        const { jar, done } = await samlLogin('/accounts/login/social/saml/corp', corp);
        try {
          refusedPage(done, message);
          assert.is(jar.cookies.get('sessionid'), undefined);
          assert.equal(await counts(), before);
        } catch (err) {
          throw new Error(`${JSON.stringify(how)}: ${String(err)}`);
        }
      }
    } finally {
      corp.tamper = {};
    }
    // The same login, untampered, goes through.
    const { jar } = await samlLogin('/accounts/login/social/saml/corp', corp);
    assert.is(await whoIs(jar), cat.id);
  });

  test('refused: the same answer posted twice, the same assertion in a later answer, an answer to no login started here', async () => {
    const eve = await realm.addUser({ name: 'Eve' });
    corp.nextLogin = { nameId: eve.email, attributes: { email: eve.email } };
    const first = await samlLogin('/accounts/login/social/saml/corp', corp);
    assert.is(first.done.status, 302);
    const before = await counts();
    refusedPage(await postToAcs(first.form), /This login was not started here/);
    // An IdP answering a new request with an assertion already used.
    corp.tamper = { assertionId: corp.lastAssertionId };
    try {
      const again = await samlLogin('/accounts/login/social/saml/corp', corp);
      refusedPage(again.done, /already used/);
    } finally {
      corp.tamper = {};
    }
    refusedPage(await postToAcs({ ...first.form, RelayState: 'made-up' }), /This login was not started here/);
    refusedPage(await browser().post('/complete/saml/', ''), /login started from the login page/);
    assert.equal(await counts(), before);
  });

  test('an organization that turned SAML off: no buttons, no start, no answer taken', async () => {
    const fay = await realm.addUser({ name: 'Fay' });
    corp.nextLogin = { nameId: fay.email, attributes: { email: fay.email } };
    // Started before the switch, answered after.
    const started = await browser().get('/accounts/login/social/saml/corp');
    const idpPage = await (await fetch(started.headers.location!)).text();
    const off = await realm.owner.client.patch('/realm', { authentication_methods: JSON.stringify({ Email: true, SAML: false }) });
    assert.is(off.status, 200, off.text);
    try {
      const settings = await realm.anonymous.get('/server_settings');
      assert.equal([settings.body.authentication_methods.saml, settings.body.external_authentication_methods], [false, []]);
      assert.is((await browser().get('/accounts/login/social/saml/corp')).status, 403);
      const form = {
        action: /action="([^"]+)"/.exec(idpPage)![1]!,
        SAMLResponse: /name="SAMLResponse" value="([^"]+)"/.exec(idpPage)![1]!,
        RelayState: /name="RelayState" value="([^"]+)"/.exec(idpPage)![1]!,
      };
      refusedPage(await postToAcs(form), /does not allow logging in with SAML/);
    } finally {
      await realm.owner.client.patch('/realm', { authentication_methods: JSON.stringify({ SAML: true }) });
    }
  });

  test('an organization no IdP serves: none listed, and its owner cannot make SAML their only way in', async () => {
    const third = await newRealm(server, { subdomain: 'third' });
    const settings = await third.anonymous.get('/server_settings');
    assert.equal(settings.body.external_authentication_methods, []);
    const methods = JSON.stringify({ Email: false, SAML: true });
    const refusedChange = await third.owner.client.patch('/realm', { authentication_methods: methods });
    assert.equal([refusedChange.status, refusedChange.body.msg], [400, 'You cannot turn off every authentication method you can log in with.']);
    // Where an IdP serves the organization, it lets the owner in.
    assert.is((await realm.owner.client.patch('/realm', { authentication_methods: methods })).status, 200);
    await realm.owner.client.patch('/realm', { authentication_methods: JSON.stringify({ Email: true }) });
  });
}

test.run();
