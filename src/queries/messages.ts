// Messages as the API shows them, who may read them, and the range reads of GET /messages.
import type { App } from '../app.ts';
import { topicLinks, type CompiledLinkifiers } from '../markdown/index.ts';
import { compiledLinkifiers } from './linkifiers.ts';
import { Prisma, type Channel, type User } from '../db/generated/client.ts';
import { FLAG_BITS, HISTORICAL_FLAGS, MAX_UNREAD_MESSAGES, flagList } from '../domain/message-flags.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/realm-settings.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { inTransaction, rawQuery, rawQueryPlannedPerCall } from '../db/transaction.ts';
import { channelAccess, subscriberIds } from './channels.ts';
import { compileNarrow, narrowSource, type CompiledNarrow, type NarrowSource, type NarrowTerm } from './narrow.ts';
import { searchFields, searchOperandsOf } from './search-highlight.ts';
import type { RealmInfo } from './realms.ts';
import { apiEmail, avatarUrl, canSeeEmail } from './users.ts';
import type { EventOf } from '../events/schemas.ts';

export const messageInclude = {
  sender: true,
  channel: { select: { id: true, name: true, inviteOnly: true, historyPublicToSubscribers: true } },
  directGroup: { select: { id: true, memberKey: true } },
  reactions: { orderBy: { id: 'asc' } },
} satisfies Prisma.MessageInclude;
export type FullMessage = Prisma.MessageGetPayload<{ include: typeof messageInclude }>;

export const invalidMessage = () => badRequest('Invalid message(s)');

export const timestamp = (d: Date) => Math.floor(d.getTime() / 1000);

/** Zulip has a Recipient row per channel and per conversation; ours are derived, odd for DMs. */
export function recipientId(m: { channelId: number | null; directGroupId: number | null }): number {
  return m.channelId !== null ? m.channelId * 2 : m.directGroupId! * 2 + 1;
}

export const memberIds = (memberKey: string) => memberKey.split(',').map(Number);

export function displayTopic(topic: string, allowEmptyTopicName: boolean): string {
  return topic === '' && !allowEmptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : topic;
}

interface EditHistoryEntry {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}
export const editHistoryOf = (m: { editHistory: unknown }) => (m.editHistory ?? []) as EditHistoryEntry[];

/** What showing a message asks of a user: its sender, or a member of its direct conversation. */
export type MessageUser = Pick<User, 'id' | 'realmId' | 'fullName' | 'deliveryEmail' | 'isBot' | 'settings' | 'avatarSource' | 'avatarKey' | 'avatarVersion'>;

/** What showing a message asks of it: FullMessage, or the fewer columns loadPage reads. */
export type ShownMessage = Pick<
  FullMessage,
  | 'id'
  | 'senderId'
  | 'channelId'
  | 'directGroupId'
  | 'topic'
  | 'content'
  | 'renderedContent'
  | 'dateSent'
  | 'sendingClient'
  | 'isMeMessage'
  | 'lastEditTime'
  | 'lastMovedTime'
  | 'editHistory'
  | 'channel'
  | 'directGroup'
> & { sender: MessageUser; reactions: Pick<FullMessage['reactions'][number], 'id' | 'emojiName' | 'emojiCode' | 'reactionType' | 'userId'>[] };

/**
 * The viewer-independent message object, with the rendered `content`, the Markdown source as
 * `raw_content`, and the full avatar URL; `presentMessage` trims it for one viewer and request.
 */
export function messageObject(
  app: App,
  realm: RealmInfo,
  m: ShownMessage,
  dmUsers: Map<number, MessageUser>,
  linkifiers: CompiledLinkifiers,
): EventOf<'message'>['message'] {
  const recipient = m.channel
    ? { type: 'stream' as const, display_recipient: m.channel.name, stream_id: m.channel.id }
    : {
        type: 'private' as const,
        display_recipient: memberIds(m.directGroup!.memberKey)
          .map((id) => dmUsers.get(id)!)
          .map((u) => ({ id: u.id, email: apiEmail(app, realm, u), full_name: u.fullName, is_mirror_dummy: false })),
      };
  const base: EventOf<'message'>['message'] = {
    id: m.id,
    sender_id: m.senderId,
    content: m.renderedContent,
    raw_content: m.content,
    recipient_id: recipientId(m),
    timestamp: timestamp(m.dateSent),
    client: m.sendingClient,
    subject: m.topic,
    topic_links: m.channel ? topicLinks(m.topic, linkifiers) : [],
    is_me_message: m.isMeMessage,
    reactions: m.reactions.map((r) => ({ emoji_name: r.emojiName, emoji_code: r.emojiCode, reaction_type: r.reactionType, user_id: r.userId })),
    submessages: [],
    sender_full_name: m.sender.fullName,
    sender_email: apiEmail(app, realm, m.sender),
    sender_realm_str: realm.subdomain,
    avatar_url: avatarUrl(m.sender),
    content_type: 'text/html',
    ...recipient,
  };
  if (m.lastEditTime) base.last_edit_timestamp = timestamp(m.lastEditTime);
  if (m.lastMovedTime) base.last_moved_timestamp = timestamp(m.lastMovedTime);
  if (m.editHistory && realm.settings.allow_edit_history) base.edit_history = m.editHistory;
  return base;
}

export interface PresentOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allowEmptyTopicName: boolean;
}

/** One viewer's copy of a message object: content format, avatar, topic name and flags. */
export function presentMessage(
  obj: Record<string, unknown>,
  m: ShownMessage,
  viewer: User,
  realm: RealmInfo,
  flags: number,
  opts: PresentOptions,
): Record<string, unknown> {
  const { raw_content: raw, ...rest } = obj;
  const out: Record<string, unknown> = { ...rest, flags: flagList(flags) };
  if (!opts.applyMarkdown) Object.assign(out, { content: raw, content_type: 'text/x-markdown' });
  if (opts.clientGravatar && m.sender.avatarSource === 'G' && canSeeEmail(m.sender, viewer)) out.avatar_url = null;
  if (m.channel) out.subject = displayTopic(m.topic, opts.allowEmptyTopicName);
  if (out.edit_history && !opts.allowEmptyTopicName) {
    out.edit_history = editHistoryOf(m).map((e) => ({
      ...e,
      ...(e.prev_topic !== undefined ? { prev_topic: displayTopic(e.prev_topic, false) } : {}),
      ...(e.topic !== undefined ? { topic: displayTopic(e.topic, false) } : {}),
    }));
  }
  return out;
}

/** What JSON aggregates give of a timestamp column (UTC, as Prisma reads it): text without a zone. */
type Stamped<T, K extends keyof T> = Omit<T, K> & { [P in K]: null extends T[P] ? string | null : string };
const utcFromJson = (text: string): Date => new Date(`${text}Z`);
const utcOrNull = (text: string | null): Date | null => (text === null ? null : utcFromJson(text));

type MessageJson = Stamped<Omit<FullMessage, 'sender' | 'channel' | 'directGroup' | 'reactions'>, 'dateSent' | 'lastEditTime' | 'lastMovedTime'>;
type LoadedJson = { message: MessageJson } & Pick<FullMessage, 'channel' | 'directGroup' | 'reactions'>;
type UserJson = Stamped<User, 'dateJoined' | 'lastReminder'>;
const userFromJson = (u: UserJson): User => ({ ...u, dateJoined: utcFromJson(u.dateJoined), lastReminder: utcOrNull(u.lastReminder) });

export const USERS_BY_ID = `SELECT coalesce(json_agg(u), '[]') AS users FROM "User" u WHERE u.id = ANY($1::int[])`;

/** The users of the direct-message conversations among `messages`, in one statement. */
export async function conversationUsers(app: App, messages: readonly ShownMessage[]): Promise<Map<number, User>> {
  const ids = new Set(messages.flatMap((m) => (m.directGroup ? memberIds(m.directGroup.memberKey) : [])));
  if (ids.size === 0) return new Map();
  const [read] = await rawQuery<{ users: UserJson[] }>(app, USERS_BY_ID, [...ids]);
  return new Map(read!.users.map((u) => [u.id, userFromJson(u)]));
}

/** Message's columns as the client knows them: the search vector (Unsupported to Prisma) left out. */
const MESSAGE_COLUMNS = Object.values(Prisma.MessageScalarFieldEnum)
  .map((column) => `"${column}"`)
  .join(', ');

/**
 * The messages with what messageInclude adds (channel, conversation, reactions in id order) and
 * their senders, as JSON in one statement: Prisma's include takes one statement per relation.
 * `json`, not `jsonb`: built as text, without jsonb's binary form, 2.8 -> 1.0 ms of PostgreSQL
 * CPU for a page of 50 (the search vector, converted to text and dropped, was part of it).
 */
export const LOAD_MESSAGES = `WITH m AS (SELECT ${MESSAGE_COLUMNS} FROM "Message" WHERE id = ANY($1::int[]))
SELECT
  (SELECT coalesce(json_agg(json_build_object('message', m,
      'channel', (SELECT json_build_object('id', c.id, 'name', c.name, 'inviteOnly', c."inviteOnly", 'historyPublicToSubscribers', c."historyPublicToSubscribers")
        FROM "Channel" c WHERE c.id = m."channelId"),
      'directGroup', (SELECT json_build_object('id', g.id, 'memberKey', g."memberKey") FROM "DirectMessageGroup" g WHERE g.id = m."directGroupId"),
      'reactions', (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM "Reaction" r WHERE r."messageId" = m.id))
    ORDER BY m.id), '[]') FROM m) AS messages,
  (SELECT coalesce(json_agg(u), '[]') FROM "User" u WHERE u.id IN (SELECT "senderId" FROM m)) AS senders`;

export async function loadMessages(app: App, ids: readonly number[]): Promise<FullMessage[]> {
  if (ids.length === 0) return [];
  const [read] = await rawQuery<{ messages: LoadedJson[]; senders: UserJson[] }>(app, LOAD_MESSAGES, [...ids]);
  const senders = new Map(read!.senders.map((u) => [u.id, userFromJson(u)]));
  return read!.messages.map(({ message: m, channel, directGroup, reactions }) => ({
    ...m,
    dateSent: utcFromJson(m.dateSent),
    lastEditTime: utcOrNull(m.lastEditTime),
    lastMovedTime: utcOrNull(m.lastMovedTime),
    channel,
    directGroup,
    reactions,
    sender: senders.get(m.senderId)!,
  }));
}

/** The columns of Message that showing one reads (ShownMessage). */
const SHOWN_COLUMNS =
  'id, "senderId", "channelId", "directGroupId", topic, content, "renderedContent", "dateSent", "sendingClient", "isMeMessage", "lastEditTime", "lastMovedTime", "editHistory"';

/**
 * A page of GET /messages: the messages as ShownMessage, and their senders and direct
 * conversations' members as MessageUser, in one statement. Each channel, conversation, user and
 * the reactions are read once for the page, not per message, and a user's columns are only those
 * MessageUser names (of the settings, the email visibility, if set). Each table is read by its
 * primary key from an array (`= ANY(ARRAY(...))`): as `IN (subquery)` the plan guessed hundreds of
 * rows and hashed every user of the organization.
 */
export const LOAD_PAGE = `WITH m AS (SELECT ${SHOWN_COLUMNS} FROM "Message" WHERE id = ANY($1::int[])),
  g AS (SELECT id, "memberKey" FROM "DirectMessageGroup" WHERE id = ANY(ARRAY(SELECT "directGroupId" FROM m)))
SELECT
  (SELECT coalesce(json_agg(m ORDER BY m.id), '[]') FROM m) AS messages,
  (SELECT coalesce(json_agg(json_build_object('id', r.id, 'messageId', r."messageId", 'emojiName', r."emojiName", 'emojiCode', r."emojiCode", 'reactionType', r."reactionType", 'userId', r."userId") ORDER BY r.id), '[]')
     FROM "Reaction" r WHERE r."messageId" = ANY($1::int[])) AS reactions,
  (SELECT coalesce(json_agg(json_build_object('id', c.id, 'name', c.name, 'inviteOnly', c."inviteOnly", 'historyPublicToSubscribers', c."historyPublicToSubscribers")), '[]')
     FROM "Channel" c WHERE c.id = ANY(ARRAY(SELECT "channelId" FROM m))) AS channels,
  (SELECT coalesce(json_agg(g), '[]') FROM g) AS groups,
  (SELECT coalesce(json_agg(json_build_object('id', u.id, 'realmId', u."realmId", 'fullName', u."fullName", 'deliveryEmail', u."deliveryEmail", 'isBot', u."isBot",
      'settings', json_strip_nulls(json_build_object('email_address_visibility', u.settings->'email_address_visibility')),
      'avatarSource', u."avatarSource", 'avatarKey', u."avatarKey", 'avatarVersion', u."avatarVersion")), '[]')
     FROM "User" u WHERE u.id = ANY(ARRAY(SELECT "senderId" FROM m UNION SELECT unnest(string_to_array("memberKey", ','))::int FROM g))) AS users`;

type PageJson = {
  messages: Stamped<Omit<ShownMessage, 'sender' | 'channel' | 'directGroup' | 'reactions'>, 'dateSent' | 'lastEditTime' | 'lastMovedTime'>[];
  reactions: (ShownMessage['reactions'][number] & { messageId: number })[];
  channels: NonNullable<ShownMessage['channel']>[];
  groups: NonNullable<ShownMessage['directGroup']>[];
  users: MessageUser[];
};

/** The messages of a page (in id order) and the users presentMessages shows with them. */
export interface Page {
  messages: ShownMessage[];
  users: Map<number, MessageUser>;
}

export async function loadPage(app: App, ids: readonly number[]): Promise<Page> {
  if (ids.length === 0) return { messages: [], users: new Map() };
  const [read] = await rawQuery<PageJson>(app, LOAD_PAGE, [...ids]);
  const users = new Map(read!.users.map((u) => [u.id, u]));
  const channels = new Map(read!.channels.map((c) => [c.id, c]));
  const groups = new Map(read!.groups.map((g) => [g.id, g]));
  const reactions = new Map<number, ShownMessage['reactions']>();
  for (const { messageId, ...r } of read!.reactions) {
    const of = reactions.get(messageId);
    if (of) of.push(r);
    else reactions.set(messageId, [r]);
  }
  const messages = read!.messages.map((m) => ({
    ...m,
    dateSent: utcFromJson(m.dateSent),
    lastEditTime: utcOrNull(m.lastEditTime),
    lastMovedTime: utcOrNull(m.lastMovedTime),
    channel: m.channelId === null ? null : channels.get(m.channelId)!,
    directGroup: m.directGroupId === null ? null : groups.get(m.directGroupId)!,
    reactions: reactions.get(m.id) ?? [],
    sender: users.get(m.senderId)!,
  }));
  return { messages, users };
}

/**
 * Formats messages for one viewer; `flags` holds the viewer's bits (absent = historical). Results
 * of a search (`searchOperands` not null) carry match_content and match_subject. `users`: those
 * of the messages' direct conversations, if read with them (loadPage).
 */
export async function presentMessages(
  app: App,
  realm: RealmInfo,
  viewer: User,
  messages: readonly ShownMessage[],
  flags: Map<number, number | null>,
  opts: PresentOptions,
  searchOperands: string[] | null = null,
  users?: Map<number, MessageUser>,
) {
  const [dmUsers, linkifiers, highlights] = await Promise.all([
    users ?? conversationUsers(app, messages),
    compiledLinkifiers(app, realm.id),
    searchOperands ? searchFields(app, messages, searchOperands) : null,
  ]);
  return messages.map((m) => {
    const out = presentMessage(messageObject(app, realm, m, dmUsers, linkifiers), m, viewer, realm, flags.get(m.id) ?? HISTORICAL_FLAGS, opts);
    return highlights ? Object.assign(out, highlights.get(m.id)) : out;
  });
}

/**
 * Zulip's access rule for one message: a UserMessage row, or a channel message whose channel's
 * content the user may read and whose history is shared with subscribers.
 */
export async function accessMessage(app: App, realm: RealmInfo, user: User, id: number): Promise<{ message: FullMessage; flags: number | null }> {
  const message = await app.prisma.message.findFirst({ where: { id, realmId: realm.id }, include: messageInclude });
  if (!message) throw invalidMessage();
  const um = await app.prisma.userMessage.findUnique({ where: { userId_messageId: { userId: user.id, messageId: id } } });
  if (um) return { message, flags: um.flags };
  await checkHistoryAccess(
    app,
    realm,
    user,
    message.channelId === null ? null : await app.prisma.channel.findUniqueOrThrow({ where: { id: message.channelId } }),
  );
  return { message, flags: null };
}

/**
 * accessMessage for messages the user holds no row for, read together (one statement per table
 * rather than several per message): 'Invalid message(s)' unless the user reads every one's channel history.
 */
export async function checkHistoryAccessOf(app: App, realm: RealmInfo, user: User, ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  const messages = await app.prisma.message.findMany({ where: { id: { in: [...ids] }, realmId: realm.id }, select: { channelId: true } });
  if (messages.length !== new Set(ids).size || messages.some((m) => m.channelId === null)) throw invalidMessage();
  const channels = await app.prisma.channel.findMany({ where: { id: { in: [...new Set(messages.map((m) => m.channelId!))] } } });
  for (const channel of channels) await checkHistoryAccess(app, realm, user, channel);
}

/** The access rule for a message the user holds no row for: only channel history shared with subscribers. */
export async function checkHistoryAccess(app: App, realm: RealmInfo, user: User, channel: Channel | null): Promise<void> {
  if (!channel || !(await readsChannelHistory(app, realm, user, channel))) throw invalidMessage();
}

/** Whether the user reads the channel's messages without having received them. */
export async function readsChannelHistory(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<boolean> {
  return channel.historyPublicToSubscribers && (await channelAccess(app, realm, user, channel)).content;
}

/**
 * Who hears of an action on a message (reaction, deletion): Zulip's
 * event_recipient_ids_for_action_on_messages. DMs: the holders of its rows. Channels: the
 * subscribers — only those who received it under protected history, and for public channels
 * also the non-guests who hold a row without a subscription (they starred or reacted).
 */
export async function actionRecipientIds(app: App, messageId: number, channel: Channel | null): Promise<readonly number[]> {
  if (!channel) return (await rawQuery<{ userId: number }>(app, 'SELECT "userId" FROM "UserMessage" WHERE "messageId" = $1', messageId)).map((r) => r.userId);
  const holdersToo = !channel.historyPublicToSubscribers || !channel.inviteOnly;
  if (!holdersToo) return subscriberIds(app, channel.id);
  // Under protected history every holder counts (to keep the subscribers who received it); in a
  // public channel the non-guests among them. UserMessage has no relation to User (no foreign
  // key, see the schema), hence the SQL join.
  const excludedRole = channel.historyPublicToSubscribers ? Role.GUEST : -1;
  let subscribers: readonly number[];
  let holders: number[];
  if (inTransaction()) {
    // In a transaction the subscribers come from the database too: both in one statement.
    const [row] = await rawQuery<{ subscribers: number[] | null; holders: number[] | null }>(app, ACTION_RECIPIENTS, channel.id, messageId, excludedRole);
    subscribers = row?.subscribers ?? [];
    holders = row?.holders ?? [];
  } else {
    subscribers = await subscriberIds(app, channel.id);
    const [row] = await rawQuery<{ holders: number[] | null }>(app, HOLDERS, messageId, excludedRole);
    holders = row?.holders ?? [];
  }
  if (!channel.historyPublicToSubscribers) {
    const received = new Set(holders);
    return subscribers.filter((id) => received.has(id));
  }
  return [...new Set([...subscribers, ...holders])];
}

/** The holders of message $1's rows but those of role $2 (guests; -1: none left out). */
const HOLDERS = `SELECT array_agg(um."userId") AS holders FROM "UserMessage" um JOIN "User" u ON u.id = um."userId" WHERE um."messageId" = $1 AND u.role <> $2`;
/** The subscribers as channels.ts loadSubscriberIds reads them, and the holders as HOLDERS (on $2, $3). */
const ACTION_RECIPIENTS = `SELECT
  (SELECT array_agg(s."userId" ORDER BY s."userId") FROM "Subscription" s JOIN "User" u ON u.id = s."userId" WHERE s."channelId" = $1 AND s.active AND u."isActive") AS subscribers,
  (SELECT array_agg(um."userId") FROM "UserMessage" um JOIN "User" u ON u.id = um."userId" WHERE um."messageId" = $2 AND u.role <> $3) AS holders`;

/** Whether a channel topic (compared ignoring case, on the topic index) holds any message. */
export async function topicHasMessages(app: App, channelId: number, topic: string): Promise<boolean> {
  const rows = await app.prisma.$queryRaw<unknown[]>`SELECT 1 FROM "Message" WHERE "channelId" = ${channelId} AND upper(topic) = upper(${topic}) LIMIT 1`;
  return rows.length > 0;
}

/**
 * The messages of channel $1's topic $2 (on the topic index) a user can read: all of them when
 * the channel shares its history with subscribers (`shared`), else those user `$n` received. Two
 * statements rather than one with `shared` as a parameter: behind an OR, PostgreSQL checked the
 * user's rows through a hash of all of them, read whole before the topic's first message.
 */
const visibleTopic = (shared: boolean, user: string) =>
  `FROM "Message" m WHERE m."channelId" = $1 AND upper(m.topic) = upper($2)${shared ? '' : ` AND EXISTS (SELECT 1 FROM "UserMessage" um WHERE um."userId" = ${user} AND um."messageId" = m.id)`}`;
/** visibleTopic's messages from id $3 on, in id order (the user: $4). */
export const visibleTopicMessagesSql = (shared: boolean) => `SELECT m.id, m."dateSent" ${visibleTopic(shared, '$4')} AND m.id >= $3 ORDER BY m.id`;
/** Whether visibleTopic holds a message other than $3 older than $4: its first row only (the user: $5). */
export const otherVisibleTopicMessageSql = (shared: boolean) => `SELECT 1 ${visibleTopic(shared, '$5')} AND m.id <> $3 AND m.id < $4::bigint LIMIT 1`;

/** The statement's parameters after the ones of visibleTopic: the user's id, for a channel whose history is protected. */
const userUnlessShared = (user: User, channel: Channel) => (channel.historyPublicToSubscribers ? [] : [user.id]);

/** The topic's messages the user can read (all of them unless history is protected), from message `fromId` on. */
export function visibleTopicMessages(app: App, user: User, channel: Channel, topic: string, fromId = 0): Promise<{ id: number; dateSent: Date }[]> {
  const sql = visibleTopicMessagesSql(channel.historyPublicToSubscribers);
  return app.prisma.$queryRawUnsafe(sql, channel.id, topic, fromId, ...userUnlessShared(user, channel));
}

/**
 * Whether the user can read a message of the topic other than `exceptId` (older than `beforeId`,
 * if given), without reading the topic's other messages.
 */
export async function otherVisibleTopicMessage(
  app: App,
  user: User,
  channel: Channel,
  topic: string,
  exceptId: number,
  beforeId = LARGER_THAN_MAX_MESSAGE_ID,
): Promise<boolean> {
  const sql = otherVisibleTopicMessageSql(channel.historyPublicToSubscribers);
  const rows = await app.prisma.$queryRawUnsafe<unknown[]>(sql, channel.id, topic, exceptId, beforeId, ...userUnlessShared(user, channel));
  return rows.length > 0;
}

export const LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000;

export interface RangeQuery {
  anchor: number | 'newest' | 'oldest' | 'first_unread';
  includeAnchor: boolean;
  numBefore: number;
  numAfter: number;
  narrow: readonly NarrowTerm[];
}

export interface RangeResult {
  rows: { id: number; flags: number | null }[];
  anchor: number;
  foundAnchor: boolean;
  foundOldest: boolean;
  foundNewest: boolean;
}

type Row = { id: number; flags: number | null };

/**
 * The narrow's oldest unread message, among the user's newest MAX_UNREAD_MESSAGES unread ones (those
 * register lists: a client knows of no others), from the unread index: where they start, then in
 * id order up to the first that matches, so that the usual case reads one message and none reads
 * at most MAX_UNREAD_MESSAGES. A fallback to the whole narrow read every message of a long channel
 * with nothing unread in it.
 */
export const firstUnreadSql = (from: string, where: string) => {
  const unread = `"userId" = $1 AND (flags & ${FLAG_BITS.read}) = 0`;
  return `SELECT u."messageId" AS id FROM (
      SELECT "messageId" FROM "UserMessage" WHERE ${unread}
         AND "messageId" >= coalesce((SELECT "messageId" FROM "UserMessage" WHERE ${unread} ORDER BY "messageId" DESC OFFSET ${MAX_UNREAD_MESSAGES - 1} LIMIT 1), 0)
       ORDER BY "messageId" LIMIT ${MAX_UNREAD_MESSAGES}) u
    WHERE EXISTS (SELECT 1 FROM ${from} WHERE m.id = u."messageId" AND ${where} AND (um.flags & ${FLAG_BITS.read}) = 0)
    ORDER BY u."messageId" LIMIT 1`;
};

/**
 * firstUnreadSql's row. The combined feed's statement (a narrow of no conditions) is one text for
 * every user, so it is prepared: its plan (the unread index, from where the user's newest unread
 * start) is the same for every user, and planning it each time cost PostgreSQL 0.5 ms at 10M messages.
 */
async function firstUnread(app: App, source: NarrowSource, narrow: CompiledNarrow): Promise<number | null> {
  const read = narrow.conditions.length === 0 ? rawQuery : rawQueryPlannedPerCall;
  const [found] = await read<{ id: number }>(app, firstUnreadSql(source.from, source.where), ...narrow.params);
  return found?.id ?? null;
}

/** `<id> <bound>` on every column of the narrow's source that holds the message id, so that the index of either side starts at it. */
export const idBound = (source: NarrowSource, bound: string) => source.ids.map((id) => `${id} ${bound}`).join(' AND ');

/** One side of a range: the narrow's messages past an anchor (`bound`, as `< 10`), nearest first. */
export function rangeStatement(source: NarrowSource, bound: string, order: 'ASC' | 'DESC', limit: number): string {
  return `SELECT m.id, um.flags FROM ${source.from} WHERE ${source.where} AND ${idBound(source, bound)} ORDER BY m.id ${order} LIMIT ${limit}`;
}

/** Messages around an anchor in a narrow, with Zulip's found_* bookkeeping. */
export async function fetchRange(app: App, realm: RealmInfo, user: User, q: RangeQuery): Promise<RangeResult> {
  const narrow = await compileNarrow(app, realm, user, q.narrow, [user.id]);
  const source = narrowSource(narrow);
  let anchor: number;
  if (q.anchor === 'newest') anchor = LARGER_THAN_MAX_MESSAGE_ID;
  else if (q.anchor === 'oldest') anchor = 0;
  else if (q.anchor === 'first_unread') anchor = (await firstUnread(app, source, narrow)) ?? LARGER_THAN_MAX_MESSAGE_ID;
  else anchor = Math.max(q.anchor, 0);
  const toRight = anchor === LARGER_THAN_MAX_MESSAGE_ID;
  const toLeft = anchor === 0;
  const withAnchor = q.includeAnchor && !toLeft && !toRight;
  // The sides asked for, as one statement (a round trip, not three): each keeps its own plan.
  const sides: [side: number, bound: string, order: 'ASC' | 'DESC', limit: number][] = [];
  if (q.numBefore > 0 && !toLeft) sides.push([BEFORE, `< ${anchor}`, 'DESC', q.numBefore]);
  if (withAnchor) sides.push([AT, `= ${anchor}`, 'ASC', 1]);
  if (q.numAfter > 0 && !toRight) sides.push([AFTER, `> ${anchor}`, 'ASC', q.numAfter]);
  const rows = sides.length
    ? await rawQueryPlannedPerCall<Row & { side: number }>(
        app,
        sides.map(([side, bound, order, limit]) => `SELECT ${side} AS side, r.* FROM (${rangeStatement(source, bound, order, limit)}) r`).join(' UNION ALL '),
        ...narrow.params,
      )
    : [];
  const of = (side: number) =>
    rows
      .filter((r) => r.side === side)
      .map(({ id, flags }) => ({ id, flags }))
      .sort((a, b) => a.id - b.id);
  const [before, at, after] = [of(BEFORE), of(AT), of(AFTER)];
  return {
    rows: [...before, ...at, ...after],
    anchor,
    foundAnchor: at.length === 1,
    foundOldest: toLeft || before.length < q.numBefore,
    foundNewest: toRight || after.length < q.numAfter,
  };
}

/** fetchRange's sides of the anchor, as its statement tags their rows. */
const BEFORE = 0;
const AT = 1;
const AFTER = 2;

/**
 * GET /messages/matches_narrow (Zulip's messages_in_narrow): which of `ids` the user received
 * match the narrow, with the content and topic a search result shows.
 */
export async function matchesNarrow(
  app: App,
  realm: RealmInfo,
  user: User,
  ids: readonly number[],
  narrowTerms: readonly NarrowTerm[],
): Promise<Record<string, { match_content: string; match_subject: string }>> {
  if (ids.length === 0) return {};
  // Only received messages, as in Zulip: no channel history here.
  const narrow = { ...(await compileNarrow(app, realm, user, narrowTerms, [user.id, [...ids]])), history: false };
  const source = narrowSource(narrow);
  const rows = await rawQueryPlannedPerCall<{ id: number; topic: string }>(
    app,
    `SELECT m.id, m.topic FROM ${source.from} WHERE ${source.where} AND ${idBound(source, '= ANY($2::int[])')} ORDER BY m.id`,
    ...narrow.params,
  );
  const highlights = await searchFields(app, rows, searchOperandsOf(narrowTerms) ?? []);
  return Object.fromEntries(rows.map((r) => [String(r.id), highlights.get(r.id)!]));
}

/** Message ids (with the user's flags) among `ids` that match a narrow. */
export async function filterByNarrow(app: App, realm: RealmInfo, user: User, ids: readonly number[], narrowTerms: readonly NarrowTerm[]): Promise<Row[]> {
  if (ids.length === 0) return [];
  const narrow = await compileNarrow(app, realm, user, narrowTerms, [user.id, [...ids]]);
  const source = narrowSource(narrow);
  return rawQueryPlannedPerCall<Row>(
    app,
    `SELECT m.id, um.flags FROM ${source.from} WHERE ${source.where} AND ${idBound(source, '= ANY($2::int[])')} ORDER BY m.id`,
    ...narrow.params,
  );
}

const DIFF_TOKEN_RE = /<[^>]*>|[^<\s]+|\s+/g;
const MAX_DIFF_CELLS = 1_000_000;

/**
 * A word-level diff of two rendered versions, in the markup of Zulip's content_html_diff: the new
 * HTML with removed words in `highlight_text_deleted` and added ones in `highlight_text_inserted`.
 */
export function htmlDiff(oldHtml: string, newHtml: string): string {
  const a = oldHtml.match(DIFF_TOKEN_RE) ?? [];
  const b = newHtml.match(DIFF_TOKEN_RE) ?? [];
  if (a.length * b.length > MAX_DIFF_CELLS) return `<span class="highlight_text_inserted">${newHtml}</span>`;
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let run: { kind: 'deleted' | 'inserted'; text: string } | null = null;
  const flush = () => {
    if (run) out.push(`<span class="highlight_text_${run.kind}">${run.text}</span>`);
    run = null;
  };
  const mark = (kind: 'deleted' | 'inserted', token: string) => {
    if (token.startsWith('<')) {
      flush();
      if (kind === 'inserted') out.push(token);
      return;
    }
    if (run?.kind !== kind) flush();
    run = { kind, text: (run?.text ?? '') + token };
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      flush();
      out.push(b[j]!);
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) mark('inserted', b[j++]!);
    else mark('deleted', a[i++]!);
  }
  flush();
  return out.join('');
}

/** GET /messages/{id}/history: the original version first, then one snapshot per edit. */
export function messageHistory(m: FullMessage, allowEmptyTopicName: boolean): Record<string, unknown>[] {
  const topicName = (t: string) => (m.channelId !== null ? displayTopic(t, allowEmptyTopicName) : t);
  let content = m.content;
  let rendered = m.renderedContent;
  let topic = topicName(m.topic);
  const snapshots: Record<string, unknown>[] = [];
  for (const edit of editHistoryOf(m)) {
    const entry: Record<string, unknown> = { content, rendered_content: rendered, timestamp: edit.timestamp, topic, user_id: edit.user_id };
    if (edit.prev_topic !== undefined) topic = entry.prev_topic = topicName(edit.prev_topic);
    if (edit.prev_content !== undefined) {
      entry.prev_content = edit.prev_content;
      entry.prev_rendered_content = edit.prev_rendered_content;
      entry.content_html_diff = htmlDiff(edit.prev_rendered_content ?? '', rendered);
      content = edit.prev_content;
      rendered = edit.prev_rendered_content ?? '';
    }
    if (edit.prev_stream !== undefined) Object.assign(entry, { prev_stream: edit.prev_stream, stream: edit.stream });
    snapshots.push(entry);
  }
  snapshots.push({ content, rendered_content: rendered, timestamp: timestamp(m.dateSent), topic, user_id: m.senderId });
  return snapshots.reverse();
}
