// Whom a new message concerns beyond receiving it: each recipient's flag bits (mentions, wildcard
// mentions, alert words, read from the start) and the outgoing-webhook bots it may trigger.
import type { App } from '../app.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import type { RenderResult } from '../markdown/types.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { alertedUsers, type RecipientSettings } from '../queries/recipient-settings.ts';
import type { PreparedMessage } from './messages-prepare.ts';

/** Members of mentioned groups, subgroups included, count as mentioned. */
export async function mentionedUsers(app: App, realm: RealmInfo, rendered: RenderResult): Promise<Set<number>> {
  const ids = new Set(rendered.mentionedUserIds);
  if (rendered.mentionedGroupIds.size === 0) return ids;
  const groups = await app.realms.groups(realm.id);
  const visit = (groupId: number, seen: Set<number>) => {
    const group = groups.get(groupId);
    if (!group || seen.has(groupId)) return;
    seen.add(groupId);
    for (const id of group.members) ids.add(id);
    for (const sub of group.subgroups) visit(sub, seen);
  };
  for (const id of rendered.mentionedGroupIds) visit(id, new Set());
  return ids;
}

/** The mention bits a message's content gives one recipient. */
export function mentionBits(userId: number, mentioned: Set<number>, rendered: RenderResult, participants: Set<number>): number {
  let bits = 0;
  if (mentioned.has(userId)) bits |= FLAG_BITS.mentioned;
  if (rendered.wildcardMention) bits |= FLAG_BITS.stream_wildcard_mentioned;
  if (rendered.topicWildcardMention && participants.has(userId)) bits |= FLAG_BITS.topic_wildcard_mentioned;
  return bits;
}

/**
 * A user the message may trigger if they are an outgoing-webhook bot (the statement that stores
 * the message keeps only those): mentioned in a channel, or a recipient of a direct message.
 */
export interface ServiceTrigger {
  userId: number;
  trigger: 'mention' | 'direct_message';
}

export interface RecipientFlags {
  flags: Map<number, number>;
  triggers: ServiceTrigger[];
}

/** Zulip's get_service_bot_events: a bot's message triggers none, which keeps bots from answering each other forever. */
function serviceTriggers(p: PreparedMessage, mentioned: Set<number>): ServiceTrigger[] {
  if (p.sender.isBot) return [];
  if (p.channel) return [...mentioned].map((userId) => ({ userId, trigger: 'mention' }));
  return p.recipients.filter((id) => id !== p.sender.id).map((userId) => ({ userId, trigger: 'direct_message' }));
}

/** Each recipient's flag bits for a new message, given the recipients' settings (recipientSettings), and the bots it may trigger. */
export async function recipientFlags(
  app: App,
  realm: RealmInfo,
  p: PreparedMessage,
  opts: { readBySender: boolean; readFor?: ReadonlySet<number> },
  settings: RecipientSettings,
): Promise<RecipientFlags> {
  const mentioned = await mentionedUsers(app, realm, p.rendered);
  const alerted = alertedUsers(settings.alertWords, p.rendered.alertWordText);
  const mutedSender = settings.mutedBy.get(p.sender.id);
  const flags = new Map<number, number>();
  for (const userId of p.recipients) {
    // Messages from a muted user arrive read, as in Zulip.
    const read = (userId === p.sender.id && opts.readBySender) || opts.readFor?.has(userId) || mutedSender?.has(userId);
    const bits = mentionBits(userId, mentioned, p.rendered, p.topicParticipants) | (alerted.has(userId) ? FLAG_BITS.has_alert_word : 0);
    flags.set(userId, bits | (read ? FLAG_BITS.read : 0));
  }
  return { flags, triggers: serviceTriggers(p, mentioned) };
}
