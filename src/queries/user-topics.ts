// Personal topic settings as the API shows them (Zulip's get_user_topics and get_topic_mutes):
// register's `user_topics`, and the `muted_topics` list of clients from before them. Settings in
// archived channels are left out.
import type { App } from '../app.ts';
import type { UserTopic } from '../db/generated/client.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { timestamp } from './messages.ts';

/** Zulip's UserTopic.VisibilityPolicy. */
export const TopicVisibility = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/** Topic settings with their channels' names. */
export type TopicSettings = { row: UserTopic; channelName: string }[];

/** The user's settings in channels that are not archived, with those channels' names. */
async function activeSettings(app: App, userId: number, visibility?: number): Promise<TopicSettings> {
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

/** Every setting of the user's, to read once for both of register's lists (userTopics, mutedTopics). */
export const topicSettings = (app: App, userId: number): Promise<TopicSettings> => activeSettings(app, userId);

export async function userTopics(app: App, userId: number, settings = topicSettings(app, userId)): Promise<Record<string, unknown>[]> {
  return (await settings).map(({ row }) => ({
    stream_id: row.channelId,
    topic_name: row.topic,
    last_updated: timestamp(row.lastUpdated),
    visibility_policy: row.visibility,
  }));
}

/** [channel name, topic, time muted] for each muted topic; from `settings` (topicSettings) if given. */
export async function mutedTopics(app: App, userId: number, settings?: Promise<TopicSettings>): Promise<[string, string, number][]> {
  const muted = settings
    ? (await settings).filter(({ row }) => row.visibility === TopicVisibility.MUTED)
    : await activeSettings(app, userId, TopicVisibility.MUTED);
  return muted.map(({ row, channelName }) => [channelName, row.topic, timestamp(row.lastUpdated)]);
}

/** Who follows a channel topic. */
export async function topicFollowers(app: App, channelId: number, topic: string): Promise<number[]> {
  const rows = await app.prisma.userTopic.findMany({
    where: { channelId, topic: equalsIgnoringCase(topic), visibility: TopicVisibility.FOLLOWED },
    select: { userId: true },
  });
  return rows.map((r) => r.userId);
}
