// Sending messages: who may post where (spec 4.1/section 3, Zulip's check_message), rendering,
// one statement for the message and all its UserMessage rows, then the `message` event.
// A channel message costs a constant number of queries whatever its subscriber count.
import type { App } from '../app.ts';
import { generateApiKey } from '../auth/api-keys.ts';
import { hasRealmPermission, isInGroupSetting } from '../auth/permissions.ts';
import type { Channel, Message, Prisma, User } from '../db/generated/client.ts';
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../domain/channel-settings.ts';
import { FLAG_BITS, flagList } from '../domain/message-flags.ts';
import { Role } from '../domain/roles.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RenderResult } from '../markdown/types.ts';
import { channelByName, isSubscribed, subscriberIds, userHasChannelPermission } from '../queries/channels.ts';
import { conversationUsers, messageObject, type FullMessage } from '../queries/messages.ts';
import { normalizeTopicName } from '../queries/narrow.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { findUserByEmail } from '../queries/users.ts';
import { compiledLinkifiers } from '../queries/linkifiers.ts';
import { linksImage, renderWithRealm } from '../queries/render-context.ts';
import { atomic, sendCommitted, sendOnCommit } from './transaction.ts';

/** Above this many subscribers (or topic participants) a wildcard mention needs permission. */
export const WILDCARD_MENTION_THRESHOLD = 15;
export const RESOLVED_TOPIC_PREFIX = '✔ ';

export type Addressee =
  | { kind: 'channel'; channel: number | string; topic: string | undefined }
  | { kind: 'direct'; users: number[] | string[] };

export interface SendOptions {
  client: string;
  readBySender: boolean;
  queueId?: string;
  localId?: string;
}

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
  [...topic].forEach((ch, i) => {
    if (/[\p{Cc}\p{Cs}\p{Cn}]/u.test(ch)) throw badRequest(`Invalid character in topic, at position ${i + 1}!`);
  });
  return truncate(topic, MAX_TOPIC_LENGTH, '...');
}

export function topicsPolicy(realm: RealmInfo, channel: Channel): string {
  return channel.topicsPolicy === 'inherit' ? realm.settings.topics_policy : channel.topicsPolicy;
}

/** The channel's topics policy applied to a topic a message is sent or moved to. */
export function checkTopicsPolicy(realm: RealmInfo, channel: Channel, topic: string): void {
  const policy = topicsPolicy(realm, channel);
  if (policy === 'disable_empty_topic' && topic === '') {
    throw badRequest(channel.topicsPolicy === 'inherit' ? 'Topics are required in this organization.' : 'Sending messages to the general chat topic is not allowed in this channel.');
  }
  if (policy === 'empty_topic_only' && topic !== '') throw badRequest('Only the general chat topic is allowed in this channel.');
}

async function botOwner(app: App, user: User): Promise<User | null> {
  return user.isBot && user.botOwnerId ? app.prisma.user.findUnique({ where: { id: user.botOwnerId } }) : null;
}

/** A channel permission held by the user or, for a bot, by its owner (as Zulip allows). */
async function hasChannelPermissionOrOwner(app: App, realm: RealmInfo, user: User, channel: Channel, setting: 'can_send_message_group' | 'can_create_topic_group'): Promise<boolean> {
  if (await userHasChannelPermission(app, realm, user, channel, setting)) return true;
  const owner = await botOwner(app, user);
  return owner !== null && (await userHasChannelPermission(app, realm, owner, channel, setting));
}

export async function checkCanPost(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<void> {
  if (!(await hasChannelPermissionOrOwner(app, realm, user, channel, 'can_send_message_group'))) {
    throw badRequest('You do not have permission to post in this channel.');
  }
}

/** can_create_topic_group: only needed when the topic has no message yet. */
export async function checkCanCreateTopic(app: App, realm: RealmInfo, user: User, channel: Channel, topic: string): Promise<void> {
  if (await hasChannelPermissionOrOwner(app, realm, user, channel, 'can_create_topic_group')) return;
  const exists = await app.prisma.message.findFirst({ where: { channelId: channel.id, topic: { equals: topic, mode: 'insensitive' } }, select: { id: true } });
  if (!exists) throw badRequest('You do not have permission to create new topics in this channel.');
}

/** Zulip's access_stream_for_send_message. */
async function checkChannelSend(app: App, realm: RealmInfo, sender: User, channel: Channel): Promise<void> {
  await checkCanPost(app, realm, sender, channel);
  const denied = badRequest(`Not authorized to send to channel '${channel.name}'`);
  if (channel.isArchived) throw denied;
  if (channel.isWebPublic || (!channel.inviteOnly && sender.role !== Role.GUEST)) return;
  if (await isSubscribed(app, sender.id, channel.id)) return;
  const owner = await botOwner(app, sender);
  if (owner && (await isSubscribed(app, owner.id, channel.id))) return;
  throw denied;
}

async function resolveChannel(app: App, realm: RealmInfo, ref: number | string): Promise<Channel> {
  if (typeof ref === 'number') {
    const channel = await app.prisma.channel.findFirst({ where: { id: ref, realmId: realm.id } });
    if (!channel) throw new ApiError(`Channel with ID '${ref}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: ref });
    return channel;
  }
  const name = ref.trim();
  const channel = await channelByName(app, realm, name);
  if (!channel) throw new ApiError(`Channel '${name}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream: name });
  return channel;
}

async function resolveRecipients(app: App, realm: RealmInfo, sender: User, refs: number[] | string[]): Promise<User[]> {
  if (refs.length === 0) throw badRequest('Message must have recipients');
  const users: User[] = [];
  for (const ref of refs) {
    const user =
      typeof ref === 'number'
        ? await app.prisma.user.findFirst({ where: { id: ref, realmId: realm.id } })
        : await findUserByEmail(app, realm, ref, sender);
    if (!user) throw badRequest(typeof ref === 'number' ? `Invalid user ID ${ref}` : `Invalid email '${ref}'`);
    if (!user.isActive) throw badRequest(`'${typeof ref === 'number' ? user.deliveryEmail : ref}' is no longer using Zulip.`);
    users.push(user);
  }
  return users;
}

/** direct_message_permission_group and direct_message_initiator_group (Zulip's check_can_send_direct_message). */
async function checkDirectMessagePermission(app: App, realm: RealmInfo, sender: User, recipients: User[], memberKey: string): Promise<void> {
  if (sender.isBot || recipients.every((u) => u.isBot || u.id === sender.id)) return;
  const groups = await app.realms.groups(realm.id);
  const permission = realm.permissions.direct_message_permission_group;
  if (![sender, ...recipients].some((u) => isInGroupSetting(u, permission, groups, realm))) {
    throw badRequest(
      permission === realm.systemGroups['role:nobody'] ? 'Direct messages are disabled in this organization.' : 'This conversation does not include any users who can authorize it.',
    );
  }
  if (isInGroupSetting(sender, realm.permissions.direct_message_initiator_group, groups, realm)) return;
  const existing = await app.prisma.message.findFirst({ where: { realmId: realm.id, directGroup: { memberKey } }, select: { id: true } });
  if (!existing) throw badRequest('You do not have permission to initiate direct message conversations.');
}

/**
 * Inside an action's transaction: waits for, then holds, the message's row until the commit, so
 * the checks that follow read it as no concurrent change can make it stale (Zulip's
 * access_message(lock_message=True)).
 */
export async function lockMessage(app: App, id: number): Promise<void> {
  await app.prisma.$queryRaw`SELECT id FROM "Message" WHERE id = ${id} FOR UPDATE`;
}

/** Everything needed to store and deliver one message, after every check passed. */
export interface PreparedMessage {
  sender: User;
  channel: Channel | null;
  memberKey: string | null;
  topic: string;
  content: string;
  rendered: RenderResult;
  recipients: readonly number[];
  topicParticipants: Set<number>;
}

async function topicParticipants(app: App, channelId: number, topic: string): Promise<Set<number>> {
  const rows = await app.prisma.message.findMany({ where: { channelId, topic: { equals: topic, mode: 'insensitive' } }, select: { senderId: true }, distinct: ['senderId'] });
  return new Set(rows.map((r) => r.senderId));
}

/** Wildcard mentions in a large channel or topic need can_mention_many_users_group. */
export async function checkWildcardMentions(app: App, realm: RealmInfo, sender: User, rendered: RenderResult, subscriberCount: number, participants: Set<number>): Promise<void> {
  if (!rendered.wildcardMention && !rendered.topicWildcardMention) return;
  if (await hasRealmPermission(app.realms, realm, sender, 'can_mention_many_users_group')) return;
  if (rendered.wildcardMention && subscriberCount > WILDCARD_MENTION_THRESHOLD) {
    throw new ApiError('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED');
  }
  if (rendered.topicWildcardMention && participants.size > WILDCARD_MENTION_THRESHOLD) {
    throw new ApiError('You do not have permission to use topic wildcard mentions in this topic.', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED');
  }
}

/** Participants of a channel topic, read only when the content mentions @**topic**. */
export async function participantsIfNeeded(app: App, rendered: RenderResult, channelId: number | null, topic: string): Promise<Set<number>> {
  return rendered.topicWildcardMention && channelId !== null ? topicParticipants(app, channelId, topic) : new Set();
}

async function prepareChannelMessage(app: App, realm: RealmInfo, sender: User, to: Extract<Addressee, { kind: 'channel' }>, rawContent: string, checked: boolean): Promise<PreparedMessage> {
  if (to.topic === undefined) throw badRequest('Missing topic');
  const topic = normalizeTopic(to.topic);
  const content = normalizeContent(rawContent);
  const channel = await resolveChannel(app, realm, to.channel);
  if (checked) {
    await checkChannelSend(app, realm, sender, channel);
    await checkCanCreateTopic(app, realm, sender, channel, topic);
    checkTopicsPolicy(realm, channel, topic);
  }
  const rendered = await renderWithRealm(app, realm, content);
  const subscribers = await subscriberIds(app, channel.id);
  const participants = await participantsIfNeeded(app, rendered, channel.id, topic);
  if (checked) await checkWildcardMentions(app, realm, sender, rendered, subscribers.length, participants);
  participants.add(sender.id);
  const recipients = subscribers.includes(sender.id) ? subscribers : [...subscribers, sender.id];
  return { sender, channel, memberKey: null, topic, content, rendered, recipients, topicParticipants: participants };
}

async function prepareDirectMessage(app: App, realm: RealmInfo, sender: User, to: Extract<Addressee, { kind: 'direct' }>, rawContent: string, checked: boolean): Promise<PreparedMessage> {
  const content = normalizeContent(rawContent);
  const users = await resolveRecipients(app, realm, sender, to.users);
  const ids = [...new Set([sender.id, ...users.map((u) => u.id)])].sort((a, b) => a - b);
  const memberKey = ids.join(',');
  if (checked) await checkDirectMessagePermission(app, realm, sender, users, memberKey);
  const rendered = await renderWithRealm(app, realm, content);
  return { sender, channel: null, memberKey, topic: '', content, rendered, recipients: ids, topicParticipants: new Set() };
}

export async function prepareMessage(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string, checked = true): Promise<PreparedMessage> {
  return to.kind === 'channel' ? prepareChannelMessage(app, realm, sender, to, content, checked) : prepareDirectMessage(app, realm, sender, to, content, checked);
}

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

/** Claims the sender's uploads the message links to; returns whether any was found. */
export async function claimAttachments(tx: Prisma.TransactionClient, realmId: number, ownerId: number, messageId: number, pathIds: string[]): Promise<boolean> {
  if (pathIds.length === 0) return false;
  const attachments = await tx.attachment.findMany({ where: { realmId, ownerId, pathId: { in: pathIds } }, select: { id: true } });
  if (attachments.length === 0) return false;
  await tx.attachmentMessage.createMany({ data: attachments.map((a) => ({ attachmentId: a.id, messageId })), skipDuplicates: true });
  return true;
}

export interface DeliveryOptions extends SendOptions {
  /** Users for whom the new message starts out read (the sender's own setting aside). */
  readFor?: ReadonlySet<number>;
}

/**
 * The message, its UserMessage rows (one per recipient, from array parameters: building a
 * thousand-row createMany costs Prisma more than the database spends inserting it) and the
 * channel's first message id when it has none, in one statement; it returns the message row and
 * the id of the transaction that commits it (src/db/commits.ts).
 */
const INSERT_MESSAGE = `WITH m AS (
    INSERT INTO "Message" ("realmId", "senderId", "channelId", "directGroupId", topic, content, "renderedContent", "sendingClient", "isMeMessage", "hasLink", "hasImage")
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *),
  um AS (INSERT INTO "UserMessage" ("userId", "messageId", flags) SELECT u, m.id, f FROM m, unnest($12::int[], $13::int[]) AS t(u, f)),
  first AS (UPDATE "Channel" c SET "firstMessageId" = m.id FROM m WHERE c.id = m."channelId" AND c."firstMessageId" IS NULL)
  SELECT m.*, pg_current_xact_id()::text AS xid FROM m`;

/** Writes the message and its rows; returns it as a loaded message, built from what is known, not read back. */
async function storeMessage(app: App, realm: RealmInfo, p: PreparedMessage, opts: DeliveryOptions, flags: Map<number, number>): Promise<{ message: FullMessage; xid: number }> {
  const db = app.prisma;
  const directGroupId = p.memberKey
    ? (await db.directMessageGroup.upsert({ where: { realmId_memberKey: { realmId: realm.id, memberKey: p.memberKey } }, create: { realmId: realm.id, memberKey: p.memberKey }, update: {} })).id
    : null;
  const r = p.rendered;
  const [row] = await db.$queryRawUnsafe<(Message & { xid: string })[]>(
    INSERT_MESSAGE,
    realm.id, p.sender.id, p.channel?.id ?? null, directGroupId, p.topic, p.content, r.html, opts.client, r.isMeMessage, r.links.length > 0, linksImage(r.links),
    [...flags.keys()], [...flags.values()],
  );
  const { xid, ...message } = row!;
  const hasAttachment = await claimAttachments(db, realm.id, p.sender.id, message.id, r.uploadPathIds);
  if (hasAttachment) await db.message.update({ where: { id: message.id }, data: { hasAttachment: true } });
  const c = p.channel;
  const full: FullMessage = {
    ...message,
    hasAttachment,
    sender: p.sender,
    channel: c && { id: c.id, name: c.name, inviteOnly: c.inviteOnly, historyPublicToSubscribers: c.historyPublicToSubscribers },
    directGroup: directGroupId === null ? null : { id: directGroupId, memberKey: p.memberKey! },
    reactions: [],
  };
  return { message: full, xid: Number(xid) };
}

/** Writes a prepared message; its `message` event goes to every recipient once it committed. */
export async function deliverMessage(app: App, realm: RealmInfo, p: PreparedMessage, opts: DeliveryOptions): Promise<number> {
  const mentioned = await mentionedUsers(app, realm, p.rendered);
  const flags = new Map<number, number>();
  for (const userId of p.recipients) {
    const read = (userId === p.sender.id && opts.readBySender) || opts.readFor?.has(userId);
    flags.set(userId, mentionBits(userId, mentioned, p.rendered, p.topicParticipants) | (read ? FLAG_BITS.read : 0));
  }
  const envelope = async (message: FullMessage) => ({
    realmId: realm.id,
    userIds: p.recipients,
    event: { type: 'message', message: messageObject(app, realm, message, await conversationUsers(app, [message]), await compiledLinkifiers(app, realm.id)) },
    perUser: Object.fromEntries([...flags].map(([userId, bits]) => [userId, { flags: flagList(bits) }])),
    ...(opts.queueId && opts.localId !== undefined ? { perQueue: { [opts.queueId]: { local_message_id: opts.localId } } } : {}),
    publicChannelMessage: p.channel !== null && !p.channel.inviteOnly,
  });
  const store = async () => {
    // A lone statement is its own transaction (an interactive one costs two more round trips); the
    // conversation and attachment writes need one around them.
    if (p.memberKey === null && p.rendered.uploadPathIds.length === 0) {
      const { message, xid } = await storeMessage(app, realm, p, opts, flags);
      sendCommitted(app, { ...(await envelope(message)), xid });
      return message.id;
    }
    return atomic(app, async () => {
      const { message } = await storeMessage(app, realm, p, opts, flags);
      sendOnCommit(await envelope(message));
      return message.id;
    });
  };
  return inChannelOrder(app, p.channel?.id ?? null, store);
}

/** A channel's writes and their events go one at a time through its actor, in commit order. */
export function inChannelOrder<T>(app: App, channelId: number | null, write: () => Promise<T>): Promise<T> {
  return channelId === null ? write() : app.channels.run(channelId, write);
}

/** POST /messages. */
export async function sendMessage(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string, opts: SendOptions): Promise<{ id: number }> {
  const prepared = await prepareMessage(app, realm, sender, to, content);
  return { id: await deliverMessage(app, realm, prepared, opts) };
}

/** Zulip's system bots of an organization: their address's local part and name. */
const SYSTEM_BOTS = {
  notification: { local: 'notification-bot', name: 'Notification Bot' },
  welcome: { local: 'welcome-bot', name: 'Welcome Bot' },
} as const;

/** The address a system bot has (or will have) in an organization. */
export const systemBotEmail = (app: App, realm: RealmInfo, bot: keyof typeof SYSTEM_BOTS) => `${SYSTEM_BOTS[bot].local}@${app.realms.emailDomain(realm)}`;

/** One of the organization's system bots, created the first time it has something to say. */
export async function systemBot(app: App, realm: RealmInfo, bot: keyof typeof SYSTEM_BOTS): Promise<User> {
  const email = systemBotEmail(app, realm, bot);
  return app.prisma.user.upsert({
    where: { realmId_deliveryEmail: { realmId: realm.id, deliveryEmail: email } },
    create: { realmId: realm.id, deliveryEmail: email, fullName: SYSTEM_BOTS[bot].name, isBot: true, botType: 1, apiKey: generateApiKey() },
    update: {},
  });
}

export const notificationBot = (app: App, realm: RealmInfo): Promise<User> => systemBot(app, realm, 'notification');

/** A system bot's direct message to one user, without the checks a person's message passes (Zulip's internal_send_private_message). */
export async function sendBotDirectMessage(app: App, realm: RealmInfo, bot: User, to: User, content: string): Promise<number> {
  const prepared = await prepareMessage(app, realm, bot, { kind: 'direct', users: [to.id] }, content, false);
  return deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true });
}

/** A Notification Bot message to a channel topic, bypassing posting permissions as Zulip's system bots do. */
export async function sendNotification(app: App, realm: RealmInfo, channel: Channel, topic: string, content: string, readFor: ReadonlySet<number>): Promise<number> {
  const bot = await notificationBot(app, realm);
  const prepared = await prepareMessage(app, realm, bot, { kind: 'channel', channel: channel.id, topic }, content, false);
  return deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true, readFor });
}

export const silentMention = (user: User) => `@_**${user.fullName}|${user.id}**`;
