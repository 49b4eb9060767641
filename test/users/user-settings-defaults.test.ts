// PATCH /realm/user_settings_defaults (Zulip's test_realm.py RealmUserDefault tests): the
// personal settings new users start with, the `realm_user_settings_defaults` events and register
// data, who may change them, and what new users (not existing ones, not bots) get from them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const defaults = (u: TestUser, params: Record<string, unknown>) => u.client.patch('/realm/user_settings_defaults', params);
const registered = async (u: TestUser, type: string) => (await u.client.post('/register', { fetch_event_types: [type] })).body[type];
const update = (property: string, value: unknown) => ({ type: 'realm_user_settings_defaults', op: 'update', property, value });

async function admin(realm: TestRealm): Promise<TestUser> {
  return realm.addUser({ role: Role.ADMINISTRATOR, name: 'Ada Admin' });
}

test("register: the defaults are Zulip's until changed, with the option lists", async () => {
  const realm = await newRealm();
  const s = await registered(realm.owner, 'realm_user_settings_defaults');
  const expected = {
    enter_sends: false,
    color_scheme: 1,
    emojiset: 'google',
    default_language: 'en',
    email_address_visibility: 1,
    web_home_view: 'inbox',
    enable_login_emails: true,
    enable_marketing_emails: true,
    allow_private_data_export: false,
    notification_sound: 'zulip',
    email_notifications_batching_period_seconds: 120,
    automatically_follow_topics_policy: 3,
    web_font_size_px: 16,
    presence_enabled: true,
  };
  for (const [key, value] of Object.entries(expected)) assert.equal(s[key], value, key);
  assert.ok(s.available_notification_sounds.includes('ding'));
  assert.equal(s.emojiset_choices[1], { key: 'twitter', text: 'Twitter' });
  for (const absent of ['can_create_users', 'default_all_public_streams', 'timezone']) assert.not.ok(absent in s, absent);
});

test('an administrator changes defaults: one event per changed setting to every user, register agrees', async () => {
  const realm = await newRealm();
  const ada = await admin(realm);
  const member = await realm.addUser();
  const queue = await openQueue(member, { event_types: ['realm_user_settings_defaults'] });
  const r = await defaults(ada, {
    enter_sends: true,
    emojiset: 'text',
    color_scheme: 2,
    email_address_visibility: 3,
    web_home_view: 'recent_topics',
    presence_enabled: true,
  });
  assert.equal([r.status, r.body], [200, SUCCESS]);
  // presence_enabled was already true: no event. The rest in Zulip's (alphabetical) parameter order.
  assert.equal(
    [...(await queue.next()), ...(await queue.pending())],
    [
      update('color_scheme', 2),
      update('email_address_visibility', 3),
      update('emojiset', 'text'),
      update('enter_sends', true),
      update('web_home_view', 'recent_topics'),
    ],
  );
  const s = await registered(member, 'realm_user_settings_defaults');
  assert.equal([s.enter_sends, s.emojiset, s.color_scheme, s.email_address_visibility, s.web_home_view], [true, 'text', 2, 3, 'recent_topics']);
  const again = await defaults(ada, { enter_sends: true });
  assert.equal(again.body, SUCCESS);
  assert.equal(await queue.pending(), [], 'an unchanged value sends nothing');
  // Existing users keep their own settings.
  const own = await registered(member, 'user_settings');
  assert.equal([own.enter_sends, own.emojiset, own.email_address_visibility], [false, 'google', 1]);
});

test('settings the defaults do not cover are reported as unsupported and change nothing', async () => {
  const realm = await newRealm();
  const r = await defaults(realm.owner, {
    default_language: 'de',
    enable_login_emails: false,
    enable_marketing_emails: false,
    allow_private_data_export: true,
    timezone: 'UTC',
  });
  assert.equal(r.body, {
    ...SUCCESS,
    ignored_parameters_unsupported: ['default_language', 'enable_login_emails', 'enable_marketing_emails', 'allow_private_data_export', 'timezone'],
  });
  const s = await registered(realm.owner, 'realm_user_settings_defaults');
  assert.equal([s.default_language, s.enable_login_emails, s.enable_marketing_emails, s.allow_private_data_export], ['en', true, true, false]);
});

test("new users start from the defaults and the organization's language; bots from Zulip's", async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  assert.equal((await realm.owner.client.patch('/realm', { default_language: 'fr' })).status, 200);
  assert.equal(
    (await defaults(realm.owner, { enter_sends: true, twenty_four_hour_time: true, email_address_visibility: 3, notification_sound: 'ding' })).status,
    200,
  );
  const memberQueue = await openQueue(member, { event_types: ['realm_user'] });
  const created = await realm.owner.client.post('/users', { email: 'newcomer@example.com', password: 'newcomer-password', full_name: 'Nina Newcomer' });
  assert.equal(created.status, 200, created.text);
  // Only administrators may see the newcomer's address now.
  const [added] = await memberQueue.next();
  assert.equal([added!.person.user_id, added!.person.delivery_email], [created.body.user_id, null]);
  const login = await realm.anonymous.post('/fetch_api_key', { username: 'newcomer@example.com', password: 'newcomer-password' });
  const nina: TestUser = {
    id: created.body.user_id,
    email: 'newcomer@example.com',
    apiKey: login.body.api_key,
    password: 'newcomer-password',
    client: realm.anonymous.withCredentials('newcomer@example.com', login.body.api_key),
  };
  const s = await registered(nina, 'user_settings');
  assert.equal(
    [s.enter_sends, s.twenty_four_hour_time, s.email_address_visibility, s.notification_sound, s.default_language, s.color_scheme],
    [true, true, 3, 'ding', 'fr', 1],
  );
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  const b = await registered(bot, 'user_settings');
  assert.equal([b.enter_sends, b.email_address_visibility, b.default_language], [false, 1, 'fr']);
  const m = await registered(member, 'user_settings');
  assert.equal([m.enter_sends, m.email_address_visibility, m.default_language], [false, 1, 'en'], 'existing users are untouched');
});

test("errors: administrators only, Zulip's validation of each value; a failed request changes nothing", async () => {
  const realm = await newRealm();
  const moderator = await realm.addUser({ role: Role.MODERATOR });
  const denied = await defaults(moderator, { enter_sends: true });
  assert.equal([denied.status, denied.body], [400, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')]);
  const invalid = (name: string) => errorBody(`Invalid ${name}`, 'BAD_REQUEST', { var_name: name });
  const cases: [Record<string, unknown>, Record<string, unknown>][] = [
    [{ color_scheme: 4 }, invalid('color_scheme')],
    [{ email_address_visibility: 0 }, invalid('email_address_visibility')],
    [{ emojiset: 'apple' }, invalid('emojiset')],
    [{ web_animate_image_previews: 'sometimes' }, invalid('web_animate_image_previews')],
    [{ user_list_style: 4 }, invalid('user_list_style')],
    [{ notification_sound: 'gong' }, errorBody("Invalid notification sound 'gong'")],
    [{ email_notifications_batching_period_seconds: 0 }, errorBody('Invalid email batching period: 0 seconds')],
    [{ enter_sends: 'maybe' }, errorBody('Argument "enter_sends" is not valid JSON.', 'BAD_REQUEST', { var_name: 'enter_sends' })],
    [{ web_font_size_px: true }, errorBody('web_font_size_px is not an integer', 'BAD_REQUEST', { var_name: 'web_font_size_px' })],
  ];
  for (const [params, body] of cases) {
    const r = await defaults(realm.owner, { twenty_four_hour_time: true, ...params });
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  const s = await registered(realm.owner, 'realm_user_settings_defaults');
  assert.equal([s.twenty_four_hour_time, s.color_scheme], [false, 1]);
  const none = await defaults(realm.owner, { notification_sound: 'none' });
  assert.equal(none.body, SUCCESS, "'none' is a valid sound");
});

test.run();
