// Organization settings with Zulip's defaults. Stored as JSON on the realm row; anything absent
// takes the default here, so adding a setting never needs a migration.
import { z } from 'zod';

export const EMAIL_VISIBILITY = { EVERYONE: 1, MEMBERS: 2, ADMINS: 3, NOBODY: 4, MODERATORS: 5 } as const;

const limit = z.number().int().positive().nullable();

export const realmSettingsSchema = z.object({
  allow_message_editing: z.boolean().default(true),
  allow_edit_history: z.boolean().default(true),
  message_content_edit_limit_seconds: limit.default(600),
  message_content_delete_limit_seconds: limit.default(600),
  move_messages_within_stream_limit_seconds: limit.default(604800),
  move_messages_between_streams_limit_seconds: limit.default(604800),
  topics_policy: z.enum(['allow_empty_topic', 'disable_empty_topic']).default('allow_empty_topic'),
  waiting_period_threshold: z.number().int().min(0).default(0),
  invite_required: z.boolean().default(true),
  emails_restricted_to_domains: z.boolean().default(false),
  enable_spectator_access: z.boolean().default(false),
  default_language: z.string().default('en'),
  message_retention_days: z.number().int().default(-1),
  name_changes_disabled: z.boolean().default(false),
  email_changes_disabled: z.boolean().default(false),
  avatar_changes_disabled: z.boolean().default(false),
  require_unique_names: z.boolean().default(false),
  inline_image_preview: z.boolean().default(true),
  inline_url_embed_preview: z.boolean().default(false),
  send_welcome_emails: z.boolean().default(true),
  message_content_allowed_in_email_notifications: z.boolean().default(true),
  digest_emails_enabled: z.boolean().default(false),
  digest_weekday: z.number().int().min(0).max(6).default(1),
  video_chat_provider: z.number().int().default(1),
  giphy_rating: z.number().int().default(2),
  org_type: z.number().int().default(0),
  want_advertise_in_communities_directory: z.boolean().default(false),
  /** Default for the personal email_address_visibility setting of new users. */
  default_email_address_visibility: z.number().int().min(1).max(5).default(EMAIL_VISIBILITY.EVERYONE),
  jitsi_server_url: z.string().nullable().default(null),
  presence_disabled: z.boolean().default(false),
});
export type RealmSettings = z.infer<typeof realmSettingsSchema>;

export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

/** Realm-level permission settings and the system group each defaults to. */
export const REALM_PERMISSION_DEFAULTS = {
  can_access_all_users_group: 'role:everyone',
  can_add_custom_emoji_group: 'role:members',
  can_add_subscribers_group: 'role:members',
  can_create_bots_group: 'role:members',
  can_create_groups: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_public_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_create_write_only_bots_group: 'role:members',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  can_manage_all_groups: 'role:owners',
  can_manage_billing_group: 'role:administrators',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_set_delete_message_policy_group: 'role:moderators',
  can_set_topics_policy_group: 'role:moderators',
  can_summarize_topics_group: 'role:everyone',
  create_multiuse_invite_group: 'role:administrators',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
} as const;
export type RealmPermission = keyof typeof REALM_PERMISSION_DEFAULTS;

/** A group-setting value: a group id, or an anonymous set of members and subgroups. */
export const groupSettingValueSchema = z.union([
  z.number().int(),
  z.object({ direct_members: z.array(z.number().int()), direct_subgroups: z.array(z.number().int()) }),
]);
export type GroupSettingValue = z.infer<typeof groupSettingValueSchema>;

/** Personal settings with Zulip's defaults (a subset grows with the features that read them). */
export const userSettingsSchema = z.object({
  email_address_visibility: z.number().int().min(1).max(5).optional(),
  can_create_users: z.boolean().default(false),
  default_all_public_streams: z.boolean().default(false),
  enable_drafts_synchronization: z.boolean().default(true),
  presence_enabled: z.boolean().default(true),
  send_private_typing_notifications: z.boolean().default(true),
  send_stream_typing_notifications: z.boolean().default(true),
  send_read_receipts: z.boolean().default(true),
  enable_stream_desktop_notifications: z.boolean().default(false),
  enable_stream_email_notifications: z.boolean().default(false),
  enable_stream_push_notifications: z.boolean().default(false),
  enable_stream_audible_notifications: z.boolean().default(false),
  wildcard_mentions_notify: z.boolean().default(true),
  enter_sends: z.boolean().default(false),
  twenty_four_hour_time: z.boolean().default(false),
  default_language: z.string().default('en'),
});
export type UserSettings = z.infer<typeof userSettingsSchema>;
