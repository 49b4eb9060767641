// Creating organizations and users: validation, the writes in one transaction, then the events.
import { isValidEmail } from '../domain/email-address.ts';
import { z } from 'zod';
import type { App } from '../app.ts';
import { generateApiKey } from '../auth/api-keys.ts';
import { hashPassword } from '../auth/passwords.ts';
import { isAdmin, requireRole } from '../auth/policy.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { ROLES, Role, roleSystemGroup, SYSTEM_GROUPS, systemGroupDirectlyContains } from '../domain/roles.ts';
import { realmSettingsSchema, userSettingsSchema } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { unknownUser, whoCanAccess } from '../queries/user-access.ts';
import { botDicts, canSeeEmail, formatUser, realmViewers, type Viewer } from '../queries/users.ts';
import { joinDefaultChannels } from './subscriptions.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import { realmChanged } from '../cluster/cache-sync.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { LockSpace } from '../cluster/locks.ts';
import type { ChatEvent } from '../events/schemas.ts';

const subdomainSchema = z.string().regex(/^([a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?)?$/);
export const MAX_NAME_LENGTH = 100;

export interface NewUser {
  email: string;
  fullName: string;
  password?: string | null;
  role?: number;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  isSystemBot?: boolean;
  canCreateUsers?: boolean;
}

const MIN_NAME_LENGTH = 2;

/** Zulip's check_full_name without the uniqueness rule: stripped, 2-100 characters, nothing that breaks mention syntax. */
export function checkFullName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length > MAX_NAME_LENGTH) throw badRequest('Name too long!');
  if (length < MIN_NAME_LENGTH) throw badRequest('Name too short!');
  if (/[*`\\>"@\p{Cc}\p{Cs}\p{Cn}]/u.test(trimmed)) throw badRequest('Invalid characters in name!');
  // `Name|123` would read as the syntax for mentioning a user by id.
  if (/\|\d+$/.test(name)) throw badRequest('Invalid format!');
  return trimmed;
}

/** Zulip's require_unique_names rule: names compare NFKC-normalized and case-folded, deactivated users included. */
export async function checkNameAvailable(db: Pick<Prisma.TransactionClient, 'user'>, realm: RealmInfo, name: string, exceptUserId: number): Promise<void> {
  if (!realm.settings.require_unique_names) return;
  const fold = (s: string) => s.normalize('NFKC').toLowerCase();
  const others = await db.user.findMany({ where: { realmId: realm.id, id: { not: exceptUserId } }, select: { fullName: true } });
  if (others.some((o) => fold(o.fullName) === fold(name))) throw badRequest('Unique names required in this organization.');
}

function checkNewUser(u: NewUser): void {
  if (!isValidEmail(u.email)) throw badRequest(`Invalid address: ${u.email}`);
  if (u.role !== undefined && !ROLES.includes(u.role)) throw badRequest('Invalid role');
}

/**
 * Zulip's copy_default_settings: people start from the organization's defaults for new users,
 * bots from Zulip's own; everyone takes the organization's language.
 */
async function initialSettings(tx: Prisma.TransactionClient, realmId: number, u: NewUser): Promise<Prisma.InputJsonObject> {
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId }, select: { settings: true, userSettingsDefaults: true } });
  return {
    ...(u.isBot ? {} : (realm.userSettingsDefaults as Prisma.InputJsonObject)),
    default_language: realmSettingsSchema.parse(realm.settings ?? {}).default_language,
    ...(u.canCreateUsers ? { can_create_users: true } : {}),
  };
}

export async function insertUser(tx: Prisma.TransactionClient, realmId: number, u: NewUser, passwordHash: string | null): Promise<User> {
  const taken = await tx.user.findFirst({ where: { realmId, deliveryEmail: equalsIgnoringCase(u.email) }, select: { id: true } });
  if (taken) throw badRequest(`Email '${u.email}' already in use`);
  const settings = await initialSettings(tx, realmId, u);
  return tx.user.create({
    data: {
      realmId,
      deliveryEmail: u.email,
      fullName: checkFullName(u.fullName),
      role: u.role ?? Role.MEMBER,
      isBot: u.isBot ?? false,
      botType: u.isBot ? (u.botType ?? 1) : null,
      botOwnerId: u.isBot ? (u.botOwnerId ?? null) : null,
      isSystemBot: u.isSystemBot ?? false,
      apiKey: generateApiKey(),
      passwordHash,
      settings,
    },
  });
}

/** A new organization with its system groups and owner; returns the owner. */
export async function createRealm(app: App, input: { subdomain: string; name: string; owner: NewUser }): Promise<{ realm: RealmInfo; owner: User }> {
  if (!subdomainSchema.safeParse(input.subdomain).success) throw badRequest("Subdomain can only have lowercase letters, numbers, and '-'s.");
  checkNewUser(input.owner);
  const passwordHash = input.owner.password ? await hashPassword(input.owner.password, app.config.PASSWORD_HASH_COST) : null;
  const { realmId, owner } = await atomic(app, async () => {
    const tx = app.prisma;
    if (await tx.realm.findUnique({ where: { subdomain: input.subdomain } })) throw badRequest('Subdomain is already in use. Please choose a different one.');
    const realm = await tx.realm.create({ data: { subdomain: input.subdomain, name: input.name } });
    await tx.userGroup.createMany({
      data: SYSTEM_GROUPS.map((g) => ({ realmId: realm.id, name: g.name, description: g.description, isSystemGroup: true })),
    });
    const owner = await insertUser(tx, realm.id, { ...input.owner, role: Role.OWNER, canCreateUsers: true }, passwordHash);
    return { realmId: realm.id, owner };
  });
  const realm = (await realmChanged(app, realmId))!;
  for (const bot of SYSTEM_BOT_KINDS) await systemBot(app, realm, bot);
  return { realm, owner };
}

/** Zulip's system bots: their address's local part and name. */
const SYSTEM_BOTS = {
  notification: { local: 'notification-bot', name: 'Notification Bot' },
  welcome: { local: 'welcome-bot', name: 'Welcome Bot' },
  emailGateway: { local: 'emailgateway', name: 'Email Gateway' },
} as const;
type SystemBotKind = keyof typeof SYSTEM_BOTS;
const SYSTEM_BOT_KINDS = Object.keys(SYSTEM_BOTS) as SystemBotKind[];

/** The address a system bot has in an organization. */
export const systemBotEmail = (app: App, realm: RealmInfo, bot: SystemBotKind) => `${SYSTEM_BOTS[bot].local}@${app.realms.emailDomain(realm)}`;

/**
 * One of the system bots, which every organization gets when it is created (older ones the first
 * time the bot has something to say). Each organization holds its own rows, so its data stays
 * whole in an export, but the API shows them as Zulip's cross-realm bots: in `cross_realm_bots`,
 * never among the members, and nobody is told of their creation.
 */
export async function systemBot(app: App, realm: RealmInfo, bot: SystemBotKind): Promise<User> {
  const email = systemBotEmail(app, realm, bot);
  const find = () => app.prisma.user.findUnique({ where: { realmId_deliveryEmail: { realmId: realm.id, deliveryEmail: email } } });
  const existing = await find();
  if (existing) return existing;
  // Made under a lock, so two requests (or two processes) that need it at once make it once, and
  // a failed insert never aborts the transaction the caller may be running in.
  return atomic(app, async () => {
    await app.prisma.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(${LockSpace.SYSTEM_BOTS}, ${realm.id})`;
    return (await find()) ?? insertUser(app.prisma, realm.id, { email, fullName: SYSTEM_BOTS[bot].name, isBot: true, botType: 1, isSystemBot: true }, null);
  });
}

/** POST /users and the CLI: adds a user (or bot) and tells the organization; a person joins the default channels. */
export async function createUser(app: App, realm: RealmInfo, input: NewUser, actor?: User): Promise<User> {
  if (actor) {
    requireRole(actor, Role.ADMINISTRATOR);
    if (!userSettingsSchema.parse(actor.settings ?? {}).can_create_users) throw badRequest('User not authorized to create users');
  }
  checkNewUser(input);
  const passwordHash = input.password ? await hashPassword(input.password, app.config.PASSWORD_HASH_COST) : null;
  return atomic(app, async () => {
    const user = await insertUser(app.prisma, realm.id, input, passwordHash);
    await announceNewUser(app, realm, user);
    if (!user.isBot) await joinDefaultChannels(app, realm, user);
    return user;
  });
}

/** The `realm_user` add events of a user just written (and its system groups, its bot lists), in the current transaction. */
export async function announceNewUser(app: App, realm: RealmInfo, user: User): Promise<void> {
  const [viewers, canAccess] = await Promise.all([realmViewers(app, realm.id), whoCanAccess(app, realm, user)]);
  // What a viewer with access sees of the new user depends only on whether the real email is visible to them.
  const withAccess = viewers.filter(canAccess);
  const [canSee, cannotSee] = [withAccess.filter((v) => canSeeEmail(user, v)), withAccess.filter((v) => !canSeeEmail(user, v))];
  for (const group of [canSee, cannotSee]) {
    if (group.length === 0) continue;
    // A new user has no profile data yet (Zulip sends it empty; values come as updates).
    const person = formatUser(app, realm, user, group[0]!, { clientGravatar: false, profileData: {} });
    sendOnCommit({ realmId: realm.id, userIds: group.map((v) => v.id), event: { type: 'realm_user', op: 'add', person } });
  }
  // Guests who cannot access the new user get an "Unknown user" (event-format drops it for
  // clients with user_list_incomplete).
  const without = viewers.filter((v) => !canAccess(v)).map((v) => v.id);
  sendOnCommit({
    realmId: realm.id,
    userIds: without,
    event: { type: 'realm_user', op: 'add', person: unknownUser(app, realm, user.id), inaccessible_user: true },
  });
  announceSystemGroups(realm, viewers, user);
  // A bot also joins the bot lists of who administers it: its owner and the administrators.
  if (user.isBot) {
    const admins = viewers.filter((v) => isAdmin(v) || v.id === user.botOwnerId).map((v) => v.id);
    sendOnCommit({ realmId: realm.id, userIds: admins, event: { type: 'realm_bot', op: 'add', bot: (await botDicts(app, realm, [user]))[0] } });
  }
}

/** The system groups a user's role puts them in directly gain them (Zulip's do_create_user, do_reactivate_user). */
export function announceSystemGroups(realm: RealmInfo, viewers: Viewer[], user: User): void {
  // The role's own group first, then any other that holds the user directly (full members), as Zulip sends them.
  const own = roleSystemGroup(user.role);
  const names = [own, ...SYSTEM_GROUPS.map((g) => g.name).filter((name) => name !== own && systemGroupDirectlyContains(name, user.role))];
  for (const name of names) {
    const event: ChatEvent = { type: 'user_group', op: 'add_members', group_id: realm.systemGroups[name], user_ids: [user.id] };
    sendOnCommit({ realmId: realm.id, userIds: viewers.map((v) => v.id), event }, { alwaysDeliver: true });
  }
}
