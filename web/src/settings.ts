// Personal settings: their addresses (`#settings/profile`, `#settings/account`,
// `#settings/preferences`, as Zulip's) and the API calls that change them.
import type { Api } from './api.ts';

export type SettingsTab = 'profile' | 'account' | 'preferences';

const TABS: SettingsTab[] = ['profile', 'account', 'preferences'];

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
