// Storing new messages: one statement writes the messages, all their UserMessage rows and the work
// they queue, whatever the number of recipients; channels' batches ready at once share a statement.
import type { App } from '../app.ts';
import { LockSpace } from '../cluster/locks.ts';
import type { Message, Prisma } from '../db/generated/client.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { inTransaction } from '../db/transaction.ts';
import { BOT_TYPES } from '../domain/bots.ts';
import { FLAG_BITS, IS_PRIVATE } from '../domain/message-flags.ts';
import type { FullMessage } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { linksImage } from '../queries/render-context.ts';
import { TopicVisibility } from '../queries/user-topics.ts';
import type { RecipientFlags } from './messages-mentions.ts';
import type { PreparedMessage } from './messages-prepare.ts';
import { onCommit, rawQuery } from './transaction.ts';

export interface SendOptions {
  client: string;
  readBySender: boolean;
  queueId?: string;
  localId?: string;
  /** No inline previews of its links (Zulip's no_previews: integrations whose images need a login). */
  noPreviews?: boolean;
}

export interface DeliveryOptions extends SendOptions {
  /** Users for whom the new message starts out read (the sender's own setting aside). */
  readFor?: ReadonlySet<number>;
}

/** One message to write: what was checked and rendered, and each recipient's flag bits. */
export interface MessageToStore extends Outgoing, RecipientFlags {
  directGroupId: number | null;
}

/** A message waiting in its channel's batch: its flags are worked out with the whole batch's. */
export interface Outgoing {
  p: PreparedMessage;
  opts: DeliveryOptions;
}

/** Claims the sender's uploads the message links to; returns whether any was found. */
export async function claimAttachments(tx: Prisma.TransactionClient, realmId: number, ownerId: number, messageId: number, pathIds: string[]): Promise<boolean> {
  if (pathIds.length === 0) return false;
  const attachments = await tx.attachment.findMany({ where: { realmId, ownerId, pathId: { in: pathIds } }, select: { id: true } });
  if (attachments.length === 0) return false;
  await tx.attachmentMessage.createMany({ data: attachments.map((a) => ({ attachmentId: a.id, messageId })), skipDuplicates: true });
  return true;
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
    INSERT INTO "UserMessage" ("userId", "messageId", flags, "channelId", topic, "directGroupId")
    -- Each row carries its conversation, which an unread one needs (register reads it from the unread index).
    SELECT u, numbered.id, CASE WHEN input.direct_group IS NULL THEN f ELSE f | ${IS_PRIVATE} END, input.channel, input.topic, input.direct_group
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
export const INSERT_MESSAGES = [false, true].map((push) => [false, true].map((hooks) => [false, true].map((outbox) => insertMessages(push, hooks, outbox))));

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
  const sql = INSERT_MESSAGES[app.config.PUSH_RELAY_URL ? 1 : 0]![triggers.length > 0 ? 1 : 0]![outbox ? 1 : 0]!;
  const params = [
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
  ];
  type Row = Message & { xid: string; firstInChannel: boolean; pushQueued: boolean; hookQueued: boolean; emailNoted: boolean; outboxRow: string | null };
  // Its arrays' lengths vary at every call: on its own it is planned once (db/client.ts queryPlannedOnce).
  const rows = inTransaction() ? await rawQuery<Row>(app, sql, ...params) : await app.db.queryPlannedOnce<Row>(sql, params);
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
 * together in the next: the fewer in flight, the more messages each commit carries. A statement
 * costs PostgreSQL about 2.5 ms of CPU whatever it carries (bench/micro/send-statement.ts: 0.9-1.1
 * ms a message at 3 a statement, 0.33 at 32), so 4 in flight (3.4 messages each with 32 senders)
 * spent more on statements than 2 do.
 */
const STATEMENTS_IN_FLIGHT = 2;
/** Channel batches one statement takes at most (each holds up to actors/serial.ts MAX_BATCH_ITEMS messages). */
const BATCHES_PER_STATEMENT = 32;

/** Channels' batches ready at once share a statement (src/db/group-commit.ts); one per app. */
const channelWrites = new WeakMap<App, GroupCommit<StoreRequest, Stored>>();

/**
 * Writes the messages: in the open transaction if there is one, else together with other
 * channels' batches ready at the same time.
 */
export async function storeMessages(app: App, realm: RealmInfo, batch: readonly MessageToStore[]): Promise<Stored> {
  if (inTransaction()) return (await storeAll(app, [{ realm, batch }]))[0]!;
  let writes = channelWrites.get(app);
  if (!writes) channelWrites.set(app, (writes = new GroupCommit((requests) => storeAll(app, requests), STATEMENTS_IN_FLIGHT, BATCHES_PER_STATEMENT)));
  return writes.write({ realm, batch });
}

/** Tests of the outbox: the process is killed at once if one of the messages contains `marker`. */
export function dieIfTold(marker: string | undefined, batch: readonly MessageToStore[]): void {
  if (marker && batch.some((m) => m.p.content.includes(marker))) process.kill(process.pid, 'SIGKILL');
}
