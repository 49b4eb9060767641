// Typing notifications, for a message being composed (`typing`) or edited (`typing_edit_message`):
// nothing is stored; the check decides who may send one, and the event goes to the people who
// would receive the message, less those who turned typing notifications off.
import type { App } from '../app.ts';
import { isInGroupSetting } from '../auth/permissions.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, userSettingsSchema } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import { cachedChannel, channelAccess, channelPermission, subscriberIds } from '../queries/channels.ts';
import { accessMessage, memberIds } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail } from '../queries/users.ts';
import { uniqueIds } from './channels.ts';
import { checkContentEditAllowed } from './messages-edit.ts';
import { rawQuery, sendUnstored } from './transaction.ts';
import type { EventOf } from '../events/schemas.ts';

/** Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS: larger channels get no typing events at all. */
const MAX_CHANNEL_SIZE_FOR_TYPING = 100;

export type TypingOp = 'start' | 'stop';

export interface TypingRequest {
  type: 'direct' | 'private' | 'stream' | 'channel';
  op: TypingOp;
  to?: number[];
  streamId?: number;
  topic?: string;
}

const settingsOf = (user: User) => userSettingsSchema.parse(user.settings ?? {});

/** The active users among `users` who did not turn receives_typing_notifications off. */
function typingListeners(users: readonly User[]): number[] {
  return uniqueIds(users.filter((u) => u.isActive && settingsOf(u).receives_typing_notifications).map((u) => u.id));
}

/**
 * A channel's typing audience: its active subscribers (the typist too) who did not turn
 * receives_typing_notifications off, unless the channel is too large. The subscribers come from
 * the channel actors' copy, their settings in one statement that returns only the ids.
 */
async function channelTypingListeners(app: App, channelId: number): Promise<number[]> {
  const subscribers = await subscriberIds(app, channelId);
  if (subscribers.length > MAX_CHANNEL_SIZE_FOR_TYPING) return [];
  const rows = await rawQuery<{ id: number }>(
    app,
    `SELECT id FROM "User" WHERE id = ANY($1::int[]) AND "isActive" AND (settings -> 'receives_typing_notifications') IS DISTINCT FROM 'false'::jsonb ORDER BY id`,
    subscribers,
  );
  return rows.map((r) => r.id);
}

/**
 * The typist's channel, checked as accessibleChannel does (content access, not archived) but on
 * the row the send path keeps (the typing event shows only its id).
 */
async function typingChannel(app: App, realm: RealmInfo, sender: User, channelId: number): Promise<Channel> {
  const channel = await cachedChannel(app, realm, channelId);
  const access = channel && (await channelAccess(app, realm, sender, channel));
  if (!access || !access.content || access.channel.isArchived) throw badRequest('Invalid channel ID');
  if (!isInGroupSetting(sender, channelPermission(realm, channel, 'can_send_message_group'), await app.realms.groups(realm.id), realm)) {
    throw badRequest('You do not have permission to post in this channel.');
  }
  return channel;
}

function checkSendsChannelTyping(user: User): void {
  if (!settingsOf(user).send_stream_typing_notifications) throw badRequest('User has disabled typing notifications for channel messages');
}

function checkSendsDirectTyping(user: User): void {
  if (!settingsOf(user).send_private_typing_notifications) throw badRequest('User has disabled typing notifications for direct messages');
}

/** POST /typing. */
export async function sendTyping(app: App, realm: RealmInfo, sender: User, req: TypingRequest): Promise<void> {
  const base: Pick<EventOf<'typing'>, 'type' | 'op' | 'sender'> = {
    type: 'typing',
    op: req.op,
    sender: { user_id: sender.id, email: apiEmail(app, realm, sender) },
  };
  if (req.type === 'stream' || req.type === 'channel') {
    if (req.streamId === undefined) throw badRequest("Missing 'stream_id' argument");
    if (req.topic === undefined) throw badRequest('Missing topic');
    checkSendsChannelTyping(sender);
    const channel = await typingChannel(app, realm, sender, req.streamId);
    // The empty topic's display names mean the empty topic.
    const topic = req.topic === EMPTY_TOPIC_DISPLAY_NAME || req.topic === '(no topic)' ? '' : req.topic;
    sendUnstored(app, {
      realmId: realm.id,
      userIds: await channelTypingListeners(app, channel.id),
      event: { ...base, message_type: 'stream', stream_id: channel.id, topic },
    });
    return;
  }
  if (req.to === undefined) throw badRequest("Missing 'to' argument");
  if (req.to.length === 0) throw badRequest("Empty 'to' list");
  checkSendsDirectTyping(sender);
  const ids = req.to.includes(sender.id) ? [...new Set(req.to)] : [...new Set(req.to), sender.id];
  const users = await app.prisma.user.findMany({ where: { realmId: realm.id, id: { in: ids } } });
  const missing = ids.find((id) => !users.some((u) => u.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  const ordered = ids.map((id) => users.find((u) => u.id === id)!);
  const recipients = ordered.map((u) => ({ user_id: u.id, email: apiEmail(app, realm, u) }));
  sendUnstored(app, { realmId: realm.id, userIds: typingListeners(ordered), event: { ...base, message_type: 'direct', recipients } });
}

/**
 * POST /messages/{id}/typing: only someone who may edit the message's content now (no grace
 * period) says they are editing it; everyone who received it hears so.
 */
export async function sendEditTyping(app: App, realm: RealmInfo, sender: User, messageId: number, op: TypingOp): Promise<void> {
  const { message } = await accessMessage(app, realm, sender, messageId);
  checkContentEditAllowed(realm, sender, message, 0);
  const base: Pick<EventOf<'typing_edit_message'>, 'type' | 'op' | 'sender_id' | 'message_id'> = {
    type: 'typing_edit_message',
    op,
    sender_id: sender.id,
    message_id: message.id,
  };
  if (message.channelId !== null) {
    checkSendsChannelTyping(sender);
    const recipient: EventOf<'typing_edit_message'>['recipient'] = { type: 'channel', channel_id: message.channelId, topic: message.topic };
    sendUnstored(app, { realmId: realm.id, userIds: await channelTypingListeners(app, message.channelId), event: { ...base, recipient } });
    return;
  }
  checkSendsDirectTyping(sender);
  const members = await app.prisma.user.findMany({ where: { id: { in: memberIds(message.directGroup!.memberKey) } } });
  const listeners = typingListeners(members);
  sendUnstored(app, { realmId: realm.id, userIds: listeners, event: { ...base, recipient: { type: 'direct', user_ids: listeners } } });
}
