// The parts of the register response that describe the server rather than anyone's data: limits,
// option lists and the rules of every permission setting, with Zulip's names and defaults.
import type { App } from '../app.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/passwords.ts';
import { MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH } from './channel-folders.ts';
import {
  CHANNEL_PERMISSION_DEFAULTS,
  CHANNEL_SETTINGS_WITHOUT_EVERYONE,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_MESSAGE_LENGTH,
  MAX_REMINDER_NOTE_LENGTH,
  MAX_TOPIC_LENGTH,
} from '../domain/channel-settings.ts';
import { type GroupSettingRules, REALM_PERMISSION_DEFAULTS, REALM_PERMISSION_RULES } from '../domain/realm-settings.ts';
import { USER_GROUP_PERMISSION_DEFAULTS, USER_GROUP_PERMISSION_RULES } from '../domain/user-groups.ts';
import { DEFAULT_EXTERNAL_ACCOUNTS } from '../domain/profile-fields.ts';
import { serverThumbnailFormats } from '../domain/thumbnails.ts';
import { SERVER_GENERATION } from '../version.ts';

type State = Record<string, unknown>;

/** Days a deactivated organization's data is kept at least and at most (null: no bound), as Zulip's defaults. */
export const MIN_DEACTIVATED_REALM_DELETION_DAYS = 14;
export const MAX_DEACTIVATED_REALM_DELETION_DAYS: number | null = null;

/** Zulip's default Jitsi server, used when an organization names none. */
export const SERVER_JITSI_URL = 'https://meet.jit.si';

export function serverLimits(app: App): State {
  return {
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: MAX_CHANNEL_FOLDER_NAME_LENGTH,
    max_channel_folder_description_length: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
    max_bulk_new_subscription_messages: 100,
    max_reminder_note_length: MAX_REMINDER_NOTE_LENGTH,
    max_file_upload_size_mib: Math.floor(app.config.MAX_UPLOAD_BYTES / (1024 * 1024)),
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    password_min_length: PASSWORD_MIN_LENGTH,
    password_max_length: PASSWORD_MAX_LENGTH,
    password_min_guesses: 10000,
    event_queue_longpoll_timeout_seconds: 90,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 200,
    server_typing_started_expiry_period_milliseconds: 45000,
    server_typing_stopped_wait_period_milliseconds: 12000,
    server_typing_started_wait_period_milliseconds: 30000,
    server_generation: SERVER_GENERATION,
    server_needs_upgrade: false,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: serverThumbnailFormats(),
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_web_public_streams_enabled: true,
    server_can_summarize_topics: false,
    server_jitsi_server_url: SERVER_JITSI_URL,
    server_emoji_data_url: '',
    server_min_deactivated_realm_deletion_days: MIN_DEACTIVATED_REALM_DELETION_DAYS,
    server_max_deactivated_realm_deletion_days: MAX_DEACTIVATED_REALM_DELETION_DAYS,
    server_report_message_types: REPORT_MESSAGE_TYPES,
    server_supported_permission_settings: SUPPORTED_PERMISSION_SETTINGS,
    settings_send_digest_emails: true,
    development_environment: false,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: 'Available on Zulip Cloud Standard. Upgrade to access.',
    gif_rating_policy_options: GIF_RATING_POLICY_OPTIONS,
    realm_default_external_accounts: DEFAULT_EXTERNAL_ACCOUNTS,
  };
}

const REPORT_MESSAGE_TYPES = [
  { key: 'spam', name: 'Spam' },
  { key: 'harassment', name: 'Harassment' },
  { key: 'inappropriate', name: 'Inappropriate content' },
  { key: 'norms', name: 'Violates community norms' },
  { key: 'other', name: 'Other reason' },
];

const GIF_RATING_POLICY_OPTIONS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
  g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
  pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
  pg13: { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
};

/** One setting's rules in the API's shape (GroupPermissionSetting). */
function permissionSetting(rules: GroupSettingRules, defaultGroup: string, defaultForSystemGroups: string | null = null) {
  return {
    require_system_group: rules.requireSystemGroup ?? false,
    allow_internet_group: false,
    allow_nobody_group: rules.allowNobody ?? true,
    allow_everyone_group: rules.allowEveryone,
    default_group_name: defaultGroup,
    default_for_system_groups: defaultForSystemGroups,
    allowed_system_groups: rules.allowedSystemGroups ?? [],
  };
}

const mapSettings = <K extends string>(defaults: Record<K, string>, setting: (name: K, def: string) => ReturnType<typeof permissionSetting>) =>
  Object.fromEntries((Object.entries(defaults) as [K, string][]).map(([name, def]) => [name, setting(name, def)]));

const SUPPORTED_PERMISSION_SETTINGS = {
  realm: mapSettings(REALM_PERMISSION_DEFAULTS, (name, def) => permissionSetting(REALM_PERMISSION_RULES[name], def)),
  stream: mapSettings(CHANNEL_PERMISSION_DEFAULTS, (name, def) => permissionSetting({ allowEveryone: !CHANNEL_SETTINGS_WITHOUT_EVERYONE.has(name) }, def)),
  group: mapSettings(USER_GROUP_PERMISSION_DEFAULTS, (name, def) =>
    permissionSetting(USER_GROUP_PERMISSION_RULES[name], def, def === 'group_creator' ? 'role:nobody' : def),
  ),
};
