// Channels and who may see them. Every endpoint that touches a channel or its messages asks here,
// so the rules (public/private, guests, protected history, archived) live in one place.
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { CHANNEL_PERMISSION_DEFAULTS, type ChannelPermission } from '../domain/channel-settings.ts';
import type { GroupSettingValue } from '../domain/realm-settings.ts';
import { Role } from '../domain/roles.ts';
import { isInGroupSetting } from '../auth/permissions.ts';
import { badRequest } from '../http/errors.ts';
import type { RealmInfo } from './realms.ts';

export function channelPermission(realm: RealmInfo, channel: Channel, setting: ChannelPermission): GroupSettingValue {
  const stored = (channel.permissions ?? {}) as Partial<Record<ChannelPermission, GroupSettingValue>>;
  return stored[setting] ?? realm.systemGroups[CHANNEL_PERMISSION_DEFAULTS[setting]];
}

export async function userHasChannelPermission(app: App, realm: RealmInfo, user: User, channel: Channel, setting: ChannelPermission): Promise<boolean> {
  return isInGroupSetting(user, channelPermission(realm, channel, setting), await app.realms.groups(realm.id), realm);
}

export async function isSubscribed(app: App, userId: number, channelId: number): Promise<boolean> {
  const sub = await app.prisma.subscription.findUnique({ where: { userId_channelId: { userId, channelId } }, select: { active: true } });
  return sub?.active ?? false;
}

/** Active subscribers who are active users: the recipients of the channel's messages. */
export async function subscriberIds(app: App, channelId: number): Promise<number[]> {
  const rows = await app.prisma.subscription.findMany({
    where: { channelId, active: true, user: { isActive: true } },
    select: { userId: true },
    orderBy: { userId: 'asc' },
  });
  return rows.map((r) => r.userId);
}

export interface ChannelAccess {
  channel: Channel;
  subscribed: boolean;
  /** May read the channel's messages (subject to protected history for private channels). */
  content: boolean;
  /** May know the channel exists and see its settings and subscribers. */
  metadata: boolean;
}

/**
 * Zulip's access rules: members read public channels without subscribing; guests only what they
 * are subscribed to; private channels' content only subscribers, their metadata also those who
 * administer the channel or may add subscribers to it, and organization administrators.
 */
export async function channelAccess(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<ChannelAccess> {
  const subscribed = await isSubscribed(app, user.id, channel.id);
  if (subscribed) return { channel, subscribed, content: true, metadata: true };
  if (user.role === Role.GUEST) return { channel, subscribed, content: false, metadata: false };
  if (!channel.inviteOnly) return { channel, subscribed, content: true, metadata: true };
  const metadata =
    user.role <= Role.ADMINISTRATOR ||
    (await userHasChannelPermission(app, realm, user, channel, 'can_administer_channel_group')) ||
    (await userHasChannelPermission(app, realm, user, channel, 'can_add_subscribers_group')) ||
    (await userHasChannelPermission(app, realm, user, channel, 'can_subscribe_group'));
  return { channel, subscribed, content: false, metadata };
}

export async function channelById(app: App, realm: RealmInfo, id: number): Promise<Channel> {
  const channel = await app.prisma.channel.findFirst({ where: { id, realmId: realm.id } });
  if (!channel) throw badRequest('Invalid channel ID');
  return channel;
}

/** A channel the user may see at all (metadata); otherwise the same error as a missing one. */
export async function accessibleChannel(app: App, realm: RealmInfo, user: User, id: number): Promise<ChannelAccess> {
  const channel = await app.prisma.channel.findFirst({ where: { id, realmId: realm.id } });
  const access = channel && (await channelAccess(app, realm, user, channel));
  if (!access || !access.metadata) throw badRequest('Invalid channel ID');
  return access;
}

export async function channelByName(app: App, realm: RealmInfo, name: string): Promise<Channel | null> {
  return app.prisma.channel.findFirst({ where: { realmId: realm.id, name: { equals: name, mode: 'insensitive' } } });
}
