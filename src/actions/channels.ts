// Creating, changing and archiving channels: checks, the write in one transaction, then the
// `stream` events (and peer_add for users who newly see the channel) after commit.
import type { App } from '../app.ts';
import { hasRealmPermission } from '../auth/permissions.ts';
import type { Channel, Prisma, User } from '../db/generated/client.ts';
import { CHANNEL_SETTINGS_WITHOUT_EVERYONE, MAX_CHANNEL_NAME_LENGTH, type TOPICS_POLICIES, type ChannelPermission } from '../domain/channel-settings.ts';
import type { GroupSettingValue } from '../domain/realm-settings.ts';
import { ApiError, badRequest, notAllowed } from '../errors.ts';
import { administrableChannel, channelByName, channelDict, channelPermission, metadataUserIds, postPolicyFields, subscriberIds } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { renderDescription } from '../queries/render-context.ts';
import { forgetArchivedChannel, isDefaultChannel, markDefault, unmarkDefault } from './default-channels.ts';
import { checkGroupSetting, normalizeGroupSetting, sameGroupSetting } from './group-settings.ts';
import { unsetChannelSettings } from './realm.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { ChatEvent, EventOf } from '../events/schemas.ts';
import { isAdmin, isOwner } from '../auth/policy.ts';

export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];
type GroupSettings = Partial<Record<ChannelPermission, GroupSettingValue>>;

/** Changing who may join needs content access, not just the right to administer. */
const CONTENT_SETTINGS = new Set<ChannelPermission>(['can_add_subscribers_group', 'can_subscribe_group']);
const DELETE_SETTINGS = new Set<ChannelPermission>(['can_delete_any_message_group', 'can_delete_own_message_group']);

const NON_CHARACTER = /[\uFDD0-\uFDEF]|[\uFFFE\uFFFF]$/u;

/** Zulip's channel-name rules; returns the trimmed name. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw badRequest("Channel name can't be empty.");
  const chars = Array.from(name);
  if (chars.length > MAX_CHANNEL_NAME_LENGTH) throw badRequest(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  const bad = chars.findIndex((c) => /\p{Cc}|\p{Cs}/u.test(c) || NON_CHARACTER.test(c) || (c.codePointAt(0)! & 0xfffe) === 0xfffe);
  if (bad >= 0) throw badRequest(`Invalid character in channel name, at position ${bad + 1}.`);
  return name;
}

/** Descriptions are one line. */
export const cleanDescription = (text: string) => text.replace(/\n/g, ' ');

/** Stand-in until the Markdown pipeline renders descriptions: escaped text in one paragraph. */
/** 'realm_default' (null), 'unlimited' (-1) or a positive number of days. */
export function parseRetention(value: string | number): number | null {
  if (value === 'realm_default') return null;
  if (value === 'unlimited') return -1;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw badRequest(`Bad value for 'message_retention_days': ${value}`);
}

export function requireOwner(user: User): void {
  if (!isOwner(user)) throw notAllowed('Must be an organization owner');
}

export async function checkTopicsPolicy(app: App, realm: RealmInfo, user: User, policy: TopicsPolicy, channel?: Channel): Promise<void> {
  if (policy === 'inherit' && !channel) return;
  if (!(await hasRealmPermission(app.realms, realm, user, 'can_set_topics_policy_group'))) throw badRequest('Insufficient permission');
  if (policy === 'empty_topic_only' && channel) {
    const named = await app.prisma.message.findFirst({ where: { channelId: channel.id, NOT: { topic: '' } }, select: { id: true } });
    if (named)
      throw badRequest(
        'To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.',
      );
  }
}

export interface Privacy {
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
}

/** The combination must be one Zulip knows, and the user must be allowed to create what it becomes. */
export async function checkPrivacy(app: App, realm: RealmInfo, user: User, p: Privacy, changes: { inviteOnly: boolean; webPublic: boolean }): Promise<void> {
  if ((p.isWebPublic && (p.inviteOnly || !p.historyPublicToSubscribers)) || (!p.inviteOnly && !p.historyPublicToSubscribers)) {
    throw badRequest('Invalid parameters');
  }
  if (changes.inviteOnly) {
    const permission = p.inviteOnly ? 'can_create_private_channel_group' : 'can_create_public_channel_group';
    if (!(await hasRealmPermission(app.realms, realm, user, permission))) throw badRequest('Insufficient permission');
  }
  if (changes.webPublic && p.isWebPublic) {
    if (!realm.settings.enable_spectator_access) throw badRequest('Web-public channels are not enabled.');
    if (!(await hasRealmPermission(app.realms, realm, user, 'can_create_web_public_channel_group'))) throw badRequest('Insufficient permission');
  }
}

/** Protected history means new subscribers cannot see old topics, so everyone must be able to start one. */
export function checkTopicCreation(realm: RealmInfo, historyPublic: boolean, canCreateTopic: GroupSettingValue): void {
  if (!historyPublic && canCreateTopic !== realm.systemGroups['role:everyone']) {
    throw badRequest('Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group');
  }
}

/** Validates requested channel group settings; returns them normalized. */
export async function checkGroupSettings(app: App, realm: RealmInfo, user: User, requested: GroupSettings): Promise<GroupSettings> {
  const groups = await app.realms.groups(realm.id);
  const result: GroupSettings = {};
  for (const [setting, raw] of Object.entries(requested) as [ChannelPermission, GroupSettingValue][]) {
    const value = await checkGroupSetting(app.prisma, realm, groups, setting, raw, { allowEveryone: !CHANNEL_SETTINGS_WITHOUT_EVERYONE.has(setting) });
    if (
      DELETE_SETTINGS.has(setting) &&
      value !== realm.systemGroups['role:nobody'] &&
      !(await hasRealmPermission(app.realms, realm, user, 'can_set_delete_message_policy_group'))
    ) {
      throw badRequest('Insufficient permission');
    }
    result[setting] = value;
  }
  return result;
}

export async function checkFolder(app: App, realm: RealmInfo, folderId: number): Promise<void> {
  const folder = await app.prisma.channelFolder.findFirst({ where: { id: folderId, realmId: realm.id }, select: { id: true } });
  if (!folder) throw badRequest('Invalid channel folder ID');
}

/** A name nobody else uses (case-insensitively); Zulip's ChannelExistsError otherwise. */
export async function checkNameAvailable(app: App, realm: RealmInfo, name: string, except?: Channel): Promise<void> {
  const existing = await channelByName(app, realm, name);
  if (existing && existing.id !== except?.id) throw new ApiError(`Channel '${name}' already exists`, 'CHANNEL_ALREADY_EXISTS', 409, { channel_name: name });
}

/** Users in ascending order, each once. */
export const uniqueIds = (userIds: Iterable<number>): number[] => [...new Set(userIds)].sort((a, b) => a - b);

/** One event of the current transaction to some users, sent on commit. */
export function sendToUsers(realm: RealmInfo, userIds: Iterable<number>, event: ChatEvent): void {
  sendOnCommit({ realmId: realm.id, userIds: uniqueIds(userIds), event });
}

/** Inside an action's transaction: holds the channel's row until the commit, so checks read it as no concurrent change can make it stale. */
async function lockChannel(app: App, id: number): Promise<void> {
  await app.prisma.$queryRaw`SELECT id FROM "Channel" WHERE id = ${id} FOR UPDATE`;
}

/**
 * After a change of who may see a channel: those who now see it get the channel (`stream`
 * create) and its subscribers (peer_add); those who no longer do get a `stream` delete.
 */
export async function announceVisibilityChange(app: App, realm: RealmInfo, channel: Channel, before: Set<number>, after: number[]): Promise<void> {
  const gaining = after.filter((id) => !before.has(id));
  const losing = [...before].filter((id) => !after.includes(id));
  if (gaining.length) {
    sendToUsers(realm, gaining, { type: 'stream', op: 'create', streams: [await channelDict(app, realm, channel)], for_unarchiving: false });
    const subscribers = await subscriberIds(app, channel.id);
    if (subscribers.length) sendToUsers(realm, gaining, { type: 'subscription', op: 'peer_add', stream_ids: [channel.id], user_ids: [...subscribers] });
  }
  sendToUsers(realm, losing, { type: 'stream', op: 'delete', streams: [{ stream_id: channel.id }], stream_ids: [channel.id], for_archiving: false });
}

export interface ChannelUpdate {
  newName?: string;
  description?: string;
  isPrivate?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  messageRetentionDays?: string | number;
  topicsPolicy?: TopicsPolicy;
  /** null takes the channel out of its folder; undefined leaves it. */
  folderId?: number | null;
  /** Make it a default channel, or no longer one (organization administrators only). */
  isDefault?: boolean;
  groupSettings: Partial<Record<ChannelPermission, { new: GroupSettingValue; old?: GroupSettingValue }>>;
}

interface PlannedChange {
  data: Prisma.ChannelUpdateInput;
  /** `stream` update events (less what names the channel), in the order Zulip sends them. */
  events: Omit<EventOf<'stream', 'update'>, 'type' | 'op' | 'stream_id' | 'name'>[];
}

async function planPrivacy(
  app: App,
  realm: RealmInfo,
  user: User,
  channel: Channel,
  u: ChannelUpdate,
  contentAccess: boolean,
  plan: PlannedChange,
): Promise<Privacy> {
  const p: Privacy = {
    inviteOnly: u.isPrivate ?? channel.inviteOnly,
    isWebPublic: u.isWebPublic ?? channel.isWebPublic,
    // Private channels default to protected history, public ones always share it.
    historyPublicToSubscribers: u.historyPublicToSubscribers ?? (u.isPrivate !== undefined ? !u.isPrivate : channel.historyPublicToSubscribers),
  };
  if (p.inviteOnly && (u.isDefault ?? (await isDefaultChannel(app, channel.id)))) throw badRequest('A default channel cannot be private.');
  if (!p.inviteOnly && realm.settings.moderation_request_channel_id === channel.id) throw badRequest('Moderation request channel must be private.');
  if (u.isPrivate !== undefined && !contentAccess) throw badRequest('Channel content access is required.');
  await checkPrivacy(app, realm, user, p, { inviteOnly: u.isPrivate !== undefined, webPublic: u.isWebPublic !== undefined });
  if (p.inviteOnly !== channel.inviteOnly || p.isWebPublic !== channel.isWebPublic || p.historyPublicToSubscribers !== channel.historyPublicToSubscribers) {
    plan.data.inviteOnly = p.inviteOnly;
    plan.data.isWebPublic = p.isWebPublic;
    plan.data.historyPublicToSubscribers = p.historyPublicToSubscribers;
    plan.events.push({
      property: 'invite_only',
      value: p.inviteOnly,
      history_public_to_subscribers: p.historyPublicToSubscribers,
      is_web_public: p.isWebPublic,
    });
  }
  return p;
}

async function planScalars(app: App, realm: RealmInfo, user: User, channel: Channel, u: ChannelUpdate, plan: PlannedChange): Promise<void> {
  if (u.messageRetentionDays !== undefined) {
    requireOwner(user);
    const days = parseRetention(u.messageRetentionDays);
    if (days !== channel.messageRetentionDays) {
      plan.data.messageRetentionDays = days;
      plan.events.push({ property: 'message_retention_days', value: days });
    }
  }
  if (u.topicsPolicy !== undefined) {
    await checkTopicsPolicy(app, realm, user, u.topicsPolicy, channel);
    if (u.topicsPolicy !== channel.topicsPolicy) {
      plan.data.topicsPolicy = u.topicsPolicy;
      plan.events.push({ property: 'topics_policy', value: u.topicsPolicy });
    }
  }
  if (u.description !== undefined) {
    const description = cleanDescription(u.description);
    if (description !== channel.description) {
      plan.data.description = description;
      const rendered = await renderDescription(app, realm, description);
      plan.data.renderedDescription = rendered;
      plan.events.push({ property: 'description', value: description, rendered_description: rendered });
    }
  }
  if (u.newName !== undefined) {
    const name = checkChannelName(u.newName);
    if (name === channel.name) throw badRequest('Channel already has that name.');
    if (name.toLowerCase() !== channel.name.toLowerCase()) await checkNameAvailable(app, realm, name, channel);
    plan.data.name = name;
    plan.events.push({ property: 'name', value: name });
  }
  if (u.folderId !== undefined && u.folderId !== channel.folderId) {
    if (u.folderId !== null) await checkFolder(app, realm, u.folderId);
    plan.data.folder = u.folderId === null ? { disconnect: true } : { connect: { id: u.folderId } };
    plan.events.push({ property: 'folder_id', value: u.folderId });
  }
}

async function planGroupSettings(
  app: App,
  realm: RealmInfo,
  user: User,
  channel: Channel,
  u: ChannelUpdate,
  contentAccess: boolean,
  plan: PlannedChange,
): Promise<GroupSettings> {
  const requested = await checkGroupSettings(app, realm, user, Object.fromEntries(Object.entries(u.groupSettings).map(([k, v]) => [k, v.new])));
  const changed: GroupSettings = {};
  for (const [setting, value] of Object.entries(requested) as [ChannelPermission, GroupSettingValue][]) {
    const current = channelPermission(realm, channel, setting);
    const expected = u.groupSettings[setting]!.old;
    if (expected !== undefined && !sameGroupSetting(normalizeGroupSetting(realm, expected), current)) {
      throw badRequest("'old' value does not match the expected value.");
    }
    if (sameGroupSetting(current, value)) continue;
    if (CONTENT_SETTINGS.has(setting) && !contentAccess) throw badRequest('Channel content access is required.');
    changed[setting] = value;
    plan.events.push({ property: setting, value });
  }
  if (Object.keys(changed).length) plan.data.permissions = { ...((channel.permissions ?? {}) as object), ...changed };
  return changed;
}

/** PATCH /streams/{id}: every check, on the locked channel row, then one write, in one transaction. */
export async function updateChannel(app: App, realm: RealmInfo, user: User, channelId: number, u: ChannelUpdate): Promise<void> {
  await atomic(app, async () => {
    await lockChannel(app, channelId);
    const { channel, content } = await administrableChannel(app, realm, user, channelId);
    const plan: PlannedChange = { data: {}, events: [] };
    const privacy = await planPrivacy(app, realm, user, channel, u, content, plan);
    await planScalars(app, realm, user, channel, u, plan);
    const changedGroups = await planGroupSettings(app, realm, user, channel, u, content, plan);
    checkTopicCreation(
      realm,
      privacy.historyPublicToSubscribers,
      changedGroups.can_create_topic_group ?? channelPermission(realm, channel, 'can_create_topic_group'),
    );
    if (u.isDefault !== undefined && !isAdmin(user)) throw badRequest('You do not have permission to change default channels.');
    await applyChannelUpdate(app, realm, channel, plan);
    if (u.isDefault === true) await markDefault(app, realm, channel);
    if (u.isDefault === false) await unmarkDefault(app, realm, channel);
  });
}

/** Writes the planned change and sends its `stream` events to who sees the channel before and after. */
async function applyChannelUpdate(app: App, realm: RealmInfo, channel: Channel, plan: PlannedChange): Promise<void> {
  if (plan.events.length === 0) return;
  const before = new Set(await metadataUserIds(app, realm, channel));
  const updated = await app.prisma.channel.update({ where: { id: channel.id }, data: plan.data });
  onCommit(() => cacheChanged(app, { cache: 'channel-rows' }));
  const after = await metadataUserIds(app, realm, updated);
  const unchanged = after.filter((id) => before.has(id));
  const postPolicy = (c: Channel) => postPolicyFields(realm, c);
  let renamed = false;
  for (const e of plan.events) {
    // Each event names the channel as clients know it then: the old name up to the rename.
    const name = renamed ? updated.name : channel.name;
    if (e.property === 'name') renamed = true;
    sendToUsers(realm, unchanged, { type: 'stream', op: 'update', stream_id: channel.id, name, ...e });
    if (e.property === 'can_send_message_group' && postPolicy(channel).stream_post_policy !== postPolicy(updated).stream_post_policy) {
      for (const [property, value] of Object.entries(postPolicy(updated))) {
        sendToUsers(realm, unchanged, { type: 'stream', op: 'update', stream_id: channel.id, name, property, value });
      }
    }
  }
  await announceVisibilityChange(app, realm, updated, before, after);
}

/** DELETE /streams/{id}: archives the channel; subscriptions stay, as in Zulip. */
export async function archiveChannel(app: App, realm: RealmInfo, user: User, channelId: number): Promise<void> {
  await atomic(app, async () => {
    await lockChannel(app, channelId);
    const { channel } = await administrableChannel(app, realm, user, channelId);
    if (channel.isArchived) throw badRequest('Channel is already deactivated');
    const recipients = await metadataUserIds(app, realm, channel);
    await app.prisma.channel.update({ where: { id: channel.id }, data: { isArchived: true } });
    onCommit(() => cacheChanged(app, { cache: 'channel-rows' }));
    await forgetArchivedChannel(app, realm, channel);
    await unsetChannelSettings(app, realm, channel.id);
    sendToUsers(realm, recipients, { type: 'stream', op: 'update', stream_id: channel.id, name: channel.name, property: 'is_archived', value: true });
    sendToUsers(realm, recipients, { type: 'stream', op: 'delete', streams: [{ stream_id: channel.id }], stream_ids: [channel.id], for_archiving: true });
  });
}
