// Who may do what by role: the named checks actions, queries and the API ask instead of comparing
// roles inline, so that each rule reads as its name and lives here once. Permissions held through
// a group setting are auth/permissions.ts's.
import { Role } from '../domain/roles.ts';
import { ApiError, badRequest } from '../errors.ts';

interface HasRole {
  role: number;
}

export const isOwner = (user: HasRole): boolean => user.role <= Role.OWNER;
/** Administrators, owners included. */
export const isAdmin = (user: HasRole): boolean => user.role <= Role.ADMINISTRATOR;
/** Moderators, administrators and owners. */
export const isModerator = (user: HasRole): boolean => user.role <= Role.MODERATOR;
export const isGuest = (user: HasRole): boolean => user.role === Role.GUEST;

/** What Zulip refuses to guests outright (creating bots, channels, groups, emoji, invitations). */
export function refuseGuests(user: HasRole): void {
  if (isGuest(user)) throw badRequest('Not allowed for guest users');
}

/** The user's role reaches `role` (Zulip's require_realm_admin / require_realm_owner). */
export function requireRole(
  user: HasRole,
  role: number,
  msg = role <= Role.OWNER ? 'Must be an organization owner' : 'Must be an organization administrator',
): void {
  if (user.role > role) throw new ApiError(msg, 'UNAUTHORIZED_PRINCIPAL', 400);
}

/** Zulip's human_users_only: endpoints about a person's own account refuse bots. */
export function requireHuman(user: { isBot: boolean }): void {
  if (user.isBot) throw new ApiError('This endpoint does not accept bot requests.', 'BAD_REQUEST', 400);
}
