// Missed-message emails (Zulip's handle_missedmessage_emails). Sending a message notes, in its own
// statement (actions/messages.ts), each unread direct message, mention, wildcard mention, alert
// word and message in a followed topic per recipient in the MissedMessageEmail table. This
// worker, under a DeliveryScheduler, sends a user's notes once their
// email_notifications_batching_period_seconds has passed since the first: one email per
// conversation (channel and topic, or direct-message group) with every message of it, as Zulip
// batches them. What is decided then, not at send time:
// - messages read (or deleted) meanwhile are left out, and nothing is sent if none is left;
// - a user who is not idle (an open event queue here, or active in the last 140 s) gets nothing:
//   their clients show the messages;
// - the user's settings: enable_offline_email_notifications for direct messages, mentions and
//   alert words; for wildcard mentions also the wildcard settings of the channel, topic or followed
//   topics (as push notifications, src/push/recipients.ts); for any message in a topic they follow,
//   enable_followed_topic_email_notifications.
// A user's notes are claimed with FOR UPDATE SKIP LOCKED and deleted in the transaction that hands
// the emails to the outbox after its commit, so each note is emailed at most once, even with
// several processes on one database. Replying by email is not supported: the email says so.
import type { App } from '../app.ts';
import { atomic, onCommit } from '../actions/transaction.ts';
import type { Channel, Message, User } from '../db/generated/client.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import { userSettingsSchema, type UserSettings } from '../domain/user-settings.ts';
import { log } from '../log.ts';
import { html, Html } from '../pages/html.ts';
import { allowsInTopic, FOLLOWED, idleUserIds } from '../push/recipients.ts';
import type { RealmInfo } from '../queries/realms.ts';
import type { Mail } from './mailer.ts';
import { absoluteLinks, channelNarrowUrl, directNarrowUrl, footer, unsubscribeHeaders, unsubscribeUrl } from './email-parts.ts';
import { sendDueDigests } from './digest.ts';

const USERS_PER_ROUND = 100;
const DEFAULT_PERIOD_SECONDS = userSettingsSchema.parse({}).email_notifications_batching_period_seconds;

/** Why a message is emailed, strongest first (the email names the strongest of its messages). */
const REASONS = {
  direct: 'You are receiving this because you received a direct message.',
  mention: 'You are receiving this because you were mentioned.',
  followedWildcard: 'You are receiving this because you have wildcard mention notifications enabled for topics you follow.',
  wildcard: 'You are receiving this because everyone in the conversation was mentioned.',
  followed: 'You are receiving this because you have email notifications enabled for topics you follow.',
  alert: 'You are receiving this because a message contained one of your alert words.',
} as const;
type Reason = keyof typeof REASONS;

type Loaded = Message & { sender: User; channel: Pick<Channel, 'id' | 'name'> | null; directGroup: { memberKey: string } | null };

/** The users whose first note's batching period is over, and in how many ms the next one's is. */
async function dueUsers(app: App): Promise<{ due: number[]; nextInMs: number | null }> {
  const rows = await app.prisma.$queryRawUnsafe<{ userId: number; waitMs: number }[]>(
    `SELECT e."userId", (EXTRACT(EPOCH FROM min(e."createdAt") + make_interval(secs => COALESCE((u.settings->>'email_notifications_batching_period_seconds')::int, ${DEFAULT_PERIOD_SECONDS}))
        - (now() AT TIME ZONE 'UTC')) * 1000)::float8 AS "waitMs"
      FROM "MissedMessageEmail" e JOIN "User" u ON u.id = e."userId"
      GROUP BY e."userId", u.id ORDER BY "waitMs" LIMIT ${USERS_PER_ROUND}`,
  );
  const due = rows.filter((r) => r.waitMs <= 0).map((r) => r.userId);
  const next = rows.find((r) => r.waitMs > 0);
  return { due, nextInMs: next ? next.waitMs : null };
}

/** Sends what is due; resolves to when to look again. */
export async function sendNotificationEmails(app: App): Promise<Date | null> {
  let nextInMs: number | null;
  for (;;) {
    if (app.notificationEmails.stopping) return null;
    const round = await dueUsers(app);
    nextInMs = round.nextInMs;
    for (const userId of round.due) {
      if (app.notificationEmails.stopping) return null;
      try {
        await atomic(app, () => emailUser(app, userId));
      } catch (err) {
        // A fault with one user's email (a bug) must not hold up the others, nor come back every round.
        log.error('missed-message email failed; dropped', { userId, error: err instanceof Error ? err.stack : String(err) });
        await app.prisma.missedMessageEmail.deleteMany({ where: { userId } });
      }
    }
    if (round.due.length < USERS_PER_ROUND) break;
  }
  const nextDigest = await sendDueDigests(app);
  const times = [nextDigest.getTime(), ...(nextInMs === null ? [] : [Date.now() + nextInMs])];
  return new Date(Math.min(...times));
}

/** Claims the user's notes (rows another process holds are its to send) and queues their emails after the commit. */
async function emailUser(app: App, userId: number): Promise<void> {
  const claimed = await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(
    `DELETE FROM "MissedMessageEmail" WHERE ("userId", "messageId") IN (
       SELECT "userId", "messageId" FROM "MissedMessageEmail" WHERE "userId" = $1 FOR UPDATE SKIP LOCKED)
     RETURNING "messageId"`,
    userId,
  );
  if (claimed.length === 0) return;
  const user = await app.prisma.user.findUnique({ where: { id: userId } });
  const realm = user && app.realms.byId(user.realmId);
  if (!user || !realm || realm.deactivated || !user.isActive || user.isBot || user.isImportedStub) return;
  if (!(await idleUserIds(app, realm, [userId])).has(userId)) return;
  const ids = claimed.map((c) => c.messageId);
  const [messages, userMessages] = await Promise.all([
    app.prisma.message.findMany({
      where: { id: { in: ids } },
      orderBy: { id: 'asc' },
      include: { sender: true, channel: { select: { id: true, name: true } }, directGroup: { select: { memberKey: true } } },
    }),
    app.prisma.userMessage.findMany({ where: { userId, messageId: { in: ids } }, select: { messageId: true, flags: true } }),
  ]);
  const flags = new Map(userMessages.map((um) => [um.messageId, um.flags]));
  const settings = userSettingsSchema.parse(user.settings ?? {});
  const reasons = await reasonsFor(app, user, settings, messages, flags);
  const conversations = new Map<string, { messages: Loaded[]; reason: Reason }>();
  for (const m of messages) {
    const reason = reasons.get(m.id);
    if (!reason) continue;
    const key = m.channel ? `c${m.channel.id}:${m.topic.toLowerCase()}` : `d${m.directGroupId}`;
    const conversation = conversations.get(key) ?? { messages: [], reason };
    conversation.messages.push(m);
    if (Object.keys(REASONS).indexOf(reason) < Object.keys(REASONS).indexOf(conversation.reason)) conversation.reason = reason;
    conversations.set(key, conversation);
  }
  for (const conversation of conversations.values()) {
    const mail = await missedMessageMail(app, realm, user, settings, conversation.messages, conversation.reason);
    onCommit(() => app.mail.send(mail));
  }
}

/**
 * Each unread message's reason to be emailed under the user's settings (Zulip's
 * get_email_notification_trigger); messages without one are not. enable_offline_email_notifications
 * governs direct messages, mentions and alert words; a followed topic's messages have their own
 * setting, and so do wildcard mentions in it.
 */
async function reasonsFor(app: App, user: User, s: UserSettings, messages: Loaded[], flags: Map<number, number>): Promise<Map<number, Reason>> {
  const reasons = new Map<number, Reason>();
  const channelIds = [...new Set(messages.flatMap((m) => (m.channelId === null ? [] : [m.channelId])))];
  const [subscriptions, topics] = await Promise.all([
    app.prisma.subscription.findMany({ where: { userId: user.id, channelId: { in: channelIds }, active: true } }),
    app.prisma.userTopic.findMany({ where: { userId: user.id, channelId: { in: channelIds } } }),
  ]);
  const subscriptionOf = new Map(subscriptions.map((sub) => [sub.channelId, sub]));
  const offline = s.enable_offline_email_notifications;
  for (const m of messages) {
    const bits = flags.get(m.id);
    if (bits === undefined || bits & FLAG_BITS.read) continue;
    const visibility = topics.find((t) => t.channelId === m.channelId && t.topic.toLowerCase() === m.topic.toLowerCase())?.visibility ?? 0;
    const followed = visibility === FOLLOWED;
    const wildcard = (bits & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) !== 0;
    const sub = m.channelId === null ? undefined : subscriptionOf.get(m.channelId);
    let reason: Reason | null = null;
    if (m.channelId === null) reason = offline ? 'direct' : null;
    else if (offline && bits & FLAG_BITS.mentioned) reason = 'mention';
    else if (offline && wildcard && followed && s.enable_followed_topic_wildcard_mentions_notify)
      reason = bits & FLAG_BITS.stream_wildcard_mentioned ? 'followedWildcard' : 'wildcard';
    else if (offline && wildcard && sub !== undefined && allowsInTopic(sub.isMuted, visibility, sub.wildcardMentionsNotify, s.wildcard_mentions_notify))
      reason = 'wildcard';
    else if (followed && s.enable_followed_topic_email_notifications) reason = 'followed';
    else if (offline && bits & FLAG_BITS.has_alert_word) reason = 'alert';
    if (reason) reasons.set(m.id, reason);
  }
  return reasons;
}

/** One conversation's email: its messages, a link to it, and why the email came. */
async function missedMessageMail(app: App, realm: RealmInfo, user: User, s: UserSettings, messages: Loaded[], reason: Reason): Promise<Mail> {
  const realmUrl = app.realms.url(realm);
  const first = messages[0]!;
  let subject: string;
  let narrow: string;
  if (first.channel) {
    subject = `#${first.channel.name} > ${first.topic}`;
    narrow = channelNarrowUrl(realmUrl, first.channel.id, first.channel.name, first.topic);
  } else {
    const memberIds = first.directGroup!.memberKey.split(',').map(Number);
    const others = await app.prisma.user.findMany({
      where: { id: { in: memberIds.filter((id) => id !== user.id) } },
      orderBy: { fullName: 'asc' },
      select: { fullName: true },
    });
    subject = others.length > 1 ? `Group DMs with ${others.map((o) => o.fullName).join(', ')}` : `DMs with ${others[0]?.fullName ?? user.fullName}`;
    narrow = directNarrowUrl(realmUrl, memberIds);
  }
  const unsubscribe = unsubscribeUrl(app, realm, user.id, 'missed_messages');
  const end = footer(realm, realmUrl, REASONS[reason], unsubscribe);
  const hidden = 'This email does not include message content because you have turned off message content in email notifications.';
  const parts: Html[] = messages.map(
    (m) =>
      html`<div style="margin:0 0 16px"><div><b>${m.sender.fullName}</b></div>${
        s.message_content_in_email_notifications ? new Html(absoluteLinks(realmUrl, m.renderedContent)) : html`<p><i>${hidden}</i></p>`
      }</div>`,
  );
  const noReply = `Replying to this email is not supported yet: reply in ${realm.name}.`;
  const body = html`<div><p>${subject}</p>${parts}<p><a href="${narrow}">View or reply in ${realm.name}</a></p><p style="color:#666">${noReply}</p>${end.html}</div>`;
  const text = [
    subject,
    '',
    ...messages.map((m) => `${m.sender.fullName}:\n${s.message_content_in_email_notifications ? m.content : hidden}\n`),
    `View or reply in ${realm.name}:`,
    narrow,
    '',
    noReply,
    '',
    end.text,
  ].join('\n');
  return { to: user.deliveryEmail, subject, text, html: body.markup, headers: unsubscribeHeaders(unsubscribe) };
}
