// Who may post where (spec section 3, Zulip's check_message): the checks a person's message
// passes before it is rendered and stored. They run before the write, outside its transaction:
// a channel message is written by a statement shared with other channels' messages
// (messages-store.ts), with no interactive transaction to hold them (see prepareMessage).
import type { App } from '../app.ts';
import { hasRealmPermission, isInGroupSetting } from '../auth/permissions.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RenderResult } from '../markdown/types.ts';
import { isSubscribed, userHasChannelPermission } from '../queries/channels.ts';
import { topicHasMessages } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { isGuest } from '../auth/policy.ts';

/** Above this many subscribers (or topic participants) a wildcard mention needs permission. */
export const WILDCARD_MENTION_THRESHOLD = 15;

export function topicsPolicy(realm: RealmInfo, channel: Channel): string {
  return channel.topicsPolicy === 'inherit' ? realm.settings.topics_policy : channel.topicsPolicy;
}

/** The channel's topics policy applied to a topic a message is sent or moved to. */
export function checkTopicsPolicy(realm: RealmInfo, channel: Channel, topic: string): void {
  const policy = topicsPolicy(realm, channel);
  if (policy === 'disable_empty_topic' && topic === '') {
    throw badRequest(
      channel.topicsPolicy === 'inherit'
        ? 'Topics are required in this organization.'
        : 'Sending messages to the general chat topic is not allowed in this channel.',
    );
  }
  if (policy === 'empty_topic_only' && topic !== '') throw badRequest('Only the general chat topic is allowed in this channel.');
}

async function botOwner(app: App, user: User): Promise<User | null> {
  return user.isBot && user.botOwnerId ? app.prisma.user.findUnique({ where: { id: user.botOwnerId } }) : null;
}

/** A channel permission held by the user or, for a bot, by its owner (as Zulip allows). */
async function hasChannelPermissionOrOwner(
  app: App,
  realm: RealmInfo,
  user: User,
  channel: Channel,
  setting: 'can_send_message_group' | 'can_create_topic_group',
): Promise<boolean> {
  if (await userHasChannelPermission(app, realm, user, channel, setting)) return true;
  const owner = await botOwner(app, user);
  return owner !== null && (await userHasChannelPermission(app, realm, owner, channel, setting));
}

export async function checkCanPost(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<void> {
  if (!(await hasChannelPermissionOrOwner(app, realm, user, channel, 'can_send_message_group'))) {
    throw badRequest('You do not have permission to post in this channel.');
  }
}

/** can_create_topic_group: only needed when the topic has no message yet. */
export async function checkCanCreateTopic(app: App, realm: RealmInfo, user: User, channel: Channel, topic: string): Promise<void> {
  if (await hasChannelPermissionOrOwner(app, realm, user, channel, 'can_create_topic_group')) return;
  if (!(await topicHasMessages(app, channel.id, topic))) throw badRequest('You do not have permission to create new topics in this channel.');
}

/** Zulip's access_stream_for_send_message. */
export async function checkChannelSend(app: App, realm: RealmInfo, sender: User, channel: Channel): Promise<void> {
  await checkCanPost(app, realm, sender, channel);
  const denied = () => badRequest(`Not authorized to send to channel '${channel.name}'`);
  if (channel.isArchived) throw denied();
  if (channel.isWebPublic || (!channel.inviteOnly && !isGuest(sender))) return;
  if (await isSubscribed(app, sender.id, channel.id)) return;
  const owner = await botOwner(app, sender);
  if (owner && (await isSubscribed(app, owner.id, channel.id))) return;
  throw denied();
}

/** direct_message_permission_group and direct_message_initiator_group (Zulip's check_can_send_direct_message). */
export async function checkDirectMessagePermission(app: App, realm: RealmInfo, sender: User, recipients: User[], memberKey: string): Promise<void> {
  if (sender.isBot || recipients.every((u) => u.isBot || u.id === sender.id)) return;
  const groups = await app.realms.groups(realm.id);
  const permission = realm.permissions.direct_message_permission_group;
  if (![sender, ...recipients].some((u) => isInGroupSetting(u, permission, groups, realm))) {
    throw badRequest(
      permission === realm.systemGroups['role:nobody']
        ? 'Direct messages are disabled in this organization.'
        : 'This conversation does not include any users who can authorize it.',
    );
  }
  if (isInGroupSetting(sender, realm.permissions.direct_message_initiator_group, groups, realm)) return;
  const existing = await app.prisma.$queryRawUnsafe<unknown[]>(CONVERSATION_EXISTS, realm.id, memberKey);
  if (!existing.length) throw badRequest('You do not have permission to initiate direct message conversations.');
}

/**
 * Whether the conversation of member key $2 in organization $1 has a message: its row by its key,
 * then one entry of its messages' index, however long the organization's history.
 */
export const CONVERSATION_EXISTS = `SELECT 1 FROM "DirectMessageGroup" g
  WHERE g."realmId" = $1 AND g."memberKey" = $2 AND EXISTS (SELECT 1 FROM "Message" m WHERE m."directGroupId" = g.id)`;

/** Wildcard mentions in a large channel or topic need can_mention_many_users_group. */
export async function checkWildcardMentions(
  app: App,
  realm: RealmInfo,
  sender: User,
  rendered: RenderResult,
  subscriberCount: number,
  participants: Set<number>,
): Promise<void> {
  if (!rendered.wildcardMention && !rendered.topicWildcardMention) return;
  if (await hasRealmPermission(app.realms, realm, sender, 'can_mention_many_users_group')) return;
  if (rendered.wildcardMention && subscriberCount > WILDCARD_MENTION_THRESHOLD) {
    throw new ApiError('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED');
  }
  if (rendered.topicWildcardMention && participants.size > WILDCARD_MENTION_THRESHOLD) {
    throw new ApiError('You do not have permission to use topic wildcard mentions in this topic.', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED');
  }
}
