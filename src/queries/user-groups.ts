// User groups as the API shows them (GET /user_groups, register's realm_user_groups, user_group
// events): system groups' members follow from roles; settings fall back to Zulip's defaults.
import type { App } from '../app.ts';
import { isInGroupSetting, type PermissionSubject } from '../auth/permissions.ts';
import type { GroupSettingValue } from '../domain/realm-settings.ts';
import { SYSTEM_SUBGROUP, type SystemGroupName, systemGroupDirectlyContains } from '../domain/roles.ts';
import { USER_GROUP_PERMISSION_DEFAULTS, USER_GROUP_PERMISSIONS, type UserGroupPermission } from '../domain/user-groups.ts';
import { badRequest } from '../errors.ts';
import type { GroupInfo, RealmInfo } from './realms.ts';
import { rawQuery } from '../db/transaction.ts';
import type { z } from 'zod';
import type { group as groupSchema } from '../events/schemas.ts';
import { recordOf } from '../domain/records.ts';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
const ascending = (a: number, b: number) => a - b;

/** Straight from the pool rather than through Prisma: a register reads every user of the organization. */
export function activeUsers(app: App, realmId: number): Promise<PermissionSubject[]> {
  return rawQuery<PermissionSubject>(
    app,
    'SELECT id, role, "dateJoined", "isActive" FROM "User" WHERE "realmId" = $1 AND "isActive" AND NOT "isSystemBot" ORDER BY id',
    realmId,
  );
}

/** A group's own permission: what was set, or Zulip's default (nobody, for system groups). */
export function groupPermission(realm: RealmInfo, group: GroupInfo, setting: UserGroupPermission): GroupSettingValue {
  const stored = group.permissions[setting];
  if (stored !== undefined) return stored;
  const fallback = USER_GROUP_PERMISSION_DEFAULTS[setting];
  if (group.isSystemGroup || (fallback === 'group_creator' && group.creatorId === null)) return realm.systemGroups['role:nobody'];
  if (fallback === 'group_creator') return { direct_members: [group.creatorId!], direct_subgroups: [] };
  return realm.systemGroups[fallback];
}

/** The API lists only active users in an anonymous group-setting value. */
export function apiSettingValue(value: GroupSettingValue, active: ReadonlySet<number>): GroupSettingValue {
  if (typeof value === 'number') return value;
  return { direct_members: value.direct_members.filter((id) => active.has(id)), direct_subgroups: value.direct_subgroups };
}

export function directSubgroupIds(realm: RealmInfo, group: GroupInfo): number[] {
  if (!group.isSystemGroup) return [...group.subgroups].sort(ascending);
  const sub = SYSTEM_SUBGROUP[group.name as SystemGroupName];
  return sub ? [realm.systemGroups[sub]] : [];
}

/**
 * The ids of `users` by role, each list in the users' (id) order, made once per list: a system
 * group's direct members are the users of one role or a few, so a register that formats every
 * group against the same list of every user passes over it once rather than once per group.
 */
const roleLists = new WeakMap<readonly PermissionSubject[], Map<number, number[]>>();
function idsByRole(users: readonly PermissionSubject[]): Map<number, number[]> {
  let byRole = roleLists.get(users);
  if (!byRole) {
    byRole = new Map();
    for (const u of users) {
      const ids = byRole.get(u.role);
      if (ids) ids.push(u.id);
      else byRole.set(u.role, [u.id]);
    }
    roleLists.set(users, byRole);
  }
  return byRole;
}

/**
 * A group's direct members among `users` (active users in id order), in id order: a system
 * group's from the users of the roles it holds directly, another group's from its own members,
 * so the cost follows the answer rather than the organization's size.
 */
export function directMemberIds(group: GroupInfo, users: readonly PermissionSubject[]): number[] {
  if (group.isSystemGroup) {
    const lists = [...idsByRole(users)].filter(([role]) => systemGroupDirectlyContains(group.name!, role)).map(([, ids]) => ids);
    if (lists.length === 0) return [];
    if (lists.length === 1) return [...lists[0]!];
    return lists.flat().sort(ascending);
  }
  const active = idSet(users);
  const ids: number[] = [];
  for (const id of group.members) if (active.has(id)) ids.push(id);
  return ids.sort(ascending);
}

/** Members through subgroups too, by the one permission check, so the API and permissions agree. */
export function groupMemberIds(
  realm: RealmInfo,
  group: GroupInfo,
  groups: Map<number, GroupInfo>,
  users: readonly PermissionSubject[],
  directOnly: boolean,
): number[] {
  if (directOnly) return directMemberIds(group, users);
  return users.filter((u) => isInGroupSetting(u, group.id, groups, realm)).map((u) => u.id);
}

/** Every group below `group` (not itself). */
export function recursiveSubgroupIds(realm: RealmInfo, group: GroupInfo, groups: Map<number, GroupInfo>): number[] {
  const found = new Set<number>();
  const visit = (g: GroupInfo) => {
    for (const id of directSubgroupIds(realm, g)) {
      if (found.has(id) || !groups.has(id)) continue;
      found.add(id);
      visit(groups.get(id)!);
    }
  };
  visit(group);
  found.delete(group.id);
  return [...found].sort(ascending);
}

/** The ids of `users` as a set, made once per list: a register formats every group against the same list of every user. */
const idSets = new WeakMap<readonly PermissionSubject[], Set<number>>();
function idSet(users: readonly PermissionSubject[]): Set<number> {
  let ids = idSets.get(users);
  if (!ids) idSets.set(users, (ids = new Set(users.map((u) => u.id))));
  return ids;
}

/** A group with a name: a user group, not a setting's anonymous group. */
export type NamedGroup = GroupInfo & { name: string };
export const isNamed = (group: GroupInfo): group is NamedGroup => group.name !== null;

export function formatGroup(realm: RealmInfo, group: NamedGroup, users: readonly PermissionSubject[]): z.infer<typeof groupSchema> {
  const active = idSet(users);
  const settings = recordOf(USER_GROUP_PERMISSIONS, (s) => apiSettingValue(groupPermission(realm, group, s), active));
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    members: directMemberIds(group, users),
    direct_subgroup_ids: directSubgroupIds(realm, group),
    is_system_group: group.isSystemGroup,
    deactivated: group.deactivated,
    date_created: group.isSystemGroup ? null : seconds(group.dateCreated),
    creator_id: group.creatorId,
    ...settings,
  };
}

/**
 * Named groups of the organization in id order, deactivated ones only when asked for. `active`:
 * its active users, when the caller has them (register, from queries/member-list.ts).
 */
export async function listGroups(
  app: App,
  realm: RealmInfo,
  includeDeactivated: boolean,
  active?: Promise<readonly PermissionSubject[]>,
): Promise<z.infer<typeof groupSchema>[]> {
  const [groups, users] = await Promise.all([app.realms.groups(realm.id), active ?? activeUsers(app, realm.id)]);
  return [...groups.values()]
    .filter(isNamed)
    .filter((g) => includeDeactivated || !g.deactivated)
    .map((g) => formatGroup(realm, g, users));
}

/** A named group to read the membership of (Zulip's access_user_group_to_read_membership). */
export function readableGroup(groups: Map<number, GroupInfo>, id: number): GroupInfo {
  const group = groups.get(id);
  if (!group || group.name === null) throw badRequest('Invalid user group');
  if (group.deactivated) throw badRequest('User group is deactivated.');
  return group;
}
