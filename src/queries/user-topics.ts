// Personal topic settings as the API shows them (Zulip's get_user_topics and get_topic_mutes):
// register's `user_topics`, and the `muted_topics` list of clients from before them. Settings in
// archived channels are left out.
import type { App } from '../app.ts';
import type { UserTopic } from '../db/generated/client.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { timestamp } from './messages.ts';

/** Zulip's UserTopic.VisibilityPolicy. */
export const TopicVisibility = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/** The user's settings in channels that are not archived, with those channels' names. */
async function activeSettings(app: App, userId: number, visibility?: number): Promise<{ row: UserTopic; channelName: string }[]> {
  const rows = await app.prisma.userTopic.findMany({ where: { userId, visibility }, orderBy: { id: 'asc' } });
  // Most users have none: then no statement for their channels (Prisma would send one to find nothing).
  const channels = rows.length
    ? await app.prisma.channel.findMany({
        where: { id: { in: [...new Set(rows.map((r) => r.channelId))] }, isArchived: false },
        select: { id: true, name: true },
      })
    : [];
  const names = new Map(channels.map((c) => [c.id, c.name]));
  return rows.filter((r) => names.has(r.channelId)).map((row) => ({ row, channelName: names.get(row.channelId)! }));
}

export async function userTopics(app: App, userId: number): Promise<Record<string, unknown>[]> {
  return (await activeSettings(app, userId)).map(({ row }) => ({
    stream_id: row.channelId,
    topic_name: row.topic,
    last_updated: timestamp(row.lastUpdated),
    visibility_policy: row.visibility,
  }));
}

/** [channel name, topic, time muted] for each muted topic. */
export async function mutedTopics(app: App, userId: number): Promise<[string, string, number][]> {
  return (await activeSettings(app, userId, TopicVisibility.MUTED)).map(({ row, channelName }) => [channelName, row.topic, timestamp(row.lastUpdated)]);
}

/** Who follows a channel topic. */
export async function topicFollowers(app: App, channelId: number, topic: string): Promise<number[]> {
  const rows = await app.prisma.userTopic.findMany({
    where: { channelId, topic: equalsIgnoringCase(topic), visibility: TopicVisibility.FOLLOWED },
    select: { userId: true },
  });
  return rows.map((r) => r.userId);
}
