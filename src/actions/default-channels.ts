// Default channels (every new user joins them) and default channel groups (offered at sign-up),
// as Zulip's zerver/actions/default_streams.py: administrators change them, and every active
// member (guests are told there are none) gets the whole new list in one event.
import type { App } from '../app.ts';
import { isGuest, requireRole } from '../auth/policy.ts';
import { Prisma, type Channel, type DefaultChannelGroup, type User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { accessibleChannel, channelAccess, channelByName } from '../queries/channels.ts';
import { defaultChannelGroups, defaultChannelIds } from '../queries/default-channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { realmViewers } from '../queries/users.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';

export const MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH = 60;
export const MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH = 1024;

/** Holds the channels' rows until the commit: whether each may be a default (public, active) can't change meanwhile. */
async function lockChannels(app: App, ids: number[]): Promise<void> {
  if (ids.length) await app.prisma.$queryRawUnsafe('SELECT id FROM "Channel" WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE', ids);
}

async function memberIds(app: App, realm: RealmInfo): Promise<number[]> {
  return (await realmViewers(app, realm.id)).filter((v) => !isGuest(v)).map((v) => v.id);
}

async function announceDefaultChannels(app: App, realm: RealmInfo): Promise<void> {
  const event: ChatEvent = { type: 'default_streams', default_streams: await defaultChannelIds(app, realm.id) };
  sendOnCommit({ realmId: realm.id, userIds: await memberIds(app, realm), event });
}

async function announceGroups(app: App, realm: RealmInfo): Promise<void> {
  const event: ChatEvent = { type: 'default_stream_groups', default_stream_groups: await defaultChannelGroups(app, realm.id) };
  sendOnCommit({ realmId: realm.id, userIds: await memberIds(app, realm), event });
}

/** Makes a channel (public, checked by the caller) a default one; nothing happens when it already is. */
export async function markDefault(app: App, realm: RealmInfo, channel: Channel): Promise<void> {
  if (await app.prisma.defaultChannel.findUnique({ where: { channelId: channel.id } })) return;
  await app.prisma.defaultChannel.create({ data: { channelId: channel.id, realmId: realm.id } });
  await announceDefaultChannels(app, realm);
}

/** Takes a channel out of the default ones; the event goes even when it was not one, as in Zulip. */
export async function unmarkDefault(app: App, realm: RealmInfo, channel: Channel): Promise<void> {
  await app.prisma.defaultChannel.deleteMany({ where: { channelId: channel.id } });
  await announceDefaultChannels(app, realm);
}

export const isDefaultChannel = async (app: App, channelId: number): Promise<boolean> =>
  (await app.prisma.defaultChannel.findUnique({ where: { channelId } })) !== null;

/** An archived channel is no default and in no group any more. */
export async function forgetArchivedChannel(app: App, realm: RealmInfo, channel: Channel): Promise<void> {
  if (await isDefaultChannel(app, channel.id)) await unmarkDefault(app, realm, channel);
  const memberships = await app.prisma.defaultChannelGroupChannel.findMany({ where: { channelId: channel.id }, orderBy: { groupId: 'asc' } });
  for (const m of memberships) {
    await app.prisma.defaultChannelGroupChannel.delete({ where: { groupId_channelId: { groupId: m.groupId, channelId: channel.id } } });
    await announceGroups(app, realm);
  }
}

/** POST /default_streams: a public channel the administrator can read. */
export async function addDefaultChannel(app: App, realm: RealmInfo, actor: User, channelId: number): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    await lockChannels(app, [channelId]);
    const { channel } = await accessibleChannel(app, realm, actor, channelId, { content: true, active: true });
    if (channel.inviteOnly) throw badRequest('Private channels cannot be made default.');
    await markDefault(app, realm, channel);
  });
}

/** DELETE /default_streams. */
export async function removeDefaultChannel(app: App, realm: RealmInfo, actor: User, channelId: number): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    await lockChannels(app, [channelId]);
    const { channel } = await accessibleChannel(app, realm, actor, channelId, { active: true });
    await unmarkDefault(app, realm, channel);
  });
}

/** Zulip's check_default_stream_group_name. */
function checkGroupName(name: string): void {
  if (name.trim() === '') throw badRequest(`Invalid default channel group name '${name}'`);
  if ([...name].length > MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH) {
    throw badRequest(`Default channel group name too long (limit: ${MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH} characters)`);
  }
  if (name.includes('\0')) throw badRequest(`Default channel group name '${name}' contains NULL (0x00) characters.`);
}

const groupExists = (name: string) => badRequest(`Default channel group '${name}' already exists`);

/** Name uniqueness rests on the table's unique index: a concurrent twin fails there with the same error. */
async function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw groupExists(name);
    throw error;
  }
}

/** The group, locked until the commit so its channel list can't change under the checks. */
async function lockedGroup(app: App, realm: RealmInfo, groupId: number): Promise<DefaultChannelGroup> {
  await app.prisma.$queryRawUnsafe('SELECT id FROM "DefaultChannelGroup" WHERE id = $1 FOR UPDATE', groupId);
  const group = await app.prisma.defaultChannelGroup.findFirst({ where: { id: groupId, realmId: realm.id } });
  if (!group) throw badRequest(`Default channel group with id '${groupId}' does not exist.`);
  return group;
}

/** Zulip's access_stream_by_name for each name: an active channel the actor can read. */
async function channelsByName(app: App, realm: RealmInfo, actor: User, names: string[]): Promise<Channel[]> {
  const channels: Channel[] = [];
  for (const name of names) {
    const channel = await channelByName(app, realm, name);
    const access = channel && !channel.isArchived && (await channelAccess(app, realm, actor, channel));
    if (!access || !access.content) throw badRequest(`Invalid channel name '${name}'`);
    channels.push(access.channel);
  }
  await lockChannels(
    app,
    [...new Set(channels.map((c) => c.id))].sort((a, b) => a - b),
  );
  return channels;
}

async function refuseDefaults(app: App, realm: RealmInfo, channels: Channel[], groupName: string): Promise<void> {
  const defaults = new Set(await defaultChannelIds(app, realm.id));
  const conflict = channels.find((c) => defaults.has(c.id));
  if (conflict) throw badRequest(`'${conflict.name}' is a default channel and cannot be added to '${groupName}'`);
}

/** POST /default_stream_groups/create. */
export async function createDefaultChannelGroup(
  app: App,
  realm: RealmInfo,
  actor: User,
  name: string,
  description: string,
  channelNames: string[],
): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    const channels = await channelsByName(app, realm, actor, channelNames);
    await refuseDefaults(app, realm, channels, name);
    checkGroupName(name);
    if (await app.prisma.defaultChannelGroup.findFirst({ where: { realmId: realm.id, name } })) throw groupExists(name);
    const channelIds = [...new Set(channels.map((c) => c.id))];
    await uniqueName(name, () =>
      app.prisma.defaultChannelGroup.create({
        data: { realmId: realm.id, name, description, channels: { create: channelIds.map((channelId) => ({ channelId })) } },
      }),
    );
    await announceGroups(app, realm);
  });
}

export interface GroupInfoChange {
  name?: string;
  description?: string;
}

/** PATCH /default_stream_groups/{id}: a new name, a new description, or both (one event each). */
export async function updateDefaultChannelGroup(app: App, realm: RealmInfo, actor: User, groupId: number, change: GroupInfoChange): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  if (!change.name && !change.description) throw badRequest('You must pass "new_description" or "new_group_name".');
  await atomic(app, async () => {
    const group = await lockedGroup(app, realm, groupId);
    if (change.name !== undefined) {
      if (change.name === group.name) throw badRequest(`This default channel group is already named '${change.name}'`);
      // Zulip stores any name here; the creation rules keep names it could not store out.
      checkGroupName(change.name);
      if (await app.prisma.defaultChannelGroup.findFirst({ where: { realmId: realm.id, name: change.name } })) throw groupExists(change.name);
      const name = change.name;
      await uniqueName(name, () => app.prisma.defaultChannelGroup.update({ where: { id: group.id }, data: { name } }));
      await announceGroups(app, realm);
    }
    if (change.description !== undefined) {
      await app.prisma.defaultChannelGroup.update({ where: { id: group.id }, data: { description: change.description } });
      await announceGroups(app, realm);
    }
  });
}

/** PATCH /default_stream_groups/{id}/streams: `add` or `remove` the named channels. */
export async function updateDefaultChannelGroupChannels(
  app: App,
  realm: RealmInfo,
  actor: User,
  groupId: number,
  op: string,
  channelNames: string[],
): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    const group = await lockedGroup(app, realm, groupId);
    const channels = await channelsByName(app, realm, actor, channelNames);
    const present = new Set((await app.prisma.defaultChannelGroupChannel.findMany({ where: { groupId: group.id } })).map((m) => m.channelId));
    if (op === 'add') {
      await refuseDefaults(app, realm, channels, group.name);
      for (const channel of channels) {
        if (present.has(channel.id)) throw badRequest(`Channel '${channel.name}' is already present in default channel group '${group.name}'`);
        present.add(channel.id);
      }
      await app.prisma.defaultChannelGroupChannel.createMany({
        data: [...new Set(channels.map((c) => c.id))].map((channelId) => ({ groupId: group.id, channelId })),
      });
    } else if (op === 'remove') {
      const absent = channels.find((c) => !present.has(c.id));
      if (absent) throw badRequest(`Channel '${absent.name}' is not present in default channel group '${group.name}'`);
      await app.prisma.defaultChannelGroupChannel.deleteMany({ where: { groupId: group.id, channelId: { in: channels.map((c) => c.id) } } });
    } else {
      throw badRequest('Invalid value for "op". Specify one of "add" or "remove".');
    }
    await announceGroups(app, realm);
  });
}

/** DELETE /default_stream_groups/{id}. */
export async function removeDefaultChannelGroup(app: App, realm: RealmInfo, actor: User, groupId: number): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    const group = await lockedGroup(app, realm, groupId);
    await app.prisma.defaultChannelGroup.delete({ where: { id: group.id } });
    await announceGroups(app, realm);
  });
}
