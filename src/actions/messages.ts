// Sending messages: a person's message (POST /messages, incoming webhooks) and the server's own
// (Notification Bot, system bots) are prepared (messages-prepare.ts), then written: a plain
// channel message in its channel's batch, in one statement shared with other channels' batches
// (messages-store.ts); anything else in its own transaction. The `message` events leave after the commit.
import type { App } from '../app.ts';
import type { EventEnvelope } from '../bus/bus.ts';
import { LockSpace } from '../cluster/locks.ts';
import { turnKey } from '../cluster/outbox.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { inTransaction } from '../db/transaction.ts';
import { ApiError } from '../errors.ts';
import { channelLinkSyntax } from '../markdown/link-syntax.ts';
import { subscriberIds } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { recipientSettings } from '../queries/recipient-settings.ts';
import { firstMessageNews, messageEnvelope } from './messages-events.ts';
import { recipientFlags } from './messages-mentions.ts';
import { prepareInternalMessage, prepareMessage, type Addressee, type PreparedMessage } from './messages-prepare.ts';
import { claimAttachments, dieIfTold, storeMessages, type DeliveryOptions, type MessageToStore, type Outgoing, type SendOptions } from './messages-store.ts';
import { atomic, onCommit, rawQuery, sendCommitted, sendOnCommit } from './transaction.ts';
import { systemBot } from './users.ts';

/**
 * A channel's batch of plain messages (no uploads to claim), in one statement that is its own
 * transaction (an interactive one costs two more round trips); the events leave in id order.
 */
async function writeChannelBatch(app: App, realm: RealmInfo, outgoing: Outgoing[]): Promise<number[]> {
  const batch = await withFlags(app, realm, outgoing);
  const { messages, xid, firsts, outboxRow } = await storeMessages(app, realm, batch);
  app.metrics.messagesSent.inc({ kind: 'channel' }, messages.length);
  const events: EventEnvelope[] = [];
  for (const [i, message] of messages.entries()) {
    events.push({ ...(await messageEnvelope(app, realm, message, { recipients: batch[i]!.p.recipients, ...batch[i]! })), xid });
    if (firsts.has(message.id)) events.push({ ...(await firstMessageNews(app, realm, message, batch[i]!)), xid });
  }
  sendCommitted(app, events, outboxRow === null ? undefined : { row: outboxRow, turns: [turnKey(LockSpace.CHANNEL, messages[0]!.channelId!)] });
  if (app.config.TEST_DIE_AFTER_PUBLISH) {
    await app.bus.settled();
    dieIfTold(app.config.TEST_DIE_AFTER_PUBLISH, batch);
  }
  return messages.map((m) => m.id);
}

/** The batch's messages with their recipients' flags, from one read of their settings. */
async function withFlags(app: App, realm: RealmInfo, batch: Outgoing[]): Promise<MessageToStore[]> {
  const senders = [...new Set(batch.map((o) => o.p.sender.id))];
  const recipients = [...new Set(batch.flatMap((o) => o.p.recipients))];
  const settings = await recipientSettings(app, senders, recipients);
  return Promise.all(batch.map(async (o) => ({ ...o, ...(await recipientFlags(app, realm, o.p, o.opts, settings)), directGroupId: null })));
}

/**
 * Writes a prepared message; its `message` event goes to every recipient once it committed. A
 * plain channel message outside any transaction joins its channel's group commit.
 */
export async function deliverMessage(app: App, realm: RealmInfo, p: PreparedMessage, opts: DeliveryOptions): Promise<number> {
  if (p.channel === null || p.rendered.uploadPathIds.length > 0 || inTransaction()) {
    return inChannelOrder(app, p.channel?.id ?? null, () => writeMessage(app, realm, p, opts));
  }
  return app.channels.inBatch(p.channel.id, 'messages', { p, opts }, (batch: Outgoing[]) => writeChannelBatch(app, realm, batch));
}

/**
 * deliverMessage for a caller already running in the channel's order (its actor runs one write
 * at a time, so a write there must not queue behind itself), in its own transaction or in the
 * caller's: the conversation and attachment writes need one around them.
 */
export async function writeMessage(app: App, realm: RealmInfo, p: PreparedMessage, opts: DeliveryOptions): Promise<number> {
  const { flags, triggers } = await recipientFlags(app, realm, p, opts, await recipientSettings(app, [p.sender.id], p.recipients));
  return atomic(app, async () => {
    const db = app.prisma;
    const directGroupId = p.memberKey ? await directGroup(app, realm.id, p.memberKey) : null;
    const item = { p, opts, flags, triggers, directGroupId };
    const {
      messages: [message],
      firsts,
    } = await storeMessages(app, realm, [item]);
    onCommit(() => app.metrics.messagesSent.inc({ kind: p.channel === null ? 'direct' : 'channel' }));
    message.hasAttachment = await claimAttachments(db, realm.id, p.sender.id, message.id, p.rendered.uploadPathIds);
    if (message.hasAttachment) await db.message.update({ where: { id: message.id }, data: { hasAttachment: true } });
    sendOnCommit(await messageEnvelope(app, realm, message, { recipients: p.recipients, ...item }));
    if (firsts.has(message.id)) sendOnCommit(await firstMessageNews(app, realm, message, item));
    return message.id;
  });
}

const CREATE_DIRECT_GROUP = `INSERT INTO "DirectMessageGroup" ("realmId", "memberKey") VALUES ($1, $2) ON CONFLICT ("realmId", "memberKey") DO NOTHING RETURNING id`;

/**
 * The conversation's row, made by its first message. First messages sent at once make it once: the
 * insert of each other one waits for the first to commit, then finds it there. (Prisma's upsert
 * reads, then inserts: every racer but one failed on the unique key, a 500, or a scheduled
 * message marked failed.)
 */
async function directGroup(app: App, realmId: number, memberKey: string): Promise<number> {
  const where = { realmId_memberKey: { realmId, memberKey } };
  const found = await app.prisma.directMessageGroup.findUnique({ where, select: { id: true } });
  if (found) return found.id;
  const [made] = await rawQuery<{ id: number }>(app, CREATE_DIRECT_GROUP, realmId, memberKey);
  return made?.id ?? (await app.prisma.directMessageGroup.findUniqueOrThrow({ where, select: { id: true } })).id;
}

/** A channel's writes and their events go one at a time through its actor, in commit order. */
export function inChannelOrder<T>(app: App, channelId: number | null, write: () => Promise<T>): Promise<T> {
  return channelId === null ? write() : app.channels.run(channelId, write);
}

/** POST /messages (and incoming webhooks): a bot's owner hears of its posts to missing or empty channels. */
export async function sendMessage(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string, opts: SendOptions): Promise<{ id: number }> {
  let prepared: PreparedMessage;
  try {
    prepared = await prepareMessage(app, realm, sender, to, content, opts.noPreviews);
  } catch (error) {
    if (to.kind === 'channel' && error instanceof ApiError && error.code === 'STREAM_DOES_NOT_EXIST')
      await tellOwnerOfMissingChannel(app, realm, sender, to.channel);
    throw error;
  }
  if (prepared.channel && sender.isBot && (await subscriberIds(app, prepared.channel.id)).length === 0) {
    const link = channelLinkSyntax(prepared.channel.id, prepared.channel.name);
    await tellBotOwner(
      app,
      realm,
      sender,
      `Your bot ${botIdentity(sender)} tried to send a message to channel ${link}. The channel exists but does not have any subscribers.`,
    );
  }
  return { id: await deliverMessage(app, realm, prepared, opts) };
}

/** How long a bot's owner hears nothing more of its mistakes (Zulip's BOT_OWNER_STREAM_ALERT_WAITPERIOD). */
const OWNER_NOTICE_WAIT_MS = 5 * 60_000;

const botIdentity = (bot: User) => `\`${bot.deliveryEmail}\``;

/**
 * Zulip's send_rate_limited_pm_notification_to_bot_owner: Notification Bot tells a bot's owner
 * what went wrong, at most once in five minutes (claimed in one UPDATE, so concurrent requests
 * and nodes send it once).
 */
async function tellBotOwner(app: App, realm: RealmInfo, bot: User, content: string): Promise<void> {
  if (!bot.isBot || bot.botOwnerId === null) return;
  const claimed = await app.prisma.user.updateMany({
    where: { id: bot.id, OR: [{ lastReminder: null }, { lastReminder: { lt: new Date(Date.now() - OWNER_NOTICE_WAIT_MS) } }] },
    data: { lastReminder: new Date() },
  });
  if (claimed.count === 0) return;
  const owner = await app.prisma.user.findUnique({ where: { id: bot.botOwnerId } });
  if (owner?.isActive) await notifyUser(app, realm, owner, content);
}

/** Zulip's send_pm_if_empty_stream for a channel that does not exist, named or by id. */
function tellOwnerOfMissingChannel(app: App, realm: RealmInfo, bot: User, channel: number | string): Promise<void> {
  const content =
    typeof channel === 'number'
      ? `Your bot ${botIdentity(bot)} tried to send a message to channel ID ${channel}, but there is no channel with that ID.`
      : `Your bot ${botIdentity(bot)} tried to send a message to channel #**${channel.trim()}**, but that channel does not exist. Click [here](#channels/new) to create it.`;
  return tellBotOwner(app, realm, bot, content);
}

/** The Notification Bot, which posts the server's own messages. */
export const notificationBot = (app: App, realm: RealmInfo): Promise<User> => systemBot(app, realm, 'notification');

/** The Email Gateway bot, which posts what arrives at channels' email addresses. */
export const emailGatewayBot = (app: App, realm: RealmInfo): Promise<User> => systemBot(app, realm, 'emailGateway');

/** A system bot's direct message to one user, without the checks a person's message passes (Zulip's internal_send_private_message). */
export async function sendBotDirectMessage(app: App, realm: RealmInfo, bot: User, to: User, content: string): Promise<number> {
  const prepared = await prepareInternalMessage(app, realm, bot, { kind: 'direct', users: [to.id] }, content);
  return deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true });
}

/** A Notification Bot message to a channel topic, bypassing posting permissions as Zulip's system bots do. */
export async function sendNotification(
  app: App,
  realm: RealmInfo,
  channel: Channel,
  topic: string,
  content: string,
  readFor: ReadonlySet<number>,
): Promise<number> {
  const bot = await notificationBot(app, realm);
  const prepared = await prepareInternalMessage(app, realm, bot, { kind: 'channel', channel: channel.id, topic }, content);
  return deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true, readFor });
}

/** A Notification Bot direct message to one user (scheduled-message failures, reminders). */
export async function notifyUser(app: App, realm: RealmInfo, user: User, content: string): Promise<number> {
  return sendBotDirectMessage(app, realm, await notificationBot(app, realm), user, content);
}

/** Zulip's Client.default_read_by_sender: clients that are a person's own Zulip app. */
const PERSONAL_CLIENTS = new Set([
  'zulipandroid',
  'zulipios',
  'zulipdesktop',
  'zulipmobile',
  'zulipelectron',
  'zulipterminal',
  'snipe',
  'website',
  'ios',
  'android',
]);

/**
 * Whether a message a client sends starts out read for its sender when the request does not say:
 * yes from a person's own app, no from an integration using their key (Zulip's heuristic).
 */
export function defaultReadBySender(client: string): boolean {
  const name = client.toLowerCase();
  return PERSONAL_CLIENTS.has(name) || name.includes('desktop app');
}
