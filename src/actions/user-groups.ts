// Creating and changing user groups (Zulip's zerver/actions/user_groups.py): every check first,
// the writes in one transaction, then the `user_group` events to every active user.
import type { App } from '../app.ts';
import { hasRealmPermission, isInGroupSetting } from '../auth/permissions.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { CHANNEL_PERMISSION_DEFAULTS, type ChannelPermission } from '../domain/channel-settings.ts';
import { type GroupSettingChange, type GroupSettingValue, REALM_PERMISSION_DEFAULTS, type RealmPermission } from '../domain/realm-settings.ts';
import {
  INVALID_USER_GROUP_NAME_PREFIXES,
  MAX_USER_GROUP_NAME_LENGTH,
  USER_GROUP_PERMISSION_RULES,
  USER_GROUP_PERMISSIONS,
  type UserGroupPermission,
} from '../domain/user-groups.ts';
import { ApiError, badRequest } from '../errors.ts';
import { channelPermission } from '../queries/channels.ts';
import type { GroupInfo, RealmInfo } from '../queries/realms.ts';
import { activeUsers, apiSettingValue, formatGroup, groupPermission, isNamed, recursiveSubgroupIds } from '../queries/user-groups.ts';
import { checkGroupSetting, normalizeGroupSetting, sameGroupSetting } from './group-settings.ts';
import { sendToRealm } from './realm.ts';
import { atomic, onCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { ChatEvent, EventOf } from '../events/schemas.ts';
import { isGuest, refuseGuests } from '../auth/policy.ts';

type Groups = Map<number, GroupInfo>;
type Event = Record<string, unknown>;

const insufficient = () => badRequest('Insufficient permission');

export function requireNonGuest(user: User): void {
  refuseGuests(user);
}

export function checkGroupName(name: string): string {
  if (name.trim() === '') throw badRequest("User group name can't be empty!");
  if (name.length > MAX_USER_GROUP_NAME_LENGTH) throw badRequest(`User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`);
  const prefix = INVALID_USER_GROUP_NAME_PREFIXES.find((p) => name.startsWith(p));
  if (prefix) throw badRequest(`User group name cannot start with '${prefix}'.`);
  return name;
}

async function checkNameFree(tx: Prisma.TransactionClient, realm: RealmInfo, name: string): Promise<void> {
  if (await tx.userGroup.findFirst({ where: { realmId: realm.id, name }, select: { id: true } })) throw badRequest(`User group '${name}' already exists.`);
}

/** Active users of the organization by id (Zulip's user_ids_to_users). */
async function checkUserIds(tx: Prisma.TransactionClient, realm: RealmInfo, ids: number[]): Promise<number[]> {
  const found = await tx.user.findMany({ where: { realmId: realm.id, isActive: true, isSystemBot: false, id: { in: ids } }, select: { id: true } });
  const missing = ids.find((id) => !found.some((u) => u.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
  return [...new Set(ids)];
}

/** Named, active groups usable as subgroups. */
function checkSubgroupIds(groups: Groups, ids: number[]): number[] {
  const missing = ids.find((id) => !groups.get(id)?.name);
  if (missing !== undefined) throw badRequest(`Invalid user group ID: ${missing}`);
  if (ids.some((id) => groups.get(id)!.deactivated)) throw badRequest('User group is deactivated.');
  return [...new Set(ids)];
}

/** Guests never hold a group permission that excludes role:everyone, whatever its value. */
function hasGroupPermission(realm: RealmInfo, groups: Groups, user: User, group: GroupInfo, setting: UserGroupPermission): boolean {
  if (isGuest(user) && !USER_GROUP_PERMISSION_RULES[setting].allowEveryone) return false;
  return isInGroupSetting(user, groupPermission(realm, group, setting), groups, realm);
}

/** Zulip's access_user_group_for_update: managers may do everything, others need `permission`. */
export async function accessGroupForUpdate(
  app: App,
  realm: RealmInfo,
  user: User,
  groups: Groups,
  id: number,
  permission: UserGroupPermission,
  allowDeactivated: boolean,
): Promise<GroupInfo> {
  const group = groups.get(id);
  if (!group || group.name === null) throw badRequest('Invalid user group');
  if (group.deactivated && !allowDeactivated) throw badRequest('User group is deactivated.');
  if (group.isSystemGroup) throw insufficient();
  if (await hasRealmPermission(app.realms, realm, user, 'can_manage_all_groups')) return group;
  if (hasGroupPermission(realm, groups, user, group, 'can_manage_group')) return group;
  if (permission !== 'can_manage_group' && hasGroupPermission(realm, groups, user, group, permission)) return group;
  throw insufficient();
}

/**
 * A new user's memberships that an invitation made (Zulip's bulk_add_members_to_user_groups): the
 * inviter's right was checked when inviting; `groupIds` are active named groups the user is not in.
 */
export async function addUserToGroups(app: App, realm: RealmInfo, userId: number, groupIds: number[]): Promise<void> {
  if (groupIds.length === 0) return;
  await app.prisma.userGroupMember.createMany({ data: groupIds.map((groupId) => ({ groupId, userId })) });
  groupsChanged(app, realm);
  for (const groupId of groupIds) await sendToRealm(app, realm, { type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [userId] });
}

/** Joining or leaving oneself needs only can_join_group/can_leave_group; anything else the wider right. */
function accessForMembers(
  app: App,
  realm: RealmInfo,
  user: User,
  groups: Groups,
  id: number,
  ids: number[],
  self: UserGroupPermission,
  other: UserGroupPermission,
): Promise<GroupInfo> {
  if (ids.length !== 1 || ids[0] !== user.id) return accessGroupForUpdate(app, realm, user, groups, id, other, true);
  // Only a refusal falls back to the wider right; a failing database stays a failure.
  return accessGroupForUpdate(app, realm, user, groups, id, self, true).catch((err: unknown) => {
    if (!(err instanceof ApiError)) throw err;
    return accessGroupForUpdate(app, realm, user, groups, id, other, true);
  });
}

async function checkGroupSettings(
  tx: Prisma.TransactionClient,
  realm: RealmInfo,
  groups: Groups,
  requested: Partial<Record<UserGroupPermission, GroupSettingValue>>,
) {
  const result: Partial<Record<UserGroupPermission, GroupSettingValue>> = {};
  for (const [setting, raw] of Object.entries(requested) as [UserGroupPermission, GroupSettingValue][]) {
    result[setting] = await checkGroupSetting(tx, realm, groups, setting, raw, USER_GROUP_PERMISSION_RULES[setting]);
  }
  return result;
}

/** The group as events show it, with only active users in its settings. */
async function groupForEvent(app: App, realm: RealmInfo, id: number): Promise<EventOf<'user_group', 'add'>['group']> {
  const [groups, users] = await Promise.all([app.realms.groups(realm.id), activeUsers(app, realm.id)]);
  const group = groups.get(id)!;
  if (!isNamed(group)) throw new Error(`group ${id} is anonymous: no user group`);
  return formatGroup(realm, group, users);
}

export interface NewUserGroup {
  name: string;
  description: string;
  members: number[];
  subgroups?: number[];
  settings: Partial<Record<UserGroupPermission, GroupSettingValue>>;
}

/** POST /user_groups/create; returns the new group's id. */
export async function createUserGroup(app: App, realm: RealmInfo, user: User, input: NewUserGroup): Promise<number> {
  requireNonGuest(user);
  return atomic(app, async () => {
    if (!(await hasRealmPermission(app.realms, realm, user, 'can_create_groups'))) throw insufficient();
    const groups = await app.realms.groups(realm.id);
    const tx = app.prisma;
    const members = await checkUserIds(tx, realm, input.members);
    const name = checkGroupName(input.name);
    const settings = await checkGroupSettings(tx, realm, groups, input.settings);
    await checkNameFree(tx, realm, name);
    const subgroups = checkSubgroupIds(groups, input.subgroups ?? []);
    const draft = { creatorId: user.id, isSystemGroup: false, permissions: settings } as GroupInfo;
    // Defaults are fixed at creation, as Zulip stores them, so later changes of the creator don't matter.
    const permissions = Object.fromEntries(USER_GROUP_PERMISSIONS.map((s) => [s, groupPermission(realm, draft, s)]));
    const group = await tx.userGroup.create({
      data: {
        realmId: realm.id,
        name,
        description: input.description,
        creatorId: user.id,
        permissions,
        members: { create: members.map((userId) => ({ userId })) },
        subgroups: { create: subgroups.map((subgroupId) => ({ subgroupId })) },
      },
    });
    groupsChanged(app, realm);
    // Zulip announces the group without subgroups, then adds them.
    await sendToRealm(app, realm, { type: 'user_group', op: 'add', group: { ...(await groupForEvent(app, realm, group.id)), direct_subgroup_ids: [] } });
    if (subgroups.length) await sendToRealm(app, realm, { type: 'user_group', op: 'add_subgroups', group_id: group.id, direct_subgroup_ids: subgroups });
    return group.id;
  });
}

/** In a transaction that changed groups: later reads in it see the change, and the cache goes at commit. */
function groupsChanged(app: App, realm: RealmInfo): void {
  app.realms.forgetGroups(realm.id);
  onCommit(() => cacheChanged(app, { cache: 'groups', realmId: realm.id }));
}

export interface UserGroupUpdate {
  name?: string;
  description?: string;
  deactivated?: boolean;
  settings: Partial<Record<UserGroupPermission, GroupSettingChange>>;
}

/** Changed settings, checked; an 'old' that no longer matches refuses the whole request. */
async function planSettings(tx: Prisma.TransactionClient, realm: RealmInfo, groups: Groups, group: GroupInfo, requested: UserGroupUpdate['settings']) {
  const changed: Partial<Record<UserGroupPermission, GroupSettingValue>> = {};
  for (const [setting, change] of Object.entries(requested) as [UserGroupPermission, GroupSettingChange][]) {
    const current = groupPermission(realm, group, setting);
    if (change.old !== undefined && !sameGroupSetting(normalizeGroupSetting(realm, change.old), current)) {
      throw badRequest("'old' value does not match the expected value.");
    }
    if (sameGroupSetting(normalizeGroupSetting(realm, change.new), current)) continue;
    changed[setting] = await checkGroupSetting(tx, realm, groups, setting, change.new, USER_GROUP_PERMISSION_RULES[setting]);
  }
  return changed;
}

/** PATCH /user_groups/{id}: name, description, reactivation and the group's own settings. */
export async function updateUserGroup(app: App, realm: RealmInfo, user: User, id: number, u: UserGroupUpdate): Promise<void> {
  requireNonGuest(user);
  if (u.name === undefined && u.description === undefined && u.deactivated === undefined && Object.keys(u.settings).length === 0) {
    throw badRequest('No new data supplied');
  }
  await atomic(app, async () => {
    await lockGroup(app, id);
    const groups = await app.realms.groups(realm.id);
    const group = await accessGroupForUpdate(app, realm, user, groups, id, 'can_manage_group', true);
    const events: Omit<EventOf<'user_group', 'update'>, 'type' | 'op' | 'group_id'>[] = [];
    const reactivate = u.deactivated === false && group.deactivated;
    const tx = app.prisma;
    const data: Prisma.UserGroupUpdateInput = {};
    if (u.name !== undefined && u.name !== group.name) {
      data.name = checkGroupName(u.name);
      await checkNameFree(tx, realm, u.name);
      events.push({ data: { name: u.name }, deactivated: group.deactivated });
    }
    if (u.description !== undefined && u.description !== group.description) {
      data.description = u.description;
      events.push({ data: { description: u.description } });
    }
    if (reactivate) {
      data.deactivated = false;
      events.push({ data: { deactivated: false } });
    }
    const changed = await planSettings(tx, realm, groups, group, u.settings);
    if (Object.keys(changed).length) data.permissions = { ...group.permissions, ...changed };
    if (Object.keys(data).length) await tx.userGroup.update({ where: { id }, data });
    groupsChanged(app, realm);
    const active = new Set((await activeUsers(app, realm.id)).map((x) => x.id));
    for (const e of events) await sendToRealm(app, realm, { type: 'user_group', op: 'update', group_id: id, ...e });
    if (reactivate) await sendToRealm(app, realm, { type: 'user_group', op: 'add', group: await groupForEvent(app, realm, id), for_reactivation: true });
    for (const [setting, value] of Object.entries(changed)) {
      await sendToRealm(app, realm, { type: 'user_group', op: 'update', group_id: id, data: { [setting]: apiSettingValue(value, active) } });
    }
  });
}

/** Holds the group's row until the commit: its checks (an 'old' setting, current members) must not go stale. */
async function lockGroup(app: App, id: number): Promise<void> {
  await app.prisma.$queryRaw`SELECT id FROM "UserGroup" WHERE id = ${id} FOR UPDATE`;
}

export interface MembershipChange {
  add?: number[];
  delete?: number[];
  addSubgroups?: number[];
  deleteSubgroups?: number[];
}

/** The checks of one membership change against the group as the earlier steps leave it. */
async function planMembership(app: App, realm: RealmInfo, user: User, tx: Prisma.TransactionClient, groups: Groups, id: number, c: MembershipChange) {
  const steps: { op: 'add_members' | 'remove_members' | 'add_subgroups' | 'remove_subgroups'; ids: number[] }[] = [];
  let members: Set<number> | undefined;
  let subgroups: Set<number> | undefined;
  if (c.add?.length) {
    const group = await accessForMembers(app, realm, user, groups, id, c.add, 'can_join_group', 'can_add_members_group');
    const ids = await checkUserIds(tx, realm, c.add);
    members = new Set(group.members);
    const already = ids.find((m) => members!.has(m));
    if (already !== undefined) throw badRequest(`User ${already} is already a member of this group`);
    ids.forEach((m) => members!.add(m));
    steps.push({ op: 'add_members', ids });
  }
  if (c.delete?.length) {
    const ids = await checkUserIds(tx, realm, c.delete);
    const group = await accessForMembers(app, realm, user, groups, id, c.delete, 'can_leave_group', 'can_remove_members_group');
    members ??= new Set(group.members);
    const absent = ids.find((m) => !members!.has(m));
    if (absent !== undefined) throw badRequest(`There is no member '${absent}' in this user group`);
    ids.forEach((m) => members!.delete(m));
    steps.push({ op: 'remove_members', ids });
  }
  if (c.addSubgroups?.length) {
    const group = await accessGroupForUpdate(app, realm, user, groups, id, 'can_add_members_group', true);
    const ids = checkSubgroupIds(groups, c.addSubgroups);
    subgroups = new Set(group.subgroups);
    const already = ids.find((g) => subgroups!.has(g));
    if (already !== undefined) throw badRequest(`User group ${already} is already a subgroup of this group.`);
    if (ids.some((g) => g === id || recursiveSubgroupIds(realm, groups.get(g)!, groups).includes(id))) {
      throw badRequest(`User group ${id} is already a subgroup of one of the passed subgroups.`);
    }
    ids.forEach((g) => subgroups!.add(g));
    steps.push({ op: 'add_subgroups', ids });
  }
  if (c.deleteSubgroups?.length) {
    const group = await accessGroupForUpdate(app, realm, user, groups, id, 'can_manage_group', true);
    const ids = checkSubgroupIds(groups, c.deleteSubgroups);
    subgroups ??= new Set(group.subgroups);
    const absent = ids.find((g) => !subgroups!.has(g));
    if (absent !== undefined) throw badRequest(`User group ${absent} is not a subgroup of this group.`);
    steps.push({ op: 'remove_subgroups', ids });
  }
  return steps;
}

/** POST /user_groups/{id}/members and /subgroups: all of the changes or none. */
export async function updateMembership(app: App, realm: RealmInfo, user: User, id: number, c: MembershipChange): Promise<void> {
  requireNonGuest(user);
  await atomic(app, async () => {
    await lockGroup(app, id);
    const groups = await app.realms.groups(realm.id);
    const tx = app.prisma;
    const steps = await planMembership(app, realm, user, tx, groups, id, c);
    for (const { op, ids } of steps) {
      if (op === 'add_members') await tx.userGroupMember.createMany({ data: ids.map((userId) => ({ groupId: id, userId })) });
      if (op === 'remove_members') await tx.userGroupMember.deleteMany({ where: { groupId: id, userId: { in: ids } } });
      if (op === 'add_subgroups') await tx.userGroupSubgroup.createMany({ data: ids.map((subgroupId) => ({ supergroupId: id, subgroupId })) });
      if (op === 'remove_subgroups') await tx.userGroupSubgroup.deleteMany({ where: { supergroupId: id, subgroupId: { in: ids } } });
    }
    groupsChanged(app, realm);
    for (const { op, ids } of steps) {
      const event: ChatEvent =
        op === 'add_members' || op === 'remove_members'
          ? { type: 'user_group', op, group_id: id, user_ids: ids }
          : { type: 'user_group', op, group_id: id, direct_subgroup_ids: ids };
      await sendToRealm(app, realm, event);
    }
  });
}

const usesGroup = (value: GroupSettingValue, id: number) => (typeof value === 'number' ? value === id : value.direct_subgroups.includes(id));

/** Where an active group is still in use: Zulip refuses to deactivate it then, and says where. */
async function objectionsTo(app: App, realm: RealmInfo, groups: Groups, id: number): Promise<Event[]> {
  const objections: Event[] = [];
  const supergroups = [...groups.values()].filter((g) => g.name !== null && !g.deactivated && g.subgroups.includes(id)).map((g) => g.id);
  if (supergroups.length) objections.push({ type: 'subgroup', supergroup_ids: supergroups });
  const channels = await app.prisma.channel.findMany({ where: { realmId: realm.id, isArchived: false }, orderBy: { id: 'asc' } });
  for (const channel of channels) {
    const settings = (Object.keys(CHANNEL_PERMISSION_DEFAULTS) as ChannelPermission[]).filter((s) => usesGroup(channelPermission(realm, channel, s), id));
    if (settings.length) objections.push({ type: 'channel', channel_id: channel.id, settings });
  }
  for (const g of groups.values()) {
    if (g.name === null || g.deactivated) continue;
    const settings = USER_GROUP_PERMISSIONS.filter((s) => usesGroup(groupPermission(realm, g, s), id));
    if (settings.length) objections.push({ type: 'user_group', group_id: g.id, settings });
  }
  const realmSettings = (Object.keys(REALM_PERMISSION_DEFAULTS) as RealmPermission[]).filter((s) => usesGroup(realm.permissions[s], id));
  if (realmSettings.length) objections.push({ type: 'realm', settings: realmSettings });
  return objections;
}

/** POST /user_groups/{id}/deactivate. */
export async function deactivateUserGroup(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  await atomic(app, async () => {
    await lockGroup(app, id);
    const groups = await app.realms.groups(realm.id);
    await accessGroupForUpdate(app, realm, user, groups, id, 'can_manage_group', false);
    const objections = await objectionsTo(app, realm, groups, id);
    if (objections.length) throw new ApiError('Cannot deactivate user group in use.', 'CANNOT_DEACTIVATE_GROUP_IN_USE', 400, { objections });
    await app.prisma.userGroup.update({ where: { id }, data: { deactivated: true } });
    groupsChanged(app, realm);
    await sendToRealm(app, realm, { type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } });
    await sendToRealm(app, realm, { type: 'user_group', op: 'remove', group_id: id });
  });
}
