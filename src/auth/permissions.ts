// The one permission check: is a user in the set a group-setting value describes? Every realm,
// channel and group permission of the API is a group-setting value, so every check comes here.
import type { GroupSettingValue, RealmPermission } from '../domain/realm-settings.ts';
import { systemGroupContains } from '../domain/roles.ts';
import { isModerator } from './policy.ts';
import type { GroupInfo, RealmDirectory, RealmInfo } from '../queries/realms.ts';

export interface PermissionSubject {
  id: number;
  role: number;
  dateJoined: Date;
  isActive: boolean;
}

const DAY_MS = 86_400_000;

function inGroup(user: PermissionSubject, groupId: number, groups: Map<number, GroupInfo>, realm: RealmInfo, seen: Set<number>): boolean {
  if (seen.has(groupId)) return false;
  seen.add(groupId);
  const group = groups.get(groupId);
  if (!group || group.deactivated) return false;
  if (group.isSystemGroup && group.name) {
    if (!systemGroupContains(group.name, user.role)) return false;
    if (group.name !== 'role:fullmembers') return true;
    // Full members are members whose account is older than the waiting period.
    const threshold = realm.settings.waiting_period_threshold * DAY_MS;
    return isModerator(user) || Date.now() - user.dateJoined.getTime() >= threshold;
  }
  return group.members.has(user.id) || group.subgroups.some((sub) => inGroup(user, sub, groups, realm, seen));
}

export function isInGroupSetting(user: PermissionSubject, value: GroupSettingValue, groups: Map<number, GroupInfo>, realm: RealmInfo): boolean {
  if (!user.isActive) return false;
  if (typeof value === 'number') return inGroup(user, value, groups, realm, new Set());
  const seen = new Set<number>();
  return value.direct_members.includes(user.id) || value.direct_subgroups.some((g) => inGroup(user, g, groups, realm, seen));
}

export async function hasRealmPermission(directory: RealmDirectory, realm: RealmInfo, user: PermissionSubject, setting: RealmPermission): Promise<boolean> {
  return isInGroupSetting(user, realm.permissions[setting], await directory.groups(realm.id), realm);
}
