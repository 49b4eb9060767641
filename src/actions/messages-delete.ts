// DELETE /messages/{id} (spec 4.18, Zulip's validate_can_delete_message and do_delete_messages) and
// POST /streams/{id}/delete_topic (Zulip's delete_in_topic).
import type { App } from '../app.ts';
import { hasRealmPermission } from '../auth/permissions.ts';
import { requireRole } from '../auth/policy.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { accessibleChannel, metadataUserIds, subscriberIds, userHasChannelPermission } from '../queries/channels.ts';
import { accessMessage, timestamp, type FullMessage } from '../queries/messages.ts';
import { normalizeTopicName } from '../queries/narrow.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { inChannelOrder } from './messages.ts';
import { withdrawDeleted } from './push-outbox.ts';
import { atomic, lockMessage, sendOnCommit } from './transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';

async function checkCanDelete(app: App, realm: RealmInfo, user: User, m: FullMessage, channel: Channel | null): Promise<void> {
  if (await hasRealmPermission(app.realms, realm, user, 'can_delete_any_message_group')) return;
  if (channel && (await userHasChannelPermission(app, realm, user, channel, 'can_delete_any_message_group'))) return;
  const denied = badRequest("You don't have permission to delete this message");
  // Users may delete what they or their bots sent.
  if (m.senderId !== user.id && m.sender.botOwnerId !== user.id) throw denied;
  if (!(await hasRealmPermission(app.realms, realm, user, 'can_delete_own_message_group'))) {
    if (!channel || !(await userHasChannelPermission(app, realm, user, channel, 'can_delete_own_message_group'))) throw denied;
  }
  const limit = realm.settings.message_content_delete_limit_seconds;
  if (limit !== null && Date.now() - m.dateSent.getTime() > limit * 1000) throw badRequest('The time limit for deleting this message has passed');
}

/**
 * Deletes messages (all from one conversation) and tells everyone who could see them: holders of
 * their rows and, for channels with shared history, the current subscribers. Push notifications
 * of them are withdrawn.
 */
export async function deleteMessages(app: App, realm: RealmInfo, ids: number[]): Promise<void> {
  await atomic(app, async () => {
    const messages = await app.prisma.message.findMany({ where: { id: { in: ids } } });
    if (messages.length === 0) throw badRequest('Message already deleted');
    const first = messages[0]!;
    const channel = first.channelId === null ? null : await app.prisma.channel.findUnique({ where: { id: first.channelId } });
    const messageIds = messages.map((m) => m.id);
    // UserMessage has no foreign key to cascade from (prisma/schema.prisma): its rows go here.
    const rows = await app.prisma.$queryRawUnsafe<{ userId: number; messageId: number; flags: number }[]>(
      'DELETE FROM "UserMessage" WHERE "messageId" = ANY($1::int[]) RETURNING "userId", "messageId", flags',
      messageIds,
    );
    const { count } = await app.prisma.message.deleteMany({ where: { id: { in: messageIds } } });
    if (count === 0) throw badRequest('Message already deleted');
    const recipients = new Set(rows.map((r) => r.userId));
    await withdrawDeleted(app, realm.id, rows);
    if (channel?.historyPublicToSubscribers) for (const id of await subscriberIds(app, channel.id)) recipients.add(id);
    const message_ids = messageIds.sort((a, b) => a - b);
    const event: ChatEvent = channel
      ? { type: 'delete_message', message_ids, message_type: 'stream', stream_id: channel.id, topic: first.topic }
      : { type: 'delete_message', message_ids, message_type: 'private' };
    sendOnCommit({ realmId: realm.id, userIds: [...recipients], event });
    if (channel?.firstMessageId !== null && channel?.firstMessageId !== undefined && messageIds.includes(channel.firstMessageId))
      await updateFirstMessageId(app, realm, channel);
  });
}

/**
 * Zulip's check_update_first_message_id: the channel's first message was deleted, so its oldest
 * remaining one takes the place, and whoever sees the channel learns it.
 */
async function updateFirstMessageId(app: App, realm: RealmInfo, channel: Channel): Promise<void> {
  const oldest = await app.prisma.message.findFirst({ where: { channelId: channel.id }, orderBy: { id: 'asc' }, select: { id: true } });
  const value = oldest?.id ?? null;
  await app.prisma.channel.update({ where: { id: channel.id }, data: { firstMessageId: value } });
  const event: ChatEvent = { type: 'stream', op: 'update', stream_id: channel.id, name: channel.name, property: 'first_message_id', value };
  sendOnCommit({ realmId: realm.id, userIds: await metadataUserIds(app, realm, channel), event });
}

/** DELETE /messages/{id}: the permission and time checks run on the locked row, in the deleting transaction. */
export async function deleteMessage(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  const { message: seen } = await accessMessage(app, realm, user, id);
  await inChannelOrder(app, seen.channelId, () =>
    atomic(app, async () => {
      await lockMessage(app, seen.id);
      const { message } = await accessMessage(app, realm, user, id);
      const channel = message.channelId === null ? null : await app.prisma.channel.findUniqueOrThrow({ where: { id: message.channelId } });
      await checkCanDelete(app, realm, user, message, channel);
      await deleteMessages(app, realm, [message.id]);
    }),
  );
}

/** Zulip deletes a topic in batches, each committed, so a topic too large for one request still shrinks. */
const TOPIC_DELETE_BATCH_SIZE = 100;
/** After this long the request answers `complete: false`; the client asks again for the rest. */
const TOPIC_DELETE_TIME_LIMIT_MS = 50_000;

/** The newest messages of the topic the user can read (all, unless history is protected), locked. */
async function topicBatch(app: App, user: User, channel: Channel, topic: string): Promise<number[]> {
  const rows = channel.historyPublicToSubscribers
    ? await app.prisma.$queryRaw<
        { id: number }[]
      >`SELECT id FROM "Message" WHERE "channelId" = ${channel.id} AND upper(topic) = upper(${topic}) ORDER BY id DESC LIMIT ${TOPIC_DELETE_BATCH_SIZE} FOR UPDATE`
    : await app.prisma.$queryRaw<{ id: number }[]>`SELECT m.id FROM "Message" m JOIN "UserMessage" um ON um."messageId" = m.id AND um."userId" = ${user.id}
        WHERE m."channelId" = ${channel.id} AND upper(m.topic) = upper(${topic}) ORDER BY m.id DESC LIMIT ${TOPIC_DELETE_BATCH_SIZE} FOR UPDATE OF m`;
  return rows.map((r) => r.id);
}

/**
 * The topic is gone, so its users' visibility settings (mute, follow) are too; under protected
 * history only for those who can no longer read any message left in it.
 */
async function forgetTopicVisibility(app: App, realm: RealmInfo, channel: Channel, topic: string): Promise<void> {
  await atomic(app, async () => {
    const rows = await app.prisma.userTopic.findMany({ where: { channelId: channel.id, topic: equalsIgnoringCase(topic) } });
    let stale = rows;
    if (!channel.historyPublicToSubscribers && rows.length) {
      const readers = await app.prisma.$queryRaw<
        { userId: number }[]
      >`SELECT DISTINCT um."userId" FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
        WHERE m."channelId" = ${channel.id} AND upper(m.topic) = upper(${topic}) AND um."userId" = ANY(${rows.map((r) => r.userId)})`;
      stale = rows.filter((r) => !readers.some((x) => x.userId === r.userId));
    }
    if (!stale.length) return;
    await app.prisma.userTopic.deleteMany({ where: { id: { in: stale.map((r) => r.id) } } });
    const event: ChatEvent = { type: 'user_topic', stream_id: channel.id, topic_name: topic, last_updated: timestamp(new Date()), visibility_policy: 0 };
    for (const r of stale) sendOnCommit({ realmId: realm.id, userIds: [r.userId], event });
  });
}

/** POST /streams/{id}/delete_topic: administrators only; answers whether the whole topic is gone. */
export async function deleteTopic(app: App, realm: RealmInfo, user: User, channelId: number, topicName: string): Promise<{ complete: boolean }> {
  requireRole(user, Role.ADMINISTRATOR);
  const { channel } = await accessibleChannel(app, realm, user, channelId, { content: true, active: true });
  const topic = normalizeTopicName(topicName);
  const deadline = Date.now() + TOPIC_DELETE_TIME_LIMIT_MS;
  for (;;) {
    if (Date.now() >= deadline) return { complete: false };
    const deleted = await inChannelOrder(app, channel.id, () =>
      atomic(app, async () => {
        const ids = await topicBatch(app, user, channel, topic);
        if (ids.length) await deleteMessages(app, realm, ids);
        return ids.length;
      }),
    );
    if (deleted === 0) break;
  }
  await forgetTopicVisibility(app, realm, channel, topic);
  return { complete: true };
}
