// Organization settings with Zulip's defaults. Stored as JSON on the realm row; anything absent
// takes the default here, so adding a setting never needs a migration.
import { z } from 'zod';
import type { SystemGroupName } from './roles.ts';

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
  /** The owners' choices of login methods, by Zulip's name (`Email`, `LDAP`, `OpenID Connect`); a method not named is on. */
  authentication_methods: z.record(z.string(), z.boolean()).default({}),
  emails_restricted_to_domains: z.boolean().default(false),
  enable_spectator_access: z.boolean().default(false),
  enable_read_receipts: z.boolean().default(true),
  default_language: z.string().default('en'),
  message_retention_days: z.number().int().default(-1),
  name_changes_disabled: z.boolean().default(false),
  email_changes_disabled: z.boolean().default(false),
  avatar_changes_disabled: z.boolean().default(false),
  require_unique_names: z.boolean().default(false),
  inline_image_preview: z.boolean().default(true),
  /** The language of code blocks whose fence names none; empty: none. */
  default_code_block_language: z.string().default(''),
  inline_url_embed_preview: z.boolean().default(false),
  send_welcome_emails: z.boolean().default(true),
  message_content_allowed_in_email_notifications: z.boolean().default(true),
  digest_emails_enabled: z.boolean().default(false),
  digest_weekday: z.number().int().min(0).max(6).default(1),
  video_chat_provider: z.number().int().default(1),
  giphy_rating: z.number().int().default(2),
  org_type: z.number().int().default(0),
  want_advertise_in_communities_directory: z.boolean().default(false),
  jitsi_server_url: z.string().nullable().default(null),
  presence_disabled: z.boolean().default(false),
  /** The private channel that receives message reports; -1 when reporting is off. */
  moderation_request_channel_id: z.number().int().default(-1),
  /** Markdown Welcome Bot sends new users after its own message; empty: nothing more. */
  welcome_message_custom_text: z.string().default(''),
});
export type RealmSettings = z.infer<typeof realmSettingsSchema>;

export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

/** Zulip's MAX_REALM_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH, in code points. */
export const MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH = 8000;
export const welcomeTextSchema = z
  .string()
  .refine(
    (text) => [...text].length <= MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH,
    `welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH} characters)`,
  );

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

/** What a group-setting value may be set to (Zulip's GroupPermissionSetting). */
export interface GroupSettingRules {
  /** Whether role:everyone (which includes guests) may hold the permission. */
  allowEveryone: boolean;
  allowNobody?: boolean;
  /** Only a system group, never a user-defined or anonymous group. */
  requireSystemGroup?: boolean;
  allowedSystemGroups?: readonly SystemGroupName[];
}

const NO_EVERYONE: GroupSettingRules = { allowEveryone: false, allowNobody: true };
const ANYONE: GroupSettingRules = { allowEveryone: true, allowNobody: true };

/** Zulip's Realm.REALM_PERMISSION_GROUP_SETTINGS rules for each realm permission. */
export const REALM_PERMISSION_RULES: Record<RealmPermission, GroupSettingRules> = {
  can_access_all_users_group: { allowEveryone: true, allowNobody: false, requireSystemGroup: true, allowedSystemGroups: ['role:everyone', 'role:members'] },
  can_add_custom_emoji_group: NO_EVERYONE,
  can_add_subscribers_group: NO_EVERYONE,
  can_create_bots_group: NO_EVERYONE,
  can_create_groups: NO_EVERYONE,
  can_create_private_channel_group: NO_EVERYONE,
  can_create_public_channel_group: NO_EVERYONE,
  can_create_web_public_channel_group: {
    ...NO_EVERYONE,
    requireSystemGroup: true,
    allowedSystemGroups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  },
  can_create_write_only_bots_group: NO_EVERYONE,
  can_delete_any_message_group: NO_EVERYONE,
  can_delete_own_message_group: ANYONE,
  can_invite_users_group: NO_EVERYONE,
  can_manage_all_groups: { allowEveryone: false, allowNobody: false },
  can_manage_billing_group: { allowEveryone: false, allowNobody: false },
  can_mention_many_users_group: ANYONE,
  can_move_messages_between_channels_group: NO_EVERYONE,
  can_move_messages_between_topics_group: ANYONE,
  can_resolve_topics_group: ANYONE,
  can_set_delete_message_policy_group: NO_EVERYONE,
  can_set_topics_policy_group: ANYONE,
  can_summarize_topics_group: ANYONE,
  create_multiuse_invite_group: NO_EVERYONE,
  direct_message_initiator_group: ANYONE,
  direct_message_permission_group: ANYONE,
};

/** A group-setting value: a group id, or an anonymous set of members and subgroups. */
export const groupSettingValueSchema = z.union([
  z.number().int(),
  z.object({ direct_members: z.array(z.number().int()), direct_subgroups: z.array(z.number().int()) }),
]);
export type GroupSettingValue = z.infer<typeof groupSettingValueSchema>;

/** A requested change of a group setting; `old`, when given, must match the current value. */
export const groupSettingChangeSchema = z.object({ new: groupSettingValueSchema, old: groupSettingValueSchema.optional() });
export type GroupSettingChange = z.infer<typeof groupSettingChangeSchema>;

export { userSettingsSchema, type UserSettings } from './user-settings.ts';
