// Users as the API shows them (spec 2.2/2.3): which email a viewer sees, avatar URLs, profile data.
import { createHash } from 'node:crypto';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { EMAIL_VISIBILITY, userSettingsSchema } from '../domain/realm-settings.ts';
import { Role, roleFlags } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from './realms.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';

export interface Viewer {
  id: number;
  role: number;
}

/** Zulip's timestamps for date_joined: Python's isoformat with microseconds and +00:00. */
export function isoTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}

export function emailVisibility(user: User, realm: RealmInfo): number {
  return userSettingsSchema.parse(user.settings ?? {}).email_address_visibility ?? realm.settings.default_email_address_visibility;
}

/** Whether `viewer` may see `target`'s real address (bots' addresses are always visible). */
export function canSeeEmail(target: User, viewer: Viewer | null, realm: RealmInfo): boolean {
  if (target.isBot || (viewer && viewer.id === target.id)) return true;
  const visibility = emailVisibility(target, realm);
  if (!viewer) return visibility === EMAIL_VISIBILITY.EVERYONE;
  switch (visibility) {
    case EMAIL_VISIBILITY.EVERYONE:
      return true;
    case EMAIL_VISIBILITY.MEMBERS:
      return viewer.role <= Role.MEMBER;
    case EMAIL_VISIBILITY.MODERATORS:
      return viewer.role <= Role.MODERATOR;
    case EMAIL_VISIBILITY.ADMINS:
      return viewer.role <= Role.ADMINISTRATOR;
    default:
      return false;
  }
}

/** The address clients use to name a user: the real one only when everyone may see it. */
export function apiEmail(app: App, realm: RealmInfo, user: User): string {
  if (user.isBot || emailVisibility(user, realm) === EMAIL_VISIBILITY.EVERYONE) return user.deliveryEmail;
  return dummyEmail(app, realm, user.id);
}

/** Zulip's stand-in address `user{id}@domain`, which names a user without revealing their email. */
export function dummyEmail(app: App, realm: RealmInfo, userId: number): string {
  return `user${userId}@${app.realms.emailDomain(realm)}`;
}

export function avatarUrl(user: Pick<User, 'deliveryEmail' | 'avatarVersion'>): string {
  const hash = createHash('md5').update(user.deliveryEmail.toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatarVersion}`;
}

export interface FormatOptions {
  clientGravatar: boolean;
  profileData?: Record<string, { value: string; rendered_value?: string }>;
}

export function formatUser(app: App, realm: RealmInfo, user: User, viewer: Viewer | null, opts: FormatOptions): Record<string, unknown> {
  const visible = canSeeEmail(user, viewer, realm);
  const gravatarHidden = opts.clientGravatar && visible && user.avatarSource === 'G';
  return {
    user_id: user.id,
    delivery_email: visible ? user.deliveryEmail : null,
    email: apiEmail(app, realm, user),
    full_name: user.fullName,
    date_joined: isoTimestamp(user.dateJoined),
    is_active: user.isActive,
    ...roleFlags(user.role),
    is_bot: user.isBot,
    bot_type: user.isBot ? user.botType : null,
    ...(user.isBot ? { bot_owner_id: user.botOwnerId } : {}),
    role: user.role,
    timezone: user.timezone,
    avatar_url: gravatarHidden ? null : avatarUrl(user),
    avatar_version: user.avatarVersion,
    is_imported_stub: user.isImportedStub,
    ...(opts.profileData && !user.isBot ? { profile_data: opts.profileData } : {}),
  };
}

export async function profileData(app: App, userIds: number[]): Promise<Map<number, Record<string, { value: string; rendered_value?: string }>>> {
  const rows = await app.prisma.customProfileFieldValue.findMany({ where: { userId: { in: userIds } } });
  const result = new Map<number, Record<string, { value: string; rendered_value?: string }>>(userIds.map((id) => [id, {}]));
  for (const row of rows) {
    result.get(row.userId)![String(row.fieldId)] = row.renderedValue === null ? { value: row.value } : { value: row.value, rendered_value: row.renderedValue };
  }
  return result;
}

export async function realmViewers(app: App, realmId: number): Promise<Viewer[]> {
  return app.prisma.user.findMany({ where: { realmId, isActive: true }, select: { id: true, role: true }, orderBy: { id: 'asc' } });
}

/** A user of the realm by id, or Zulip's "No such user" (400). */
export async function userById(app: App, realm: RealmInfo, id: number): Promise<User> {
  const user = await app.prisma.user.findFirst({ where: { id, realmId: realm.id } });
  if (!user) throw badRequest('No such user');
  return user;
}

/**
 * A user of the realm by email (spec 4.3): the real address only when the viewer may see it,
 * or the dummy address `user{id}@domain`, which always works.
 */
export async function userByEmail(app: App, realm: RealmInfo, email: string, viewer: Viewer): Promise<User> {
  const user = await findUserByEmail(app, realm, email, viewer);
  if (!user) throw badRequest('No such user');
  return user;
}

/** userByEmail, with null for an address that names nobody the viewer may know by it. */
export async function findUserByEmail(app: App, realm: RealmInfo, email: string, viewer: Viewer): Promise<User | null> {
  const dummy = /^user(\d+)@(.+)$/i.exec(email);
  if (dummy && dummy[2]!.toLowerCase() === app.realms.emailDomain(realm)) return app.prisma.user.findFirst({ where: { id: Number(dummy[1]), realmId: realm.id } });
  const user = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(email) } });
  return user && canSeeEmail(user, viewer, realm) ? user : null;
}

export async function maxMessageId(app: App, userId: number): Promise<number> {
  const row = await app.prisma.userMessage.findFirst({ where: { userId }, orderBy: { messageId: 'desc' }, select: { messageId: true } });
  return row?.messageId ?? -1;
}
