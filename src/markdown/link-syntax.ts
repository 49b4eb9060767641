// The Markdown the server writes into its own messages to point at channels, topics and
// messages (Zulip's topic_link_util): `#**channel>topic@id**`, or a plain Markdown link when a
// name holds a character that would break that syntax.
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/realm-settings.ts';
import { encodeStream, hashUtilEncode } from './links.ts';

const BREAKS_LINK_SYNTAX = /[`>*&[\]]|\$\$/g;
const ESCAPES: Record<string, string> = { '`': '&#96;', '>': '&gt;', '*': '&#42;', '&': '&amp;', $$: '&#36;&#36;', '[': '&#91;', ']': '&#93;' };

const breaksLinkSyntax = (name: string) => new RegExp(BREAKS_LINK_SYNTAX.source).test(name);
const escapeName = (name: string) => name.replace(BREAKS_LINK_SYNTAX, (c) => ESCAPES[c] ?? c);

function fallbackLink(channelId: number, channelName: string, topic?: string, messageId?: number): string {
  let link = `#narrow/channel/${encodeStream(channelId, channelName)}`;
  let text = `#${escapeName(channelName)}`;
  if (topic === undefined) return `[${text}](${link})`;
  link += `/topic/${hashUtilEncode(topic)}`;
  text += ` > ${escapeName(topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : topic)}`;
  if (messageId !== undefined) {
    link += `/near/${messageId}`;
    text += ' @ 💬';
  }
  return `[${text}](${link})`;
}

/** `#**channel**`: a link to a channel. */
export function channelLinkSyntax(channelId: number, channelName: string): string {
  return breaksLinkSyntax(channelName) ? fallbackLink(channelId, channelName) : `#**${channelName}**`;
}

/** `#**channel>topic**`: a link to a topic. */
export function topicLinkSyntax(channelId: number, channelName: string, topic: string): string {
  if (breaksLinkSyntax(channelName) || breaksLinkSyntax(topic)) return fallbackLink(channelId, channelName, topic);
  return `#**${channelName}>${topic}**`;
}

/** `#**channel>topic@id**`: a link to one channel message. */
export function messageLinkSyntax(channelId: number, channelName: string, topic: string, messageId: number): string {
  if (breaksLinkSyntax(channelName) || breaksLinkSyntax(topic)) return fallbackLink(channelId, channelName, topic, messageId);
  return `#**${channelName}>${topic}@${messageId}**`;
}

/** A direct-message conversation's narrow slug: its members' ids, and `-group` for three or more. */
export function directMessageSlug(memberIds: readonly number[]): string {
  const ids = [...memberIds].sort((a, b) => a - b);
  return ids.join(',') + (ids.length >= 3 ? '-group' : '');
}
