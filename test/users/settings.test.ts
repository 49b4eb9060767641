// PATCH /settings: personal settings, full name, time zone, password and email visibility, their
// errors, the register snapshot, and the events each change sends (mirrors Zulip's test_settings.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, setRealmSettings } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const patch = (u: TestUser, params: Record<string, unknown>) => u.client.patch('/settings', params);
const settingsOf = async (u: TestUser) => (await u.client.post('/register', { fetch_event_types: ['user_settings'] })).body.user_settings;
const update = (property: string, value: unknown) => ({ type: 'user_settings', op: 'update', property, value });

test("register: every personal setting with Zulip's defaults, in user_settings only", async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.post('/register', { fetch_event_types: ['user_settings'] });
  const s = r.body.user_settings;
  const expected = {
    enter_sends: false,
    twenty_four_hour_time: false,
    default_language: 'en',
    web_home_view: 'inbox',
    color_scheme: 1,
    emojiset: 'google',
    enable_drafts_synchronization: true,
    presence_enabled: true,
    send_read_receipts: true,
    email_address_visibility: 1,
    timezone: '',
    web_font_size_px: 16,
    web_line_height_percent: 140,
    user_list_style: 3,
    notification_sound: 'zulip',
    desktop_icon_count_display: 1,
    enable_stream_desktop_notifications: false,
    enable_followed_topic_push_notifications: true,
    automatically_follow_topics_policy: 3,
    email_notifications_batching_period_seconds: 120,
    web_animate_image_previews: 'on_hover',
    receives_typing_notifications: true,
  };
  for (const [key, value] of Object.entries(expected)) assert.equal(s[key], value, key);
  assert.ok(s.available_notification_sounds.includes('ding'));
  assert.equal(s.emojiset_choices[0], { key: 'google', text: 'Google' });
  assert.not.ok('can_create_users' in s);
  assert.not.ok('default_all_public_streams' in s);
  assert.not.ok('enter_sends' in r.body, 'user_settings_object has no effect: no top-level legacy keys');
});

test('PATCH /settings: booleans, choices and strings are stored; unknown parameters are reported', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const r = await patch(bob, {
    enter_sends: true,
    twenty_four_hour_time: true,
    color_scheme: 2,
    emojiset: 'text',
    web_home_view: 'recent_topics',
    default_language: 'de',
    timezone: 'US/Mountain',
    notification_sound: 'ding',
    email_notifications_batching_period_seconds: 300,
    web_font_size_px: 14,
    wildcard_mentions_notify: false,
  });
  assert.equal([r.status, r.body], [200, SUCCESS]);
  const s = await settingsOf(bob);
  assert.equal(
    [
      s.enter_sends,
      s.twenty_four_hour_time,
      s.color_scheme,
      s.emojiset,
      s.web_home_view,
      s.default_language,
      s.timezone,
      s.notification_sound,
      s.email_notifications_batching_period_seconds,
      s.web_font_size_px,
      s.wildcard_mentions_notify,
    ],
    [true, true, 2, 'text', 'recent_topics', 'de', 'US/Mountain', 'ding', 300, 14, false],
  );
  const ignored = await patch(bob, { enter_sends: false, hamster: 1 });
  assert.equal(ignored.body, { ...SUCCESS, ignored_parameters_unsupported: ['hamster'] });
  assert.equal((await bob.client.patch('/settings/display', { enter_sends: true })).body, SUCCESS, 'deprecated alias');
  assert.is((await settingsOf(bob)).enter_sends, true);
});

test('PATCH /settings: invalid values are refused and change nothing', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const invalid = (name: string) => errorBody(`Invalid ${name}`, 'BAD_REQUEST', { var_name: name });
  const cases: [Record<string, unknown>, Record<string, unknown>][] = [
    [{ color_scheme: 100 }, invalid('color_scheme')],
    [{ email_address_visibility: 6 }, invalid('email_address_visibility')],
    [{ demote_inactive_streams: 0 }, invalid('demote_inactive_streams')],
    [{ emojiset: 'invalid_emojiset' }, invalid('emojiset')],
    [{ web_home_view: 'invalid_view' }, invalid('web_home_view')],
    [{ default_language: 'invalid_language' }, invalid('default_language')],
    [{ timezone: 'invalid_timezone' }, invalid('timezone')],
    [{ timezone: '' }, invalid('timezone')],
    [{ notification_sound: 'invalid' }, errorBody("Invalid notification sound 'invalid'")],
    [{ email_notifications_batching_period_seconds: -1 }, errorBody('Invalid email batching period: -1 seconds')],
    [{ email_notifications_batching_period_seconds: 7 * 86400 + 1 }, errorBody('Invalid email batching period: 604801 seconds')],
    [{ enter_sends: 1 }, errorBody('enter_sends is not a boolean', 'BAD_REQUEST', { var_name: 'enter_sends' })],
    [{ color_scheme: '"dark"' }, errorBody('color_scheme is not an integer', 'BAD_REQUEST', { var_name: 'color_scheme' })],
    [{ enter_sends: 'yes' }, errorBody('Argument "enter_sends" is not valid JSON.', 'BAD_REQUEST', { var_name: 'enter_sends' })],
  ];
  for (const [params, body] of cases) {
    const r = await patch(bob, { twenty_four_hour_time: true, ...params });
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  const s = await settingsOf(bob);
  assert.equal([s.twenty_four_hour_time, s.color_scheme, s.timezone], [false, 1, '']);
  const none = await patch(bob, { notification_sound: 'none' });
  assert.equal(none.body, SUCCESS, '"none" turns sounds off');
});

test('full_name: validation, unique names, name changes disabled; everyone hears of a change', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const admin = await realm.addUser({ name: 'Ada Admin', role: 200 });
  const cases: [string, string][] = [
    ['x'.repeat(101), 'Name too long!'],
    ['x', 'Name too short!'],
    ['  y  ', 'Name too short!'],
    ['Opheli*', 'Invalid characters in name!'],
    ['Tab\there', 'Invalid characters in name!'],
    ['Bob|42', 'Invalid format!'],
  ];
  for (const [name, msg] of cases) {
    const r = await patch(bob, { full_name: name });
    assert.equal([r.status, r.body], [400, errorBody(msg)], name);
  }
  const watcher = await openQueue(realm.owner, { event_types: ['realm_user'] });
  assert.equal((await patch(bob, { full_name: '  Robert  ' })).body, SUCCESS);
  assert.equal(await watcher.next(), [{ type: 'realm_user', op: 'update', person: { user_id: bob.id, full_name: 'Robert' } }]);
  assert.is((await bob.client.get('/users/me')).body.full_name, 'Robert');
  assert.equal((await patch(bob, { full_name: 'Robert ' })).body, SUCCESS, 'the same name after stripping');

  await setRealmSettings(realm, { require_unique_names: true });
  const taken = await patch(bob, { full_name: 'ｏｌｉｖｉａ ｏｗｎｅｒ' });
  assert.equal([taken.status, taken.body], [400, errorBody('Unique names required in this organization.')]);

  await setRealmSettings(realm, { require_unique_names: false, name_changes_disabled: true });
  assert.equal((await patch(bob, { full_name: 'Bobby' })).body, SUCCESS, 'refused silently, as Zulip does');
  assert.is((await bob.client.get('/users/me')).body.full_name, 'Robert');
  assert.equal((await patch(admin, { full_name: 'Ada' })).body, SUCCESS, 'administrators may still change their name');
  assert.is((await admin.client.get('/users/me')).body.full_name, 'Ada');
  assert.equal(await watcher.next(), [{ type: 'realm_user', op: 'update', person: { user_id: admin.id, full_name: 'Ada' } }]);
});

test('user_settings events: one per changed setting, language_name with default_language, none when unchanged', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const modern = { client_capabilities: { user_settings_object: true } };
  const queue = await openQueue(bob, { event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'], ...modern });
  const other = await openQueue(realm.owner, { event_types: ['user_settings'], ...modern });
  await patch(bob, { enter_sends: true, color_scheme: 3, enable_stream_push_notifications: true, twenty_four_hour_time: false });
  assert.equal(await queue.next(), [update('enter_sends', true), update('color_scheme', 3), update('enable_stream_push_notifications', true)]);
  await patch(bob, { default_language: 'de' });
  assert.equal(await queue.next(), [{ ...update('default_language', 'de'), language_name: 'Deutsch' }]);
  await patch(bob, { enter_sends: true });
  assert.equal(await queue.pending(), []);
  assert.equal(await other.pending(), []);
});

test('no legacy update_display_settings / update_global_notifications events at feature level 439 and later', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const legacy = await openQueue(bob, {});
  await patch(bob, { enter_sends: true, enable_sounds: false, send_read_receipts: false, default_language: 'de' });
  assert.equal(await legacy.next(), [
    update('enter_sends', true),
    { ...update('default_language', 'de'), language_name: 'Deutsch' },
    update('enable_sounds', false),
    update('send_read_receipts', false),
  ]);
});

test('timezone: user_settings to the user, realm_user to everyone', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const own = await openQueue(bob, { event_types: ['user_settings'] });
  const others = await openQueue(realm.owner, { event_types: ['realm_user'] });
  assert.equal((await patch(bob, { timezone: 'Europe/Berlin' })).body, SUCCESS);
  assert.equal(await own.next(), [update('timezone', 'Europe/Berlin')]);
  assert.equal(await others.next(), [{ type: 'realm_user', op: 'update', person: { email: bob.email, user_id: bob.id, timezone: 'Europe/Berlin' } }]);
  assert.is((await realm.owner.client.get(`/users/${bob.id}`)).body.user.timezone, 'Europe/Berlin');
});

test('email_address_visibility: who gains or loses the real address hears of it; the API email changes', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const member = await realm.addUser({ name: 'Mia' });
  const memberQueue = await openQueue(member, { event_types: ['realm_user'] });
  const ownerQueue = await openQueue(realm.owner, { event_types: ['realm_user'] });
  const bobQueue = await openQueue(bob, { event_types: ['user_settings', 'realm_user'] });
  assert.equal((await patch(bob, { email_address_visibility: 3 })).body, SUCCESS);
  const dummy = `user${bob.id}@${realm.host.split(':')[0]}`;
  const avatarUpdate = (events: Record<string, any>[]) => events.find((e) => 'avatar_url' in e.person)!.person;
  const memberEvents = await memberQueue.next();
  assert.equal(memberEvents.slice(0, 2), [
    { type: 'realm_user', op: 'update', person: { user_id: bob.id, delivery_email: null } },
    { type: 'realm_user', op: 'update', person: { user_id: bob.id, new_email: dummy } },
  ]);
  assert.equal(Object.keys(avatarUpdate(memberEvents)).sort(), ['avatar_source', 'avatar_url', 'avatar_url_medium', 'avatar_version', 'user_id']);
  const ownerEvents = await ownerQueue.next();
  assert.equal(ownerEvents[0], { type: 'realm_user', op: 'update', person: { user_id: bob.id, new_email: dummy } }, 'admins still see it');
  assert.is(ownerEvents.length, 2);
  assert.equal((await bobQueue.next())[0], update('email_address_visibility', 3));
  const seen = (await member.client.get(`/users/${bob.id}`)).body.user;
  assert.equal([seen.email, seen.delivery_email], [dummy, null]);
  assert.is((await realm.owner.client.get(`/users/${bob.id}`)).body.user.delivery_email, bob.email);

  assert.equal((await patch(bob, { email_address_visibility: 4 })).body, SUCCESS);
  assert.equal(await ownerQueue.next(), [{ type: 'realm_user', op: 'update', person: { user_id: bob.id, delivery_email: null } }]);
  assert.equal(await memberQueue.pending(), [], 'nothing changes for members between admins-only and nobody');
});

test('password: the old one is required, the new one must be strong enough', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const wrong = await patch(bob, { old_password: 'not-it', new_password: 'another-password' });
  assert.equal([wrong.status, wrong.body], [400, errorBody('Wrong password!')]);
  const weak = await patch(bob, { old_password: bob.password, new_password: 'abc' });
  assert.equal([weak.status, weak.body], [400, errorBody('New password is too weak!')]);
  assert.equal((await patch(bob, { old_password: bob.password, new_password: 'a-new-password' })).body, SUCCESS);
  const login = await realm.anonymous.post('/fetch_api_key', { username: bob.email, password: 'a-new-password' });
  assert.equal([login.status, login.body.api_key], [200, bob.apiKey]);
  const old = await realm.anonymous.post('/fetch_api_key', { username: bob.email, password: bob.password });
  assert.is(old.status, 401);
});

test('bots cannot use PATCH /settings', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true, name: 'Helper bot' });
  const r = await patch(bot, { enter_sends: true });
  assert.equal([r.status, r.body], [400, errorBody('This endpoint does not accept bot requests.')]);
});

test.run();
