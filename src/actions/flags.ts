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
import { countsTowardUnread } from '../queries/subscriptions.ts';
import { checkHistoryAccessOf, memberIds } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { withdrawNotifications } from './push-outbox.ts';
import { atomic, rawQuery, sendCommitted, sendOnCommit } from './transaction.ts';
import { storedOrLater } from '../bus/bus.ts';
import { inTransaction } from '../db/transaction.ts';
import type { EventOf, UnreadDetail } from '../events/schemas.ts';

export type FlagOp = 'add' | 'remove';

function checkFlag(op: string, flag: string): FlagName {
  if (!API_FLAGS.includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.includes(flag as FlagName)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw badRequest(`Invalid message flag operation: '${op}'`);
  return flag as FlagName;
}

type UnreadDetails = Record<string, UnreadDetail>;

/** What the batch read of a message it may mark unread: where it is, and the user's subscription to its channel. */
interface UnreadInfo {
  channelId: number | null;
  topic: string;
  memberKey: string | null;
  /** Whether the user follows its channel (an active subscription). */
  subscribed: boolean;
}

/** The batch's knowledge of the messages it marks unread, and the user's unread-count rules for their channels. */
interface UnreadContext {
  messages: Map<number, UnreadInfo>;
  counted: (channelId: number, topic: string) => boolean;
}

/**
 * What clients need to put re-unread messages back into their unread data (Zulip's
 * format_unread_message_details): `unmuted_stream_msg` says whether a channel message counts, and
 * `mentioned` follows the register's mentions (wildcards only where the message counts). `rows`
 * holds each message's flags as the batch leaves them.
 */
function unreadDetails(userId: number, rows: BatchRows, context: UnreadContext, ids: number[]): UnreadDetails {
  const wildcard = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;
  return Object.fromEntries(
    ids.map((id) => {
      const m = context.messages.get(id)!;
      const flags = rows.flags(id);
      const counted = m.channelId === null || context.counted(m.channelId, m.topic);
      const mentioned = flags & FLAG_BITS.mentioned || (flags & wildcard && counted) ? { mentioned: true as const } : {};
      const details: UnreadDetail =
        m.channelId !== null
          ? { type: 'stream', stream_id: m.channelId, topic: m.topic, unmuted_stream_msg: counted, ...mentioned }
          : { type: 'private', user_ids: memberIds(m.memberKey!).filter((other) => other !== userId), ...mentioned };
      return [String(id), details];
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

  /** A held row's flags as the batch's changes so far leave them. */
  flags(id: number): number {
    return this.now.get(id)!;
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
export const WRITE_FLAGS = `WITH input AS (SELECT * FROM unnest($2::int[], $3::int[], $4::int[], $5::bool[]) AS t(id, set_bits, clear_bits, created)),
  inserted AS (
    INSERT INTO "UserMessage" ("userId", "messageId", flags)
    SELECT $1, id, (${HISTORICAL_FLAGS} | set_bits) & ~clear_bits FROM input WHERE created
    ON CONFLICT DO NOTHING),
  updated AS (
    UPDATE "UserMessage" um SET flags = (um.flags | input.set_bits) & ~input.clear_bits
    FROM input WHERE um."userId" = $1 AND um."messageId" = input.id)
  SELECT pg_current_xact_id()::text AS xid`;

/** Writes the batch's changes (WRITE_FLAGS); the xid of the transaction that wrote them, if any was written. */
async function writeRows(app: App, userId: number, rows: BatchRows): Promise<number | undefined> {
  const w = rows.writes();
  if (!w.ids.length) return undefined;
  const [written] = await rawQuery<{ xid: string }>(app, WRITE_FLAGS, userId, w.ids, w.set, w.clear, w.created);
  return Number(written!.xid);
}

export const READ_ROWS = 'SELECT "messageId", flags FROM "UserMessage" WHERE "userId" = $1 AND "messageId" = ANY($2::int[])';

/**
 * READ_ROWS ($1, $2), and of the messages $3 the batch may mark unread: where each is and whether
 * the user follows its channel (an active subscription), and the user's mute settings of those
 * channels and their topics.
 */
export const READ_ROWS_AND_UNREAD = `SELECT
  (SELECT coalesce(json_agg(json_build_array(um."messageId", um.flags)), '[]') FROM "UserMessage" um
    WHERE um."userId" = $1 AND um."messageId" = ANY($2::int[])) AS rows,
  (SELECT coalesce(json_agg(json_build_array(m.id, m."channelId", m.topic, g."memberKey", coalesce(s.active, false), coalesce(s."isMuted", false))), '[]')
    FROM "Message" m LEFT JOIN "DirectMessageGroup" g ON g.id = m."directGroupId"
    LEFT JOIN "Subscription" s ON s."userId" = $1 AND s."channelId" = m."channelId"
    WHERE m.id = ANY($3::int[])) AS messages,
  (SELECT coalesce(json_agg(json_build_array(ut."channelId", ut.topic, ut.visibility)), '[]') FROM "UserTopic" ut
    WHERE ut."userId" = $1 AND ut."channelId" IN (SELECT "channelId" FROM "Message" WHERE id = ANY($3::int[]))) AS topics`;

type MessageJson = [id: number, channelId: number | null, topic: string, memberKey: string | null, subscribed: boolean, muted: boolean];

/**
 * The user's rows of the listed messages and, when the batch marks some unread, what that needs,
 * in one statement on the pool before the batch's transaction (or without one): there it reads
 * what it would read first thing in the transaction, since the user's actor runs one batch of
 * their flag changes at a time and the write sets and clears only the bits the batch changed.
 */
async function readListed(
  app: App,
  userId: number,
  listed: number[],
  toUnread: number[],
): Promise<{ rows: { messageId: number; flags: number }[]; unread: UnreadContext | null }> {
  if (!toUnread.length) return { rows: listed.length ? await rawQuery(app, READ_ROWS, userId, listed) : [], unread: null };
  const [read] = await rawQuery<{ rows: [number, number][]; messages: MessageJson[]; topics: [number, string, number][] }>(
    app,
    READ_ROWS_AND_UNREAD,
    userId,
    listed,
    toUnread,
  );
  const { rows, messages, topics } = read!;
  return {
    rows: rows.map(([messageId, flags]) => ({ messageId, flags })),
    unread: {
      messages: new Map(messages.map(([id, channelId, topic, memberKey, subscribed]) => [id, { channelId, topic, memberKey, subscribed }])),
      counted: countsTowardUnread(
        messages.flatMap(([, channelId, , , , muted]) => (muted && channelId !== null ? [channelId] : [])),
        topics.map(([channelId, topic, visibility]) => ({ channelId, topic, visibility })),
      ),
    },
  };
}

/**
 * A change alone in its batch that sets or clears a bit on listed messages (not marking unread),
 * in one statement: when the user holds a row of every listed message it changes the bit where it
 * differs ($4: set) and returns those ids; otherwise it writes nothing and returns the user's rows
 * (READ_ROWS), for the general path. The update rechecks the bit on a row changed meanwhile, so
 * `changed` holds exactly the rows it changed.
 */
export const SET_HELD_FLAGS = `WITH listed AS (SELECT DISTINCT unnest($2::int[]) AS id),
  held AS (SELECT um."messageId", um.flags FROM "UserMessage" um JOIN listed ON um."messageId" = listed.id WHERE um."userId" = $1),
  complete AS (SELECT (SELECT count(*) FROM held) = (SELECT count(*) FROM listed) AS ok),
  changed AS (
    UPDATE "UserMessage" um SET flags = CASE WHEN $4::bool THEN um.flags | $3::int ELSE um.flags & ~$3::int END
    WHERE um."userId" = $1 AND um."messageId" = ANY($2::int[]) AND ((um.flags & $3::int) = 0) = $4::bool AND (SELECT ok FROM complete)
    RETURNING um."messageId")
  SELECT (SELECT ok FROM complete) AS ok,
    (SELECT coalesce(array_agg("messageId" ORDER BY "messageId"), '{}') FROM changed) AS changed,
    CASE WHEN EXISTS (SELECT FROM changed) THEN pg_current_xact_id()::text END AS xid,
    CASE WHEN NOT (SELECT ok FROM complete) THEN (SELECT coalesce(json_agg(json_build_array("messageId", flags)), '[]') FROM held) END AS rows`;

/**
 * SET_HELD_FLAGS for `change`, its event sent once the statement has committed; or, when the user
 * lacks a row of a listed message, the user's rows of them.
 */
async function setHeldFlags(
  app: App,
  realm: RealmInfo,
  { user, ids, op, flag }: Extract<FlagChange, { kind: 'messages' }>,
): Promise<{ result: FlagResult } | { rows: { messageId: number; flags: number }[] }> {
  const [out] = await rawQuery<{ ok: boolean; changed: number[]; xid: string | null; rows: [number, number][] | null }>(
    app,
    SET_HELD_FLAGS,
    user.id,
    ids,
    FLAG_BITS[flag],
    op === 'add',
  );
  if (!out!.ok) return { rows: out!.rows!.map(([messageId, flags]) => ({ messageId, flags })) };
  const { changed, xid } = out!;
  // Without a write the event changes nothing: a queue may get it twice.
  sendCommitted(app, [{ realmId: realm.id, userIds: [user.id], event: eventOf(op, flag, changed), ...(xid === null ? {} : { xid: Number(xid) }) }]);
  const stored = storedOrLater(app.bus);
  if (stored) await stored;
  return { result: { changed, ignoredChannels: [] } };
}

/** Whether a change marks messages unread (its event then carries what clients need to count them again). */
const marksUnread = (c: FlagChange): c is Extract<FlagChange, { kind: 'messages' }> => c.kind === 'messages' && c.op === 'remove' && c.flag === 'read';

/** Where marking unread is ignored: the channel of each message in a channel the user does not follow. */
function unfollowedChannels(unread: UnreadContext | null): Map<number, number> {
  return new Map([...(unread?.messages ?? [])].flatMap(([id, m]) => (m.channelId !== null && !m.subscribed ? [[id, m.channelId] as const] : [])));
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

type Outcome = { change: FlagChange; event: EventOf<'update_message_flags'> | null; result: FlagResult } | ApiError;

/** Works out the batch's changes in order against its rows: a change refused on its own answers its error, the others go on. */
async function workOut(
  app: App,
  realm: RealmInfo,
  rows: BatchRows,
  unfollowed: Map<number, number>,
  changes: FlagChange[],
): Promise<{ outcomes: Outcome[]; read: { ids: Set<number>; all: boolean } }> {
  const read = { ids: new Set<number>(), all: false };
  const outcomes: Outcome[] = [];
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
  return { outcomes, read };
}

/** Each change's answer and its event, in order (marking unread: with the messages' details). */
function answers(
  userId: number,
  rows: BatchRows,
  unread: UnreadContext | null,
  outcomes: Outcome[],
): { results: (FlagResult | ApiError)[]; events: EventOf<'update_message_flags'>[] } {
  const events: EventOf<'update_message_flags'>[] = [];
  const results = outcomes.map((o) => {
    if (o instanceof ApiError) return o;
    if (!o.event) return o.result;
    if (o.event.op === 'remove' && marksUnread(o.change)) o.event.message_details = unreadDetails(userId, rows, unread!, o.result.changed);
    events.push(o.event);
    return o.result;
  });
  return { results, events };
}

/**
 * A user's batch of flag changes: their rows read first (readListed), then each change worked
 * out in order, the rows written at once, and one event per change, in order. A batch of listed
 * messages the user holds rows for needs no check in the database (they hold them) and writes one
 * statement, which commits on its own; a batch that creates rows (after the access check), marks
 * channels read or withdraws push notifications does it all in one transaction. The common batch,
 * one change on listed messages other than marking unread, first tries SET_HELD_FLAGS, whose
 * rows stand in for readListed's when the user lacks one.
 */
async function writeFlagBatch(app: App, realm: RealmInfo, changes: FlagChange[]): Promise<(FlagResult | ApiError)[]> {
  const userId = changes[0]!.user.id;
  const marksRead = changes.some((c) => c.kind !== 'messages' || (c.op === 'add' && c.flag === 'read'));
  const withoutTransaction = !app.cluster && !inTransaction() && !(marksRead && app.config.PUSH_RELAY_URL);
  const [only] = changes;
  let held: { messageId: number; flags: number }[] | undefined;
  if (withoutTransaction && changes.length === 1 && only!.kind === 'messages' && !marksUnread(only!)) {
    const set = await setHeldFlags(app, realm, only);
    if ('result' in set) return [set.result];
    held = set.rows;
  }
  const listed = [...new Set(changes.flatMap((c) => (c.kind === 'messages' ? c.ids : [])))];
  const toUnread = [...new Set(changes.filter(marksUnread).flatMap((c) => c.ids))];
  const known = held ? { rows: held, unread: null } : await readListed(app, userId, listed, toUnread);
  const rows = new BatchRows();
  rows.found(known.rows);
  const unfollowed = unfollowedChannels(known.unread);
  const alone = withoutTransaction && changes.every((c) => c.kind === 'messages' && c.ids.every((id) => rows.has(id)));
  if (alone) {
    const { outcomes } = await workOut(app, realm, rows, unfollowed, changes);
    const xid = await writeRows(app, userId, rows);
    const { results, events } = answers(userId, rows, known.unread, outcomes);
    // Without a write the events change nothing: a queue may get them twice.
    sendCommitted(
      app,
      events.map((event) => ({ realmId: realm.id, userIds: [userId], event, ...(xid === undefined ? {} : { xid }) })),
    );
    const stored = storedOrLater(app.bus);
    if (stored) await stored;
    return results;
  }
  return atomic(app, async () => {
    const { outcomes, read } = await workOut(app, realm, rows, unfollowed, changes);
    await writeRows(app, userId, rows);
    await withdrawNotifications(app, realm.id, userId, read.all ? null : [...read.ids]);
    const { results, events } = answers(userId, rows, known.unread, outcomes);
    for (const event of events) sendOnCommit({ realmId: realm.id, userIds: [userId], event });
    return results;
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
 * One batch of a sender's messages the user has unread, marked read: the oldest after $3 from
 * sender $2, walked on the unread index and the sender's index together in id order.
 */
export const MARK_SENDER_READ = `WITH batch AS (
    SELECT um."messageId" FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
     WHERE um."userId" = $1 AND (um.flags & ${FLAG_BITS.read}) = 0 AND um."messageId" > $3 AND m."senderId" = $2 AND m.id > $3
     ORDER BY um."messageId" LIMIT ${MARK_READ_BATCH})
  UPDATE "UserMessage" um SET flags = um.flags | ${FLAG_BITS.read} FROM batch WHERE um."userId" = $1 AND um."messageId" = batch."messageId"
  RETURNING um."messageId"`;

/**
 * In a change run by asUser: marks read one batch of the user's unread messages from `senderId`
 * after message `after`, as muting the sender does (Zulip's do_mark_muted_user_messages_as_read:
 * its event lists the messages, none is sent when none was unread, their push notifications are
 * withdrawn). Whether unread ones may remain after `last`, the batch's newest.
 */
export async function markSenderBatchAsRead(app: App, realm: RealmInfo, user: User, senderId: number, after: number): Promise<{ more: boolean; last: number }> {
  const changed = (await rawQuery<{ messageId: number }>(app, MARK_SENDER_READ, user.id, senderId, after)).map((r) => r.messageId).sort((a, b) => a - b);
  if (changed.length) {
    sendOnCommit({ realmId: realm.id, userIds: [user.id], event: eventOf('add', 'read', changed) });
    await withdrawNotifications(app, realm.id, user.id, changed);
  }
  return { more: changed.length === MARK_READ_BATCH, last: changed.at(-1) ?? after };
}

/**
 * The rest of a sender's messages the user has unread after `after`, a batch per transaction
 * through the user's actor (a user with 100,000 unread messages from them holds no long
 * transaction); new messages from a muted sender arrive read, so the walk ends.
 */
export async function markSenderAsRead(app: App, realm: RealmInfo, user: User, senderId: number, after: number): Promise<void> {
  for (let more = true; more; ) ({ more, last: after } = await asUser(app, user, () => markSenderBatchAsRead(app, realm, user, senderId, after)));
}

/** POST /mark_stream_as_read and /mark_topic_as_read: the unread rows a batch at a time through the user's actor. */
export async function markChannelAsRead(app: App, realm: RealmInfo, user: User, channelId: number, topic?: string): Promise<void> {
  for (let after = 0; ; ) {
    const { more, last } = await changeFlags(app, realm, { kind: 'channel', user, channelId, topic, after });
    if (!more) return;
    after = last!;
  }
}
