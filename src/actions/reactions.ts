// Emoji reactions (spec 4.11; Zulip's check_add_reaction and remove_reaction): a reaction is one
// user's vote for a (reaction_type, emoji_code) pair on a message.
// Group commit: reactions to a channel's messages that arrive while its actor is writing wait in
// one batch, worked out in order (under the messages' row locks) against the reactions the batch
// read, written with one statement per table in one transaction, then answered and announced
// each as alone. What names the emoji depends on no message: it is worked out before queueing.
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { HISTORICAL_FLAGS } from '../domain/message-flags.ts';
import { ApiError, badRequest } from '../errors.ts';
import { actionRecipientIds, checkHistoryAccess, invalidMessage } from '../queries/messages.ts';
import { canonicalReactionType, checkEmojiRequest, emojiByName, requestedEmoji, type EmojiRef } from '../queries/reactions.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail } from '../queries/users.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import { rawQuery } from '../db/transaction.ts';
import { EVENT_SCHEMAS, type EventOf } from '../events/schemas.ts';

export interface ReactionRequest {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

interface StoredReaction {
  emojiName: string;
  emojiCode: string;
  reactionType: string;
}

const reactionExists = () => new ApiError('Reaction already exists.', 'REACTION_ALREADY_EXISTS');
const reactionMissing = () => new ApiError("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');

/** A check's refusal, kept to be thrown where the change makes that check. */
type Checked<T> = T | ApiError;

function checked<T>(work: Promise<T>): Promise<Checked<T>> {
  return work.catch((err: unknown) => {
    if (err instanceof ApiError) return err;
    throw err;
  });
}

function unwrapChecked<T>(outcome: Checked<T>): T {
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}

/**
 * One user's reaction change, waiting in its channel's batch. `check`: whether the request's name,
 * code and type agree, needed when it starts a new reaction.
 */
type ReactionChange = { user: User; messageId: number } & (
  | { op: 'add'; emojiName: string; emoji: Checked<EmojiRef>; check: Checked<void> }
  | { op: 'remove'; emoji: Checked<EmojiRef> }
);

interface Vote {
  /** Absent for a vote the batch adds. */
  id?: number;
  userId: number;
  emojiName: string;
}

interface MessageRow {
  id: number;
  realmId: number;
  channelId: number | null;
}

/**
 * What a batch sees of its messages: the rows (locked), their channels, which users hold a row
 * for which message, and every vote for each emoji the batch names, oldest first, as its changes
 * so far leave them.
 */
class BatchReactions {
  readonly deleted: number[] = [];
  readonly added: { messageId: number; userId: number; emojiName: string; emojiCode: string; reactionType: string }[] = [];
  /** New historical rows, as `userId:messageId`. */
  readonly newRows = new Set<string>();

  constructor(
    readonly messages: Map<number, MessageRow>,
    readonly channels: Map<number, Channel>,
    private readonly rows: Set<string>,
    private readonly votes: Map<string, Vote[]>,
  ) {}

  holdsRow(userId: number, messageId: number): boolean {
    const key = `${userId}:${messageId}`;
    return this.rows.has(key) || this.newRows.has(key);
  }

  votesFor(messageId: number, { code, type }: EmojiRef): Vote[] {
    const key = voteKey(messageId, code, type);
    let list = this.votes.get(key);
    if (!list) this.votes.set(key, (list = []));
    return list;
  }

  add(messageId: number, userId: number, emojiName: string, { code, type }: EmojiRef): void {
    this.votesFor(messageId, { code, type }).push({ userId, emojiName });
    this.added.push({ messageId, userId, emojiName, emojiCode: code, reactionType: type });
  }

  remove(messageId: number, vote: Vote, emoji: EmojiRef): void {
    const list = this.votesFor(messageId, emoji);
    list.splice(list.indexOf(vote), 1);
    if (vote.id !== undefined) return void this.deleted.push(vote.id);
    // A vote this batch added and took back never reaches the table.
    this.added.splice(
      this.added.findIndex((a) => a.messageId === messageId && a.userId === vote.userId && a.emojiCode === emoji.code && a.reactionType === emoji.type),
      1,
    );
  }
}

const voteKey = (messageId: number, code: string, type: string) => `${messageId}:${type}:${code}`;

const channelOf = (batch: BatchReactions, messageId: number): Channel | null => {
  const channelId = batch.messages.get(messageId)!.channelId;
  return channelId === null ? null : batch.channels.get(channelId)!;
};

/**
 * The users' rows, the votes for each emoji the batch names and the messages' channels, in one
 * statement: an array of `[userId, messageId]` pairs, the votes oldest first, the channel rows.
 */
const READ_ROWS_AND_VOTES = `SELECT
  (SELECT coalesce(json_agg(json_build_array(um."userId", um."messageId")), '[]') FROM "UserMessage" um
    WHERE (um."userId", um."messageId") IN (SELECT * FROM unnest($1::int[], $2::int[]))) AS rows,
  (SELECT coalesce(json_agg(v ORDER BY v.id), '[]') FROM (
    SELECT id, "messageId", "userId", "emojiName", "emojiCode", "reactionType" FROM "Reaction"
    WHERE ("messageId", "emojiCode", "reactionType") IN (SELECT * FROM unnest($3::int[], $4::text[], $5::text[]))) v) AS votes,
  (SELECT coalesce(json_agg(c), '[]') FROM "Channel" c WHERE c.id = ANY($6::int[])) AS channels`;

/** A Channel row as json_agg gives it: its timestamp (UTC, as Prisma reads it) as text without a zone. */
type ChannelJson = Omit<Channel, 'dateCreated'> & { dateCreated: string };
const channelFromJson = (c: ChannelJson): Channel => ({ ...c, dateCreated: new Date(`${c.dateCreated}Z`) });

type VoteRow = Required<Vote> & { messageId: number; emojiCode: string; reactionType: string };

/**
 * Reads what a batch needs, holding its messages' rows until the commit. The lock comes first,
 * on its own: a statement that waited for it would read the other tables as they were before.
 */
async function readBatch(app: App, changes: ReactionChange[]): Promise<BatchReactions> {
  const ids = [...new Set(changes.map((c) => c.messageId))];
  const messages = await app.prisma.$queryRawUnsafe<MessageRow[]>(
    'SELECT id, "realmId", "channelId" FROM "Message" WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE',
    ids,
  );
  const channelIds = [...new Set(messages.flatMap((m) => (m.channelId === null ? [] : [m.channelId])))];
  const keys = changes.flatMap((c) => (c.emoji instanceof ApiError ? [] : [[c.messageId, c.emoji.code, c.emoji.type] as const]));
  const [read] = await app.prisma.$queryRawUnsafe<{ rows: [number, number][]; votes: VoteRow[]; channels: ChannelJson[] }[]>(
    READ_ROWS_AND_VOTES,
    changes.map((c) => c.user.id),
    changes.map((c) => c.messageId),
    keys.map((k) => k[0]),
    keys.map((k) => k[1]),
    keys.map((k) => k[2]),
    channelIds,
  );
  const { rows, votes } = read!;
  const channels = read!.channels.map(channelFromJson);
  const byKey = new Map<string, Vote[]>();
  for (const v of votes) {
    const key = voteKey(v.messageId, v.emojiCode, v.reactionType);
    const list = byKey.get(key) ?? [];
    byKey.set(key, list);
    list.push({ id: v.id, userId: v.userId, emojiName: v.emojiName });
  }
  return new BatchReactions(
    new Map(messages.map((m) => [m.id, m])),
    new Map(channels.map((c) => [c.id, c])),
    new Set(rows.map(([userId, messageId]) => `${userId}:${messageId}`)),
    byKey,
  );
}

/** The message, if the user may react to it: readable, and not in an archived channel (under its row lock). */
async function checkReactable(app: App, realm: RealmInfo, batch: BatchReactions, { user, messageId }: ReactionChange): Promise<void> {
  const message = batch.messages.get(messageId);
  if (!message || message.realmId !== realm.id) throw invalidMessage();
  const channel = channelOf(batch, messageId);
  if (!batch.holdsRow(user.id, messageId)) await checkHistoryAccess(app, realm, user, channel);
  if (channel?.isArchived) throw invalidMessage();
}

/** Works out one change against the batch so far; returns the reaction its event names. */
async function applyChange(app: App, realm: RealmInfo, batch: BatchReactions, change: ReactionChange): Promise<StoredReaction> {
  await checkReactable(app, realm, batch, change);
  const { user, messageId } = change;
  const emoji = unwrapChecked(change.emoji);
  const votes = batch.votesFor(messageId, emoji);
  const own = votes.find((v) => v.userId === user.id);
  if (change.op === 'remove') {
    if (!own) throw reactionMissing();
    batch.remove(messageId, own, emoji);
    return { emojiName: own.emojiName, emojiCode: emoji.code, reactionType: emoji.type };
  }
  if (own) throw reactionExists();
  // A vote for a reaction already on the message keeps that reaction's name, so one image never
  // shows under two names, and needs no validation (its custom emoji may be deactivated since).
  if (!votes[0]) unwrapChecked(change.check);
  const emojiName = votes[0]?.emojiName ?? change.emojiName;
  // Reacting to a channel message one never received gives a historical row, as starring does.
  if (!batch.holdsRow(user.id, messageId)) batch.newRows.add(`${user.id}:${messageId}`);
  batch.add(messageId, user.id, emojiName, emoji);
  return { emojiName, emojiCode: emoji.code, reactionType: emoji.type };
}

/**
 * The batch's new reactions, with ids drawn in its order (the votes' order, which names a
 * reaction), and its new historical rows, in one statement.
 */
const INSERT_REACTIONS = `WITH ids AS (SELECT nextval(pg_get_serial_sequence('"Reaction"', 'id')) AS id FROM generate_series(1, $1::int)),
  numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM ids),
  historical AS (
    INSERT INTO "UserMessage" ("userId", "messageId", flags)
    SELECT u, m, ${HISTORICAL_FLAGS} FROM unnest($7::int[], $8::int[]) AS t(u, m) ON CONFLICT DO NOTHING)
  INSERT INTO "Reaction" (id, "messageId", "userId", "emojiName", "emojiCode", "reactionType")
  SELECT numbered.id, m, u, name, code, type
  FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS t(m, u, name, code, type, n) JOIN numbered USING (n)`;

async function writeReactions(app: App, batch: BatchReactions): Promise<void> {
  // Deleted first: a reaction taken back and given again in one batch is a new row with the same key.
  if (batch.deleted.length) await app.prisma.$executeRawUnsafe('DELETE FROM "Reaction" WHERE id = ANY($1::int[])', batch.deleted);
  if (batch.added.length === 0 && batch.newRows.size === 0) return;
  const column = <K extends keyof BatchReactions['added'][number]>(key: K) => batch.added.map((a) => a[key]);
  const newRows = [...batch.newRows].map((key) => key.split(':').map(Number) as [number, number]);
  await app.prisma.$executeRawUnsafe(
    INSERT_REACTIONS,
    batch.added.length,
    column('messageId'),
    column('userId'),
    column('emojiName'),
    column('emojiCode'),
    column('reactionType'),
    newRows.map((r) => r[0]),
    newRows.map((r) => r[1]),
  );
}

/**
 * Who hears of each change: those who would have when it was written alone. A historical row
 * the batch gave a user makes them hear of that change and the later ones on the message, not
 * of the earlier ones.
 */
async function recipientsOf(
  app: App,
  batch: BatchReactions,
  changes: { messageId: number; newRow: number | null }[],
  before: Map<number, Set<number>>,
): Promise<(readonly number[])[]> {
  const after = new Map<number, readonly number[]>();
  for (const messageId of new Set(changes.map((c) => c.messageId))) after.set(messageId, await actionRecipientIds(app, messageId, channelOf(batch, messageId)));
  const given = new Map<number, Set<number>>();
  return changes.map(({ messageId, newRow }) => {
    const base = before.get(messageId);
    if (!base) return after.get(messageId)!;
    const sofar = given.get(messageId) ?? new Set<number>();
    given.set(messageId, sofar);
    if (newRow !== null) sofar.add(newRow);
    return after.get(messageId)!.filter((id) => base.has(id) || sofar.has(id));
  });
}

/** A change worked out: the reaction its event names, and the user it gave a historical row, if any. */
interface Done {
  change: ReactionChange;
  reaction: StoredReaction;
  newRow: number | null;
}

/**
 * A batch of reaction changes in one transaction: each worked out in order (one refused answers
 * its error, the others go on), written at once, then one event per change, in order.
 */
async function writeReactionBatch(app: App, realm: RealmInfo, changes: ReactionChange[]): Promise<(void | ApiError)[]> {
  return atomic(app, async () => {
    const batch = await readBatch(app, changes);
    const outcomes: (Done | ApiError)[] = [];
    for (const change of changes) {
      const rowsBefore = batch.newRows.size;
      try {
        const reaction = await applyChange(app, realm, batch, change);
        outcomes.push({ change, reaction, newRow: batch.newRows.size > rowsBefore ? change.user.id : null });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        outcomes.push(err);
      }
    }
    const done = outcomes.filter((o): o is Done => !(o instanceof ApiError));
    // Who heard before the batch's new rows, for the messages that got some.
    const before = new Map<number, Set<number>>();
    for (const { change } of done.filter((o) => o.newRow !== null)) {
      if (!before.has(change.messageId))
        before.set(change.messageId, new Set(await actionRecipientIds(app, change.messageId, channelOf(batch, change.messageId))));
    }
    await writeReactions(app, batch);
    const recipients = await recipientsOf(
      app,
      batch,
      done.map((o) => ({ messageId: o.change.messageId, newRow: o.newRow })),
      before,
    );
    for (const [i, { change, reaction }] of done.entries())
      sendOnCommit({ realmId: realm.id, userIds: recipients[i]!, event: reactionEvent(app, realm, change, reaction) });
    return outcomes.map((o) => (o instanceof ApiError ? o : undefined));
  });
}

function reactionEvent(app: App, realm: RealmInfo, { user, messageId, op }: ReactionChange, r: StoredReaction): EventOf<'reaction'> {
  return {
    type: 'reaction',
    op,
    user_id: user.id,
    // Deprecated, but the React Native app still reads it.
    user: { user_id: user.id, email: apiEmail(app, realm, user), full_name: user.fullName },
    message_id: messageId,
    emoji_name: r.emojiName,
    emoji_code: r.emojiCode,
    reaction_type: EVENT_SCHEMAS['reaction/add'].shape.reaction_type.parse(r.reactionType),
  };
}

/**
 * Runs a reaction change in its channel's order, joining the batch waiting there; a direct
 * message's alone, in its own transaction.
 */
async function changeReaction(app: App, realm: RealmInfo, change: ReactionChange): Promise<void> {
  // Only where it goes: who may react is checked in the batch, under the message's lock.
  const [seen] = await rawQuery<{ channelId: number | null }>(
    app,
    'SELECT "channelId" FROM "Message" WHERE id = $1 AND "realmId" = $2',
    change.messageId,
    realm.id,
  );
  if (!seen) throw invalidMessage();
  const write = (changes: ReactionChange[]) => writeReactionBatch(app, realm, changes);
  if (seen.channelId !== null) return app.channels.inBatch<ReactionChange, void>(seen.channelId, 'reactions', change, write);
  const [outcome] = await write([change]);
  unwrapChecked(outcome);
}

export async function addReaction(app: App, realm: RealmInfo, user: User, messageId: number, req: ReactionRequest & { emojiName: string }): Promise<void> {
  const emoji = await checked(requestedEmoji(app, realm, req.emojiName, req.emojiCode, req.reactionType));
  const check = emoji instanceof ApiError ? emoji : await checked(checkEmojiRequest(app, realm, req.emojiName, emoji));
  await changeReaction(app, realm, { op: 'add', user, messageId, emojiName: req.emojiName, emoji, check });
}

/** The emoji a removal names: the code it gives, or what its name means now. */
async function namedForRemoval(app: App, realm: RealmInfo, req: ReactionRequest): Promise<EmojiRef> {
  const type = req.reactionType === undefined ? undefined : canonicalReactionType(req.reactionType);
  if (req.emojiCode !== undefined) return { code: req.emojiCode, type: type ?? 'unicode_emoji' };
  if (req.emojiName === undefined) throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
  const named = await emojiByName(app, realm, req.emojiName);
  // Zulip assumes unicode_emoji here even for a custom emoji's name, which then never matches.
  return { code: named.code, type: type ?? named.type };
}

/**
 * Removal trusts the stored row instead of validating the emoji, so reactions with since-renamed
 * or deactivated custom emoji can still be taken back.
 */
export async function removeReaction(app: App, realm: RealmInfo, user: User, messageId: number, req: ReactionRequest): Promise<void> {
  await changeReaction(app, realm, { op: 'remove', user, messageId, emoji: await checked(namedForRemoval(app, realm, req)) });
}
