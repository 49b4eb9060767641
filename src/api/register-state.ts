// The response of POST /register: the queue, and the state of each event type in
// fetch_event_types (src/queries/register.ts), every key optional since the client picks the
// sections. Keys are grouped by their type, in the order the sections write them.
import { z } from 'zod';
import { REALM_PERMISSIONS } from '../actions/realm.ts';
import { INTERNAL_USER_SETTINGS, type UserSettingName, userSettingsSchema } from '../domain/user-settings.ts';
import {
  bot,
  channel,
  channelFolder,
  defaultChannelGroup,
  draft,
  group,
  groupSetting,
  linkifier,
  navigationView,
  playground,
  profileField,
  realmDomain,
  realmEmoji,
  reminder,
  scheduledMessage,
  snippet,
} from '../events/schemas.ts';
import { presences } from './presence.ts';
import { apiSubscription } from './subscriptions.ts';
import { userStatus } from './user-status.ts';
import { apiUser } from './users.ts';

const int = z.number().int();
const ids = z.array(int);
const str = z.string();
const bool = z.boolean();
const keys = <T extends z.ZodType>(schema: T, names: readonly string[]) => Object.fromEntries(names.map((name) => [name, schema.optional()]));
const named = z.object({ name: str, id: int });

const realm = {
  ...keys(str, [
    'realm_name',
    'realm_description',
    'realm_url',
    'realm_uri',
    'realm_uuid',
    'realm_bot_domain',
    'realm_icon_url',
    'realm_icon_source',
    'realm_logo_url',
    'realm_logo_source',
    'realm_night_logo_url',
    'realm_night_logo_source',
    'realm_message_edit_history_visibility_policy',
    'realm_topics_policy',
    'realm_default_language',
    'realm_welcome_message_custom_text',
    'realm_default_avatar_source',
    'jitsi_server_url',
    'realm_empty_topic_display_name',
    'realm_default_code_block_language',
  ]),
  ...keys(int, [
    'realm_date_created',
    'realm_org_type',
    'realm_plan_type',
    'realm_waiting_period_threshold',
    'realm_message_retention_days',
    'realm_digest_weekday',
    'realm_video_chat_provider',
    'realm_gif_rating_policy',
    'realm_media_preview_size',
    'realm_workplace_users_group',
    'realm_new_stream_announcements_stream_id',
    'realm_signup_announcements_stream_id',
    'realm_zulip_update_announcements_stream_id',
    'realm_moderation_request_channel_id',
    'realm_create_public_stream_policy',
    'realm_create_private_stream_policy',
    'realm_create_web_public_stream_policy',
    'realm_wildcard_mention_policy',
  ]),
  ...keys(int.nullable(), [
    'realm_message_content_edit_limit_seconds',
    'realm_message_content_delete_limit_seconds',
    'realm_move_messages_within_stream_limit_seconds',
    'realm_move_messages_between_streams_limit_seconds',
    'realm_upload_quota_mib',
    'realm_push_notifications_enabled_end_timestamp',
  ]),
  realm_jitsi_server_url: str.nullable().optional(),
  ...keys(bool, [
    'realm_invite_required',
    'realm_emails_restricted_to_domains',
    'realm_disallow_disposable_email_addresses',
    'realm_allow_message_editing',
    'realm_allow_edit_history',
    'realm_mandatory_topics',
    'realm_enable_spectator_access',
    'realm_presence_disabled',
    'realm_inline_image_preview',
    'realm_inline_url_embed_preview',
    'realm_send_welcome_emails',
    'realm_message_content_allowed_in_email_notifications',
    'realm_digest_emails_enabled',
    'realm_want_advertise_in_communities_directory',
    'realm_name_changes_disabled',
    'realm_email_changes_disabled',
    'realm_avatar_changes_disabled',
    'realm_require_unique_names',
    'realm_push_notifications_enabled',
    'realm_require_e2ee_push_notifications',
    'realm_owner_full_content_access',
    'realm_send_channel_events_messages',
    'realm_enable_read_receipts',
    'realm_enable_guest_user_indicator',
    'realm_enable_guest_user_dm_warning',
    'realm_email_auth_enabled',
    'realm_password_auth_enabled',
  ]),
  realm_authentication_methods: z.record(str, z.object({ enabled: bool, available: bool })).optional(),
  realm_available_video_chat_providers: z.record(str, named).optional(),
  ...keys(
    groupSetting,
    REALM_PERMISSIONS.map((setting) => `realm_${setting}`),
  ),
};

const permissionSetting = z.object({
  require_system_group: bool,
  allow_internet_group: bool,
  allow_nobody_group: bool,
  allow_everyone_group: bool,
  default_group_name: str,
  default_for_system_groups: str.nullable(),
  allowed_system_groups: z.array(str),
});

const serverLimits = {
  ...keys(int, [
    'max_message_length',
    'max_topic_length',
    'max_stream_name_length',
    'max_stream_description_length',
    'max_channel_folder_name_length',
    'max_channel_folder_description_length',
    'max_bulk_new_subscription_messages',
    'max_reminder_note_length',
    'max_file_upload_size_mib',
    'max_avatar_file_size_mib',
    'max_icon_file_size_mib',
    'max_logo_file_size_mib',
    'password_min_length',
    'password_max_length',
    'password_min_guesses',
    'event_queue_longpoll_timeout_seconds',
    'server_presence_ping_interval_seconds',
    'server_presence_offline_threshold_seconds',
    'server_typing_started_expiry_period_milliseconds',
    'server_typing_stopped_wait_period_milliseconds',
    'server_typing_started_wait_period_milliseconds',
    'server_generation',
    'server_min_deactivated_realm_deletion_days',
  ]),
  server_max_deactivated_realm_deletion_days: int.nullable().optional(),
  ...keys(bool, [
    'server_needs_upgrade',
    'server_inline_image_preview',
    'server_inline_url_embed_preview',
    'server_avatar_changes_disabled',
    'server_name_changes_disabled',
    'server_web_public_streams_enabled',
    'server_can_summarize_topics',
    'settings_send_digest_emails',
    'development_environment',
    'zulip_plan_is_not_limited',
  ]),
  ...keys(str, ['server_jitsi_server_url', 'server_emoji_data_url', 'upgrade_text_for_wide_organization_logo']),
  server_thumbnail_formats: z.array(z.unknown()).optional(),
  server_report_message_types: z.array(z.object({ key: str, name: str })).optional(),
  server_supported_permission_settings: z
    .object({ realm: z.record(str, permissionSetting), stream: z.record(str, permissionSetting), group: z.record(str, permissionSetting) })
    .optional(),
  gif_rating_policy_options: z.record(str, named).optional(),
  realm_default_external_accounts: z.record(str, z.object({ text: str, url_pattern: str, name: str, hint: str })).optional(),
};

/** Sections of features not built here: always empty, in Zulip's shapes. */
const emptySections = {
  onboarding_steps: z.array(z.unknown()).optional(),
  navigation_tour_video_url: str.nullable().optional(),
  realm_filters: z.array(z.unknown()).optional(),
  realm_embedded_bots: z.array(z.unknown()).optional(),
  realm_incoming_webhook_bots: z.array(z.unknown()).optional(),
  realm_billing: z.object({ has_pending_sponsorship_request: bool }).optional(),
  stop_words: z.array(str).optional(),
  has_zoom_token: bool.optional(),
  giphy_api_key: str.optional(),
  tenor_api_key: str.optional(),
};

/** Personal settings as register lists them (realm_user_settings_defaults, user_settings). */
const internal = Object.fromEntries(INTERNAL_USER_SETTINGS.map((name) => [name, true])) as Partial<Record<UserSettingName, true>>;
const settingsObject = userSettingsSchema.omit(internal).extend({
  available_notification_sounds: z.array(str),
  emojiset_choices: z.array(z.object({ key: str, text: str })),
});

/** In register's user lists, where a user is says whether they are active. */
const listedUser = apiUser.omit({ is_active: true });

const people = {
  realm_users: z.array(listedUser).optional(),
  realm_non_active_users: z.array(listedUser).optional(),
  cross_realm_bots: z.array(apiUser).optional(),
  user_id: int.optional(),
  ...keys(str, ['email', 'delivery_email', 'full_name', 'avatar_source', 'avatar_url', 'avatar_url_medium']),
  ...keys(bool, [
    'is_owner',
    'is_admin',
    'is_guest',
    'is_moderator',
    'can_create_public_streams',
    'can_create_private_streams',
    'can_create_web_public_streams',
    'can_create_streams',
    'can_invite_others_to_realm',
  ]),
};

/** A logged-in device (POST /register_client_device) with the public parts of its push registration. */
const device = z
  .strictObject({
    push_key_id: int.nullable(),
    push_token_id: str.nullable(),
    pending_push_token_id: str.nullable(),
    push_token_last_updated_timestamp: int.nullable(),
    push_registration_error_code: str.nullable(),
  })
  .meta({ id: 'Device' });

const registeredSubscription = apiSubscription.extend({
  partial_subscribers: ids.optional().describe('With include_subscribers=partial, for big channels: bots and recently active users'),
});

const unreads = z.object({
  count: int,
  pms: z.array(z.object({ other_user_id: int, sender_id: int, unread_message_ids: ids })),
  streams: z.array(z.object({ stream_id: int, topic: str, unread_message_ids: ids })),
  huddles: z.array(z.object({ user_ids_string: str, unread_message_ids: ids })),
  mentions: ids,
  old_unreads_missing: bool,
});

const personal = {
  subscriptions: z.array(registeredSubscription).optional(),
  unsubscribed: z.array(registeredSubscription).optional(),
  never_subscribed: z.array(channel.extend({ subscribers: ids.optional() })).optional(),
  max_message_id: int.optional(),
  unread_msgs: unreads.optional(),
  starred_messages: ids.optional(),
  recent_private_conversations: z.array(z.object({ max_message_id: int, user_ids: ids })).optional(),
  presences: presences.optional(),
  server_timestamp: z.number().optional(),
  presence_last_update_id: int.optional(),
  user_settings: settingsObject.extend({ timezone: str }).optional(),
  streams: z.array(channel).optional(),
  drafts: z.array(draft).optional(),
  saved_snippets: z.array(snippet).optional(),
  navigation_views: z.array(navigationView).optional(),
  scheduled_messages: z.array(scheduledMessage).optional(),
  reminders: z.array(reminder).optional(),
  channel_folders: z.array(channelFolder).optional(),
  user_status: z.record(str, userStatus).optional().describe('By user id'),
  custom_profile_fields: z.array(profileField).optional(),
  custom_profile_field_types: z.record(str, named).optional(),
  user_topics: z.array(z.object({ stream_id: int, topic_name: str, last_updated: int, visibility_policy: int })).optional(),
  muted_topics: z
    .array(z.tuple([str, str, int]))
    .optional()
    .describe('[channel name, topic, time muted]'),
  realm_bots: z.array(bot).optional(),
  muted_users: z.array(z.strictObject({ id: int, timestamp: int })).optional(),
  alert_words: z.array(str).optional(),
  devices: z.record(str, device).optional().describe('By device id'),
};

export const registerResponse = z
  .object({
    queue_id: str.nullable().describe('Null for spectators, who get no queue'),
    last_event_id: int,
    zulip_version: str,
    zulip_feature_level: int,
    zulip_merge_base: str,
    idle_queue_timeout_secs: int,
    ...realm,
    ...serverLimits,
    ...emptySections,
    realm_user_groups: z.array(group).optional(),
    realm_user_settings_defaults: settingsObject.optional(),
    realm_linkifiers: z.array(linkifier).optional(),
    realm_emoji: z.record(str, realmEmoji).optional(),
    realm_domains: z.array(realmDomain).optional(),
    realm_default_streams: ids.optional(),
    realm_default_stream_groups: z.array(defaultChannelGroup).optional(),
    realm_playgrounds: z.array(playground).optional(),
    ...people,
    ...personal,
  })
  .describe('The state of each event type asked for in fetch_event_types');
