// Roles and the system groups derived from them. System-group membership follows from a user's
// role (and bot/guest status), so it is computed, never stored, and a role change needs no rewrite.

export const Role = { OWNER: 100, ADMINISTRATOR: 200, MODERATOR: 300, MEMBER: 400, GUEST: 600 } as const;
export type RoleValue = (typeof Role)[keyof typeof Role];
export const ROLES: readonly number[] = Object.values(Role);

/** A stored role as its type; the column holds nothing else (every write checks it). */
export function roleValue(role: number): RoleValue {
  if (isRole(role)) return role;
  throw new Error(`not a role: ${role}`);
}
const isRole = (role: number): role is RoleValue => ROLES.includes(role);

export const SYSTEM_GROUPS = [
  { name: 'role:nobody', description: 'Nobody' },
  { name: 'role:owners', description: 'Owners of this organization' },
  { name: 'role:administrators', description: 'Administrators of this organization, including owners' },
  { name: 'role:moderators', description: 'Moderators of this organization, including administrators' },
  { name: 'role:fullmembers', description: 'Members of this organization, not including new accounts and guests' },
  { name: 'role:members', description: 'Members of this organization, not including guests' },
  { name: 'role:everyone', description: 'Everyone in this organization, including guests' },
  { name: 'role:internet', description: 'Everyone on the Internet' },
] as const;
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number]['name'];

/** The system group whose direct members are exactly the users of that role band. */
export function systemGroupContains(name: string, role: number): boolean {
  switch (name) {
    case 'role:owners':
      return role <= Role.OWNER;
    case 'role:administrators':
      return role <= Role.ADMINISTRATOR;
    case 'role:moderators':
      return role <= Role.MODERATOR;
    case 'role:fullmembers':
    case 'role:members':
      return role <= Role.MEMBER;
    case 'role:everyone':
    case 'role:internet':
      return true;
    default:
      return false;
  }
}

/** Direct subgroups of each system group, as Zulip reports them (owners ⊂ administrators ⊂ ...). */
export const SYSTEM_SUBGROUP: Partial<Record<SystemGroupName, SystemGroupName>> = {
  'role:administrators': 'role:owners',
  'role:moderators': 'role:administrators',
  'role:fullmembers': 'role:moderators',
  'role:members': 'role:fullmembers',
  'role:everyone': 'role:members',
  'role:internet': 'role:everyone',
};

/**
 * Users directly in a system group are those whose role first reaches it (owners are not direct
 * admins); members are direct members of both role:members and role:fullmembers, as in Zulip.
 */
export function systemGroupDirectlyContains(name: string, role: number): boolean {
  if (name === 'role:members') return role === Role.MEMBER;
  const sub = SYSTEM_SUBGROUP[name as SystemGroupName];
  return systemGroupContains(name, role) && !(sub && systemGroupContains(sub, role)) && name !== 'role:internet';
}

/** The system group a role puts its users in directly (Zulip's SYSTEM_USER_GROUP_ROLE_MAP). */
export function roleSystemGroup(role: number): SystemGroupName {
  switch (role) {
    case Role.OWNER:
      return 'role:owners';
    case Role.ADMINISTRATOR:
      return 'role:administrators';
    case Role.MODERATOR:
      return 'role:moderators';
    case Role.MEMBER:
      return 'role:members';
    default:
      return 'role:everyone';
  }
}

export const roleFlags = (role: number) => ({
  is_owner: role === Role.OWNER,
  is_admin: role <= Role.ADMINISTRATOR,
  is_guest: role === Role.GUEST,
});
