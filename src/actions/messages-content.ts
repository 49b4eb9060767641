// A message's text and topic as stored: trimmed, refused when the API refuses them, truncated.
import type { User } from '../db/generated/client.ts';
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../domain/channel-settings.ts';
import { unprintablePosition } from '../domain/printable.ts';
import { badRequest } from '../errors.ts';
import { normalizeTopicName } from '../queries/narrow.ts';

/** What marks a topic resolved, at the start of its name. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Zulip's truncate_content, counting code points as Python does. */
export function truncate(text: string, max: number, marker: string): string {
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, max - marker.length).join('') + marker;
}

export function normalizeContent(raw: string): string {
  const body = raw.trimEnd().replace(/^\n+/, '');
  if (body === '') throw badRequest('Message must not be empty');
  if (body.includes('\0')) throw badRequest('Message must not contain null bytes');
  return truncate(body, MAX_MESSAGE_LENGTH, '\n[message truncated]');
}

/** Strips, reads the empty topic's display names as "", rejects control characters, truncates. */
export function normalizeTopic(raw: string): string {
  const topic = normalizeTopicName(raw);
  const position = unprintablePosition(topic);
  if (position !== null) throw badRequest(`Invalid character in topic, at position ${position}!`);
  return truncate(topic, MAX_TOPIC_LENGTH, '...');
}

/** A mention that notifies no one. */
export const silentMention = (user: User) => `@_**${user.fullName}|${user.id}**`;
