// Personal topic settings (Zulip's zerver/actions/user_topics.py): a visibility policy per channel
// topic (muted, unmuted, followed), matched ignoring case, kept in step across the user's clients
// by `user_topic` events and, for clients from before those, the whole `muted_topics` list. When
// a topic moves, its settings move with it (moveTopicSettings, from the message edit).
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { badRequest } from '../errors.ts';
import { accessibleChannel, accessibleChannelByName, channelById, channelByName } from '../queries/channels.ts';
import { timestamp } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { mutedTopics, TopicVisibility } from '../queries/user-topics.ts';
import { atomic, lockUsers, sendOnCommit } from './transaction.ts';
import { EVENT_SCHEMAS, type ChatEvent } from '../events/schemas.ts';

interface SetOptions {
  /** Leave out the legacy `muted_topics` event, when another change right after sends it. */
  skipMutedTopicsEvent?: boolean;
}

/**
 * Zulip's bulk_do_set_user_topic_visibility_policy: gives `users` the policy for the topic (0
 * removes their setting); those whose setting changed get the events.
 */
async function setTopicPolicy(
  app: App,
  realm: RealmInfo,
  userIds: number[],
  channel: Channel,
  topic: string,
  policy: number,
  o: SetOptions = {},
): Promise<void> {
  if (userIds.length === 0) return;
  const now = new Date();
  const rows = await app.prisma.userTopic.findMany({ where: { userId: { in: userIds }, channelId: channel.id, topic: equalsIgnoringCase(topic) } });
  const existing = new Map(rows.map((r) => [r.userId, r]));
  let changed: number[];
  if (policy === TopicVisibility.INHERIT) {
    await app.prisma.userTopic.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
    changed = [...existing.keys()];
  } else {
    changed = userIds.filter((id) => existing.get(id)?.visibility !== policy);
    // A setting keeps the spelling of the topic it was first made for.
    const updated = changed.filter((id) => existing.has(id)).map((id) => existing.get(id)!.id);
    if (updated.length) await app.prisma.userTopic.updateMany({ where: { id: { in: updated } }, data: { visibility: policy, lastUpdated: now } });
    const created = changed.filter((id) => !existing.has(id)).map((userId) => ({ userId, channelId: channel.id, topic, visibility: policy, lastUpdated: now }));
    if (created.length) await app.prisma.userTopic.createMany({ data: created });
  }
  for (const userId of changed.sort((a, b) => a - b)) {
    if (!o.skipMutedTopicsEvent)
      sendOnCommit({ realmId: realm.id, userIds: [userId], event: { type: 'muted_topics', muted_topics: await mutedTopics(app, userId) } });
    const event: ChatEvent = {
      type: 'user_topic',
      stream_id: channel.id,
      topic_name: topic,
      last_updated: timestamp(now),
      visibility_policy: EVENT_SCHEMAS.user_topic.shape.visibility_policy.parse(policy),
    };
    sendOnCommit({ realmId: realm.id, userIds: [userId], event });
  }
}

/**
 * POST /user_topics. Setting a policy needs a channel the user can read; removing one any channel
 * of the organization, so a setting outlives access to its channel only until its owner drops it.
 */
export async function updateUserTopic(app: App, realm: RealmInfo, user: User, channelId: number, topic: string, policy: number): Promise<void> {
  await atomic(app, async () => {
    await lockUsers(app, [user.id]);
    const channel =
      policy === TopicVisibility.INHERIT
        ? await channelById(app, realm, channelId)
        : (await accessibleChannel(app, realm, user, channelId, { content: true, active: true })).channel;
    await setTopicPolicy(app, realm, [user.id], channel, topic, policy);
  });
}

export interface ChannelRef {
  streamId?: number;
  stream?: string;
}

/** The channel of a legacy muted_topics request (Zulip's check_for_exactly_one_stream_arg and access rules). */
async function mutedTopicChannel(app: App, realm: RealmInfo, user: User, ref: ChannelRef, op: 'add' | 'remove'): Promise<Channel> {
  if (ref.streamId === undefined && ref.stream === undefined) throw badRequest("Missing 'stream_id' argument");
  if (ref.streamId !== undefined && ref.stream !== undefined) {
    throw badRequest('Unsupported parameter combination: stream_id, stream', { parameters: 'stream_id, stream' });
  }
  if (op === 'add') {
    if (ref.stream !== undefined) return accessibleChannelByName(app, realm, user, ref.stream);
    return (await accessibleChannel(app, realm, user, ref.streamId!, { content: true, active: true })).channel;
  }
  const channel =
    ref.stream !== undefined
      ? await channelByName(app, realm, ref.stream)
      : await app.prisma.channel.findFirst({ where: { id: ref.streamId!, realmId: realm.id } });
  if (!channel) throw badRequest('Topic is not muted');
  return channel;
}

/**
 * PATCH /users/me/subscriptions/muted_topics, the API before user_topics. Since Zulip 7.0 muting
 * a muted topic or unmuting one that is not muted succeeds without a change.
 */
export async function updateMutedTopic(app: App, realm: RealmInfo, user: User, ref: ChannelRef, topic: string, op: 'add' | 'remove'): Promise<void> {
  await atomic(app, async () => {
    await lockUsers(app, [user.id]);
    const channel = await mutedTopicChannel(app, realm, user, ref, op);
    await setTopicPolicy(app, realm, [user.id], channel, topic, op === 'add' ? TopicVisibility.MUTED : TopicVisibility.INHERIT);
  });
}

/** Zulip's get_visibility_policy_after_merge: the more visible policy wins. */
function mergedPolicy(orig: number, target: number): number {
  const both = [orig, target];
  for (const policy of [TopicVisibility.FOLLOWED, TopicVisibility.UNMUTED, TopicVisibility.INHERIT]) if (both.includes(policy)) return policy;
  return TopicVisibility.MUTED;
}

export interface TopicMove {
  origChannel: Channel;
  origTopic: string;
  targetChannel: Channel;
  targetTopic: string;
  /** Whether the destination held messages before the move. */
  targetHadMessages: boolean;
  /** Users who can no longer read the moved messages: their settings of the old topic just go. */
  losingAccess: number[];
}

async function policiesOf(app: App, channel: Channel, topic: string): Promise<Map<number, number>> {
  const rows = await app.prisma.userTopic.findMany({ where: { channelId: channel.id, topic: equalsIgnoringCase(topic) } });
  return new Map(rows.map((r) => [r.userId, r.visibility]));
}

/**
 * In the edit's transaction, after a whole topic moved (as the mover sees it): each user's setting
 * of the old topic leaves it and, merged with any setting of the destination, applies there
 * (Zulip's do_update_message). A rename that only changes case keeps the settings as they are.
 */
export async function moveTopicSettings(app: App, realm: RealmInfo, move: TopicMove): Promise<void> {
  const { origChannel, origTopic, targetChannel, targetTopic } = move;
  if (origChannel.id === targetChannel.id && origTopic.toLowerCase() === targetTopic.toLowerCase()) return;
  // One after the other: the transaction's connection runs one query at a time.
  const read = async () => [await policiesOf(app, origChannel, origTopic), await policiesOf(app, targetChannel, targetTopic)] as const;
  const [before, beforeTarget] = await read();
  if (before.size === 0 && beforeTarget.size === 0) return;
  await lockUsers(app, [...new Set([...before.keys(), ...beforeTarget.keys()])]);
  // Read again now that their owners cannot change them meanwhile.
  const [orig, target] = await read();
  // Users who lose access to the messages lose the setting too, as if the topic were deleted.
  const losing = new Set(move.losingAccess);
  const inaccessible = [...orig.keys()].filter((id) => losing.has(id));
  for (const id of inaccessible) orig.delete(id);
  await setTopicPolicy(app, realm, inaccessible, origChannel, origTopic, TopicVisibility.INHERIT);
  const byPair = new Map<string, number[]>();
  for (const id of new Set([...orig.keys(), ...target.keys()])) {
    const key = `${orig.get(id) ?? TopicVisibility.INHERIT},${target.get(id) ?? TopicVisibility.INHERIT}`;
    byPair.set(key, [...(byPair.get(key) ?? []), id]);
  }
  for (const [key, ids] of byPair) {
    const [origPolicy, targetPolicy] = key.split(',').map(Number) as [number, number];
    if (origPolicy !== TopicVisibility.INHERIT) {
      // As in Zulip, only a change at the destination sends the muted_topics list.
      await setTopicPolicy(app, realm, ids, origChannel, origTopic, TopicVisibility.INHERIT, { skipMutedTopicsEvent: true });
    }
    const policy = move.targetHadMessages ? mergedPolicy(origPolicy, targetPolicy) : origPolicy;
    if (policy !== targetPolicy) await setTopicPolicy(app, realm, ids, targetChannel, targetTopic, policy);
  }
}
