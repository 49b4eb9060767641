// POST /register returns, for each event type asked for, exactly the keys Zulip returns, in
// Zulip's types. The documented list comes from Zulip's OpenAPI description at feature level 372
// (../shared/reference, beside the repository), corrected by the changes up to our level 491.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel, send, setRealmSettings, setChannelRow } from '../messages/messages-helpers.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';

interface DocumentedKey {
  type: string | undefined;
  nullable: boolean;
  /** The fetch_event_types name that brings the key; `always` for the queue and version keys. */
  eventType: string;
}

const ALWAYS = new Set(['queue_id', 'last_event_id', 'zulip_version', 'zulip_feature_level', 'zulip_merge_base', 'result', 'msg']);
/** Documented keys whose description names no event type. */
const EVENT_TYPE_OF: Record<string, string> = {
  drafts: 'drafts',
  unread_msgs: 'message+update_message_flags',
  receives_typing_notifications: 'update_display_settings',
};
/** Documented keys a full register rightly leaves out. */
const CONDITIONAL = new Set([
  'ignored_parameters_unsupported', // only when the request had unknown parameters
  'demo_organization_scheduled_deletion_date', // only for demo organizations
]);

/** The reference file sits in `shared/` beside the repository (or beside the worktrees' parent). */
function referenceFile(): string {
  for (let dir = path.resolve(import.meta.dirname, '../..'); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, '..', 'shared', 'reference', 'zulip-openapi-fl372.yaml');
    if (existsSync(file)) return file;
  }
  throw new Error('shared/reference/zulip-openapi-fl372.yaml not found beside the repository');
}

/** The top-level properties of the register response schema, read from the YAML by indentation. */
function documentedKeys(): Map<string, DocumentedKey> {
  const lines = readFileSync(referenceFile(), 'utf8').split('\n');
  const indent = (line: string) => line.length - line.trimStart().length;
  let i = lines.indexOf('  /register:');
  while (!lines[i]!.includes('"200":')) i++;
  while (lines[i] !== '                    properties:') i++;
  const keys = new Map<string, DocumentedKey>();
  let name: string | undefined;
  let block: string[] = [];
  const flush = () => {
    if (!name) return;
    const own = block.filter((l) => indent(l) === 24).map((l) => l.trim());
    const present = /Present if `([a-z_]+)` is present in\s+`fetch_event_types`/.exec(block.join(' ').replace(/\s+/g, ' '));
    keys.set(name, {
      // result and msg are typed in the envelope schema the response extends.
      type:
        own
          .find((l) => l.startsWith('type:'))
          ?.slice(5)
          .trim() ?? (name === 'result' || name === 'msg' ? 'string' : undefined),
      nullable: own.includes('nullable: true'),
      eventType: ALWAYS.has(name) ? 'always' : (present?.[1] ?? EVENT_TYPE_OF[name] ?? 'realm'),
    });
  };
  for (i++; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    if (indent(line) <= 20) break;
    const match = indent(line) === 22 ? /^\s+([a-z_0-9]+):\s*(\{\})?$/.exec(line) : null;
    if (match) {
      flush();
      name = match[1];
      block = [];
    } else block.push(line);
  }
  flush();
  return keys;
}

/** Keys removed after the document was written, with the feature level that removed them. */
const REMOVED: Record<string, number> = {
  can_subscribe_other_users: 341, // still listed by the level-372 document, removed at 341
  realm_is_zephyr_mirror_realm: 426,
  giphy_rating_options: 453, // renamed gif_rating_options at 442, gif_rating_policy_options at 453
  realm_giphy_rating: 453, // renamed realm_gif_rating_policy
};
/** The legacy top-level personal settings left register with their events at level 439. */
const LEGACY_TYPES = new Set(['update_display_settings', 'update_global_notifications']);
/** Keys added after level 372: [event type, feature level, type]. */
const ADDED: Record<string, [string, number, string]> = {
  channel_folders: ['channel_folders', 389, 'array'],
  navigation_views: ['navigation_views', 390, 'array'],
  realm_topics_policy: ['realm', 392, 'string'],
  realm_can_set_topics_policy_group: ['realm', 392, 'group'],
  max_bulk_new_subscription_messages: ['realm', 397, 'integer'],
  reminders: ['reminders', 399, 'array'],
  realm_can_set_delete_message_policy_group: ['realm', 407, 'group'],
  realm_require_e2ee_push_notifications: ['realm', 409, 'boolean'],
  max_channel_folder_name_length: ['realm', 410, 'integer'],
  max_channel_folder_description_length: ['realm', 410, 'integer'],
  max_reminder_note_length: ['realm', 415, 'integer'],
  realm_welcome_message_custom_text: ['realm', 416, 'string'],
  realm_send_channel_events_messages: ['realm', 434, 'boolean'],
  server_report_message_types: ['realm', 435, 'array'],
  realm_owner_full_content_access: ['realm', 438, 'boolean'],
  tenor_api_key: ['giphy', 442, 'string'],
  realm_gif_rating_policy: ['realm', 453, 'integer'],
  gif_rating_policy_options: ['realm', 453, 'object'],
  realm_default_avatar_source: ['realm', 456, 'string'],
  realm_uuid: ['realm', 466, 'string'],
  devices: ['device', 468, 'object'], // replaced push_devices (406)
  realm_media_preview_size: ['realm', 469, 'integer'],
  realm_workplace_users_group: ['realm', 477, 'group'],
};
/** Ours beyond Zulip's list: the queue's idle timeout (spec 2.7). */
const EXTRA = new Set(['idle_queue_timeout_secs']);

function expectedKeys(): Map<string, DocumentedKey> {
  const keys = documentedKeys();
  for (const [name, key] of keys) if (name in REMOVED || LEGACY_TYPES.has(key.eventType) || CONDITIONAL.has(name)) keys.delete(name);
  for (const [name, [eventType, , type]] of Object.entries(ADDED)) keys.set(name, { eventType, type: type === 'group' ? undefined : type, nullable: false });
  for (const name of EXTRA) keys.set(name, { eventType: 'always', type: 'integer', nullable: false });
  return keys;
}

function typeErrors(body: Record<string, unknown>, keys: Map<string, DocumentedKey>): string[] {
  const errors: string[] = [];
  for (const [name, { type, nullable }] of keys) {
    if (!(name in body)) continue;
    const v = body[name];
    const ok =
      (v === null && nullable) ||
      (type === undefined ? typeof v === 'number' || (typeof v === 'object' && v !== null) : false) ||
      (type === 'integer' && Number.isInteger(v)) ||
      (type === 'number' && typeof v === 'number') ||
      (type === 'string' && typeof v === 'string') ||
      (type === 'boolean' && typeof v === 'boolean') ||
      (type === 'array' && Array.isArray(v)) ||
      (type === 'object' && typeof v === 'object' && v !== null && !Array.isArray(v));
    if (!ok) errors.push(`${name}: ${JSON.stringify(v)?.slice(0, 60)} is not ${nullable ? 'nullable ' : ''}${type ?? 'a group-setting value'}`);
  }
  return errors;
}

const sorted = (keys: Iterable<string>) => [...keys].sort();

async function register(user: TestUser, params: Record<string, unknown> = {}) {
  const r = await user.client.post('/register', params);
  assert.is(r.status, 200, r.text);
  return r.body as Record<string, any>;
}

test('the documented list parses: known keys with their event types and types', () => {
  const keys = documentedKeys();
  assert.ok(keys.size > 200, `${keys.size} keys`);
  assert.equal(keys.get('muted_topics'), { type: 'array', nullable: false, eventType: 'muted_topics' });
  assert.equal(keys.get('realm_jitsi_server_url'), { type: 'string', nullable: true, eventType: 'realm' });
  assert.equal(keys.get('enter_sends')?.eventType, 'update_display_settings');
});

test('a full register (no fetch_event_types) has every documented key, no other, each of its type', async () => {
  const realm = await newRealm();
  const body = await register(realm.owner, { client_capabilities: { user_settings_object: true } });
  const expected = expectedKeys();
  assert.equal(
    sorted(Object.keys(body)).filter((k) => !expected.has(k)),
    [],
    'keys Zulip does not send',
  );
  assert.equal(
    sorted(expected.keys()).filter((k) => !(k in body)),
    [],
    'keys missing',
  );
  assert.equal(typeErrors(body, expected), []);
  // The names and values the issue named.
  for (const gone of ['is_billing_admin', 'default_streams', 'default_stream_groups', 'can_subscribe_other_users', 'enter_sends', 'push_devices'])
    assert.not.ok(gone in body, gone);
  assert.equal(body.realm_default_streams, []);
  assert.equal(body.realm_default_stream_groups, []);
  assert.equal([body.muted_topics, body.user_topics, body.starred_messages, body.alert_words, body.muted_users], [[], [], [], [], []]);
  assert.equal(body.user_status, {});
});

test('each event type alone brings exactly its own keys', async () => {
  const realm = await newRealm();
  const expected = expectedKeys();
  const types = new Set([...expected.values()].map((k) => k.eventType).filter((t) => t !== 'always' && !t.includes('+')));
  const always = sorted(
    [...expected]
      .filter(([, k]) => k.eventType === 'always')
      .map(([name]) => name)
      .filter((n) => n !== 'result' && n !== 'msg'),
  );
  for (const type of types) {
    const body = await register(realm.owner, { fetch_event_types: [type] });
    const own = [...expected].filter(([, k]) => k.eventType === type).map(([name]) => name);
    assert.equal(
      sorted(Object.keys(body)).filter((k) => k !== 'result' && k !== 'msg'),
      sorted([...always, ...own]),
      type,
    );
    assert.equal(typeErrors(body, expected), [], type);
  }
});

test('unread_msgs needs both message and update_message_flags; muted_topics yields to user_topic', async () => {
  const realm = await newRealm();
  assert.not.ok('unread_msgs' in (await register(realm.owner, { fetch_event_types: ['message'] })));
  assert.not.ok('unread_msgs' in (await register(realm.owner, { fetch_event_types: ['update_message_flags'] })));
  assert.ok('unread_msgs' in (await register(realm.owner, { fetch_event_types: ['message', 'update_message_flags'] })));
  const both = await register(realm.owner, { fetch_event_types: ['muted_topics', 'user_topic'] });
  assert.ok('user_topics' in both);
  assert.not.ok('muted_topics' in both, 'a client that asks for user_topic gets it instead');
});

test('starred_messages and muted_topics carry the real data', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'Garden', [realm.owner, bob]);
  const [first, second] = [await send(bob, channelId, 'roses', 'one'), await send(bob, channelId, 'tulips', 'two')];
  await send(bob, channelId, 'roses', 'three');
  const star = await realm.owner.client.post('/messages/flags', { messages: [second, first], op: 'add', flag: 'starred' });
  assert.is(star.status, 200, star.text);
  const mutedAt = new Date('2026-01-02T03:04:05Z');
  await realm.server.app.prisma.userTopic.create({ data: { userId: realm.owner.id, channelId, topic: 'roses', visibility: 1, lastUpdated: mutedAt } });
  await realm.server.app.prisma.userTopic.create({ data: { userId: realm.owner.id, channelId, topic: 'tulips', visibility: 3 } });
  const body = await register(realm.owner, { fetch_event_types: ['starred_messages', 'muted_topics'] });
  assert.equal(body.starred_messages, [first, second]);
  assert.equal(body.muted_topics, [['Garden', 'roses', mutedAt.getTime() / 1000]], 'followed topics are not muted');
});

test('realm_user: creation rights from the group settings, is_moderator for administrators (level 380)', async () => {
  const realm = await newRealm();
  const guest = await realm.addUser({ role: 600 });
  const admin = await realm.addUser({ role: 200 });
  const rights = (b: Record<string, any>) => [
    b.can_create_public_streams,
    b.can_create_private_streams,
    b.can_create_web_public_streams,
    b.can_create_streams,
    b.can_invite_others_to_realm,
    b.is_moderator,
  ];
  assert.equal(rights(await register(guest, { fetch_event_types: ['realm_user'] })), [false, false, false, false, false, false]);
  assert.equal(rights(await register(admin, { fetch_event_types: ['realm_user'] })), [true, true, false, true, true, true]);
  assert.equal(rights(await register(realm.owner, { fetch_event_types: ['realm_user'] })), [true, true, true, true, true, true]);
});

test('realm_bots lists the bots the user owns, all of them for administrators', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const bot = await realm.addUser({ bot: true });
  await realm.server.app.prisma.user.update({ where: { id: bot.id }, data: { botOwnerId: realm.owner.id } });
  const avatar = (await realm.owner.client.get(`/users/${bot.id}`, { client_gravatar: false })).body.user.avatar_url;
  // Zulip's Bot object: everything an administrator of the bot may see, its API key too.
  const entry = {
    email: bot.email,
    user_id: bot.id,
    full_name: 'User 2',
    bot_type: 1,
    is_active: true,
    api_key: bot.apiKey,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    owner_id: realm.owner.id,
    avatar_url: avatar,
    services: [],
  };
  assert.equal((await register(realm.owner, { fetch_event_types: ['realm_bot'] })).realm_bots, [entry]);
  assert.equal((await register(bob, { fetch_event_types: ['realm_bot'] })).realm_bots, []);
});

test('system bots are cross-realm bots: in cross_realm_bots, not among the members, their groups or GET /users', async () => {
  const realm = await newRealm();
  const body = await register(realm.owner, { fetch_event_types: ['realm_user', 'realm_user_groups'], client_gravatar: false });
  const bots = body.cross_realm_bots as Record<string, any>[];
  // The organization's own host names them, as it names the addresses it makes up.
  const domain = (await realm.owner.client.get('/server_settings')).body.realm_url.replace(/^https?:\/\/|:\d+$/g, '');
  assert.equal(
    bots.map((b) => [b.full_name, b.email, b.delivery_email, b.is_bot, b.bot_type, b.bot_owner_id, b.is_system_bot, b.is_active, b.role]),
    [
      ['Email Gateway', `emailgateway@${domain}`, `emailgateway@${domain}`, true, 1, null, true, true, 400],
      ['Notification Bot', `notification-bot@${domain}`, `notification-bot@${domain}`, true, 1, null, true, true, 400],
      ['Welcome Bot', `welcome-bot@${domain}`, `welcome-bot@${domain}`, true, 1, null, true, true, 400],
    ],
  );
  const botIds = bots.map((b) => b.user_id);
  assert.equal(
    body.realm_users.map((u: any) => u.user_id),
    [realm.owner.id],
  );
  for (const group of body.realm_user_groups) assert.ok(!group.members.some((id: number) => botIds.includes(id)), group.name);
  const members = await realm.owner.client.get('/users');
  assert.equal(
    members.body.members.map((u: any) => u.user_id),
    [realm.owner.id],
  );
  // Looked up one by one, as clients do for a message's sender, each answers as itself.
  const one = await realm.owner.client.get(`/users/${botIds[1]}`, { client_gravatar: false });
  assert.is(one.status, 200, one.text);
  assert.equal(one.body.user, bots[1]);
  // Its messages name it as their sender.
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const id = await send(realm.owner, sid, 'old', 'moving on');
  const moved = await realm.owner.client.patch(`/messages/${id}`, { topic: 'new', send_notification_to_new_thread: true });
  assert.is(moved.status, 200, moved.text);
  const newest = await realm.owner.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
  assert.equal([newest.body.messages[0].sender_id, newest.body.messages[0].sender_full_name], [botIds[1], 'Notification Bot']);
  // An administrator's user and bot routes cannot reach them, as Zulip's cannot reach another realm's users.
  const expectError = async (r: Promise<{ status: number; body: unknown }>, msg: string) => {
    const { status, body } = await r;
    assert.equal([status, body], [400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
  };
  await expectError(realm.owner.client.patch(`/users/${botIds[1]}`, { full_name: 'Renamed' }), 'No such user');
  await expectError(realm.owner.client.delete(`/users/${botIds[1]}`), 'No such user');
  await expectError(realm.owner.client.post(`/users/${botIds[1]}/reactivate`), 'No such user');
  await expectError(realm.owner.client.patch(`/bots/${botIds[1]}`, { full_name: 'Renamed' }), 'No such bot');
  await expectError(realm.owner.client.delete(`/bots/${botIds[1]}`), 'No such bot');
  await expectError(realm.owner.client.post(`/bots/${botIds[1]}/api_key/regenerate`), 'No such bot');
  assert.equal((await realm.owner.client.get(`/users/${botIds[1]}`, { client_gravatar: false })).body.user, bots[1]);
});

test('the register keys zulip-terminal reads are all there', async () => {
  const realm = await newRealm();
  // zulip-terminal's model.py: its fetch_event_types and event_types, and the keys it reads.
  const body = await register(realm.owner, {
    fetch_event_types: [
      'realm',
      'presence',
      'subscription',
      'message',
      'starred_messages',
      'update_message_flags',
      'muted_topics',
      'realm_user',
      'realm_user_groups',
      'user_settings',
      'realm_emoji',
      'custom_profile_fields',
      'zulip_version',
    ],
    event_types: [
      'message',
      'update_message',
      'reaction',
      'submessage',
      'subscription',
      'typing',
      'update_message_flags',
      'user_settings',
      'realm_emoji',
      'realm_user',
    ],
    client_gravatar: true,
    apply_markdown: true,
    include_subscribers: true,
  });
  const read = [
    'zulip_version',
    'zulip_feature_level',
    'subscriptions',
    'muted_topics',
    'realm_user_groups',
    'realm_emoji',
    'user_settings',
    'realm_message_retention_days',
    'presences',
    'realm_allow_message_editing',
    'realm_allow_edit_history',
    'realm_message_content_edit_limit_seconds',
    'max_stream_name_length',
    'max_topic_length',
    'max_message_length',
    'server_typing_started_wait_period_milliseconds',
    'server_typing_stopped_wait_period_milliseconds',
    'server_typing_started_expiry_period_milliseconds',
    'server_presence_offline_threshold_seconds',
    'server_presence_ping_interval_seconds',
    'user_id',
    'email',
    'full_name',
    'realm_name',
    'custom_profile_fields',
    'realm_users',
    'cross_realm_bots',
    'starred_messages',
    'unread_msgs',
    'max_message_id',
    'queue_id',
    'last_event_id',
  ];
  assert.equal(
    read.filter((k) => !(k in body)),
    [],
  );
  for (const setting of ['send_private_typing_notifications', 'twenty_four_hour_time', 'pm_content_in_desktop_notifications'])
    assert.ok(setting in body.user_settings, setting);
  assert.equal(body.muted_topics, []);
});

test("archived_channels: an archived channel stays in its subscribers' subscriptions, marked archived", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'Attic', [realm.owner, bob]);
  const archive = await realm.owner.client.delete(`/streams/${channelId}`);
  assert.is(archive.status, 200, archive.text);
  const names = (b: Record<string, any>) => b.subscriptions.map((s: Record<string, unknown>) => [s.name, s.is_archived]);
  assert.equal(names(await register(bob, { fetch_event_types: ['subscription'], client_capabilities: { archived_channels: true } })), [['Attic', true]]);
  assert.equal(names(await register(bob, { fetch_event_types: ['subscription'] })), [], 'older clients do not see archived channels');
});

test('mark_topic_as_read: realm_empty_topic_display_name means the empty topic', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channelId = await makeChannel(realm, 'Lobby', [realm.owner, bob]);
  const id = await send(bob, channelId, '', 'in general chat');
  await send(bob, channelId, 'other', 'stays unread');
  const r = await realm.owner.client.post('/mark_topic_as_read', { stream_id: channelId, topic_name: 'general chat' });
  assert.equal(r.body, { result: 'success', msg: '' });
  const unread = (await register(realm.owner, { fetch_event_types: ['message', 'update_message_flags'] })).unread_msgs;
  assert.ok(!unread.streams.some((s: { unread_message_ids: number[] }) => s.unread_message_ids.includes(id)), 'the empty topic was marked read');
  assert.is(unread.count, 1);
});

test('spectators get every key too: the web-public channels, the people, and empty personal data', async () => {
  const realm = await newRealm();
  await setRealmSettings(realm, { enable_spectator_access: true });
  const bob = await realm.addUser({ name: 'Bob' });
  const open = await makeChannel(realm, 'Open', [bob]);
  await makeChannel(realm, 'Members', [bob]);
  await setChannelRow(realm, open, { isWebPublic: true });
  await send(bob, open, 'hello', 'hi');
  const r = await realm.anonymous.post('/register', { client_gravatar: false });
  assert.is(r.status, 200, r.text);
  const body = r.body as Record<string, any>;
  // A spectator has no queue, so no presence position to resume from.
  const expected = expectedKeys();
  expected.delete('presence_last_update_id');
  assert.equal(
    sorted(Object.keys(body)).filter((k) => !expected.has(k)),
    [],
    'keys Zulip does not send',
  );
  assert.equal(
    sorted(expected.keys()).filter((k) => !(k in body)),
    [],
    'keys missing',
  );
  assert.equal(typeErrors(body, expected), []);
  assert.equal([body.queue_id, body.user_id, body.full_name, body.is_guest, body.realm_presence_disabled], [null, 0, 'Anonymous User', true, true]);
  assert.equal(
    body.subscriptions.map((s: Record<string, unknown>) => [s.name, s.is_web_public, s.is_muted]),
    [['Open', true, false]],
  );
  assert.equal(
    body.streams.map((s: Record<string, unknown>) => s.name),
    ['Open'],
  );
  assert.ok(body.realm_users.some((u: Record<string, unknown>) => u.user_id === bob.id && u.full_name === 'Bob'));
  assert.equal(body.unread_msgs, { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false });
  assert.equal([body.drafts, body.starred_messages, body.muted_topics, body.realm_bots], [[], [], [], []]);
});

test.run();
