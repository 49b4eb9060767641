// The logged-in user's credentials, kept for this browser tab only (sessionStorage): closing the
// tab logs out, and no other tab or later visit can read the API key.
import type { Credentials } from './api.ts';

const KEY = 'chat.session';

export function loadSession(): Credentials | null {
  try {
    const saved = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Partial<Credentials> | null;
    return saved && typeof saved.email === 'string' && typeof saved.apiKey === 'string' ? { email: saved.email, apiKey: saved.apiKey } : null;
  } catch {
    return null;
  }
}

export function saveSession(credentials: Credentials): void {
  sessionStorage.setItem(KEY, JSON.stringify(credentials));
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}
