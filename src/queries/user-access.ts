// Zulip's can_access_all_users_group: set to role:members, it limits guests to the users they share
// a channel or a direct-message conversation with, plus every bot; anyone else is an "Unknown
// user" to them. The one place that decides who can access whom.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { Role, roleFlags } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from './realms.ts';
import { dummyEmail, userById, type Person, type Viewer } from './users.ts';
import { isGuest } from '../auth/policy.ts';

/** Zulip's all_users_accessible_by_everyone_in_realm (the setting may only be role:everyone or role:members). */
export function everyoneAccessible(realm: RealmInfo): boolean {
  return realm.permissions.can_access_all_users_group === realm.systemGroups['role:everyone'];
}

/** Whether `viewer` may access only some users: a guest, when the setting leaves guests out. */
export function accessRestricted(realm: RealmInfo, viewer: Viewer): boolean {
  return isGuest(viewer) && !everyoneAccessible(realm);
}

/**
 * Who shares with `userId` an active channel subscription (while both are active) or a direct
 * message conversation (active or not), as Zulip's channel and DM-group subscriptions do. The
 * relation is symmetric, so it answers both "whom can they access" and "who can access them".
 */
async function peersOf(app: App, realm: RealmInfo, userId: number): Promise<Set<number>> {
  const rows = await app.prisma.$queryRawUnsafe<{ id: number }[]>(
    `SELECT theirs."userId" AS id
       FROM "Subscription" mine
       JOIN "User" me ON me.id = mine."userId" AND me."isActive"
       JOIN "Subscription" theirs ON theirs."channelId" = mine."channelId" AND theirs.active
       JOIN "User" them ON them.id = theirs."userId" AND them."isActive"
      WHERE mine."userId" = $1 AND mine.active
     UNION
     SELECT unnest(string_to_array(g."memberKey", ',')::int[]) AS id
       FROM "DirectMessageGroup" g
      WHERE g."realmId" = $2 AND $1 = ANY(string_to_array(g."memberKey", ',')::int[])`,
    userId,
    realm.id,
  );
  return new Set(rows.map((r) => r.id));
}

/** The ids of the users `viewer` can access, or null for all (Zulip's get_accessible_user_ids, with bots). */
export async function accessibleUserIds(app: App, realm: RealmInfo, viewer: Viewer): Promise<Set<number> | null> {
  if (!accessRestricted(realm, viewer)) return null;
  const ids = await peersOf(app, realm, viewer.id);
  ids.add(viewer.id);
  const bots = await app.prisma.user.findMany({ where: { realmId: realm.id, isBot: true }, select: { id: true } });
  for (const bot of bots) ids.add(bot.id);
  return ids;
}

/**
 * Zulip's check_can_access_user, for requests about one user: as accessibleUserIds, except that a
 * restricted viewer cannot access a deactivated human other than themselves (Zulip counts only
 * the target's active subscriptions here, so even a deactivated DM partner is refused).
 */
export async function canAccessUser(app: App, realm: RealmInfo, viewer: Viewer, target: User): Promise<boolean> {
  const ids = await accessibleUserIds(app, realm, viewer);
  return ids === null || (ids.has(target.id) && (target.isActive || target.isBot || target.id === viewer.id));
}

/** Zulip's access_user_by_id without for_admin: a human, active user the viewer may access. */
export async function accessUser(app: App, realm: RealmInfo, viewer: Viewer, userId: number): Promise<User> {
  const target = await userById(app, realm, userId);
  if (target.isBot) throw badRequest('No such user');
  if (!target.isActive) throw badRequest('User is deactivated');
  if (!(await canAccessUser(app, realm, viewer, target))) throw badRequest('Insufficient permission');
  return target;
}

/** Which viewers can access `target` (Zulip's get_user_ids_who_can_access_user), as a test on each. */
export async function whoCanAccess(app: App, realm: RealmInfo, target: User): Promise<(viewer: Viewer) => boolean> {
  if (target.isBot || everyoneAccessible(realm)) return () => true;
  const peers = await peersOf(app, realm, target.id);
  return (viewer) => !accessRestricted(realm, viewer) || viewer.id === target.id || peers.has(viewer.id);
}

/** Zulip's avatar for a user one cannot access (get_avatar_for_inaccessible_user). */
export const UNKNOWN_USER_AVATAR_PATH = '/static/images/unknown-user-avatar.png';

/** Zulip's name for a user one cannot access. */
export const UNKNOWN_USER_NAME = 'Unknown user';

/** Zulip's get_data_for_inaccessible_user: the placeholder whose only variable part is the id. */
export function unknownUser(app: App, realm: RealmInfo, userId: number): Person {
  return {
    user_id: userId,
    delivery_email: null,
    email: dummyEmail(app, realm, userId),
    full_name: UNKNOWN_USER_NAME,
    date_joined: '1970-01-01T00:00:00+00:00',
    is_active: true,
    ...roleFlags(Role.MEMBER),
    is_bot: false,
    role: Role.MEMBER,
    timezone: '',
    avatar_url: `${app.realms.url(realm)}${UNKNOWN_USER_AVATAR_PATH}`,
    avatar_version: 1,
    is_imported_stub: false,
    profile_data: {},
  };
}
