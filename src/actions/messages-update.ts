// The writes and events of an edit that checkUpdate (messages-edit.ts) approved, in the same
// transaction: the content, flags, uploads, topic/channel and edit history of every moved message,
// update_message (and delete_message for users losing access) on commit; then the Notification Bot.
import type { App } from '../app.ts';
import { topicLinks, type CompiledLinkifiers } from '../markdown/index.ts';
import { topicLinkSyntax } from '../markdown/link-syntax.ts';
import { compiledLinkifiers } from '../queries/linkifiers.ts';
import type { Channel, Prisma, User } from '../db/generated/client.ts';
import { FLAG_BITS, flagList } from '../domain/message-flags.ts';
import { Role } from '../domain/roles.ts';
import type { RenderResult } from '../markdown/types.ts';
import { subscriberIds } from '../queries/channels.ts';
import { otherVisibleTopicMessage, timestamp, topicHasMessages, visibleTopicMessages, type FullMessage } from '../queries/messages.ts';
import { alertedUsers, messageAlertWords } from '../queries/recipient-settings.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { topicFollowers } from '../queries/user-topics.ts';
import { deleteMessages } from './messages-delete.ts';
import { notificationBot, sendNotification } from './messages.ts';
import { silentMention } from './messages-content.ts';
import { mentionedUsers } from './messages-mentions.ts';
import { participantsIfNeeded } from './messages-prepare.ts';
import { claimAttachments, wakeEmailWorker } from './messages-store.ts';
import { linksImage } from '../queries/render-context.ts';
import { attachmentDict } from '../queries/uploads.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import { moveTopicSettings } from './user-topics.ts';
import type { EventOf } from '../events/schemas.ts';

export interface EditPlan {
  message: FullMessage;
  user: User;
  content: string | undefined;
  rendered: RenderResult | null;
  propagateMode: 'change_one' | 'change_later' | 'change_all';
  notifyOld: boolean;
  notifyNew: boolean;
  origChannel: Channel | null;
  targetChannel: Channel | null;
  targetTopic: string;
  topicChanged: boolean;
  channelChanged: boolean;
  resolve: 'resolved' | 'unresolved' | null;
}

const moved = (p: EditPlan) => p.topicChanged || p.channelChanged;
/** The flags a message's content decides, set again when the content changes. */
const RENDERED_MASK = FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.has_alert_word;
/** Zulip deletes a fresh resolve notice instead of posting its opposite within this time. */
const RESOLVE_UNDO_GRACE_SECONDS = 60;

/**
 * A topic move writes this many messages per transaction: the edited message's batch with the
 * checks, the others after it, each on its own through the channel's actor, so moving a topic of
 * 100,000 messages never holds a transaction, or the channel's writes, for seconds.
 */
export const MOVE_BATCH = 1000;

/**
 * The moved messages (the target alone, or it and the later / all visible ones of its topic),
 * and whether that leaves none the user can see in the old topic. Only the moved messages are
 * read, and for what stays, whether there is one: moving one message of a long topic reads one row.
 */
async function changedMessageIds(app: App, p: EditPlan): Promise<{ ids: number[]; movedAll: boolean }> {
  const m = p.message;
  const orig = p.origChannel!;
  if (!moved(p) || p.propagateMode === 'change_one') {
    return { ids: [m.id], movedAll: moved(p) && !(await otherVisibleTopicMessage(app, p.user, orig, m.topic, m.id)) };
  }
  const all = p.propagateMode === 'change_all';
  const ids = (await visibleTopicMessages(app, p.user, orig, m.topic, all ? 0 : m.id)).map((v) => v.id);
  return {
    ids: [...new Set([...ids, m.id])].sort((a, b) => a - b),
    movedAll: all || !(await otherVisibleTopicMessage(app, p.user, orig, m.topic, m.id, m.id)),
  };
}

/** The edited message's batch first (it carries the content and the checks), then the rest in order. */
function moveBatches(ids: number[], editedId: number): number[][] {
  const others = ids.filter((id) => id !== editedId);
  const batches = [[editedId, ...others.slice(0, MOVE_BATCH - 1)].sort((a, b) => a - b)];
  for (let i = MOVE_BATCH - 1; i < others.length; i += MOVE_BATCH) batches.push(others.slice(i, i + MOVE_BATCH));
  return batches;
}

function historyEntries(p: EditPlan, ts: number): { full: Record<string, unknown>; moveOnly: Record<string, unknown> } {
  const moveOnly: Record<string, unknown> = { user_id: p.user.id, timestamp: ts };
  if (p.channelChanged) Object.assign(moveOnly, { prev_stream: p.origChannel!.id, stream: p.targetChannel!.id });
  if (p.topicChanged) Object.assign(moveOnly, { prev_topic: p.message.topic, topic: p.targetTopic });
  const full = { ...moveOnly };
  if (p.content !== undefined) Object.assign(full, { prev_content: p.message.content, prev_rendered_content: p.message.renderedContent });
  return { full, moveOnly };
}

/** Re-links the message's uploads; returns the acting user's files no message references any more. */
async function relinkUploads(
  tx: Prisma.TransactionClient,
  realm: RealmInfo,
  p: EditPlan,
): Promise<{ detached: Record<string, unknown>[]; hasAttachment: boolean }> {
  const m = p.message;
  const pathIds = p.rendered!.uploadPathIds;
  const current = await tx.attachmentMessage.findMany({ where: { messageId: m.id }, include: { attachment: true } });
  const removed = current.filter((c) => !pathIds.includes(c.attachment.pathId));
  if (removed.length) await tx.attachmentMessage.deleteMany({ where: { messageId: m.id, attachmentId: { in: removed.map((r) => r.attachmentId) } } });
  const claimed = await claimAttachments(tx, realm.id, m.senderId, m.id, pathIds);
  const mine = removed.filter((r) => r.attachment.ownerId === p.user.id).map((r) => r.attachment);
  const stillUsed = new Set(
    (await tx.attachmentMessage.findMany({ where: { attachmentId: { in: mine.map((a) => a.id) } }, select: { attachmentId: true } })).map(
      (r) => r.attachmentId,
    ),
  );
  const detached = mine.filter((a) => !stillUsed.has(a.id)).map((a) => attachmentDict(a, []));
  return { detached, hasAttachment: claimed || current.length > removed.length };
}

/** New content, re-rendered flags (one statement for all recipients) and uploads. */
async function writeContent(app: App, tx: Prisma.TransactionClient, realm: RealmInfo, p: EditPlan, now: Date): Promise<Record<string, unknown>[]> {
  const m = p.message;
  const r = p.rendered!;
  const mentioned = await mentionedUsers(app, realm, r);
  const participants = await participantsIfNeeded(app, r, m.channelId, m.topic);
  participants.add(m.senderId);
  const alerted = alertedUsers(await messageAlertWords(app, m.id), r.alertWordText);
  const uploads = await relinkUploads(tx, realm, p);
  await tx.message.update({
    where: { id: m.id },
    data: {
      content: p.content!,
      renderedContent: r.html,
      isMeMessage: r.isMeMessage,
      hasLink: r.links.length > 0,
      hasImage: linksImage(r.links),
      hasAttachment: uploads.hasAttachment,
      lastEditTime: now,
    },
  });
  // Who the edit newly mentions (or alerts) in a channel, unread, is noted for a missed-message
  // email, as a new message would be (src/mail/missed-messages.ts); `old` is the rows before the update.
  const noted = await tx.$executeRawUnsafe(
    `WITH updated AS (
       UPDATE "UserMessage" um SET flags = (um.flags & ~${RENDERED_MASK})
         | CASE WHEN um."userId" = ANY($2::int[]) THEN ${FLAG_BITS.mentioned} ELSE 0 END
         | ${r.wildcardMention ? FLAG_BITS.stream_wildcard_mentioned : 0}
         | CASE WHEN um."userId" = ANY($3::int[]) AND $4 THEN ${FLAG_BITS.topic_wildcard_mentioned} ELSE 0 END
         | CASE WHEN um."userId" = ANY($5::int[]) THEN ${FLAG_BITS.has_alert_word} ELSE 0 END
       FROM "UserMessage" old WHERE um."messageId" = $1 AND old."messageId" = $1 AND old."userId" = um."userId"
       RETURNING um."userId", um.flags, old.flags AS before)
     INSERT INTO "MissedMessageEmail" ("userId", "messageId", "createdAt")
     SELECT "userId", $1, now() AT TIME ZONE 'UTC' FROM updated
      WHERE $7 AND "userId" <> $6 AND (flags & ${FLAG_BITS.read}) = 0 AND (flags & ${RENDERED_MASK}) <> 0 AND (before & ${RENDERED_MASK}) = 0
     ON CONFLICT DO NOTHING`,
    m.id,
    [...mentioned],
    [...participants],
    r.topicWildcardMention,
    [...alerted],
    m.senderId,
    m.channelId !== null,
  );
  if (noted > 0) wakeEmailWorker(app);
  return uploads.detached;
}

interface AccessChange {
  /** Users whose UserMessage rows for the moved messages go away. */
  losingRows: number[];
  /** Of those, the ones who can no longer read the messages at all (they get delete_message). */
  losingAccess: number[];
}

/** Zulip's rule for channel moves: rows follow the new channel's subscribers. */
async function moveUserMessages(tx: Prisma.TransactionClient, p: EditPlan, ids: number[]): Promise<AccessChange> {
  const [oldSubs, newSubs] = await Promise.all([
    tx.subscription.findMany({ where: { channelId: p.origChannel!.id }, select: { userId: true } }),
    tx.subscription.findMany({ where: { channelId: p.targetChannel!.id, active: true }, select: { userId: true } }),
  ]);
  const newSet = new Set(newSubs.map((s) => s.userId));
  const losingRows = [...new Set(oldSubs.map((s) => s.userId))].filter((id) => !newSet.has(id));
  let losingAccess = losingRows;
  if (!p.targetChannel!.inviteOnly) {
    const guests = await tx.user.findMany({ where: { id: { in: losingRows }, role: Role.GUEST }, select: { id: true } });
    losingAccess = guests.map((g) => g.id);
  }
  await tx.userMessage.deleteMany({ where: { userId: { in: losingRows }, messageId: { in: ids } } });
  if (!p.targetChannel!.historyPublicToSubscribers) {
    // Without shared history, only UserMessage rows give access: every current subscriber needs one.
    await tx.userMessage.createMany({
      data: [...newSet].flatMap((userId) => ids.map((messageId) => ({ userId, messageId, flags: FLAG_BITS.read }))),
      skipDuplicates: true,
    });
  }
  return { losingRows, losingAccess };
}

/**
 * Writes one batch of the edit: the content (with the edited message), the new place of the
 * batch's messages still in the old one (a later batch may find some moved or deleted
 * meanwhile), their edit history; returns the messages it changed.
 */
async function writeUpdate(
  app: App,
  realm: RealmInfo,
  p: EditPlan,
  batch: number[],
  now: Date,
): Promise<{ ids: number[]; detached: Record<string, unknown>[]; access: AccessChange }> {
  const { full, moveOnly } = historyEntries(p, timestamp(now));
  const tx = app.prisma;
  const withEdited = batch.includes(p.message.id);
  const detached = withEdited && p.content !== undefined ? await writeContent(app, tx, realm, p, now) : [];
  let access: AccessChange = { losingRows: [], losingAccess: [] };
  let ids = batch;
  if (moved(p)) {
    const rows = await tx.$queryRawUnsafe<{ id: number }[]>(
      // Resolving a topic is not a move for lastMovedTime (null leaves it as it was).
      `UPDATE "Message" SET topic = $1, "channelId" = $2, "lastMovedTime" = COALESCE($5::timestamp(3), "lastMovedTime")
        WHERE id = ANY($3::int[]) AND "channelId" = $4 AND upper(topic) = upper($6) RETURNING id`,
      p.targetTopic,
      p.targetChannel!.id,
      batch,
      p.origChannel!.id,
      p.resolve ? null : now.toISOString(),
      p.message.topic,
    );
    ids = rows.map((r) => r.id).sort((a, b) => a - b);
    if (p.channelChanged && ids.length) access = await moveUserMessages(tx, p, ids);
  }
  const prepend = `UPDATE "Message" SET "editHistory" = $1::jsonb || COALESCE("editHistory", '[]'::jsonb) WHERE id = ANY($2::int[])`;
  if (withEdited) await tx.$executeRawUnsafe(prepend, JSON.stringify([full]), [p.message.id]);
  const others = ids.filter((id) => id !== p.message.id);
  if (others.length) await tx.$executeRawUnsafe(prepend, JSON.stringify([moveOnly]), others);
  return { ids, detached, access };
}

function updateEvent(p: EditPlan, ids: number[], ts: number, linkifiers: CompiledLinkifiers): EventOf<'update_message'> {
  const m = p.message;
  return {
    type: 'update_message',
    user_id: p.user.id,
    edit_timestamp: ts,
    message_id: m.id,
    message_ids: ids,
    rendering_only: false,
    ...(p.content !== undefined
      ? {
          orig_content: m.content,
          orig_rendered_content: m.renderedContent,
          content: p.content,
          rendered_content: p.rendered!.html,
          is_me_message: p.rendered!.isMeMessage,
        }
      : {}),
    ...(p.origChannel ? { stream_name: p.origChannel.name, stream_id: p.origChannel.id } : {}),
    ...(moved(p) ? { propagate_mode: p.propagateMode } : {}),
    ...(p.channelChanged ? { new_stream_id: p.targetChannel!.id, orig_subject: m.topic } : {}),
    ...(p.topicChanged ? { orig_subject: m.topic, subject: p.targetTopic, topic_links: topicLinks(p.targetTopic, linkifiers) } : {}),
  };
}

/**
 * Holders of the message's rows, with their flags; for shared-history channels also the current
 * subscribers (of both channels when moving), as read, except guests new to the destination.
 */
async function updateRecipients(app: App, p: EditPlan, access: AccessChange): Promise<Map<number, string[]>> {
  const rows = await app.prisma.userMessage.findMany({ where: { messageId: p.message.id } });
  const recipients = new Map(rows.map((r) => [r.userId, flagList(r.flags)]));
  if (!p.origChannel?.historyPublicToSubscribers) return recipients;
  const losing = new Set(access.losingAccess);
  const target = await subscriberIds(app, p.targetChannel!.id);
  const extra = new Set(target);
  if (p.channelChanged) {
    const old = new Set(await subscriberIds(app, p.origChannel.id));
    for (const id of old) extra.add(id);
    const newGuests = await app.prisma.user.findMany({ where: { id: { in: target.filter((id) => !old.has(id)) }, role: Role.GUEST }, select: { id: true } });
    for (const g of newGuests) extra.delete(g.id);
  }
  for (const id of extra) if (!recipients.has(id) && !losing.has(id)) recipients.set(id, ['read']);
  return recipients;
}

export interface AppliedEdit {
  /** The changed messages (of every batch, once all are written). */
  ids: number[];
  /** Batches still to move after the first committed (moveRest), and who their events go to. */
  rest: number[][];
  recipients: Map<number, string[]>;
  /** The acting user's uploads no message references any more. */
  detached: Record<string, unknown>[];
  /** The whole topic moved, as far as the acting user can see it. */
  movedAll: boolean;
  /** For whom a resolve notice stays unread. */
  resolvedTopicFollowers: number[];
}

/**
 * PATCH /messages/{id} after its checks, in their transaction: the writes and their events, and
 * the topic settings of a whole topic moved (before the update_message event, as in Zulip).
 */
export async function applyUpdate(app: App, realm: RealmInfo, p: EditPlan): Promise<AppliedEdit> {
  const now = new Date();
  const { ids: all, movedAll } = await changedMessageIds(app, p);
  const [first, ...rest] = moveBatches(all, p.message.id);
  const targetHadMessages = moved(p) && (await topicHasMessages(app, p.targetChannel!.id, p.targetTopic));
  const { ids, detached, access } = await writeUpdate(app, realm, p, first!, now);
  // As in Zulip: the old topic's followers before their settings move with it, else the new topic's.
  const resolvedTopicFollowers = p.resolve ? await topicFollowers(app, p.origChannel!.id, movedAll ? p.message.topic : p.targetTopic) : [];
  if (movedAll) {
    await moveTopicSettings(app, realm, {
      origChannel: p.origChannel!,
      origTopic: p.message.topic,
      targetChannel: p.targetChannel!,
      targetTopic: p.targetTopic,
      targetHadMessages,
      losingAccess: access.losingAccess,
    });
  }
  const recipients = await updateRecipients(app, p, access);
  await announceBatch(app, realm, p, { ids, access, recipients, now });
  // A copy: moveRest adds the later batches' messages to it, and the first event holds `ids`.
  return { ids: [...ids], rest, recipients, detached, movedAll, resolvedTopicFollowers };
}

/** A written batch's events: update_message to who sees the message, delete_message to those who lost it. */
async function announceBatch(
  app: App,
  realm: RealmInfo,
  p: EditPlan,
  b: { ids: number[]; access: AccessChange; recipients: Map<number, string[]>; now: Date },
): Promise<void> {
  if (b.ids.length === 0) return;
  sendOnCommit({
    realmId: realm.id,
    userIds: [...b.recipients.keys()],
    event: updateEvent(p, b.ids, timestamp(b.now), await compiledLinkifiers(app, realm.id)),
    perUser: Object.fromEntries([...b.recipients].map(([id, flags]) => [id, { flags }])),
  });
  if (b.access.losingAccess.length) {
    sendOnCommit({
      realmId: realm.id,
      userIds: b.access.losingAccess,
      event: { type: 'delete_message', message_ids: b.ids, message_type: 'stream', stream_id: p.origChannel!.id, topic: p.message.topic },
    });
  }
}

/**
 * After the edit's first batch committed: each further batch of a large move in a transaction of
 * its own, through `inOrder` (the channel's actor), with its own events; `edit.ids` ends up
 * holding every message moved.
 */
export async function moveRest(app: App, realm: RealmInfo, p: EditPlan, edit: AppliedEdit, inOrder: <T>(write: () => Promise<T>) => Promise<T>): Promise<void> {
  for (const batch of edit.rest) {
    const moved = await inOrder(() =>
      atomic(app, async () => {
        const now = new Date();
        const { ids, access } = await writeUpdate(app, realm, p, batch, now);
        await announceBatch(app, realm, p, { ids, access, recipients: edit.recipients, now });
        return ids;
      }),
    );
    edit.ids.push(...moved);
  }
  edit.rest = [];
}

/** After an edit committed: the Notification Bot's messages (each goes through its channel's actor). */
export async function announceEdit(app: App, realm: RealmInfo, p: EditPlan, edit: AppliedEdit): Promise<void> {
  let resolveNoticeId: number | null = null;
  if (p.topicChanged && p.content === undefined && !p.channelChanged && p.resolve)
    resolveNoticeId = await resolveNotice(app, realm, p, edit.resolvedTopicFollowers);
  if (moved(p)) await moveBreadcrumbs(app, realm, p, edit, resolveNoticeId);
}

const resolveNoticeText = (user: User, kind: 'resolved' | 'unresolved') => `${silentMention(user)} has marked this topic as ${kind}.`;

/** "… has marked this topic as resolved." — unless it undoes a notice posted a minute ago. */
async function resolveNotice(app: App, realm: RealmInfo, p: EditPlan, followers: number[]): Promise<number | null> {
  const channel = p.origChannel!;
  const bot = await notificationBot(app, realm);
  // The topic index is by upper(topic): the exact name alone would walk the channel's history from its newest message.
  const [last] = await app.prisma.$queryRaw<{ id: number; senderId: number; content: string; dateSent: Date }[]>`
    SELECT id, "senderId", content, "dateSent" FROM "Message"
     WHERE "channelId" = ${channel.id} AND upper(topic) = upper(${p.targetTopic}) AND topic = ${p.targetTopic} ORDER BY id DESC LIMIT 1`;
  const isNotice = last && last.senderId === bot.id && / has marked this topic as (un)?resolved\.$/.test(last.content);
  if (last && isNotice && Date.now() - last.dateSent.getTime() <= RESOLVE_UNDO_GRACE_SECONDS * 1000) {
    await deleteMessages(app, realm, [last.id]);
    return null;
  }
  // Zulip's default resolved_topic_notice_auto_read_policy: read for all but the topic's followers.
  const unread = new Set(followers);
  const readFor = new Set([...(await subscriberIds(app, channel.id)), p.user.id].filter((id) => !unread.has(id) || id === p.user.id));
  return sendNotification(app, realm, channel, p.targetTopic, resolveNoticeText(p.user, p.resolve!), readFor);
}

/** Zulip's URL fragment encoding (hash_util_encode): percent-encoding with "." for "%". */
const hashEncode = (s: string) =>
  encodeURIComponent(s)
    .replace(/[!'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, '%2E')
    .replace(/%/g, '.');
const topicLink = (c: Channel, topic: string) => topicLinkSyntax(c.id, c.name, topic);

function messageLink(app: App, realm: RealmInfo, c: Channel, topic: string, id: number): string {
  return `${app.realms.url(realm)}/#narrow/channel/${c.id}-${hashEncode(c.name.replace(/ /g, '-'))}/topic/${hashEncode(topic)}/near/${id}`;
}

/** The breadcrumbs Zulip leaves in the old and new threads of a move. */
async function moveBreadcrumbs(app: App, realm: RealmInfo, p: EditPlan, { ids, movedAll }: AppliedEdit, resolveNoticeId: number | null): Promise<void> {
  const orig = p.origChannel!;
  const target = p.targetChannel!;
  const who = silentMention(p.user);
  const count = ids.length;
  const readFor = new Set([p.user.id]);
  if (p.notifyNew && (p.channelChanged || (p.topicChanged && !p.resolve))) {
    const skip = new Set([...ids, ...(resolveNoticeId ? [resolveNoticeId] : [])]);
    const preexisting = (await visibleTopicMessages(app, p.user, target, p.targetTopic)).some((x) => !skip.has(x.id));
    const from = topicLink(orig, p.message.topic);
    const text =
      !preexisting && movedAll
        ? `This topic was moved here from ${from} by ${who}.`
        : count === 1
          ? `[A message](${messageLink(app, realm, target, p.targetTopic, p.message.id)}) was moved here from ${from} by ${who}.`
          : `${count} messages were moved here from ${from} by ${who}.`;
    await sendNotification(app, realm, target, p.targetTopic, text, readFor);
  }
  if (p.notifyOld) {
    const to = topicLink(target, p.targetTopic);
    const text = movedAll
      ? `This topic was moved to ${to} by ${who}.`
      : count === 1
        ? `A message was moved from this topic to ${to} by ${who}.`
        : `${count} messages were moved from this topic to ${to} by ${who}.`;
    await sendNotification(app, realm, orig, p.message.topic, text, readFor);
  }
}
