// Users: own user, list, by id and email (visibility rules), creation, fetch_api_key, server settings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { newRealm } from '../helpers/server.ts';

const setVisibility = async (realm: Awaited<ReturnType<typeof newRealm>>, userId: number, visibility: number) => {
  await realm.server.app.prisma.user.update({ where: { id: userId }, data: { settings: { email_address_visibility: visibility } } });
  realm.server.app.auth.forget(userId);
};

test('GET /users/me returns every own-user field', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.get('/users/me');
  assert.is(r.status, 200);
  const me = r.body;
  assert.is(me.result, 'success');
  assert.is(me.msg, '');
  assert.is(me.user_id, realm.owner.id);
  assert.is(me.email, realm.owner.email);
  assert.is(me.delivery_email, realm.owner.email);
  assert.is(me.full_name, 'Olivia Owner');
  assert.equal([me.is_owner, me.is_admin, me.is_guest, me.is_bot, me.is_active, me.role], [true, true, false, false, true, 100]);
  assert.is(me.max_message_id, -1);
  assert.is(me.is_imported_stub, false);
  assert.equal(me.profile_data, {});
  assert.match(me.date_joined, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  assert.match(me.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
  assert.is(me.avatar_version, 1);
  assert.is(me.timezone, '');
});

test('GET /users lists the organization only, with client_gravatar', async () => {
  const realm = await newRealm();
  await newRealm();
  const member = await realm.addUser({ name: 'Mary Member' });
  const r = await realm.owner.client.get('/users');
  assert.is(r.status, 200);
  assert.equal(
    r.body.members.map((m: { user_id: number }) => m.user_id),
    [realm.owner.id, member.id],
  );
  const mary = r.body.members[1];
  assert.is(mary.avatar_url, null, 'client_gravatar defaults to true and the email is visible');
  assert.equal(
    { ...mary, date_joined: 'x' },
    {
      user_id: member.id,
      delivery_email: member.email,
      email: member.email,
      full_name: 'Mary Member',
      date_joined: 'x',
      is_active: true,
      is_owner: false,
      is_admin: false,
      is_guest: false,
      is_bot: false,
      bot_type: null,
      role: 400,
      timezone: '',
      avatar_url: null,
      avatar_version: 1,
      is_imported_stub: false,
    },
  );
  const withAvatars = await realm.owner.client.get('/users', { client_gravatar: false });
  assert.type(withAvatars.body.members[1].avatar_url, 'string');
  const withProfiles = await realm.owner.client.get('/users', { include_custom_profile_fields: true });
  assert.equal(withProfiles.body.members[1].profile_data, {});
});

test('email visibility: admins-only hides the real address from members, dummy address always works', async () => {
  const realm = await newRealm();
  const hidden = await realm.addUser({ name: 'Hidden' });
  const member = await realm.addUser({ name: 'Peer' });
  const guest = await realm.addUser({ name: 'Guest', role: 600 });
  await setVisibility(realm, hidden.id, 3);
  const dummy = `user${hidden.id}@${realm.subdomain}.localhost`;

  const asMember = await member.client.get(`/users/${hidden.id}`);
  assert.is(asMember.body.user.email, dummy);
  assert.is(asMember.body.user.delivery_email, null);
  assert.type(asMember.body.user.avatar_url, 'string', 'gravatar URL is sent when the email is hidden');
  const asAdmin = await realm.owner.client.get(`/users/${hidden.id}`);
  assert.is(asAdmin.body.user.email, dummy);
  assert.is(asAdmin.body.user.delivery_email, hidden.email);

  const byRealEmailMember = await member.client.get(`/users/${encodeURIComponent(hidden.email)}`);
  assert.equal([byRealEmailMember.status, byRealEmailMember.body], [400, { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' }]);
  const byRealEmailAdmin = await realm.owner.client.get(`/users/${encodeURIComponent(hidden.email)}`);
  assert.is(byRealEmailAdmin.body.user.user_id, hidden.id);
  const byDummy = await guest.client.get(`/users/${encodeURIComponent(dummy)}`);
  assert.is(byDummy.body.user.user_id, hidden.id);

  await setVisibility(realm, hidden.id, 2);
  const membersOnlyGuest = await guest.client.get(`/users/${hidden.id}`);
  assert.is(membersOnlyGuest.body.user.delivery_email, null);
  const membersOnlyMember = await member.client.get(`/users/${hidden.id}`);
  assert.is(membersOnlyMember.body.user.delivery_email, hidden.email);

  await setVisibility(realm, hidden.id, 4);
  const nobody = await realm.owner.client.get(`/users/${hidden.id}`);
  assert.is(nobody.body.user.delivery_email, null);
  const self = await hidden.client.get('/users/me');
  assert.is(self.body.delivery_email, hidden.email);
  assert.is(self.body.email, dummy);
});

test('GET /users/{id}: unknown id and other organizations', async () => {
  const realm = await newRealm();
  const other = await newRealm();
  for (const id of [999999, other.owner.id]) {
    const r = await realm.owner.client.get(`/users/${id}`);
    assert.equal([r.status, r.body], [400, { result: 'error', msg: 'No such user', code: 'BAD_REQUEST' }]);
  }
});

test('GET /users/{id} with include_custom_profile_fields', async () => {
  const realm = await newRealm();
  const prisma = realm.server.app.prisma;
  const field = await prisma.customProfileField.create({ data: { realmId: realm.id, name: 'Phone', fieldType: 1 } });
  await prisma.customProfileFieldValue.create({ data: { fieldId: field.id, userId: realm.owner.id, value: '123' } });
  const plain = await realm.owner.client.get(`/users/${realm.owner.id}`);
  assert.not.ok('profile_data' in plain.body.user);
  const r = await realm.owner.client.get(`/users/${realm.owner.id}`, { include_custom_profile_fields: true });
  assert.equal(r.body.user.profile_data, { [field.id]: { value: '123' } });
});

test('POST /users: admins with can_create_users only; duplicates refused', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: 200 });
  const member = await realm.addUser();
  const created = await realm.owner.client.post('/users', { email: 'new@example.com', password: 'new-password-1', full_name: 'New Person' });
  assert.is(created.status, 200);
  assert.equal(Object.keys(created.body).sort(), ['msg', 'result', 'user_id']);
  const dup = await realm.owner.client.post('/users', { email: 'NEW@example.com', password: 'x', full_name: 'Dup' });
  assert.equal([dup.status, dup.body], [400, { result: 'error', msg: "Email 'NEW@example.com' already in use", code: 'BAD_REQUEST' }]);
  const byMember = await member.client.post('/users', { email: 'm@example.com', password: 'x', full_name: 'M' });
  assert.equal([byMember.status, byMember.body], [400, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' }]);
  const byAdmin = await admin.client.post('/users', { email: 'a@example.com', password: 'x', full_name: 'A' });
  assert.equal([byAdmin.status, byAdmin.body], [400, { result: 'error', msg: 'User not authorized to create users', code: 'BAD_REQUEST' }]);
  const badEmail = await realm.owner.client.post('/users', { email: 'not-an-email', password: 'x', full_name: 'A' });
  assert.equal([badEmail.status, badEmail.body.msg], [400, 'Invalid address: not-an-email']);
  const login = await realm.anonymous.post('/fetch_api_key', { username: 'new@example.com', password: 'new-password-1' });
  assert.is(login.body.user_id, created.body.user_id);
});

test('POST /fetch_api_key: success, wrong password, deactivated', async () => {
  const realm = await newRealm();
  const ok = await realm.anonymous.post('/fetch_api_key', { username: realm.owner.email, password: realm.owner.password });
  assert.equal(ok.body, { result: 'success', msg: '', api_key: realm.owner.apiKey, email: realm.owner.email, user_id: realm.owner.id });
  const bad = await realm.anonymous.post('/fetch_api_key', { username: realm.owner.email, password: 'wrong' });
  assert.equal([bad.status, bad.body], [401, { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' }]);
  const user = await realm.addUser();
  await realm.server.app.prisma.user.update({ where: { id: user.id }, data: { isActive: false } });
  const deactivated = await realm.anonymous.post('/fetch_api_key', { username: user.email, password: user.password });
  assert.equal([deactivated.status, deactivated.body.code], [401, 'USER_DEACTIVATED']);
});

test('addresses compare ignoring case only: a `_` in one is no wildcard', async () => {
  const realm = await newRealm();
  const loose = await realm.addUser({ email: `aAb@${realm.subdomain}.test` });
  const exact = await realm.addUser({ email: `a_b@${realm.subdomain}.test` });
  for (const u of [loose, exact]) {
    const me = await u.client.get('/users/me');
    assert.equal([me.status, me.body.user_id], [200, u.id], u.email);
    const key = await realm.anonymous.post('/fetch_api_key', { username: u.email.toUpperCase(), password: u.password });
    assert.equal([key.status, key.body.user_id], [200, u.id], u.email);
  }
});

test('GET /server_settings needs no authentication', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.get('/server_settings');
  assert.is(r.status, 200);
  assert.is(r.body.zulip_feature_level, 491);
  assert.is(r.body.realm_url, `http://${realm.host}`);
  assert.is(r.body.realm_name, r.body.realm_name && r.body.realm_name);
  assert.is(r.body.require_email_format_usernames, true);
  assert.is(r.body.authentication_methods.password, true);
  assert.type(r.body.zulip_version, 'string');
});

test("realm_user add follows the organization's default email visibility", async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  const member = await realm.addUser();
  assert.is((await realm.owner.client.patch('/realm/user_settings_defaults', { email_address_visibility: 3 })).status, 200);
  const events = captureEvents(app, realm.id);
  const created = await realm.addUser({ name: 'Newcomer' });
  events.stop();
  const adds = events.ofType('realm_user').map((e) => ({ to: [...e.userIds], email: (e.event.person as Record<string, unknown>).delivery_email }));
  assert.equal(adds, [
    { to: [realm.owner.id, created.id], email: created.email },
    { to: [member.id], email: null },
  ]);
});

test.run();
