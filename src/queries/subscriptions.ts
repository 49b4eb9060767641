// Subscriptions as the API shows them (spec 2.6): the channel's fields plus the user's own
// settings for it, and who is subscribed.
import type { App } from '../app.ts';
import type { Subscription, User } from '../db/generated/client.ts';
import { accessRules, channelStats, formatChannel, subscribedChannelIds, type ChannelObject } from './channels.ts';
import type { RealmInfo } from './realms.ts';
import { inTransaction } from '../db/transaction.ts';
import type { z } from 'zod';
import type { subscription } from '../events/schemas.ts';

/** A subscription as the API shows it; `subscribers` only where asked for (events always carry them). */
export type SubscriptionObject = Omit<z.infer<typeof subscription>, 'subscribers'> & { subscribers?: number[] };

/** A channel dict (formatChannel) merged with one user's subscription to it. */
export function formatSubscription(channel: ChannelObject, sub: Subscription, subscribers?: readonly number[]): SubscriptionObject {
  return {
    ...channel,
    color: sub.color,
    is_muted: sub.isMuted,
    in_home_view: !sub.isMuted,
    pin_to_top: sub.pinToTop,
    desktop_notifications: sub.desktopNotifications,
    audible_notifications: sub.audibleNotifications,
    push_notifications: sub.pushNotifications,
    email_notifications: sub.emailNotifications,
    wildcard_mentions_notify: sub.wildcardMentionsNotify,
    ...(subscribers ? { subscribers: [...subscribers] } : {}),
  };
}

/** UserTopic visibility policies (Zulip's UserTopic.VisibilityPolicy). */
const TOPIC_MUTED = 1;
const TOPIC_UNMUTED = 2;
const TOPIC_FOLLOWED = 3;

/**
 * Whether a channel message counts for the user's unread counts (Zulip's unmuted_stream_msgs):
 * outside muted channels and muted topics, or in an unmuted or followed topic of a muted channel.
 */
export async function unmutedTopicCheck(app: App, userId: number): Promise<(channelId: number, topic: string) => boolean> {
  // Through app.prisma: register reads it in its snapshot transaction, an app whose prisma is
  // that transaction (not the ambient one that rawQuery follows).
  const [read] = await app.prisma.$queryRawUnsafe<{ muted: number[]; topics: { channelId: number; topic: string; visibility: number }[] }[]>(
    MUTE_SETTINGS,
    userId,
  );
  return countsTowardUnread(read!.muted, read!.topics);
}

/** The user's muted channels and topic policies, in one statement (register reads them on every call). */
export const MUTE_SETTINGS = `SELECT
  (SELECT coalesce(array_agg("channelId"), '{}') FROM "Subscription" WHERE "userId" = $1 AND "isMuted") AS muted,
  (SELECT coalesce(json_agg(json_build_object('channelId', "channelId", 'topic', topic, 'visibility', visibility)), '[]')
    FROM "UserTopic" WHERE "userId" = $1) AS topics`;

/** unmutedTopicCheck on rows already read: the user's muted channels and topic policies (those of the channels asked about at least). */
export function countsTowardUnread(
  mutedChannelIds: Iterable<number>,
  topics: readonly { channelId: number; topic: string; visibility: number }[],
): (channelId: number, topic: string) => boolean {
  const mutedChannels = new Set(mutedChannelIds);
  const visibility = new Map(topics.map((t) => [`${t.channelId}\n${t.topic.toLowerCase()}`, t.visibility]));
  return (channelId, topic) => {
    const policy = visibility.get(`${channelId}\n${topic.toLowerCase()}`);
    return mutedChannels.has(channelId) ? policy === TOPIC_UNMUTED || policy === TOPIC_FOLLOWED : policy !== TOPIC_MUTED;
  };
}

/**
 * Active subscribers (active users) of each channel, ascending: the sets the channels' actors hold
 * for fan-out, the missing ones read in one statement and kept. A register lists every channel's
 * subscribers, so in a large organization this is tens of thousands of ids that change rarely.
 */
export async function subscribersByChannel(app: App, channelIds: number[]): Promise<Map<number, readonly number[]>> {
  if (inTransaction()) return loadSubscribers(app, channelIds);
  const missing = channelIds.filter((id) => !app.channels.holdsSubscribers(id));
  const loaded = missing.length > 0 ? loadSubscribers(app, missing) : undefined;
  const sets = await Promise.all(channelIds.map((id) => app.channels.subscribers(id, async () => (await loaded!).get(id) ?? [])));
  return new Map(channelIds.map((id, i) => [id, sets[i]!]));
}

async function loadSubscribers(app: App, channelIds: number[]): Promise<Map<number, number[]>> {
  const rows = await app.prisma.$queryRawUnsafe<{ channelId: number; ids: number[] }[]>(
    `SELECT s."channelId", array_agg(s."userId" ORDER BY s."userId") AS ids FROM "Subscription" s JOIN "User" u ON u.id = s."userId"
      WHERE s."channelId" = ANY($1::int[]) AND s.active AND u."isActive" GROUP BY s."channelId"`,
    channelIds,
  );
  const result = new Map<number, number[]>(channelIds.map((id) => [id, []]));
  for (const row of rows) result.set(row.channelId, row.ids);
  return result;
}

/** GET /users/me/subscriptions: the user's active subscriptions to channels that are not archived. */
/** Archived channels keep their subscriptions; only clients with `archived_channels` see them. */
export async function userSubscriptions(
  app: App,
  realm: RealmInfo,
  user: User,
  includeSubscribers: boolean,
  includeArchived = false,
): Promise<SubscriptionObject[]> {
  const subs = await app.prisma.subscription.findMany({
    where: { userId: user.id, active: true, ...(includeArchived ? {} : { channel: { isArchived: false } }) },
    include: { channel: true },
    orderBy: { channelId: 'asc' },
  });
  const ids = subs.map((s) => s.channelId);
  const [stats, subscribers] = await Promise.all([channelStats(app, realm.id, ids), includeSubscribers ? subscribersByChannel(app, ids) : undefined]);
  return subs.map((s) => formatSubscription(formatChannel(realm, s.channel, stats.get(s.channelId)!), s, subscribers?.get(s.channelId)));
}

/** GET /users/{id}/channels: the target's channels whose metadata the viewer may see, ascending. */
export async function userChannelIds(app: App, realm: RealmInfo, viewer: User, target: User): Promise<number[]> {
  const rows = await app.prisma.subscription.findMany({
    where: { userId: target.id, active: true },
    include: { channel: true },
    orderBy: { channelId: 'asc' },
  });
  const [groups, mine] = [await app.realms.groups(realm.id), await subscribedChannelIds(app, viewer.id)];
  return rows.filter((r) => accessRules(viewer, r.channel, mine.has(r.channelId), groups, realm).metadata).map((r) => r.channelId);
}
