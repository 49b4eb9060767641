// Group-setting values coming from clients: normalized the way Zulip stores them and checked
// against the groups and users of the organization and the setting's own restrictions.
import type { Prisma } from '../db/generated/client.ts';
import type { GroupSettingRules, GroupSettingValue } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import type { GroupInfo, RealmInfo } from '../queries/realms.ts';

/** `{direct_members: [], direct_subgroups: [g]}` is just g; an empty set is role:nobody. */
export function normalizeGroupSetting(realm: RealmInfo, value: GroupSettingValue): GroupSettingValue {
  if (typeof value === 'number') return value;
  const members = [...new Set(value.direct_members)].sort((a, b) => a - b);
  const subgroups = [...new Set(value.direct_subgroups)].sort((a, b) => a - b);
  if (members.length === 0 && subgroups.length === 1) return subgroups[0]!;
  if (members.length === 0 && subgroups.length === 0) return realm.systemGroups['role:nobody'];
  return { direct_members: members, direct_subgroups: subgroups };
}

export function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const same = (x: number[], y: number[]) => new Set(x).size === new Set(y).size && x.every((v) => y.includes(v));
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups);
}

/** Normalizes `value` for `setting` and rejects unknown groups or users and forbidden system groups. */
export async function checkGroupSetting(
  tx: Prisma.TransactionClient,
  realm: RealmInfo,
  groups: Map<number, GroupInfo>,
  setting: string,
  raw: GroupSettingValue,
  rules: GroupSettingRules,
): Promise<GroupSettingValue> {
  const value = normalizeGroupSetting(realm, raw);
  if (typeof value === 'number') {
    checkSystemGroupRules(setting, namedGroup(groups, value, 'Invalid user group'), rules);
    return value;
  }
  if (rules.requireSystemGroup) throw badRequest(`'${setting}' must be a system user group.`);
  for (const id of value.direct_subgroups) namedGroup(groups, id, `Invalid user group ID: ${id}`);
  const found = await tx.user.findMany({
    where: { realmId: realm.id, isActive: true, isSystemBot: false, id: { in: value.direct_members } },
    select: { id: true },
  });
  const missing = value.direct_members.find((id) => !found.some((u) => u.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
  return value;
}

/** A named, active group of the organization. */
function namedGroup(groups: Map<number, GroupInfo>, id: number, unknown: string): GroupInfo {
  const group = groups.get(id);
  if (!group || !group.name) throw badRequest(unknown);
  if (group.deactivated) throw badRequest('User group is deactivated.');
  return group;
}

function checkSystemGroupRules(setting: string, group: GroupInfo, rules: GroupSettingRules): void {
  const cannot = (name: string) => badRequest(`'${setting}' setting cannot be set to '${name}' group.`);
  if (rules.requireSystemGroup && !group.isSystemGroup) throw badRequest(`'${setting}' must be a system user group.`);
  if (group.name === 'role:internet') throw cannot('role:internet');
  if (group.name === 'role:nobody' && rules.allowNobody === false) throw cannot('role:nobody');
  if (group.name === 'role:everyone' && !rules.allowEveryone) throw cannot('role:everyone');
  if (rules.allowedSystemGroups && !rules.allowedSystemGroups.includes(group.name as never)) throw cannot(group.name!);
}
