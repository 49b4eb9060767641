// Personal message flags (read, starred, collapsed): POST /messages/flags, its narrow form and the
// deprecated mark-as-read endpoints, each publishing one update_message_flags event to the user.
// Reading a message withdraws its push notification from the user's phones.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { API_FLAGS, EDITABLE_FLAGS, FLAG_BITS, HISTORICAL_FLAGS, type FlagName } from '../domain/message-flags.ts';
import { badRequest } from '../errors.ts';
import { subscribedChannelIds } from '../queries/channels.ts';
import { unmutedTopicCheck } from '../queries/subscriptions.ts';
import { accessMessage, memberIds } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { withdrawNotifications } from './push-outbox.ts';
import { atomic, sendOnCommit } from './transaction.ts';

export type FlagOp = 'add' | 'remove';

function checkFlag(op: string, flag: string): FlagName {
  if (!API_FLAGS.includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.includes(flag as FlagName)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw badRequest(`Invalid message flag operation: '${op}'`);
  return flag as FlagName;
}

/**
 * What clients need to put re-unread messages back into their unread data (Zulip's
 * format_unread_message_details): `unmuted_stream_msg` says whether a channel message counts, and
 * `mentioned` follows the register's mentions (wildcards only where the message counts).
 */
async function unreadDetails(app: App, user: User, ids: number[]): Promise<Record<string, Record<string, unknown>>> {
  const [rows, unmuted] = await Promise.all([
    app.prisma.userMessage.findMany({ where: { userId: user.id, messageId: { in: ids } }, select: { messageId: true, flags: true } }),
    unmutedTopicCheck(app, user.id),
  ]);
  const messages = await app.prisma.message.findMany({
    where: { id: { in: rows.map((r) => r.messageId) } },
    select: { id: true, channelId: true, topic: true, directGroup: { select: { memberKey: true } } },
  });
  const byId = new Map(messages.map((m) => [m.id, m]));
  const wildcard = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;
  return Object.fromEntries(
    rows.map((r) => {
      const m = byId.get(r.messageId)!;
      const counted = m.channelId === null || unmuted(m.channelId, m.topic);
      const details: Record<string, unknown> =
        m.channelId !== null
          ? { type: 'stream', stream_id: m.channelId, topic: m.topic, unmuted_stream_msg: counted }
          : { type: 'private', user_ids: memberIds(m.directGroup!.memberKey).filter((id) => id !== user.id) };
      if (r.flags & FLAG_BITS.mentioned || (r.flags & wildcard && counted)) details.mentioned = true;
      return [String(r.messageId), details];
    }),
  );
}

export interface FlagResult {
  changed: number[];
  ignoredChannels: number[];
}

/**
 * Messages the user has no row for get a historical one (after the access check) — except that
 * channel messages can't be marked unread without a subscription: those are skipped and reported.
 */
async function targetRows(app: App, realm: RealmInfo, user: User, ids: number[], op: FlagOp, flag: FlagName): Promise<{ ids: number[]; ignoredChannels: number[] }> {
  const existing = new Set((await app.prisma.userMessage.findMany({ where: { userId: user.id, messageId: { in: ids } }, select: { messageId: true } })).map((r) => r.messageId));
  const missing = ids.filter((id) => !existing.has(id));
  for (const id of missing) await accessMessage(app, realm, user, id);
  let targets = ids;
  const ignored = new Set<number>();
  if (op === 'remove' && flag === 'read') {
    const subscribed = await subscribedChannelIds(app, user.id);
    const messages = await app.prisma.message.findMany({ where: { id: { in: ids } }, select: { id: true, channelId: true } });
    const skip = new Set(messages.filter((m) => m.channelId !== null && !subscribed.has(m.channelId)).map((m) => (ignored.add(m.channelId!), m.id)));
    targets = ids.filter((id) => !skip.has(id));
  }
  const create = missing.filter((id) => targets.includes(id));
  if (create.length) await app.prisma.userMessage.createMany({ data: create.map((messageId) => ({ userId: user.id, messageId, flags: HISTORICAL_FLAGS })), skipDuplicates: true });
  return { ids: targets, ignoredChannels: [...ignored].sort((a, b) => a - b) };
}

/** A user's flag changes run one at a time through their actor, each in one transaction. */
export const asUser = <T>(app: App, user: User, change: () => Promise<T>): Promise<T> => app.users.run(user.id, () => atomic(app, change));

/** Sets or clears one flag on the user's rows; returns the ids whose flag changed. */
export async function updateFlags(app: App, realm: RealmInfo, user: User, ids: number[], op: string, flagName: string): Promise<FlagResult> {
  const flag = checkFlag(op, flagName);
  const bit = FLAG_BITS[flag];
  return asUser(app, user, async () => {
    const targets = await targetRows(app, realm, user, [...new Set(ids)], op as FlagOp, flag);
    const changed = targets.ids.length === 0 ? [] : await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(
      `UPDATE "UserMessage" SET flags = ${op === 'add' ? `flags | ${bit}` : `flags & ~${bit}`}
       WHERE "userId" = $1 AND "messageId" = ANY($2::int[]) AND (flags & ${bit}) ${op === 'add' ? '= 0' : '<> 0'} RETURNING "messageId"`,
      user.id, targets.ids,
    );
    const sorted = changed.map((r) => r.messageId).sort((a, b) => a - b);
    if (op === 'add' && flag === 'read') await withdrawNotifications(app, realm.id, user.id, sorted);
    await sendFlags(app, realm, user, op as FlagOp, flag, sorted);
    return { changed: sorted, ignoredChannels: targets.ignoredChannels };
  });
}

async function sendFlags(app: App, realm: RealmInfo, user: User, op: FlagOp, flag: FlagName, ids: number[], all = false): Promise<void> {
  const event: Record<string, unknown> = { type: 'update_message_flags', op, operation: op, flag, messages: ids, all };
  if (op === 'remove' && flag === 'read') event.message_details = await unreadDetails(app, user, ids);
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event });
}

/** POST /mark_all_as_read: every unread row at once; clients reload, so the event lists none. */
export async function markAllAsRead(app: App, realm: RealmInfo, user: User): Promise<void> {
  await asUser(app, user, async () => {
    await app.prisma.$executeRawUnsafe(`UPDATE "UserMessage" SET flags = flags | ${FLAG_BITS.read} WHERE "userId" = $1 AND (flags & ${FLAG_BITS.read}) = 0`, user.id);
    await withdrawNotifications(app, realm.id, user.id, null);
    await sendFlags(app, realm, user, 'add', 'read', [], true);
  });
}

/**
 * In a change run by asUser: marks read the user's unread messages from `senderId`, as muting
 * the sender does (Zulip's do_mark_muted_user_messages_as_read, which sends nothing when none was).
 */
export async function markSenderAsRead(app: App, realm: RealmInfo, user: User, senderId: number): Promise<void> {
  const changed = await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(
    `UPDATE "UserMessage" um SET flags = um.flags | ${FLAG_BITS.read} FROM "Message" m
     WHERE m.id = um."messageId" AND um."userId" = $1 AND m."senderId" = $2 AND (um.flags & ${FLAG_BITS.read}) = 0
     RETURNING um."messageId"`,
    user.id, senderId,
  );
  if (changed.length) await sendFlags(app, realm, user, 'add', 'read', changed.map((r) => r.messageId).sort((a, b) => a - b));
}

/** POST /mark_stream_as_read and /mark_topic_as_read. */
export async function markChannelAsRead(app: App, realm: RealmInfo, user: User, channelId: number, topic?: string): Promise<void> {
  const topicFilter = topic === undefined ? '' : 'AND lower(m.topic) = lower($3)';
  await asUser(app, user, async () => {
    const changed = await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(
      `UPDATE "UserMessage" um SET flags = um.flags | ${FLAG_BITS.read} FROM "Message" m
       WHERE m.id = um."messageId" AND um."userId" = $1 AND m."channelId" = $2 ${topicFilter} AND (um.flags & ${FLAG_BITS.read}) = 0
       RETURNING um."messageId"`,
      ...[user.id, channelId, ...(topic === undefined ? [] : [topic])],
    );
    const ids = changed.map((r) => r.messageId).sort((a, b) => a - b);
    await withdrawNotifications(app, realm.id, user.id, ids);
    await sendFlags(app, realm, user, 'add', 'read', ids);
  });
}
