// LDAP login against a real OpenLDAP (Debian's slapd, started here on a free port, seeded with
// LDIF): server_settings, POST /fetch_api_key and the web login form with a directory username or
// address, the account made on first login with the entry's name, avatar and custom profile field,
// brought in line at each login (name; a disabled entry deactivates it) and by sync-ldap; refused
// alike: a wrong or empty password, an unknown user, a filter in the username. And the
// organization's choice of methods (authentication_methods in PATCH /realm and register), which
// every login path follows, and which never shuts out the owner making it.
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAdminCommand, runAdminCommand } from '../../src/cli/commands.ts';
import type { RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { PEOPLE, READER_DN, READER_PASSWORD, SLAPD, Slapd, slapdInstalled } from '../helpers/slapd.ts';
import { newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import { openQueue } from '../helpers/queues.ts';
import { BrowserJar, decodeMobileRedirect, logIn, MOBILE_OTP } from '../helpers/web-login.ts';

const AUTH_FAILED = { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' };
const DEACTIVATED = { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' };

let slapd: Slapd;
let server: RunningServer;
let realm: TestRealm;
let photo: Buffer;
let phoneField: number;

const dn = (uid: string) => `uid=${uid},${PEOPLE}`;
const directorySettings = (url: string) => ({
  LDAP_SERVER_URL: url,
  LDAP_BIND_DN: READER_DN,
  LDAP_BIND_PASSWORD: READER_PASSWORD,
  LDAP_USER_SEARCH_BASE: PEOPLE,
  LDAP_USER_SEARCH_FILTER: '(uid=%(user)s)',
  LDAP_EMAIL_ATTR: 'mail',
});
/** PATCH /realm's authentication_methods as Zulip's clients send it: every method, these changed. */
const methods = (changed: Record<string, boolean>) => JSON.stringify({ Email: true, LDAP: true, 'OpenID Connect': true, ...changed });
/** The organization whose owner the directory also knows (as olivia). */
const METHODS_SUBDOMAIN = `methods${process.pid}`;

function person(uid: string, cn: string, mail: string, extra = ''): string {
  return `dn: ${dn(uid)}
objectClass: inetOrgPerson
objectClass: directoryAccount
uid: ${uid}
cn: ${cn}
sn: ${cn.split(' ').at(-1)}
mail: ${mail}
userPassword: pw-${uid}
userAccountControl: 512
${extra}
`;
}

if (!slapdInstalled()) {
  test.skip(`LDAP (${SLAPD} is absent: apt-get install slapd; .ci/run installs it)`);
} else {
  test.before(async () => {
    photo = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#36c' } })
      .jpeg()
      .toBuffer();
    slapd = await Slapd.start(
      [
        person('ada', 'Ada Lovelace', 'ada@example.org', `telephoneNumber: +44 20 7946 0000\njpegPhoto:: ${photo.toString('base64')}`),
        person('alan', 'Alan Turing', 'alan@example.org'),
        person('grace', 'Grace Hopper', 'grace@example.org'),
        person('edsger', 'Edsger Dijkstra', 'edsger@example.org'),
        person('olivia', 'Olivia of the Directory', `owner@${METHODS_SUBDOMAIN}.test`),
      ].join('\n'),
    );
    server = await startTestServer({
      ...directorySettings(slapd.url),
      LDAP_USER_ATTR_MAP: JSON.stringify({
        full_name: 'cn',
        avatar: 'jpegPhoto',
        custom_profile_field__phone_number: 'telephoneNumber',
        userAccountControl: 'userAccountControl',
      }),
      // A provider nobody reaches: it only has to exist for the organization to turn it on or off.
      OIDC_PROVIDERS: JSON.stringify([{ name: 'corp', issuer: 'http://127.0.0.1:9/', client_id: 'chat', secret: 'secret', display_name: 'Corp SSO' }]),
    });
    realm = await newRealm(server);
    const field = await realm.owner.client.post('/realm/profile_fields', { name: 'Phone number', field_type: 1 });
    assert.is(field.status, 200, field.text);
    phoneField = field.body.id;
  });

  test.after(async () => {
    await server?.stop();
    slapd?.stop();
  });

  const fetchApiKey = (username: string, password: string) => realm.anonymous.post('/fetch_api_key', { username, password });
  const userById = async (id: number) => (await realm.owner.client.get(`/users/${id}`, { include_custom_profile_fields: 'true' })).body.user;

  test('server_settings: LDAP is on, and usernames need not be addresses (LDAP_EMAIL_ATTR)', async () => {
    const r = await realm.anonymous.get('/server_settings');
    assert.is(r.body.authentication_methods.ldap, true);
    assert.is(r.body.require_email_format_usernames, false);
  });

  test('the first login with a directory username makes the account from the entry: address, name, avatar, profile field', async () => {
    const r = await fetchApiKey('ada', 'pw-ada');
    assert.is(r.status, 200, r.text);
    assert.equal(Object.keys(r.body).sort(), ['api_key', 'email', 'msg', 'result', 'user_id']);
    assert.is(r.body.email, 'ada@example.org');
    const user = await userById(r.body.user_id);
    assert.is(user.full_name, 'Ada Lovelace');
    assert.is(user.role, 400);
    assert.match(user.avatar_url, /\/user_avatars\//);
    assert.equal(user.profile_data[phoneField], { value: '+44 20 7946 0000', rendered_value: '<p>+44 20 7946 0000</p>' });
    // The key works, and logging in by address finds the same account.
    assert.is((await new Client(server.port, realm.host, { email: r.body.email, apiKey: r.body.api_key }).get('/users/me')).body.user_id, r.body.user_id);
    const byAddress = await fetchApiKey('ada@example.org', 'pw-ada');
    assert.equal([byAddress.body.user_id, byAddress.body.api_key], [r.body.user_id, r.body.api_key]);
    // The same picture again is not a new avatar.
    assert.is((await userById(r.body.user_id)).avatar_version, user.avatar_version);
  });

  test('refused alike, nothing made: a wrong or empty password, an unknown user, a filter in the username', async () => {
    const before = await server.app.prisma.user.count({ where: { realmId: realm.id } });
    for (const [username, password] of [
      ['alan', 'wrong'],
      ['alan', ''],
      ['nobody', 'pw-nobody'],
      ['*', 'pw-alan'],
      ['alan)(uid=*', 'pw-alan'],
      ['alan@example.org', 'pw-ada'],
    ]) {
      const r = await fetchApiKey(username!, password!);
      assert.equal([r.status, r.body], [401, AUTH_FAILED], `${username} / ${password}`);
    }
    assert.is(await server.app.prisma.user.count({ where: { realmId: realm.id } }), before);
  });

  test("the organization's own passwords still work beside the directory", async () => {
    const r = await fetchApiKey(realm.owner.email, realm.owner.password);
    assert.equal([r.status, r.body.user_id], [200, realm.owner.id]);
  });

  test('each login brings the name in line; a disabled entry deactivates the account and is refused', async () => {
    const first = await fetchApiKey('alan', 'pw-alan');
    assert.is(first.status, 200, first.text);
    await slapd.replace(dn('alan'), 'cn', ['Alan M. Turing']);
    assert.is((await fetchApiKey('alan', 'pw-alan')).status, 200);
    assert.is((await userById(first.body.user_id)).full_name, 'Alan M. Turing');
    await slapd.replace(dn('alan'), 'userAccountControl', ['514']);
    const refused = await fetchApiKey('alan', 'pw-alan');
    assert.equal([refused.status, refused.body], [401, DEACTIVATED]);
    assert.is((await userById(first.body.user_id)).is_active, false);
  });

  test('the web login form takes a directory username; the mobile flow through it hands the app its key', async () => {
    const page = await new BrowserJar(new Client(server.port, realm.host)).get('/login/');
    assert.match(page.text, /<label for="id_username">Username or email<\/label>\n<input id="id_username" name="username" type="text"/);
    const jar = new BrowserJar(new Client(server.port, realm.host));
    const done = await logIn(jar, { email: 'grace', password: 'pw-grace' });
    assert.is(done.status, 302, done.text);
    const me = await jar.get('/json/users/me');
    assert.is(me.body.email, 'grace@example.org');
    const app = await logIn(
      new BrowserJar(new Client(server.port, realm.host)),
      { email: 'grace@example.org', password: 'pw-grace' },
      `?mobile_flow_otp=${MOBILE_OTP}`,
    );
    const result = decodeMobileRedirect(String(app.headers.location));
    assert.equal([result.email, result.user_id], ['grace@example.org', String(me.body.user_id)]);
    assert.is((await fetchApiKey('grace', 'pw-grace')).body.api_key, result.api_key);
    const wrong = await logIn(new BrowserJar(new Client(server.port, realm.host)), { email: 'grace', password: 'nope' });
    assert.is(wrong.status, 200);
    assert.match(wrong.text, /Please enter a correct email and password/);
  });

  test('sync-ldap: names and profile fields from the directory, an entry enabled again reactivates, a disabled one deactivates', async () => {
    const edsger = (await fetchApiKey('edsger', 'pw-edsger')).body.user_id;
    const alan = (await server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: 'alan@example.org' } })).id;
    await slapd.replace(dn('alan'), 'userAccountControl', ['512']);
    await slapd.replace(dn('edsger'), 'userAccountControl', ['514']);
    await slapd.replace(dn('ada'), 'cn', ['Augusta Ada King']);
    await slapd.replace(dn('ada'), 'telephoneNumber', ['+44 20 7946 0001']);
    const report = await runAdminCommand(server.app, parseAdminCommand('sync-ldap', ['--subdomain', realm.subdomain]));
    assert.equal(report, {
      updated: ['ada@example.org', 'alan@example.org', 'grace@example.org'],
      deactivated: ['edsger@example.org'],
      reactivated: ['alan@example.org'],
      not_found: [realm.owner.email],
      failed: [],
    });
    assert.is((await userById(edsger)).is_active, false);
    assert.is((await userById(alan)).is_active, true);
    const ada = (await server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: 'ada@example.org' } })).id;
    const synced = await userById(ada);
    assert.is(synced.full_name, 'Augusta Ada King');
    assert.is(synced.profile_data[phoneField].value, '+44 20 7946 0001');
    assert.is((await fetchApiKey('alan', 'pw-alan')).status, 200);
  });

  test("authentication_methods: register lists the server's methods; PATCH /realm refuses unknown names, all off, non-owners, and shutting out the owner", async () => {
    const org = await newRealm(server, { subdomain: METHODS_SUBDOMAIN });
    const queue = await openQueue(org.owner, { event_types: ['realm'], fetch_event_types: ['realm'] });
    assert.equal(queue.state.realm_authentication_methods, {
      Email: { enabled: true, available: true },
      LDAP: { enabled: true, available: true },
      'OpenID Connect': { enabled: true, available: true },
    });
    const patch = (who: TestUser, changed: Record<string, boolean>) => who.client.patch('/realm', { authentication_methods: methods(changed) });
    const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
    let r = await patch(org.owner, { SAML: false });
    assert.equal([r.status, r.body], [400, error("Invalid authentication method: SAML. Valid methods are: ['Email', 'LDAP', 'OpenID Connect']")]);
    r = await patch(org.owner, { Email: false, LDAP: false, 'OpenID Connect': false });
    assert.equal([r.status, r.body], [400, error('At least one authentication method must be enabled.')]);
    const admin = await org.addUser({ role: 200 });
    r = await patch(admin, { LDAP: false });
    assert.equal([r.status, r.body], [400, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL')]);
    // A second owner the directory does not know keeps only their password.
    const owner2 = await org.addUser({ role: 100 });
    r = await patch(owner2, { Email: false, 'OpenID Connect': false });
    assert.equal([r.status, r.body], [400, error('You cannot turn off every authentication method you can log in with.')]);
    assert.equal(await queue.pending(), []);
  });

  test('authentication_methods: turned off, LDAP no longer logs in (nor makes accounts), and clients hear of it', async () => {
    const org = await newRealm(server, { subdomain: `${METHODS_SUBDOMAIN}b` });
    const queue = await openQueue(org.owner, { event_types: ['realm'] });
    const r = await org.owner.client.patch('/realm', { authentication_methods: methods({ LDAP: false }) });
    assert.equal([r.status, r.body], [200, { result: 'success', msg: '', authentication_methods: { Email: true, LDAP: false, 'OpenID Connect': true } }]);
    assert.equal(await queue.next(), [
      {
        type: 'realm',
        op: 'update_dict',
        property: 'default',
        data: {
          authentication_methods: {
            Email: { enabled: true, available: true },
            LDAP: { enabled: false, available: true },
            'OpenID Connect': { enabled: true, available: true },
          },
        },
      },
    ]);
    const settings = (await org.anonymous.get('/server_settings')).body;
    assert.equal(
      [settings.authentication_methods.password, settings.authentication_methods.ldap, settings.require_email_format_usernames],
      [true, false, false],
    );
    const refused = await org.anonymous.post('/fetch_api_key', { username: 'ada', password: 'pw-ada' });
    assert.equal([refused.status, refused.body], [401, AUTH_FAILED]);
    assert.is(await server.app.prisma.user.count({ where: { realmId: org.id, isSystemBot: false } }), 1);
    assert.match((await org.anonymous.request('GET', '/login/')).text, /<label for="id_username">Email<\/label>/);
    assert.is((await org.anonymous.post('/fetch_api_key', { username: org.owner.email, password: org.owner.password })).status, 200);
  });

  test("authentication_methods: an owner the directory knows may turn passwords off; then only the directory's password works, and with OpenID Connect alone, no password at all", async () => {
    const org = (await server.app.realms.forHost(`${METHODS_SUBDOMAIN}.${server.app.realms.externalHost}`))!;
    const owner = new Client(server.port, server.app.realms.host(org));
    const ownerEmail = `owner@${METHODS_SUBDOMAIN}.test`;
    const ownerRow = await server.app.prisma.user.findFirstOrThrow({ where: { realmId: org.id, deliveryEmail: ownerEmail } });
    const asOwner = owner.withCredentials(ownerEmail, ownerRow.apiKey);
    let r = await asOwner.patch('/realm', { authentication_methods: methods({ Email: false }) });
    assert.is(r.status, 200, r.text);
    r = await owner.post('/fetch_api_key', { username: ownerEmail, password: 'owner-password' });
    assert.equal([r.status, r.body], [401, AUTH_FAILED]);
    r = await owner.post('/fetch_api_key', { username: 'olivia', password: 'pw-olivia' });
    assert.equal([r.status, r.body.user_id], [200, ownerRow.id]);
    r = await asOwner.patch('/realm', { authentication_methods: methods({ Email: false, LDAP: false }) });
    assert.is(r.status, 200, r.text);
    r = await owner.post('/fetch_api_key', { username: 'olivia', password: 'pw-olivia' });
    assert.equal(
      [r.status, r.body],
      [401, { result: 'error', msg: 'Password authentication is disabled in this organization', code: 'PASSWORD_AUTH_DISABLED' }],
    );
    const page = await owner.request('GET', '/login/');
    assert.not.match(page.text, /<form method="post"/);
    assert.match(page.text, /Log in with Corp SSO/);
    assert.equal((await owner.get('/server_settings')).body.authentication_methods.password, false);
    // And the other way round: single sign-on off, its start URL says so.
    r = await asOwner.patch('/realm', { authentication_methods: methods({ 'OpenID Connect': false }) });
    assert.is(r.status, 200, r.text);
    const start = await owner.request('GET', '/accounts/login/social/oidc/corp');
    assert.is(start.status, 403);
    assert.match(start.text, /does not allow logging in with OpenID Connect/);
    assert.equal((await owner.get('/server_settings')).body.external_authentication_methods, []);
  });

  test("TLS: StartTLS and ldaps:// with the directory's certificate authority log in; a certificate not trusted is refused", async () => {
    const loginThrough = async (settings: Record<string, string>) => {
      const other = await startTestServer({ ...directorySettings(slapd.url), ...settings });
      try {
        const org = await newRealm(other);
        const r = await org.anonymous.post('/fetch_api_key', { username: 'grace', password: 'pw-grace' });
        return [r.status, r.status === 200 ? r.body.email : r.body] as const;
      } finally {
        await other.stop();
      }
    };
    assert.equal(await loginThrough({ LDAP_START_TLS: 'on', LDAP_TLS_CA_FILE: slapd.caFile }), [200, 'grace@example.org']);
    assert.equal(await loginThrough({ LDAP_SERVER_URL: slapd.ldapsUrl, LDAP_TLS_CA_FILE: slapd.caFile }), [200, 'grace@example.org']);
    // Without the certificate authority, the directory's certificate is not believed: no login.
    assert.equal(await loginThrough({ LDAP_START_TLS: 'on' }), [401, AUTH_FAILED]);
    assert.equal(await loginThrough({ LDAP_SERVER_URL: slapd.ldapsUrl }), [401, AUTH_FAILED]);
  });
}

test.run();
