// Users as the API shows them (spec 2.2/2.3): which email a viewer sees, avatar URLs, profile data.
import { createHash } from 'node:crypto';
import type { App } from '../app.ts';
import type { BotService, User } from '../db/generated/client.ts';
import { EMAIL_VISIBILITY, userSettingsSchema } from '../domain/realm-settings.ts';
import { Role, roleFlags, roleValue } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from './realms.ts';
import { likePattern } from '../db/text-match.ts';
import { rawQuery } from '../db/transaction.ts';
import type { EventOf } from '../events/schemas.ts';
import { isAdmin, isGuest, isModerator } from '../auth/policy.ts';

export interface Viewer {
  id: number;
  role: number;
}

/** Zulip's timestamps for date_joined: Python's isoformat with microseconds and +00:00. */
export function isoTimestamp(date: Date): string {
  // toISOString always ends in .mmmZ (years 0 to 9999): cut rather than match, register formats every user's.
  return `${date.toISOString().slice(0, -1)}000+00:00`;
}

export function emailVisibility(user: Pick<User, 'settings'>): number {
  // One field of the stored settings, not the whole schema: register asks this of every user.
  const stored = (user.settings as { email_address_visibility?: unknown } | null)?.email_address_visibility;
  return userSettingsSchema.shape.email_address_visibility.parse(stored);
}

/** Whether `viewer` may see `target`'s real address (bots' addresses are always visible). */
export function canSeeEmail(target: Pick<User, 'id' | 'isBot' | 'settings'>, viewer: Viewer | null): boolean {
  if (target.isBot || (viewer && viewer.id === target.id)) return true;
  const visibility = emailVisibility(target);
  if (!viewer) return visibility === EMAIL_VISIBILITY.EVERYONE;
  switch (visibility) {
    case EMAIL_VISIBILITY.EVERYONE:
      return true;
    case EMAIL_VISIBILITY.MEMBERS:
      return !isGuest(viewer);
    case EMAIL_VISIBILITY.MODERATORS:
      return isModerator(viewer);
    case EMAIL_VISIBILITY.ADMINS:
      return isAdmin(viewer);
    default:
      return false;
  }
}

/** The address clients use to name a user: the real one only when everyone may see it. */
export function apiEmail(app: App, realm: RealmInfo, user: Pick<User, 'id' | 'isBot' | 'deliveryEmail' | 'settings'>): string {
  if (user.isBot || emailVisibility(user) === EMAIL_VISIBILITY.EVERYONE) return user.deliveryEmail;
  return dummyEmail(app, realm, user.id);
}

/** Zulip's stand-in address `user{id}@domain`, which names a user without revealing their email. */
export function dummyEmail(app: App, realm: RealmInfo, userId: number): string {
  return `user${userId}@${app.realms.emailDomain(realm)}`;
}

/** Zulip's MEDIUM_AVATAR_SIZE: the medium avatar's side in pixels (Gravatar's `s`). */
export const MEDIUM_AVATAR_SIZE = 500;

/** Zulip's Gravatar URL: identicons for unknown addresses, the version to bust caches. */
export function gravatarUrl(email: string, version: number, medium = false): string {
  const hash = createHash('md5').update(email.toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? `&s=${MEDIUM_AVATAR_SIZE}` : ''}&version=${version}`;
}

/** Where an uploaded avatar is served: its random key changes with every upload, so no version is needed. */
export const uploadedAvatarUrl = (realmId: number, key: string, medium = false) => `/user_avatars/${realmId}/${key}${medium ? '-medium' : ''}.png`;

export type AvatarFields = Pick<User, 'realmId' | 'deliveryEmail' | 'avatarSource' | 'avatarVersion' | 'avatarKey'>;

/** Zulip's avatar_url: the uploaded image (source "U") or the Gravatar of the real address. */
export function avatarUrl(user: AvatarFields, medium = false): string {
  if (user.avatarSource === 'U' && user.avatarKey) return uploadedAvatarUrl(user.realmId, user.avatarKey, medium);
  return gravatarUrl(user.deliveryEmail, user.avatarVersion, medium);
}

/** The person of a `realm_user` update for a new avatar (Zulip's notify_avatar_url_change). */
export function avatarChange(user: AvatarFields & Pick<User, 'id'>): Extract<EventOf<'realm_user', 'update'>['person'], { avatar_source: string }> {
  return {
    avatar_source: user.avatarSource,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrl(user, true),
    avatar_version: user.avatarVersion,
    user_id: user.id,
  };
}

export interface FormatOptions {
  clientGravatar: boolean;
  profileData?: Record<string, { value: string; rendered_value?: string }>;
}

/** A user as `realm_user` add events and register's user lists show them. */
export type Person = EventOf<'realm_user', 'add'>['person'];

export function formatUser(app: App, realm: RealmInfo, user: User, viewer: Viewer | null, opts: FormatOptions): Person {
  const visible = canSeeEmail(user, viewer);
  // Clients compute a gravatar from the address they know the user by, so only where that is the
  // real one (Zulip: users whose email is visible to everyone, and bots).
  const gravatarHidden = opts.clientGravatar && user.avatarSource === 'G' && (user.isBot || emailVisibility(user) === EMAIL_VISIBILITY.EVERYONE);
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
    ...(user.isSystemBot ? { is_system_bot: true } : {}),
    role: roleValue(user.role),
    timezone: user.timezone,
    avatar_url: gravatarHidden ? null : avatarUrl(user),
    avatar_version: user.avatarVersion,
    is_imported_stub: user.isImportedStub,
    ...(opts.profileData && !user.isBot ? { profile_data: opts.profileData } : {}),
  };
}

/** A bot as its administrators see it (Zulip's get_owned_bot_dicts and the realm_bot events). */
/** An outgoing-webhook bot's `services` entry (Zulip's get_service_dicts_for_bot); other bots have none. */
export const serviceDicts = (service: BotService | null) =>
  service ? [{ base_url: service.baseUrl, interface: service.interface, token: service.token }] : [];

/** Bots as their administrators see them (Zulip's bot dicts), with their services and default channels, in two queries. */
export async function botDicts(app: App, realm: RealmInfo, bots: readonly User[]): Promise<EventOf<'realm_bot', 'add'>['bot'][]> {
  if (bots.length === 0) return [];
  const channelIds = [...new Set(bots.flatMap((b) => [b.defaultSendingChannelId, b.defaultEventsRegisterChannelId]).filter((id) => id !== null))];
  const [services, channels] = await Promise.all([
    app.prisma.botService.findMany({ where: { botId: { in: bots.map((b) => b.id) } } }),
    channelIds.length ? app.prisma.channel.findMany({ where: { id: { in: channelIds } }, select: { id: true, name: true } }) : [],
  ]);
  const serviceOf = new Map(services.map((s) => [s.botId, s]));
  const nameOf = (id: number | null) => (id === null ? null : (channels.find((c) => c.id === id)?.name ?? null));
  return bots.map((bot) => ({
    email: apiEmail(app, realm, bot),
    user_id: bot.id,
    full_name: bot.fullName,
    bot_type: bot.botType,
    is_active: bot.isActive,
    api_key: bot.apiKey,
    default_sending_stream: nameOf(bot.defaultSendingChannelId),
    default_events_register_stream: nameOf(bot.defaultEventsRegisterChannelId),
    default_all_public_streams: userSettingsSchema.parse(bot.settings ?? {}).default_all_public_streams,
    owner_id: bot.botOwnerId,
    avatar_url: avatarUrl(bot),
    services: serviceDicts(serviceOf.get(bot.id) ?? null),
  }));
}

export async function profileData(app: App, userIds: number[]): Promise<Map<number, Record<string, { value: string; rendered_value?: string }>>> {
  const rows = await app.prisma.customProfileFieldValue.findMany({ where: { userId: { in: userIds } } });
  const result = new Map<number, Record<string, { value: string; rendered_value?: string }>>(userIds.map((id) => [id, {}]));
  for (const row of rows) {
    result.get(row.userId)![String(row.fieldId)] = row.renderedValue === null ? { value: row.value } : { value: row.value, rendered_value: row.renderedValue };
  }
  return result;
}

/** Every member of the organization (not its system bots), as Prisma reads them, straight from the pool: register lists them all. */
export function realmUserRows(app: App, realmId: number): Promise<User[]> {
  return rawQuery<User>(app, 'SELECT * FROM "User" WHERE "realmId" = $1 AND NOT "isSystemBot" ORDER BY id', realmId);
}

/** The organization's system bots as register's `cross_realm_bots` lists them: by name, owned by nobody. */
export async function crossRealmBots(app: App, realm: RealmInfo): Promise<Person[]> {
  const bots = await app.prisma.user.findMany({ where: { realmId: realm.id, isSystemBot: true }, orderBy: { fullName: 'asc' } });
  return bots.map((bot) => formatUser(app, realm, bot, bot, { clientGravatar: false }));
}

export async function realmViewers(app: App, realmId: number): Promise<Viewer[]> {
  return rawQuery<Viewer>(app, 'SELECT id, role FROM "User" WHERE "realmId" = $1 AND "isActive" AND NOT "isSystemBot" ORDER BY id', realmId);
}

/** Zulip's get_human_admin_users: the ids of active human administrators and owners. */
export async function humanAdminIds(app: App, realmId: number): Promise<number[]> {
  const rows = await app.prisma.user.findMany({
    where: { realmId, isActive: true, isBot: false, role: { lte: Role.ADMINISTRATOR } },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((r) => r.id);
}

/** A user of the realm by id, or Zulip's "No such user" (400). */
export async function userById(app: App, realm: RealmInfo, id: number): Promise<User> {
  const user = await userInRealm(app, realm, id);
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

/** A user of the organization by id; rawQuery's, not Prisma's: a narrow or a send may ask it per request. */
const USER_IN_REALM = 'SELECT * FROM "User" WHERE id = $1 AND "realmId" = $2';

export async function userInRealm(app: App, realm: RealmInfo, id: number): Promise<User | null> {
  const [user] = await rawQuery<User>(app, USER_IN_REALM, id, realm.id);
  return user ?? null;
}

/**
 * The address as stored (the unique index) or else ignoring case (a scan of the organization's
 * users, as an ILIKE of the escaped address): LIMIT 1 over both stops at the first that finds one.
 */
const USER_BY_EMAIL = `(SELECT * FROM "User" WHERE "realmId" = $1 AND "deliveryEmail" = $2)
  UNION ALL (SELECT * FROM "User" WHERE "realmId" = $1 AND "deliveryEmail" ILIKE $3 LIMIT 1) LIMIT 1`;

/** userByEmail, with null for an address that names nobody the viewer may know by it. */
export async function findUserByEmail(app: App, realm: RealmInfo, email: string, viewer: Viewer): Promise<User | null> {
  const dummy = /^user(\d+)@(.+)$/i.exec(email);
  if (dummy && dummy[2]!.toLowerCase() === app.realms.emailDomain(realm)) return userInRealm(app, realm, Number(dummy[1]));
  const [user] = await rawQuery<User>(app, USER_BY_EMAIL, realm.id, email, likePattern(email));
  return user && canSeeEmail(user, viewer) ? user : null;
}

export async function maxMessageId(app: App, userId: number): Promise<number> {
  const row = await app.prisma.userMessage.findFirst({ where: { userId }, orderBy: { messageId: 'desc' }, select: { messageId: true } });
  return row?.messageId ?? -1;
}
