// What an E2EE push notification says, before it is sealed (Zulip's mobile notification payloads,
// api_docs/mobile-notifications.md): new channel and direct messages, removals, tests. Content is
// the message as plain text (Zulip's get_mobile_push_content), at most 200 characters.
import type { App } from '../app.ts';
import type { Message, User } from '../db/generated/client.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/realm-settings.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { avatarUrl } from '../queries/users.ts';

export type Payload = Record<string, unknown>;

/** Zulip's truncate_content: 200 code points, then an ellipsis. */
const MAX_CONTENT = 200;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z0-9#]+);/gi, (whole, name: string) => {
    if (/^#x/i.test(name)) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (/^#\d+$/.test(name)) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const stripTags = (html: string) => html.replace(/<[^>]*>/g, '');

/**
 * Rendered HTML as the text a phone shows: emoji as characters, images by their alt text,
 * quotes with "> " before each line, every other tag dropped.
 */
export function mobilePushContent(html: string): string {
  let text = html
    .replace(/<span[^>]*class="emoji emoji-([0-9a-f-]+)"[^>]*>[^<]*<\/span>/g, (_, code: string) =>
      String.fromCodePoint(...code.split('-').map((c) => parseInt(c, 16))),
    )
    .replace(/<img[^>]*\balt="([^"]*)"[^>]*>/g, '$1');
  // Innermost quotes first, so a quote inside a quote gets two markers.
  const innermost = /<blockquote>((?:(?!<blockquote>)[\s\S])*?)<\/blockquote>/;
  for (let m = innermost.exec(text); m; m = innermost.exec(text)) {
    const quoted = stripTags(m[1]!)
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => `> ${line}\n`)
      .join('');
    text = text.slice(0, m.index) + quoted + text.slice(m.index + m[0].length);
  }
  return decodeEntities(stripTags(text));
}

function truncateContent(text: string): string {
  const chars = [...text];
  return chars.length <= MAX_CONTENT ? text : `${chars.slice(0, MAX_CONTENT).join('')}…`;
}

function basePayload(app: App, realm: RealmInfo, userId: number): Payload {
  return { realm_name: realm.name, realm_url: app.realms.url(realm), user_id: userId };
}

function absoluteAvatarUrl(app: App, realm: RealmInfo, sender: User): string {
  const url = avatarUrl(sender);
  return url.startsWith('/') ? `${app.realms.url(realm)}${url}` : url;
}

export interface NotifiedMessage {
  message: Message;
  sender: User;
  channelName: string | null;
  /** Everyone in a direct message conversation, sender and recipient included. */
  directMembers: number[] | null;
}

/** A new message, for one recipient; `group` when they were notified as a member of a mentioned group. */
export function messagePayload(app: App, realm: RealmInfo, userId: number, m: NotifiedMessage, group: { id: number; name: string } | null): Payload {
  const common: Payload = {
    ...basePayload(app, realm, userId),
    type: 'message',
    message_id: m.message.id,
    sender_id: m.sender.id,
    sender_full_name: m.sender.fullName,
    sender_avatar_url: absoluteAvatarUrl(app, realm, m.sender),
    time: Math.floor(m.message.dateSent.getTime() / 1000),
    content: truncateContent(mobilePushContent(m.message.renderedContent)),
  };
  if (m.message.channelId === null) return { ...common, recipient_type: 'direct', recipient_user_ids: m.directMembers };
  return {
    ...common,
    recipient_type: 'channel',
    channel_id: m.message.channelId,
    channel_name: m.channelName,
    topic: m.message.topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : m.message.topic,
    ...(group ? { mentioned_user_group_id: group.id, mentioned_user_group_name: group.name } : {}),
  };
}

/** Zulip withdraws at most the newest 200 notifications at once (APNs payloads are small). */
const MAX_REMOVED_IDS = 200;

export function removalPayload(app: App, realm: RealmInfo, userId: number, messageIds: number[]): Payload {
  return { ...basePayload(app, realm, userId), type: 'remove', message_ids: [...messageIds].sort((a, b) => a - b).slice(-MAX_REMOVED_IDS) };
}

export function testPayload(app: App, realm: RealmInfo, userId: number): Payload {
  return { ...basePayload(app, realm, userId), type: 'test', time: Math.floor(Date.now() / 1000) };
}

/** The unencrypted fields of a legacy test notification (Zulip's get_base_payload). */
export function legacyBasePayload(app: App, realm: RealmInfo, userId: number): Payload {
  const url = app.realms.url(realm);
  return { server: app.config.externalHost, realm_id: realm.id, realm_uri: url, realm_url: url, realm_name: realm.name, user_id: userId };
}
