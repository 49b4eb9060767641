// Sending messages: who may post where (spec 4.1/section 3, Zulip's check_message), rendering,
// one statement for the message and all its UserMessage rows, then the `message` event.
// A channel message costs a constant number of queries whatever its subscriber count.
import type { App } from '../app.ts';
import { hasRealmPermission, isInGroupSetting } from '../auth/permissions.ts';
import type { Channel, Message, Prisma, User } from '../db/generated/client.ts';
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../domain/channel-settings.ts';
import { BOT_TYPES } from '../domain/bots.ts';
import { FLAG_BITS, flagList, IS_PRIVATE } from '../domain/message-flags.ts';
import { Role } from '../domain/roles.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RenderResult } from '../markdown/types.ts';
import { channelLinkSyntax } from '../markdown/link-syntax.ts';
import { cachedChannel, isSubscribed, metadataUserIds, subscriberIds, userHasChannelPermission } from '../queries/channels.ts';
import { conversationUsers, loadMessages, messageObject, topicHasMessages, type FullMessage } from '../queries/messages.ts';
import { normalizeTopicName } from '../queries/narrow.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { alertedUsers, recipientSettings, type RecipientSettings } from '../queries/recipient-settings.ts';
import { findUserByEmail } from '../queries/users.ts';
import { TopicVisibility } from '../queries/user-topics.ts';
import { compiledLinkifiers } from '../queries/linkifiers.ts';
import { linksImage, renderWithRealm } from '../queries/render-context.ts';
import { inTransaction } from '../db/transaction.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { atomic, onCommit, rawQuery, sendCommitted, sendOnCommit } from './transaction.ts';
import { systemBot } from './users.ts';
import { LockSpace } from '../cluster/locks.ts';
import { turnKey } from '../cluster/outbox.ts';
import type { EventEnvelope } from '../bus/bus.ts';

/** Above this many subscribers (or topic participants) a wildcard mention needs permission. */
export const WILDCARD_MENTION_THRESHOLD = 15;
export const RESOLVED_TOPIC_PREFIX = '✔ ';

export type Addressee = { kind: 'channel'; channel: number | string; topic: string | undefined } | { kind: 'direct'; users: number[] | string[] };

export interface SendOptions {
  client: string;
  readBySender: boolean;
  queueId?: string;
  localId?: string;
  /** No inline previews of its links (Zulip's no_previews: integrations whose images need a login). */
  noPreviews?: boolean;
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
    throw badRequest(
      channel.topicsPolicy === 'inherit'
        ? 'Topics are required in this organization.'
        : 'Sending messages to the general chat topic is not allowed in this channel.',
    );
  }
  if (policy === 'empty_topic_only' && topic !== '') throw badRequest('Only the general chat topic is allowed in this channel.');
}

async function botOwner(app: App, user: User): Promise<User | null> {
  return user.isBot && user.botOwnerId ? app.prisma.user.findUnique({ where: { id: user.botOwnerId } }) : null;
}

/** A channel permission held by the user or, for a bot, by its owner (as Zulip allows). */
async function hasChannelPermissionOrOwner(
  app: App,
  realm: RealmInfo,
  user: User,
  channel: Channel,
  setting: 'can_send_message_group' | 'can_create_topic_group',
): Promise<boolean> {
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
  if (!(await topicHasMessages(app, channel.id, topic))) throw badRequest('You do not have permission to create new topics in this channel.');
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
  const channel = await cachedChannel(app, realm, ref);
  if (channel) return channel;
  if (typeof ref === 'number') throw new ApiError(`Channel with ID '${ref}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: ref });
  const name = ref.trim();
  throw new ApiError(`Channel '${name}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream: name });
}

async function resolveRecipients(app: App, realm: RealmInfo, sender: User, refs: number[] | string[]): Promise<User[]> {
  if (refs.length === 0) throw badRequest('Message must have recipients');
  const users: User[] = [];
  for (const ref of refs) {
    const user =
      typeof ref === 'number' ? await app.prisma.user.findFirst({ where: { id: ref, realmId: realm.id } }) : await findUserByEmail(app, realm, ref, sender);
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
      permission === realm.systemGroups['role:nobody']
        ? 'Direct messages are disabled in this organization.'
        : 'This conversation does not include any users who can authorize it.',
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
  const rows = await app.prisma.$queryRaw<{ senderId: number }[]>`
    SELECT DISTINCT "senderId" FROM "Message" WHERE "channelId" = ${channelId} AND upper(topic) = upper(${topic})`;
  return new Set(rows.map((r) => r.senderId));
}

/** Wildcard mentions in a large channel or topic need can_mention_many_users_group. */
export async function checkWildcardMentions(
  app: App,
  realm: RealmInfo,
  sender: User,
  rendered: RenderResult,
  subscriberCount: number,
  participants: Set<number>,
): Promise<void> {
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

async function prepareChannelMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  to: Extract<Addressee, { kind: 'channel' }>,
  rawContent: string,
  checked: boolean,
  noPreviews: boolean,
): Promise<PreparedMessage> {
  if (to.topic === undefined) throw badRequest('Missing topic');
  const topic = normalizeTopic(to.topic);
  const content = normalizeContent(rawContent);
  const channel = await resolveChannel(app, realm, to.channel);
  if (checked) {
    await checkChannelSend(app, realm, sender, channel);
    await checkCanCreateTopic(app, realm, sender, channel, topic);
    checkTopicsPolicy(realm, channel, topic);
  }
  const rendered = await renderWithRealm(app, realm, content, { sender, noPreviews });
  const subscribers = await subscriberIds(app, channel.id);
  const participants = await participantsIfNeeded(app, rendered, channel.id, topic);
  if (checked) await checkWildcardMentions(app, realm, sender, rendered, subscribers.length, participants);
  participants.add(sender.id);
  const recipients = subscribers.includes(sender.id) ? subscribers : [...subscribers, sender.id];
  return { sender, channel, memberKey: null, topic, content, rendered, recipients, topicParticipants: participants };
}

async function prepareDirectMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  to: Extract<Addressee, { kind: 'direct' }>,
  rawContent: string,
  checked: boolean,
  noPreviews: boolean,
): Promise<PreparedMessage> {
  const content = normalizeContent(rawContent);
  const users = await resolveRecipients(app, realm, sender, to.users);
  const ids = [...new Set([sender.id, ...users.map((u) => u.id)])].sort((a, b) => a - b);
  const memberKey = ids.join(',');
  if (checked) await checkDirectMessagePermission(app, realm, sender, users, memberKey);
  const rendered = await renderWithRealm(app, realm, content, { sender, noPreviews });
  return { sender, channel: null, memberKey, topic: '', content, rendered, recipients: ids, topicParticipants: new Set() };
}

export async function prepareMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  to: Addressee,
  content: string,
  checked = true,
  noPreviews = false,
): Promise<PreparedMessage> {
  return to.kind === 'channel'
    ? prepareChannelMessage(app, realm, sender, to, content, checked, noPreviews)
    : prepareDirectMessage(app, realm, sender, to, content, checked, noPreviews);
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

/** One message to write: what was checked and rendered, and each recipient's flag bits. */
interface MessageToStore extends Outgoing, RecipientFlags {
  directGroupId: number | null;
}

/**
 * A user the message may trigger if they are an outgoing-webhook bot (the statement that stores
 * the message keeps only those): mentioned in a channel, or a recipient of a direct message.
 */
interface ServiceTrigger {
  userId: number;
  trigger: 'mention' | 'direct_message';
}

interface RecipientFlags {
  flags: Map<number, number>;
  triggers: ServiceTrigger[];
}

/** Zulip's get_service_bot_events: a bot's message triggers none, which keeps bots from answering each other forever. */
function serviceTriggers(p: PreparedMessage, mentioned: Set<number>): ServiceTrigger[] {
  if (p.sender.isBot) return [];
  if (p.channel) return [...mentioned].map((userId) => ({ userId, trigger: 'mention' }));
  return p.recipients.filter((id) => id !== p.sender.id).map((userId) => ({ userId, trigger: 'direct_message' }));
}

/** A message waiting in its channel's batch: its flags are worked out with the whole batch's. */
interface Outgoing {
  p: PreparedMessage;
  opts: DeliveryOptions;
}

/** Message's columns but the search vector, which only the database reads. */
const MESSAGE_COLUMNS = `id, "realmId", "senderId", "channelId", "directGroupId", topic, content, "renderedContent", "renderingVersion",
    "dateSent", "sendingClient", "lastEditTime", "lastMovedTime", "editHistory", "isMeMessage", "hasAttachment", "hasImage", "hasLink"`;

/**
 * Messages and their UserMessage rows (from array parameters: building a thousand-row createMany
 * costs Prisma more than the database spends inserting it), plus a channel's first message id
 * when it has none, in one statement, however many messages; it returns the rows in id order,
 * each with the id of the transaction that commits them (src/db/commits.ts). The ids are drawn
 * first and numbered in ascending order, so the n-th input gets the n-th smallest id.
 *
 * With a push relay, the same statement queues push work (src/push/worker.ts) for each message
 * that has an unread recipient, other than its sender, with a device that can get notifications:
 * in the message's own transaction, so the work exists exactly when the message does, even if the
 * server stops right after the commit; the worker decides later, off the request, who is told.
 * Likewise a call for each outgoing-webhook bot the message triggers (src/webhooks/outgoing-worker.ts),
 * and every unread direct message, mention, wildcard mention, alert word and message in a topic
 * the recipient follows is noted for a missed-message email (src/mail/missed-messages.ts), which
 * checks settings and reads when due.
 * On a node of a cluster, outside a transaction, each channel's messages get an outbox row
 * (src/cluster/outbox.ts) that names them, so their events go out even if the node dies next.
 */
/** The flags that make a channel message worth a missed-message email. */
const EMAIL_WORTHY = FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.has_alert_word;
const insertMessages = (withPush: boolean, withHooks: boolean, withOutbox: boolean) => `WITH ids AS (
    SELECT nextval(pg_get_serial_sequence('"Message"', 'id')) AS id FROM generate_series(1, $1::int)),
  numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM ids),
  input AS (
    SELECT * FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::bool[], $12::bool[])
      WITH ORDINALITY AS t(realm, sender, channel, direct_group, topic, content, rendered, client, is_me, has_link, has_image, n)),
  m AS (
    INSERT INTO "Message" (id, "realmId", "senderId", "channelId", "directGroupId", topic, content, "renderedContent", "sendingClient", "isMeMessage", "hasLink", "hasImage")
    SELECT numbered.id, realm, sender, channel, direct_group, topic, content, rendered, client, is_me, has_link, has_image FROM input JOIN numbered USING (n)
    RETURNING ${MESSAGE_COLUMNS}),
  um AS (
    INSERT INTO "UserMessage" ("userId", "messageId", flags)
    SELECT u, numbered.id, CASE WHEN input.direct_group IS NULL THEN f ELSE f | ${IS_PRIVATE} END
      FROM unnest($13::int[], $14::int[], $15::int[]) AS t(n, u, f) JOIN numbered USING (n) JOIN input USING (n)),
  followers AS (
    SELECT input.n, ut."userId" FROM input
    JOIN "UserTopic" ut ON ut."channelId" = input.channel AND lower(ut.topic) = lower(input.topic) AND ut.visibility = ${TopicVisibility.FOLLOWED}),
  missed AS (
    INSERT INTO "MissedMessageEmail" ("userId", "messageId", "createdAt")
    SELECT r.u, numbered.id, now() AT TIME ZONE 'UTC' FROM unnest($13::int[], $14::int[], $15::int[]) AS r(n, u, f) JOIN input USING (n) JOIN numbered USING (n)
    WHERE r.u <> input.sender AND (r.f & ${FLAG_BITS.read}) = 0
      AND (input.channel IS NULL OR (r.f & ${EMAIL_WORTHY}) <> 0 OR (r.n, r.u) IN (SELECT n, "userId" FROM followers))
    RETURNING 1),${
      withPush
        ? `
  push AS (
    INSERT INTO "PushOutbox" (kind, "realmId", "messageId", "nextAttemptAt", "createdAt")
    SELECT 'message', realm, numbered.id, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC' FROM input JOIN numbered USING (n)
    WHERE EXISTS (
      SELECT 1 FROM unnest($13::int[], $14::int[], $15::int[]) AS r(n, u, f) JOIN "Device" d ON d."userId" = r.u
      WHERE r.n = input.n AND r.u <> input.sender AND (r.f & ${FLAG_BITS.read}) = 0 AND d."relayDeviceId" IS NOT NULL AND d."pushKey" IS NOT NULL)
    RETURNING "messageId"),`
        : ''
    }${
      withHooks
        ? `
  hooks AS (
    INSERT INTO "OutgoingWebhookCall" ("realmId", "botId", "messageId", trigger, "nextAttemptAt", "createdAt")
    SELECT u."realmId", u.id, numbered.id, t.trigger, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
    FROM unnest(${withOutbox ? '$18::int[], $19::int[], $20::text[]' : '$16::int[], $17::int[], $18::text[]'}) AS t(n, u, trigger) JOIN numbered USING (n)
    JOIN "User" u ON u.id = t.u AND u."botType" = ${BOT_TYPES.OUTGOING_WEBHOOK} AND u."isActive"
    RETURNING "messageId"),`
        : ''
    }${
      withOutbox
        ? `
  outbox AS (
    INSERT INTO "EventOutbox" (node, origin, turns, "messageIds", xid)
    SELECT $16, $17, ARRAY[(${LockSpace.CHANNEL}::bigint << 32) + "channelId"], array_agg(id ORDER BY id), pg_current_xact_id()::text::bigint
    FROM m GROUP BY "channelId" RETURNING id, "messageIds"),`
        : ''
    }
  first AS (
    UPDATE "Channel" c SET "firstMessageId" = f.id
    FROM (SELECT "channelId", min(id) AS id FROM m WHERE "channelId" IS NOT NULL GROUP BY "channelId") f
    WHERE c.id = f."channelId" AND c."firstMessageId" IS NULL RETURNING c."firstMessageId" AS id)
  SELECT m.*, pg_current_xact_id()::text AS xid, m.id IN (SELECT id FROM first) AS "firstInChannel",
    ${withPush ? 'm.id IN (SELECT "messageId" FROM push)' : 'false'} AS "pushQueued",
    ${withHooks ? 'm.id IN (SELECT "messageId" FROM hooks)' : 'false'} AS "hookQueued", EXISTS (SELECT 1 FROM missed) AS "emailNoted",
    ${withOutbox ? '(SELECT outbox.id FROM outbox WHERE m.id = ANY(outbox."messageIds"))::text' : 'NULL'} AS "outboxRow" FROM m ORDER BY m.id`;
/** The statement's forms, by [withPush][withHooks][withOutbox]: the common one does no more than it must. */
const INSERT_MESSAGES = [false, true].map((push) => [false, true].map((hooks) => [false, true].map((outbox) => insertMessages(push, hooks, outbox))));

/** Missed-message email notes were written: the worker looks when the first could fall due (the shortest batching period is a second). */
export function wakeEmailWorker(app: App): void {
  const wake = () => app.notificationEmails.wake(new Date(Date.now() + 1000));
  if (inTransaction()) onCommit(wake);
  else wake();
}

/** Messages of one organization to store together, and what storing them gave. */
interface StoreRequest {
  realm: RealmInfo;
  batch: readonly MessageToStore[];
}

interface Stored {
  messages: FullMessage[];
  xid: number;
  firsts: Set<number>;
  /** The outbox row naming them (a node of a cluster, outside a transaction). */
  outboxRow: number | null;
}

/**
 * Writes the messages of several requests in one statement (insertMessages); returns each
 * request's messages as loaded messages, built from what is known, not read back, and which of
 * them are their channel's first. Each request's messages get ascending ids, in its order.
 */
async function storeAll(app: App, requests: readonly StoreRequest[]): Promise<Stored[]> {
  const items = requests.flatMap(({ realm, batch }) => batch.map((m) => ({ m, realmId: realm.id })));
  const column = <T>(pick: (m: MessageToStore) => T) => items.map(({ m }) => pick(m));
  const recipients = items.flatMap(({ m }, i) => [...m.flags].map(([userId, bits]) => [i + 1, userId, bits] as const));
  const triggers = items.flatMap(({ m }, i) => m.triggers.map((t) => [i + 1, t.userId, t.trigger] as const));
  const outbox = inTransaction() ? null : app.cluster?.outbox;
  const rows = await rawQuery<
    Message & { xid: string; firstInChannel: boolean; pushQueued: boolean; hookQueued: boolean; emailNoted: boolean; outboxRow: string | null }
  >(
    app,
    INSERT_MESSAGES[app.config.PUSH_RELAY_URL ? 1 : 0]![triggers.length > 0 ? 1 : 0]![outbox ? 1 : 0]!,
    items.length,
    items.map((i) => i.realmId),
    column((m) => m.p.sender.id),
    column((m) => m.p.channel?.id ?? null),
    column((m) => m.directGroupId),
    column((m) => m.p.topic),
    column((m) => m.p.content),
    column((m) => m.p.rendered.html),
    column((m) => m.opts.client),
    column((m) => m.p.rendered.isMeMessage),
    column((m) => m.p.rendered.links.length > 0),
    column((m) => linksImage(m.p.rendered.links)),
    recipients.map((r) => r[0]),
    recipients.map((r) => r[1]),
    recipients.map((r) => r[2]),
    ...(outbox ? [outbox.node, outbox.origin] : []),
    ...(triggers.length > 0 ? [triggers.map((t) => t[0]), triggers.map((t) => t[1]), triggers.map((t) => t[2])] : []),
  );
  // The workers start once their work is visible: after this statement, or after the caller's commit.
  for (const [queued, worker] of [
    [rows.some((r) => r.pushQueued), app.pushes],
    [rows.some((r) => r.hookQueued), app.outgoingWebhooks],
  ] as const) {
    if (!queued) continue;
    if (inTransaction()) onCommit(() => worker.wake(new Date()));
    else worker.wake(new Date());
  }
  if (rows[0]!.emailNoted) wakeEmailWorker(app);
  dieIfTold(
    app.config.TEST_DIE_AFTER_COMMIT,
    items.map(({ m }) => m),
  );
  const xid = Number(rows[0]!.xid);
  let next = 0;
  return requests.map(({ batch }) => {
    const own = rows.slice(next, (next += batch.length));
    const messages = own.map(
      ({ xid: _, firstInChannel: __, pushQueued: ___, hookQueued: ____, emailNoted: _____, outboxRow: ______, ...message }, i): FullMessage => {
        const { p, directGroupId } = batch[i]!;
        const c = p.channel;
        return {
          ...message,
          sender: p.sender,
          channel: c && { id: c.id, name: c.name, inviteOnly: c.inviteOnly, historyPublicToSubscribers: c.historyPublicToSubscribers },
          directGroup: directGroupId === null ? null : { id: directGroupId, memberKey: p.memberKey! },
          reactions: [],
        };
      },
    );
    return {
      messages,
      xid,
      firsts: new Set(own.filter((r) => r.firstInChannel).map((r) => r.id)),
      outboxRow: own[0]!.outboxRow === null ? null : Number(own[0]!.outboxRow),
    };
  });
}

/**
 * Statements of channel batches in flight at once. Batches that arrive while they run wait and go
 * together in the next: the fewer in flight, the more messages each commit carries.
 */
const STATEMENTS_IN_FLIGHT = 4;
/** Channel batches one statement takes at most (each holds up to actors/serial.ts MAX_BATCH_ITEMS messages). */
const BATCHES_PER_STATEMENT = 32;

/** Channels' batches ready at once share a statement (src/db/group-commit.ts); one per app. */
const channelWrites = new WeakMap<App, GroupCommit<StoreRequest, Stored>>();

/**
 * Writes the messages: in the open transaction if there is one, else together with other
 * channels' batches ready at the same time.
 */
async function storeMessages(app: App, realm: RealmInfo, batch: readonly MessageToStore[]): Promise<Stored> {
  if (inTransaction()) return (await storeAll(app, [{ realm, batch }]))[0]!;
  let writes = channelWrites.get(app);
  if (!writes) channelWrites.set(app, (writes = new GroupCommit((requests) => storeAll(app, requests), STATEMENTS_IN_FLIGHT, BATCHES_PER_STATEMENT)));
  return writes.write({ realm, batch });
}

/** A channel's first message is news to those who see the channel but get no message event. */
async function firstMessageNews(app: App, realm: RealmInfo, message: FullMessage, { p, flags }: MessageToStore): Promise<Omit<EventEnvelope, 'xid'>> {
  return {
    realmId: realm.id,
    userIds: (await metadataUserIds(app, realm, p.channel!)).filter((id) => !flags.has(id)),
    event: { type: 'stream', op: 'update', stream_id: p.channel!.id, name: p.channel!.name, property: 'first_message_id', value: message.id },
  };
}

/** Each recipient's flags, one shared object per distinct set (the fan-out serializes each once). */
function perUserFlags(flags: Map<number, number>): Record<number, { flags: string[] }> {
  const byBits = new Map<number, { flags: string[] }>();
  const out: Record<number, { flags: string[] }> = {};
  for (const [userId, bits] of flags) {
    let parts = byBits.get(bits);
    if (!parts) byBits.set(bits, (parts = { flags: flagList(bits) }));
    out[userId] = parts;
  }
  return out;
}

/** The `message` event of a stored message, with each recipient's flags. */
async function messageEnvelope(
  app: App,
  realm: RealmInfo,
  message: FullMessage,
  { recipients, flags, opts }: { recipients: readonly number[]; flags: Map<number, number>; opts: Pick<SendOptions, 'queueId' | 'localId'> },
): Promise<Omit<EventEnvelope, 'xid'>> {
  return {
    realmId: realm.id,
    userIds: recipients,
    event: { type: 'message', message: messageObject(app, realm, message, await conversationUsers(app, [message]), await compiledLinkifiers(app, realm.id)) },
    perUser: perUserFlags(flags),
    ...(opts.queueId && opts.localId !== undefined ? { perQueue: { [opts.queueId]: { local_message_id: opts.localId } } } : {}),
    publicChannelMessage: message.channel !== null && !message.channel.inviteOnly,
  };
}

/**
 * The `message` events of stored channel messages, rebuilt for a node that publishes them because
 * the node that wrote them died first (src/cluster/outbox.ts): with each recipient's flags as
 * stored now; the sender's local_message_id was never stored, and a channel's first message goes
 * without its first_message_id news.
 */
export async function storedMessageEvents(app: App, ids: number[], xid: number): Promise<EventEnvelope[]> {
  const flags = new Map<number, Map<number, number>>(ids.map((id) => [id, new Map()]));
  for (const r of await app.prisma.userMessage.findMany({ where: { messageId: { in: ids } }, select: { userId: true, messageId: true, flags: true } }))
    flags.get(r.messageId)!.set(r.userId, r.flags);
  const events: EventEnvelope[] = [];
  for (const message of await loadMessages(app, ids)) {
    const realm = app.realms.byId(message.realmId) ?? (await app.realms.reload(message.realmId))!;
    const recipients = flags.get(message.id)!;
    events.push({ ...(await messageEnvelope(app, realm, message, { recipients: [...recipients.keys()], flags: recipients, opts: {} })), xid });
  }
  return events;
}

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

/** Tests of the outbox: the process is killed at once if one of the messages contains `marker`. */
function dieIfTold(marker: string | undefined, batch: readonly MessageToStore[]): void {
  if (marker && batch.some((m) => m.p.content.includes(marker))) process.kill(process.pid, 'SIGKILL');
}

/** The batch's messages with their recipients' flags, from one read of their settings. */
async function withFlags(app: App, realm: RealmInfo, batch: Outgoing[]): Promise<MessageToStore[]> {
  const senders = [...new Set(batch.map((o) => o.p.sender.id))];
  const recipients = [...new Set(batch.flatMap((o) => o.p.recipients))];
  const settings = await recipientSettings(app, senders, recipients);
  return Promise.all(batch.map(async (o) => ({ ...o, ...(await recipientFlags(app, realm, o.p, o.opts, settings)), directGroupId: null })));
}

/** Each recipient's flag bits for a new message, given the recipients' settings (recipientSettings), and the bots it may trigger. */
async function recipientFlags(app: App, realm: RealmInfo, p: PreparedMessage, opts: DeliveryOptions, settings: RecipientSettings): Promise<RecipientFlags> {
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
    const directGroupId = p.memberKey
      ? (
          await db.directMessageGroup.upsert({
            where: { realmId_memberKey: { realmId: realm.id, memberKey: p.memberKey } },
            create: { realmId: realm.id, memberKey: p.memberKey },
            update: {},
          })
        ).id
      : null;
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

/** A channel's writes and their events go one at a time through its actor, in commit order. */
export function inChannelOrder<T>(app: App, channelId: number | null, write: () => Promise<T>): Promise<T> {
  return channelId === null ? write() : app.channels.run(channelId, write);
}

/** POST /messages (and incoming webhooks): a bot's owner hears of its posts to missing or empty channels. */
export async function sendMessage(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string, opts: SendOptions): Promise<{ id: number }> {
  let prepared: PreparedMessage;
  try {
    prepared = await prepareMessage(app, realm, sender, to, content, true, opts.noPreviews);
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
  const prepared = await prepareMessage(app, realm, bot, { kind: 'direct', users: [to.id] }, content, false);
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
  const prepared = await prepareMessage(app, realm, bot, { kind: 'channel', channel: channel.id, topic }, content, false);
  return deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true, readFor });
}

/** A Notification Bot direct message to one user (scheduled-message failures, reminders). */
export async function notifyUser(app: App, realm: RealmInfo, user: User, content: string): Promise<number> {
  return sendBotDirectMessage(app, realm, await notificationBot(app, realm), user, content);
}

export const silentMention = (user: User) => `@_**${user.fullName}|${user.id}**`;

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
