// API keys: 32 alphanumeric characters, as Zulip issues them, compared in constant time.
import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const API_KEY_PATTERN = /^[A-Za-z0-9]{32}$/;

export function generateApiKey(): string {
  let key = '';
  for (let i = 0; i < 32; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

/**
 * Whether `given` is the stored key, every character compared whatever the first difference, as
 * timingSafeEqual does; in JavaScript because making two Buffers for it cost about 9,000
 * instructions of every authenticated request (bench/micro/longpoll-steps.ts, step `user`).
 */
export function apiKeysEqual(given: string, stored: string): boolean {
  // Compared with itself when the lengths differ, so the time does not reveal the stored length.
  const other = given.length === stored.length ? given : stored;
  let diff = given.length ^ stored.length;
  for (let i = 0; i < stored.length; i++) diff |= other.charCodeAt(i) ^ stored.charCodeAt(i);
  return diff === 0;
}

/** Splits an `Authorization: Basic ...` header into its two parts; null when it is not Basic. */
export function parseBasicAuth(header: string): { username: string; password: string } | 'malformed' | null {
  const [scheme, token] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(token ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (!token || colon < 0) return 'malformed';
  return { username: decoded.slice(0, colon).trim(), password: decoded.slice(colon + 1).trim() };
}
