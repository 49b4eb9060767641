// Personal settings (Zulip's UserBaseSettings) with Zulip's defaults and allowed values. Stored as
// JSON on the user row; anything absent takes the default here, so adding one needs no migration.
import { z } from 'zod';

/** Emoji sets a user may choose, as register's `emojiset_choices` lists them. */
export const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
] as const;

/** The notification sounds Zulip ships (`none` is accepted besides these). */
export const NOTIFICATION_SOUNDS = [
  'ascend',
  'beep_boop',
  'bink',
  'bright',
  'brlip',
  'chime',
  'deep tom',
  'ding',
  'double tap',
  'down',
  'dry bongos',
  'dutdut',
  'fast ascend',
  'flute',
  'friendly',
  'kick roll',
  'loud tintong',
  'metallic snare',
  'pan',
  'practicechat',
  'shaker',
  'simple',
  'stairs',
  'subtle',
  'swish',
  'tintong',
  'up',
  'wood block',
  'zaping',
  'zing',
  'zulip',
] as const;

/** Language codes with translations, and the name `user_settings` events report for each. */
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  ar: 'العربية',
  be: 'Беларуская',
  bg: 'Български',
  bn: 'বাংলা',
  ca: 'Català',
  cs: 'Čeština',
  cy: 'Cymraeg',
  da: 'Dansk',
  de: 'Deutsch',
  el: 'Ελληνικά',
  en: 'English',
  en_GB: 'British English',
  eo: 'Esperanto',
  es: 'Español',
  fa: 'فارسی',
  fi: 'Suomi',
  fr: 'Français',
  gl: 'Galego',
  gu: 'ગુજરાતી',
  hi: 'हिंदी',
  hu: 'Magyar',
  id: 'Bahasa Indonesia',
  it: 'Italiano',
  ja: '日本語',
  ko: '한국어',
  lt: 'Lietuviškai',
  lv: 'Latviešu',
  ml: 'മലയാളം',
  mn: 'Монгол',
  nl: 'Nederlands',
  no: 'Norsk',
  pl: 'Polski',
  pt: 'Português',
  pt_BR: 'Português Brasileiro',
  pt_PT: 'Português Portugal',
  ro: 'Română',
  ru: 'Русский',
  si: 'සිංහල',
  sr: 'Српски',
  sv: 'Svenska',
  ta: 'தமிழ்',
  tl: 'Tagalog',
  tr: 'Türkçe',
  uk: 'Українська',
  vi: 'Tiếng Việt',
  'zh-hans': '简体中文',
  'zh-hant': '繁體中文',
};

// A refinement failing with a message starting "Invalid" is reported as Zulip's "Invalid <name>".
const oneOf = (values: readonly number[]) =>
  z
    .number()
    .int()
    .refine((v) => values.includes(v), 'Invalid');
const flag = (value: boolean) => z.boolean().default(value);

export const userSettingsSchema = z.object({
  // Not settings clients change through PATCH /settings (see INTERNAL_USER_SETTINGS).
  can_create_users: flag(false),
  default_all_public_streams: flag(false),
  // Display settings.
  enter_sends: flag(false),
  left_side_userlist: flag(false),
  default_language: z
    .string()
    .refine((v) => v in LANGUAGE_NAMES, 'Invalid')
    .default('en'),
  web_home_view: z.enum(['recent_topics', 'inbox', 'all_messages']).default('inbox'),
  web_escape_navigates_to_home_view: flag(true),
  fluid_layout_width: flag(false),
  high_contrast_mode: flag(false),
  translate_emoticons: flag(false),
  display_emoji_reaction_users: flag(true),
  twenty_four_hour_time: flag(false),
  starred_message_counts: flag(true),
  web_suggest_update_timezone: flag(true),
  color_scheme: oneOf([1, 2, 3]).default(1),
  web_font_size_px: z.number().int().default(16),
  web_line_height_percent: z.number().int().default(140),
  web_animate_image_previews: z.enum(['always', 'on_hover', 'never']).default('on_hover'),
  demote_inactive_streams: oneOf([1, 2, 3]).default(1),
  web_mark_read_on_scroll_policy: oneOf([1, 2, 3]).default(1),
  web_channel_default_view: oneOf([1, 2]).default(1),
  emojiset: z.enum(EMOJISET_CHOICES.map((e) => e.key) as [string, ...string[]]).default('google'),
  user_list_style: oneOf([1, 2, 3]).default(3),
  web_stream_unreads_count_display_policy: oneOf([1, 2, 3]).default(2),
  web_navigate_to_sent_message: flag(true),
  hide_ai_features: flag(false),
  // Notification settings.
  email_notifications_batching_period_seconds: z.number().int().default(120),
  enable_stream_desktop_notifications: flag(false),
  enable_stream_email_notifications: flag(false),
  enable_stream_push_notifications: flag(false),
  enable_stream_audible_notifications: flag(false),
  notification_sound: z.string().default('zulip'),
  wildcard_mentions_notify: flag(true),
  enable_followed_topic_desktop_notifications: flag(true),
  enable_followed_topic_email_notifications: flag(true),
  enable_followed_topic_push_notifications: flag(true),
  enable_followed_topic_audible_notifications: flag(true),
  enable_followed_topic_wildcard_mentions_notify: flag(true),
  enable_desktop_notifications: flag(true),
  pm_content_in_desktop_notifications: flag(true),
  enable_sounds: flag(true),
  enable_offline_email_notifications: flag(true),
  message_content_in_email_notifications: flag(true),
  enable_offline_push_notifications: flag(true),
  enable_online_push_notifications: flag(true),
  desktop_icon_count_display: oneOf([1, 2, 3, 4]).default(1),
  enable_digest_emails: flag(true),
  enable_login_emails: flag(true),
  enable_marketing_emails: flag(true),
  presence_enabled: flag(true),
  realm_name_in_email_notifications_policy: oneOf([1, 2, 3]).default(1),
  automatically_follow_topics_policy: oneOf([1, 2, 3, 4]).default(3),
  automatically_unmute_topics_in_muted_streams_policy: oneOf([1, 2, 3, 4]).default(2),
  automatically_follow_topics_where_mentioned: flag(true),
  // Privacy settings.
  email_address_visibility: oneOf([1, 2, 3, 4, 5]).default(1),
  enable_drafts_synchronization: flag(true),
  send_stream_typing_notifications: flag(true),
  send_private_typing_notifications: flag(true),
  send_read_receipts: flag(true),
  allow_private_data_export: flag(false),
  receives_typing_notifications: flag(true),
});
export type UserSettings = z.infer<typeof userSettingsSchema>;
export type UserSettingName = keyof UserSettings;

/** Stored with the settings but not personal settings: never in `user_settings`, never changed by PATCH /settings. */
export const INTERNAL_USER_SETTINGS: readonly UserSettingName[] = ['can_create_users', 'default_all_public_streams'];

/** The settings PATCH /settings changes and register's `user_settings` lists. */
export const PERSONAL_SETTINGS = (Object.keys(userSettingsSchema.shape) as UserSettingName[]).filter((n) => !INTERNAL_USER_SETTINGS.includes(n));

/**
 * The personal settings an organization sets defaults of for new users (Zulip's
 * update_realm_user_settings_defaults): all but the language, which new users take from the
 * organization's default_language, and the security mails and data export, each user's own choice.
 */
export const REALM_DEFAULT_SETTINGS = PERSONAL_SETTINGS.filter(
  (n) => !['default_language', 'enable_login_emails', 'enable_marketing_emails', 'allow_private_data_export'].includes(n),
);

/** Personal settings sent as plain strings rather than JSON-encoded (Zulip's `str` parameters). */
export const STRING_USER_SETTINGS: ReadonlySet<UserSettingName> = new Set([
  'default_language',
  'web_home_view',
  'web_animate_image_previews',
  'emojiset',
  'notification_sound',
]);

const CANONICAL_TIME_ZONES = new Set(Intl.supportedValuesOf('timeZone'));
const CANONICAL_LOWER = new Set([...CANONICAL_TIME_ZONES].map((z) => z.toLowerCase()));

/** A tz database name as Zulip accepts it: canonical or an alias (`US/Mountain`), spelled with its case. */
export function isTimeZone(name: string): boolean {
  if (CANONICAL_TIME_ZONES.has(name)) return true;
  if (name === '' || CANONICAL_LOWER.has(name.toLowerCase())) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * What a subscription's `null` notification settings stand for: the user's own defaults. Clients
 * without the notification_settings_null capability get these values instead of null.
 */
export function inheritedNotificationSettings(settings: unknown): Record<string, boolean> {
  const s = userSettingsSchema.parse(settings ?? {});
  return {
    desktop_notifications: s.enable_stream_desktop_notifications,
    email_notifications: s.enable_stream_email_notifications,
    push_notifications: s.enable_stream_push_notifications,
    audible_notifications: s.enable_stream_audible_notifications,
    wildcard_mentions_notify: s.wildcard_mentions_notify,
  };
}

/** A subscription object with its null notification settings replaced by `inherited`. */
export function withInheritedSettings<T extends Record<string, unknown>>(sub: T, inherited: Record<string, boolean>): T {
  const out: Record<string, unknown> = { ...sub };
  for (const [key, value] of Object.entries(inherited)) if (out[key] === null) out[key] = value;
  return out as T;
}
