// Personal settings: their addresses (`#settings/profile`, `#settings/account`,
// `#settings/preferences`, `#settings/notifications`, `#settings/your-bots`, as Zulip's) and
// the API calls that change them.
import type { Api } from './api.ts';

export type SettingsTab = 'profile' | 'account' | 'preferences' | 'notifications' | 'your-bots';

const TABS: SettingsTab[] = ['profile', 'account', 'preferences', 'notifications', 'your-bots'];

export function parseSettingsHash(hash: string): SettingsTab | null {
  const [head, part] = hash.replace(/^#/, '').split('/');
  if (head !== 'settings') return null;
  return TABS.find((t) => t === part) ?? 'profile';
}

/** PATCH /settings: the name, the password (with the current one), the time zone, Enter-to-send. */
export async function updateSettings(api: Api, changes: Record<string, unknown>): Promise<void> {
  await api.patch('/settings', changes);
}

export async function uploadAvatar(api: Api, file: File): Promise<void> {
  const form = new FormData();
  form.append('file', file);
  await api.upload('/users/me/avatar', form);
}

/** POST /users/me/status: the text others see beside one's name ("" clears it). */
export async function setStatus(api: Api, text: string): Promise<void> {
  await api.post('/users/me/status', { status_text: text });
}

/** The email notification settings the Notifications tab shows, with the server's defaults (as a fresh user has them). */
export const EMAIL_NOTIFICATION_DEFAULTS = {
  enable_offline_email_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_stream_email_notifications: false,
  wildcard_mentions_notify: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  email_notifications_batching_period_seconds: 120,
  message_content_in_email_notifications: true,
  realm_name_in_email_notifications_policy: 1,
  enable_digest_emails: true,
  enable_login_emails: true,
};

export type EmailNotificationSettings = typeof EMAIL_NOTIFICATION_DEFAULTS;

/** The email notification settings out of register's user_settings. */
export function emailNotificationSettings(registered: Record<string, unknown> | undefined): EmailNotificationSettings {
  const settings = { ...EMAIL_NOTIFICATION_DEFAULTS };
  for (const key of Object.keys(settings) as (keyof EmailNotificationSettings)[]) {
    if (registered?.[key] !== undefined) (settings as Record<string, unknown>)[key] = registered[key];
  }
  return settings;
}
