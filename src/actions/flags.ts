// Personal message flags (read, starred, collapsed): POST /messages/flags, its narrow form and the
// deprecated mark-as-read endpoints, each publishing one update_message_flags event to the user.
// Reading a message withdraws its push notification from the user's phones.
// Group commit: a user's changes that arrive while their actor is writing wait in one batch (the
// client that marks messages read as they arrive), worked out in order against the rows the batch
// read and written with one statement per table in one transaction; each change still has its
// own answer and its own event.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { API_FLAGS, EDITABLE_FLAGS, FLAG_BITS, HISTORICAL_FLAGS, type FlagName } from '../domain/message-flags.ts';
import { ApiError, badRequest } from '../errors.ts';
import { subscribedChannelIds } from '../queries/channels.ts';
import { unmutedTopicCheck } from '../queries/subscriptions.ts';
import { checkHistoryAccessOf, memberIds } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { withdrawNotifications } from './push-outbox.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { EventOf, UnreadDetail } from '../events/schemas.ts';

export type FlagOp = 'add' | 'remove';

function checkFlag(op: string, flag: string): FlagName {
  if (!API_FLAGS.includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.includes(flag as FlagName)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw badRequest(`Invalid message flag operation: '${op}'`);
  return flag as FlagName;
}

type UnreadDetails = Record<string, UnreadDetail>;

/**
 * What clients need to put re-unread messages back into their unread data (Zulip's
 * format_unread_message_details): `unmuted_stream_msg` says whether a channel message counts, and
 * `mentioned` follows the register's mentions (wildcards only where the message counts).
 */
async function unreadDetails(app: App, userId: number, ids: number[]): Promise<UnreadDetails> {
  const [rows, unmuted] = await Promise.all([
    app.prisma.userMessage.findMany({ where: { userId, messageId: { in: ids } }, select: { messageId: true, flags: true } }),
    unmutedTopicCheck(app, userId),
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
      const mentioned = r.flags & FLAG_BITS.mentioned || (r.flags & wildcard && counted) ? { mentioned: true as const } : {};
      const details: UnreadDetail =
        m.channelId !== null
          ? { type: 'stream', stream_id: m.channelId, topic: m.topic, unmuted_stream_msg: counted, ...mentioned }
          : { type: 'private', user_ids: memberIds(m.directGroup!.memberKey).filter((id) => id !== userId), ...mentioned };
      return [String(r.messageId), details];
    }),
  );
}

export interface FlagResult {
  changed: number[];
  ignoredChannels: number[];
  /** Marking read: unread rows may remain after `last`, the batch's newest. */
  more?: boolean;
  last?: number;
}

/**
 * A change of one user's flags, waiting in the user's batch. Marking read a channel, a topic or
 * everything takes one batch of unread rows after `after` (a message id) per change.
 */
type FlagChange = { user: User } & (
  | { kind: 'messages'; ids: number[]; op: FlagOp; flag: FlagName }
  | { kind: 'channel'; channelId: number; topic?: string; after: number }
  | { kind: 'all'; after: number }
);

/**
 * Marking everything, a channel or a topic read takes the oldest unread rows this many at a time,
 * each batch its own transaction (Zulip's do_mark_all_as_read), so a user with a million unread
 * messages holds no transaction or lock for long, and their other flag changes go on between.
 */
const MARK_READ_BATCH = 2000;
/** After this long POST /mark_all_as_read answers `complete: false` and the client asks again, as Zulip's. */
const MARK_ALL_TIMEOUT_MS = 50_000;

/**
 * The user's rows a batch has looked at: their flags before it (historical ones for rows it
 * creates), and as its changes so far leave them, so each change sees the ones before it.
 */
class BatchRows {
  private readonly before = new Map<number, number>();
  private readonly now = new Map<number, number>();
  private readonly created = new Set<number>();

  has(id: number): boolean {
    return this.now.has(id);
  }

  ids(): number[] {
    return [...this.now.keys()];
  }

  /** Rows as read from the database; those the batch already holds keep its state. */
  found(rows: readonly { messageId: number; flags: number }[]): void {
    for (const r of rows) {
      if (this.now.has(r.messageId)) continue;
      this.before.set(r.messageId, r.flags);
      this.now.set(r.messageId, r.flags);
    }
  }

  create(id: number): void {
    this.before.set(id, HISTORICAL_FLAGS);
    this.now.set(id, HISTORICAL_FLAGS);
    this.created.add(id);
  }

  /** Sets or clears `bit` on a held row; whether that changed it. */
  apply(id: number, bit: number, op: FlagOp): boolean {
    const flags = this.now.get(id)!;
    const next = op === 'add' ? flags | bit : flags & ~bit;
    this.now.set(id, next);
    return next !== flags;
  }

  /** Per row to write: the bits the batch set and cleared, and whether it creates the row. */
  writes(): { ids: number[]; set: number[]; clear: number[]; created: boolean[] } {
    const out = { ids: [] as number[], set: [] as number[], clear: [] as number[], created: [] as boolean[] };
    for (const [id, flags] of this.now) {
      const before = this.before.get(id)!;
      if (flags === before && !this.created.has(id)) continue;
      out.ids.push(id);
      out.set.push(flags & ~before);
      out.clear.push(before & ~flags);
      out.created.push(this.created.has(id));
    }
    return out;
  }
}

/**
 * The batch's new rows and changed flags in one statement. Only the bits the batch changed are
 * written, so a concurrent change of other bits (mentions on an edit, the push worker's mark)
 * stands. A new row that appeared meanwhile is not inserted but updated like the others: the
 * update sees rows committed before the statement, and not the ones the insert adds.
 */
const WRITE_FLAGS = `WITH input AS (SELECT * FROM unnest($2::int[], $3::int[], $4::int[], $5::bool[]) AS t(id, set_bits, clear_bits, created)),
  inserted AS (
    INSERT INTO "UserMessage" ("userId", "messageId", flags)
    SELECT $1, id, (${HISTORICAL_FLAGS} | set_bits) & ~clear_bits FROM input WHERE created
    ON CONFLICT DO NOTHING)
  UPDATE "UserMessage" um SET flags = (um.flags | input.set_bits) & ~input.clear_bits
  FROM input WHERE um."userId" = $1 AND um."messageId" = input.id`;

async function writeRows(app: App, userId: number, rows: BatchRows): Promise<void> {
  const w = rows.writes();
  if (w.ids.length) await app.prisma.$executeRawUnsafe(WRITE_FLAGS, userId, w.ids, w.set, w.clear, w.created);
}

const userRows = (app: App, userId: number, ids: number[]) =>
  app.prisma.$queryRawUnsafe<{ messageId: number; flags: number }[]>(
    'SELECT "messageId", flags FROM "UserMessage" WHERE "userId" = $1 AND "messageId" = ANY($2::int[])',
    userId,
    ids,
  );

/** Whether a change marks messages unread (its event then carries what clients need to count them again). */
const marksUnread = (c: FlagChange): c is Extract<FlagChange, { kind: 'messages' }> => c.kind === 'messages' && c.op === 'remove' && c.flag === 'read';

/** Where marking unread is ignored: the channel of each message in a channel the user does not follow. */
async function unfollowedChannels(app: App, userId: number, ids: number[]): Promise<Map<number, number>> {
  const subscribed = await subscribedChannelIds(app, userId);
  const messages = await app.prisma.message.findMany({ where: { id: { in: ids } }, select: { id: true, channelId: true } });
  return new Map(messages.flatMap((m) => (m.channelId !== null && !subscribed.has(m.channelId) ? [[m.id, m.channelId] as const] : [])));
}

/**
 * Messages the user has no row for get a historical one (after the access check) where the change
 * makes their flags differ from a historical row's (Zulip: reading a message one never received
 * writes nothing) — except that channel messages can't be marked unread without a subscription:
 * those are skipped and reported.
 */
async function changeListed(
  app: App,
  realm: RealmInfo,
  rows: BatchRows,
  unfollowed: Map<number, number>,
  { user, ids: listed, op, flag }: Extract<FlagChange, { kind: 'messages' }>,
): Promise<FlagResult> {
  const ids = [...new Set(listed)];
  const missing = ids.filter((id) => !rows.has(id));
  await checkHistoryAccessOf(app, realm, user, missing);
  let targets = ids;
  const ignored = new Set<number>();
  if (op === 'remove' && flag === 'read') {
    for (const id of ids) if (unfollowed.has(id)) ignored.add(unfollowed.get(id)!);
    targets = ids.filter((id) => !unfollowed.has(id));
  }
  const bit = FLAG_BITS[flag];
  if (((HISTORICAL_FLAGS & bit) !== 0) !== (op === 'add')) {
    const targeted = new Set(targets);
    for (const id of missing) if (targeted.has(id)) rows.create(id);
  }
  const changed = targets.filter((id) => rows.has(id) && rows.apply(id, bit, op)).sort((a, b) => a - b);
  return { changed, ignoredChannels: [...ignored].sort((a, b) => a - b) };
}

/**
 * Marks read one batch of the user's unread messages of a channel (or topic), or of all of them:
 * the oldest unread rows after the change's `after`, in id order, and the rows the batch changed
 * before (the database does not have their state yet) that are in the channel.
 */
async function markRead(
  app: App,
  rows: BatchRows,
  change: Extract<FlagChange, { kind: 'channel' | 'all' }>,
): Promise<{ changed: number[]; more: boolean; last: number }> {
  const params: unknown[] = [change.user.id, rows.ids(), change.after];
  let join = '';
  let inScope = '';
  if (change.kind === 'channel') {
    join = 'JOIN "Message" m ON m.id = um."messageId"';
    params.push(change.channelId);
    // The cursor on both sides of the join, so that a merge join starts the channel's index at it too.
    inScope = 'AND m."channelId" = $4 AND m.id > $3';
    if (change.topic !== undefined) {
      params.push(change.topic);
      inScope += ' AND upper(m.topic) = upper($5)';
    }
  }
  const found = await app.prisma.$queryRawUnsafe<{ messageId: number; flags: number; paged: boolean }[]>(
    `(SELECT um."messageId", um.flags, true AS paged FROM "UserMessage" um ${join}
       WHERE um."userId" = $1 AND (um.flags & ${FLAG_BITS.read}) = 0 AND um."messageId" > $3 ${inScope}
       ORDER BY um."messageId" LIMIT ${MARK_READ_BATCH})
     UNION ALL
     (SELECT um."messageId", um.flags, false FROM "UserMessage" um ${join} WHERE um."userId" = $1 AND um."messageId" = ANY($2::int[]) ${inScope})`,
    ...params,
  );
  rows.found(found);
  const changed = [...new Set(found.map((r) => r.messageId))].filter((id) => rows.apply(id, FLAG_BITS.read, 'add')).sort((a, b) => a - b);
  const paged = found.filter((r) => r.paged);
  return { changed, more: paged.length === MARK_READ_BATCH, last: paged.at(-1)?.messageId ?? change.after };
}

function eventOf(op: FlagOp, flag: FlagName, ids: number[], all = false): EventOf<'update_message_flags'> {
  const fields = { type: 'update_message_flags', flag, messages: ids, all } as const;
  return op === 'add' ? { ...fields, op, operation: op } : { ...fields, op, operation: op };
}

/**
 * A user's batch of flag changes in one transaction: each worked out in order (a change refused
 * on its own answers its error, the others go on), then the rows written at once, then one event
 * per change, in order.
 */
async function writeFlagBatch(app: App, realm: RealmInfo, changes: FlagChange[]): Promise<(FlagResult | ApiError)[]> {
  const userId = changes[0]!.user.id;
  return atomic(app, async () => {
    const rows = new BatchRows();
    const listed = [...new Set(changes.flatMap((c) => (c.kind === 'messages' ? c.ids : [])))];
    if (listed.length) rows.found(await userRows(app, userId, listed));
    const toUnread = changes.filter(marksUnread).flatMap((c) => c.ids);
    const unfollowed = toUnread.length ? await unfollowedChannels(app, userId, [...new Set(toUnread)]) : new Map<number, number>();
    const read = { ids: new Set<number>(), all: false };
    const outcomes: ({ change: FlagChange; event: EventOf<'update_message_flags'> | null; result: FlagResult } | ApiError)[] = [];
    for (const change of changes) {
      try {
        if (change.kind === 'messages') {
          const result = await changeListed(app, realm, rows, unfollowed, change);
          if (change.op === 'add' && change.flag === 'read') for (const id of result.changed) read.ids.add(id);
          outcomes.push({ change, event: eventOf(change.op, change.flag, result.changed), result });
        } else {
          const { changed, more, last } = await markRead(app, rows, change);
          for (const id of changed) read.ids.add(id);
          read.all ||= change.kind === 'all';
          // Clients reload after marking all read, so that event lists no message; it leaves with
          // the last batch. A channel's batches are announced each with its messages, as Zulip
          // announces its one batch (none when nothing changed).
          const event = change.kind === 'all' ? (more ? null : eventOf('add', 'read', [], true)) : changed.length ? eventOf('add', 'read', changed) : null;
          outcomes.push({ change, event, result: { changed, ignoredChannels: [], more, last } });
        }
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        outcomes.push(err);
      }
    }
    await writeRows(app, userId, rows);
    await withdrawNotifications(app, realm.id, userId, read.all ? null : [...read.ids]);
    const unread = outcomes.flatMap((o) => (o instanceof ApiError || !marksUnread(o.change) ? [] : o.result.changed));
    const details = unread.length ? await unreadDetails(app, userId, unread) : {};
    return outcomes.map((o) => {
      if (o instanceof ApiError) return o;
      if (!o.event) return o.result;
      if (o.event.op === 'remove' && marksUnread(o.change))
        o.event.message_details = Object.fromEntries(o.result.changed.map((id) => [String(id), details[String(id)]]));
      sendOnCommit({ realmId: realm.id, userIds: [userId], event: o.event });
      return o.result;
    });
  });
}

/** A user's flag changes go through their actor; those that wait there meanwhile, as one batch. */
function changeFlags(app: App, realm: RealmInfo, change: FlagChange): Promise<FlagResult> {
  return app.users.inBatch<FlagChange, FlagResult>(change.user.id, 'flags', change, (batch) => writeFlagBatch(app, realm, batch));
}

/** A change run by the user's actor on its own, in one transaction (muting a sender marks their messages read). */
export const asUser = <T>(app: App, user: User, change: () => Promise<T>): Promise<T> => app.users.run(user.id, () => atomic(app, change));

/** Sets or clears one flag on the user's rows; returns the ids whose flag changed. */
export async function updateFlags(app: App, realm: RealmInfo, user: User, ids: number[], op: string, flagName: string): Promise<FlagResult> {
  const flag = checkFlag(op, flagName);
  return changeFlags(app, realm, { kind: 'messages', user, ids, op: op as FlagOp, flag });
}

/**
 * POST /mark_all_as_read: every unread row, a batch at a time through the user's actor; whether it
 * got through them all before the time ran out.
 */
export async function markAllAsRead(app: App, realm: RealmInfo, user: User, timeoutMs = MARK_ALL_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let after = 0;
  for (;;) {
    const { more, last } = await changeFlags(app, realm, { kind: 'all', user, after });
    if (!more) return true;
    if (Date.now() >= deadline) return false;
    after = last!;
  }
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
    user.id,
    senderId,
  );
  if (changed.length)
    sendOnCommit({
      realmId: realm.id,
      userIds: [user.id],
      event: eventOf(
        'add',
        'read',
        changed.map((r) => r.messageId).sort((a, b) => a - b),
      ),
    });
}

/** POST /mark_stream_as_read and /mark_topic_as_read: the unread rows a batch at a time through the user's actor. */
export async function markChannelAsRead(app: App, realm: RealmInfo, user: User, channelId: number, topic?: string): Promise<void> {
  for (let after = 0; ; ) {
    const { more, last } = await changeFlags(app, realm, { kind: 'channel', user, channelId, topic, after });
    if (!more) return;
    after = last!;
  }
}
