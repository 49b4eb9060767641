// One zod schema per event type and op, as Zulip documents them (zerver/lib/event_types.py and the
// /events endpoint of the API description). They describe the event as actions publish it: the
// fullest form, which each queue then trims for its client (src/bus/bus.ts) — a `message` carries
// `raw_content`, flags travel per recipient beside the event. Objects are strict where Zulip's are
// (an undeclared field is a bug), loose where the fullest form adds to Zulip's shape.
import { z } from 'zod';

const int = z.number().int();
const ids = z.array(int);
const str = z.string();
const bool = z.boolean();
const nullable = <T extends z.ZodType>(t: T) => t.nullable();
/** A group-setting value: a group id, or an anonymous group of members and subgroups. */
export const groupSetting = z.union([int, z.strictObject({ direct_members: ids, direct_subgroups: ids })]).meta({ id: 'GroupSettingValue' });
export const role = z
  .union([z.literal(100), z.literal(200), z.literal(300), z.literal(400), z.literal(600)])
  .meta({ id: 'Role', description: 'owner 100, administrator 200, moderator 300, member 400, guest 600' });
const reactionType = z.enum(['realm_emoji', 'unicode_emoji', 'zulip_extra_emoji', 'service_extra_emoji']);
export const topicLink = z.strictObject({ text: str, url: str }).meta({ id: 'TopicLink' });
const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) => z.strictObject({ type: z.literal(type), ...shape });
const opEvent = <T extends string, O extends string, S extends z.ZodRawShape>(type: T, op: O, shape: S) =>
  z.strictObject({ type: z.literal(type), op: z.literal(op), ...shape });

const message = z.looseObject({
  id: int,
  sender_id: int,
  content: str,
  recipient_id: int,
  timestamp: int,
  client: str,
  subject: str,
  topic_links: z.array(topicLink),
  is_me_message: bool,
  reactions: z.array(z.record(str, z.unknown())),
  submessages: z.array(z.unknown()),
  sender_full_name: str,
  sender_email: str,
  sender_realm_str: str,
  avatar_url: nullable(str),
  content_type: z.literal('text/html'),
  type: z.enum(['stream', 'private']),
  display_recipient: z.union([str, z.array(z.strictObject({ id: int, email: str, full_name: str, is_mirror_dummy: bool }))]),
});

const channelFields = {
  stream_id: int,
  name: str,
  is_archived: bool,
  description: str,
  rendered_description: str,
  date_created: int,
  creator_id: nullable(int),
  invite_only: bool,
  is_web_public: bool,
  history_public_to_subscribers: bool,
  message_retention_days: nullable(int),
  first_message_id: nullable(int),
  folder_id: nullable(int),
  topics_policy: str,
  is_recently_active: bool,
  stream_weekly_traffic: nullable(int),
  subscriber_count: int,
  stream_post_policy: int,
  is_announcement_only: bool,
  can_add_subscribers_group: groupSetting,
  can_administer_channel_group: groupSetting,
  can_create_topic_group: groupSetting,
  can_delete_any_message_group: groupSetting,
  can_delete_own_message_group: groupSetting,
  can_move_messages_out_of_channel_group: groupSetting,
  can_move_messages_within_channel_group: groupSetting,
  can_remove_subscribers_group: groupSetting,
  can_resolve_topics_group: groupSetting,
  can_send_message_group: groupSetting,
  can_subscribe_group: groupSetting,
};
export const channel = z.strictObject(channelFields).meta({ id: 'Channel' });
export const subscription = z
  .strictObject({
    ...channelFields,
    color: str,
    is_muted: bool,
    in_home_view: bool,
    pin_to_top: bool,
    desktop_notifications: nullable(bool),
    audible_notifications: nullable(bool),
    push_notifications: nullable(bool),
    email_notifications: nullable(bool),
    wildcard_mentions_notify: nullable(bool),
    subscribers: ids,
  })
  .meta({ id: 'Subscription' });

const person = z.looseObject({
  user_id: int,
  email: str,
  avatar_url: nullable(str),
  avatar_version: int,
  full_name: str,
  is_admin: bool,
  is_owner: bool,
  is_guest: bool,
  role,
  is_active: bool,
  is_imported_stub: bool,
  timezone: str,
  date_joined: str,
  delivery_email: nullable(str),
  is_bot: bool,
});
/** realm_user update: the user id and exactly one of Zulip's groups of changed fields. */
const personUpdate = z.union([
  z.strictObject({ user_id: int, avatar_source: str, avatar_url: nullable(str), avatar_url_medium: nullable(str), avatar_version: int }),
  z.strictObject({ user_id: int, custom_profile_field: z.strictObject({ id: int, value: nullable(str), rendered_value: nullable(str).optional() }) }),
  z.strictObject({ user_id: int, delivery_email: nullable(str) }),
  z.strictObject({ user_id: int, new_email: str }),
  z.strictObject({ user_id: int, full_name: str }),
  z.strictObject({ user_id: int, role }),
  z.strictObject({ user_id: int, email: str, timezone: str }),
  z.strictObject({ user_id: int, is_active: bool }),
  z.strictObject({ user_id: int, bot_owner_id: int }),
]);

export const group = z
  .strictObject({
    id: int,
    name: str,
    creator_id: nullable(int),
    date_created: nullable(int),
    members: ids,
    direct_subgroup_ids: ids,
    description: str,
    is_system_group: bool,
    deactivated: bool,
    can_add_members_group: groupSetting,
    can_join_group: groupSetting,
    can_leave_group: groupSetting,
    can_manage_group: groupSetting,
    can_mention_group: groupSetting,
    can_remove_members_group: groupSetting,
  })
  .meta({ id: 'UserGroup' });

export const draft = z
  .strictObject({ id: int, type: z.enum(['', 'private', 'stream']), to: ids, topic: str, content: str, timestamp: int })
  .meta({ id: 'Draft' });
export const snippet = z.strictObject({ id: int, title: str, content: str, date_created: int }).meta({ id: 'SavedSnippet' });
export const realmEmoji = z
  .strictObject({ id: str, name: str, source_url: str, deactivated: bool, author_id: nullable(int), still_url: nullable(str) })
  .meta({ id: 'RealmEmoji' });
export const attachment = z.strictObject({ id: int, name: str, size: int, path_id: str, create_time: int, message_ids: ids }).meta({ id: 'Attachment' });
export const linkifier = z
  .strictObject({
    id: int,
    pattern: str,
    url_template: str,
    example_input: nullable(str).optional(),
    reverse_template: nullable(str).optional(),
    alternative_url_templates: z.array(str),
  })
  .meta({ id: 'Linkifier' });
const typingPerson = z.strictObject({ user_id: int, email: str });
const typingEditRecipient = z.union([
  z.strictObject({ type: z.literal('channel'), channel_id: int, topic: str }),
  z.strictObject({ type: z.literal('direct'), user_ids: ids }),
]);
/** Typing in a channel's topic, or in a direct conversation (whose members are the recipients). */
const typingEvent = <O extends 'start' | 'stop'>(op: O) =>
  z.union([
    opEvent('typing', op, { message_type: z.literal('stream'), sender: typingPerson, stream_id: int, topic: str }),
    opEvent('typing', op, { message_type: z.literal('direct'), sender: typingPerson, recipients: z.array(typingPerson) }),
  ]);
const scalar = z.union([bool, int, str, z.null()]);
const reaction = {
  user_id: int,
  user: z.strictObject({ user_id: int, email: str, full_name: str }),
  message_id: int,
  emoji_name: str,
  emoji_code: str,
  reaction_type: reactionType,
};
/** Where a message marked unread again goes in the client's unread data (Zulip's format_unread_message_details). */
const unreadDetail = z.union([
  z.strictObject({ type: z.literal('stream'), stream_id: int, topic: str, unmuted_stream_msg: bool, mentioned: z.literal(true).optional() }),
  z.strictObject({ type: z.literal('private'), user_ids: ids, mentioned: z.literal(true).optional() }),
]);
const flagsFields = <O extends 'add' | 'remove'>(op: O) => ({ operation: z.literal(op), flag: str, messages: ids, all: bool });

export const channelFolder = z
  .strictObject({
    id: int,
    name: str,
    description: str,
    rendered_description: str,
    order: int,
    date_created: int,
    creator_id: nullable(int),
    is_archived: bool,
  })
  .meta({ id: 'ChannelFolder' });
export const navigationView = z.strictObject({ fragment: str, is_pinned: bool, name: nullable(str) }).meta({ id: 'NavigationView' });
export const realmDomain = z.strictObject({ domain: str, allow_subdomains: bool }).meta({ id: 'RealmDomain' });
const scheduledFields = { scheduled_message_id: int, content: str, rendered_content: str, scheduled_delivery_timestamp: int, failed: bool };
export const scheduledMessage = z
  .union([
    z.strictObject({ ...scheduledFields, type: z.literal('stream'), to: int, topic: str }),
    z.strictObject({ ...scheduledFields, type: z.literal('private'), to: ids }),
  ])
  .meta({ id: 'ScheduledMessage' });
export const reminder = z
  .strictObject({
    reminder_id: int,
    type: z.literal('private'),
    to: ids,
    content: str,
    rendered_content: str,
    scheduled_delivery_timestamp: int,
    failed: bool,
    reminder_target_message_id: int,
  })
  .meta({ id: 'Reminder' });
export const defaultChannelGroup = z.strictObject({ name: str, id: int, description: str, streams: ids }).meta({ id: 'DefaultChannelGroup' });
export const profileField = z
  .strictObject({
    id: int,
    name: str,
    type: int,
    hint: str,
    field_data: str,
    order: int,
    required: bool,
    editable_by_user: bool,
    display_in_profile_summary: z.literal(true).optional(),
  })
  .meta({ id: 'CustomProfileField' });
export const playground = z.strictObject({ id: int, name: str, pygments_language: str, url_template: str }).meta({ id: 'RealmPlayground' });
/** An outgoing-webhook bot's service (embedded bots, not enabled here, would have their configuration). */
export const botService = z.strictObject({ base_url: str, interface: int, token: str }).meta({ id: 'BotService' });
/** A bot as its administrators see it. */
export const bot = z
  .strictObject({
    email: str,
    user_id: int,
    full_name: str,
    bot_type: nullable(int),
    is_active: bool,
    api_key: str,
    default_sending_stream: nullable(str),
    default_events_register_stream: nullable(str),
    default_all_public_streams: bool,
    owner_id: nullable(int),
    avatar_url: str,
    services: z.array(botService),
  })
  .meta({ id: 'Bot' });
export const realmExport = z
  .strictObject({
    id: int,
    export_time: z.number(),
    acting_user_id: int,
    export_url: nullable(str),
    deleted_timestamp: nullable(z.number()),
    failed_timestamp: nullable(z.number()),
    pending: bool,
    export_type: z.union([z.literal(1), z.literal(2)]),
  })
  .meta({ id: 'RealmExport' });

/** Every event an action may publish, keyed `type` or `type/op`. */
export const EVENT_SCHEMAS = {
  message: event('message', { message }),
  update_message: event('update_message', {
    user_id: nullable(int),
    edit_timestamp: int,
    message_id: int,
    message_ids: ids,
    rendering_only: bool,
    stream_id: int.optional(),
    stream_name: str.optional(),
    is_me_message: bool.optional(),
    orig_content: str.optional(),
    orig_rendered_content: str.optional(),
    content: str.optional(),
    rendered_content: str.optional(),
    topic_links: z.array(topicLink).optional(),
    subject: str.optional(),
    new_stream_id: int.optional(),
    propagate_mode: z.enum(['change_all', 'change_later', 'change_one']).optional(),
    orig_subject: str.optional(),
  }),
  delete_message: z.union([
    event('delete_message', { message_type: z.literal('stream'), message_ids: ids, stream_id: int, topic: str }),
    event('delete_message', { message_type: z.literal('private'), message_ids: ids }),
  ]),
  'reaction/add': opEvent('reaction', 'add', reaction),
  'reaction/remove': opEvent('reaction', 'remove', reaction),
  'update_message_flags/add': opEvent('update_message_flags', 'add', flagsFields('add')),
  'update_message_flags/remove': opEvent('update_message_flags', 'remove', {
    ...flagsFields('remove'),
    message_details: z.record(str, unreadDetail).optional(),
  }),
  'typing/start': typingEvent('start'),
  'typing/stop': typingEvent('stop'),
  'typing_edit_message/start': opEvent('typing_edit_message', 'start', { sender_id: int, message_id: int, recipient: typingEditRecipient }),
  'typing_edit_message/stop': opEvent('typing_edit_message', 'stop', { sender_id: int, message_id: int, recipient: typingEditRecipient }),
  user_topic: event('user_topic', {
    stream_id: int,
    topic_name: str,
    last_updated: int,
    visibility_policy: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]),
  }),
  'stream/create': opEvent('stream', 'create', { streams: z.array(channel), for_unarchiving: bool }),
  'stream/delete': opEvent('stream', 'delete', { streams: z.array(z.strictObject({ stream_id: int })), stream_ids: ids, for_archiving: bool }),
  'stream/update': opEvent('stream', 'update', {
    stream_id: int,
    name: str,
    property: str,
    value: z.union([scalar, groupSetting]),
    rendered_description: str.optional(),
    history_public_to_subscribers: bool.optional(),
    is_web_public: bool.optional(),
  }),
  'subscription/add': opEvent('subscription', 'add', { subscriptions: z.array(subscription), inherited_notification_settings: z.record(str, bool) }),
  'subscription/remove': opEvent('subscription', 'remove', { subscriptions: z.array(z.strictObject({ name: str, stream_id: int })) }),
  'subscription/update': opEvent('subscription', 'update', { property: str, stream_id: int, value: z.union([bool, int, str]) }),
  'subscription/peer_add': opEvent('subscription', 'peer_add', { stream_ids: ids, user_ids: ids }),
  'subscription/peer_remove': opEvent('subscription', 'peer_remove', { stream_ids: ids, user_ids: ids }),
  'realm_user/add': z.union([opEvent('realm_user', 'add', { person }), opEvent('realm_user', 'add', { person, inaccessible_user: z.literal(true) })]),
  'realm_user/remove': opEvent('realm_user', 'remove', { person: z.strictObject({ user_id: int, full_name: str }) }),
  'realm_user/update': opEvent('realm_user', 'update', { person: personUpdate }),
  'realm/update': opEvent('realm', 'update', { property: str, value: scalar }),
  'realm/deactivated': opEvent('realm', 'deactivated', { realm_id: int }),
  'realm/update_dict': opEvent('realm', 'update_dict', { property: z.literal('default'), data: z.record(str, z.unknown()) }),
  'user_settings/update': opEvent('user_settings', 'update', { property: str, value: z.unknown(), language_name: str.optional() }),
  'realm_user_settings_defaults/update': opEvent('realm_user_settings_defaults', 'update', { property: str, value: z.union([bool, int, str]) }),
  'user_group/add': z.union([opEvent('user_group', 'add', { group }), opEvent('user_group', 'add', { group, for_reactivation: z.literal(true) })]),
  // `deactivated` (of a renamed group) is for the queues, which drop the rename for clients
  // without include_deactivated_groups and strip the field (actors/event-format.ts).
  'user_group/update': opEvent('user_group', 'update', { group_id: int, data: z.record(str, z.unknown()), deactivated: bool.optional() }),
  'user_group/remove': opEvent('user_group', 'remove', { group_id: int }),
  'user_group/add_members': opEvent('user_group', 'add_members', { group_id: int, user_ids: ids }),
  'user_group/remove_members': opEvent('user_group', 'remove_members', { group_id: int, user_ids: ids }),
  'user_group/add_subgroups': opEvent('user_group', 'add_subgroups', { group_id: int, direct_subgroup_ids: ids }),
  'user_group/remove_subgroups': opEvent('user_group', 'remove_subgroups', { group_id: int, direct_subgroup_ids: ids }),
  'drafts/add': opEvent('drafts', 'add', { drafts: z.array(draft) }),
  'drafts/update': opEvent('drafts', 'update', { draft }),
  'drafts/remove': opEvent('drafts', 'remove', { draft_id: int }),
  'scheduled_messages/add': opEvent('scheduled_messages', 'add', { scheduled_messages: z.array(scheduledMessage) }),
  'scheduled_messages/update': opEvent('scheduled_messages', 'update', { scheduled_message: scheduledMessage }),
  'scheduled_messages/remove': opEvent('scheduled_messages', 'remove', { scheduled_message_id: int }),
  'reminders/add': opEvent('reminders', 'add', { reminders: z.array(reminder) }),
  'reminders/remove': opEvent('reminders', 'remove', { reminder_id: int }),
  'saved_snippets/add': opEvent('saved_snippets', 'add', { saved_snippet: snippet }),
  'saved_snippets/update': opEvent('saved_snippets', 'update', { saved_snippet: snippet }),
  'saved_snippets/remove': opEvent('saved_snippets', 'remove', { saved_snippet_id: int }),
  'realm_emoji/update': opEvent('realm_emoji', 'update', { realm_emoji: z.record(str, realmEmoji) }),
  'realm_emoji/add': opEvent('realm_emoji', 'add', { emoji: realmEmoji, realm_emoji: z.record(str, realmEmoji) }),
  'realm_emoji/update_one': opEvent('realm_emoji', 'update_one', {
    emoji_id: str,
    data: z.strictObject({ deactivated: bool }),
    realm_emoji: z.record(str, realmEmoji),
  }),
  realm_linkifiers: event('realm_linkifiers', { realm_linkifiers: z.array(linkifier) }),
  realm_playgrounds: event('realm_playgrounds', { realm_playgrounds: z.array(playground) }),
  'attachment/add': opEvent('attachment', 'add', { attachment, upload_space_used: int }),
  'attachment/remove': opEvent('attachment', 'remove', { attachment: z.strictObject({ id: int }), upload_space_used: int }),
  'realm_bot/add': opEvent('realm_bot', 'add', { bot }),
  'realm_bot/update': opEvent('realm_bot', 'update', {
    bot: z.union([
      z.strictObject({ user_id: int, api_key: str }),
      z.strictObject({ user_id: int, avatar_url: str }),
      z.strictObject({ user_id: int, is_active: bool }),
      z.strictObject({ user_id: int, full_name: str }),
      z.strictObject({ user_id: int, owner_id: int }),
      z.strictObject({ user_id: int, services: z.array(botService) }),
      z.strictObject({ user_id: int, default_sending_stream: nullable(str) }),
      z.strictObject({ user_id: int, default_events_register_stream: nullable(str) }),
      z.strictObject({ user_id: int, default_all_public_streams: bool }),
    ]),
  }),
  // To a bot's previous owner, who administers it no more (Zulip's do_change_bot_owner).
  'realm_bot/delete': opEvent('realm_bot', 'delete', { bot: z.strictObject({ user_id: int }) }),
  // The list clients from before user_topic read: [channel name, topic, time muted].
  muted_topics: event('muted_topics', { muted_topics: z.array(z.tuple([str, str, int])) }),
  muted_users: event('muted_users', { muted_users: z.array(z.strictObject({ id: int, timestamp: int })) }),
  alert_words: event('alert_words', { alert_words: z.array(str) }),
  user_status: event('user_status', {
    user_id: int,
    away: bool.optional(),
    status_text: str.optional(),
    emoji_name: str.optional(),
    emoji_code: str.optional(),
    reaction_type: str.optional(),
  }),
  'navigation_view/add': opEvent('navigation_view', 'add', { navigation_view: navigationView }),
  'navigation_view/update': opEvent('navigation_view', 'update', { fragment: str, data: z.strictObject({ name: str.optional(), is_pinned: bool.optional() }) }),
  'navigation_view/remove': opEvent('navigation_view', 'remove', { fragment: str }),
  'channel_folder/add': opEvent('channel_folder', 'add', { channel_folder: channelFolder }),
  'channel_folder/update': opEvent('channel_folder', 'update', {
    channel_folder_id: int,
    data: z.strictObject({ name: str.optional(), description: str.optional(), rendered_description: str.optional(), is_archived: bool.optional() }),
  }),
  'channel_folder/reorder': opEvent('channel_folder', 'reorder', { order: ids }),
  'realm_domains/add': opEvent('realm_domains', 'add', { realm_domain: realmDomain }),
  'realm_domains/change': opEvent('realm_domains', 'change', { realm_domain: realmDomain }),
  'realm_domains/remove': opEvent('realm_domains', 'remove', { domain: str }),
  default_streams: event('default_streams', { default_streams: ids }),
  custom_profile_fields: event('custom_profile_fields', { fields: z.array(profileField) }),
  default_stream_groups: event('default_stream_groups', { default_stream_groups: z.array(defaultChannelGroup) }),
  realm_export: event('realm_export', { exports: z.array(realmExport) }),
  realm_export_consent: event('realm_export_consent', { user_id: int, consented: bool }),
  'device/add': opEvent('device', 'add', { device_id: int }),
  'device/remove': opEvent('device', 'remove', { device_id: int }),
  // Only the fields that changed: a new registration, a rotated key or token, the relay's answer.
  'device/update': opEvent('device', 'update', {
    device_id: int,
    push_key_id: int.optional(),
    push_token_id: nullable(str).optional(),
    pending_push_token_id: nullable(str).optional(),
    push_token_last_updated_timestamp: int.optional(),
    push_registration_error_code: nullable(str).optional(),
  }),
  invites_changed: event('invites_changed', {}),
  presence: event('presence', {
    user_id: int,
    email: str,
    server_timestamp: z.number(),
    presence: z.record(str, z.strictObject({ client: str, status: z.enum(['active', 'idle']), timestamp: int, pushable: bool })),
    presences: z.record(str, z.strictObject({ active_timestamp: int, idle_timestamp: int })),
  }),
} satisfies Record<string, z.ZodType>;

/**
 * Any event as actions publish it, inferred from the schemas: a union discriminated by `type` (and
 * `op` where Zulip has one), so publishers must build a valid shape and readers narrow, not cast.
 */
export type ChatEvent = z.infer<(typeof EVENT_SCHEMAS)[keyof typeof EVENT_SCHEMAS]>;
export type ChatEventType = ChatEvent['type'];
export type UnreadDetail = z.infer<typeof unreadDetail>;
/** The events of one type, or of one type and op: `EventOf<'message'>`, `EventOf<'reaction', 'add'>`. */
export type EventOf<T extends ChatEventType, O extends string = never> = [O] extends [never]
  ? Extract<ChatEvent, { type: T }>
  : Extract<ChatEvent, { type: T; op: O }>;
/**
 * An event of one type less its `type` (and the fields `K`), for helpers that add them: each
 * member of the union loses them.
 */
export type EventBody<T extends ChatEventType, K extends string = never> = OmitEach<EventOf<T>, 'type' | K>;
/** Omit over each member of a union (Omit of a union keeps only the keys all members share). */
export type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** Whether the event is of that type (and op): a predicate for filters, where a `switch` cannot narrow. */
export function isEventOf<T extends ChatEventType, O extends string = never>(event: ChatEvent, type: T, op?: O): event is EventOf<T, O> {
  return event.type === type && (op === undefined || ('op' in event && event.op === op));
}
/** The schemas by key, for lookups by a key known only at run time. */
const byKey: Record<string, z.ZodType> = EVENT_SCHEMAS;

/** The schema key of an event: `type/op` when that has a schema, else `type`. */
export function schemaKey(event: Record<string, unknown>): string {
  const withOp = `${String(event.type)}/${String(event.op)}`;
  return withOp in byKey ? withOp : String(event.type);
}

/** Null when the event matches its schema, else what is wrong with it. */
export function checkEvent(event: Record<string, unknown>): string | null {
  const schema = byKey[schemaKey(event)];
  if (!schema) return `no schema for event type ${schemaKey(event)}`;
  const result = schema.safeParse(event);
  return result.success ? null : z.prettifyError(result.error);
}
