// Creating organizations and users: validation, the writes in one transaction, then the events.
import { z } from 'zod';
import type { App } from '../app.ts';
import { generateApiKey } from '../auth/api-keys.ts';
import { hashPassword } from '../auth/passwords.ts';
import { requireRole } from '../auth/permissions.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { ROLES, Role, SYSTEM_GROUPS } from '../domain/roles.ts';
import { userSettingsSchema } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { unknownUser, whoCanAccess } from '../queries/user-access.ts';
import { canSeeEmail, formatUser, realmViewers } from '../queries/users.ts';
import { atomic, sendOnCommit } from './transaction.ts';

const emailSchema = z.string().email();
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

export const isValidEmail = (email: string): boolean => emailSchema.safeParse(email).success;

function checkNewUser(u: NewUser): void {
  if (!isValidEmail(u.email)) throw badRequest(`Invalid address: ${u.email}`);
  if (u.role !== undefined && !ROLES.includes(u.role)) throw badRequest('Invalid role');
}

export async function insertUser(tx: Prisma.TransactionClient, realmId: number, u: NewUser, passwordHash: string | null): Promise<User> {
  const taken = await tx.user.findFirst({ where: { realmId, deliveryEmail: { equals: u.email, mode: 'insensitive' } }, select: { id: true } });
  if (taken) throw badRequest(`Email '${u.email}' already in use`);
  const settings = userSettingsSchema.partial().parse({ can_create_users: u.canCreateUsers || undefined });
  return tx.user.create({
    data: {
      realmId,
      deliveryEmail: u.email,
      fullName: checkFullName(u.fullName),
      role: u.role ?? Role.MEMBER,
      isBot: u.isBot ?? false,
      botType: u.isBot ? (u.botType ?? 1) : null,
      botOwnerId: u.isBot ? (u.botOwnerId ?? null) : null,
      apiKey: generateApiKey(),
      passwordHash,
      settings: JSON.parse(JSON.stringify(settings)),
    },
  });
}

/** A new organization with its system groups and owner; returns the owner. */
export async function createRealm(app: App, input: { subdomain: string; name: string; owner: NewUser }): Promise<{ realm: RealmInfo; owner: User }> {
  if (!subdomainSchema.safeParse(input.subdomain).success) throw badRequest('Subdomain can only have lowercase letters, numbers, and \'-\'s.');
  checkNewUser(input.owner);
  const passwordHash = input.owner.password ? await hashPassword(input.owner.password, app.config.PASSWORD_HASH_COST) : null;
  const { realmId, owner } = await app.prisma.$transaction(async (tx) => {
    if (await tx.realm.findUnique({ where: { subdomain: input.subdomain } })) throw badRequest('Subdomain is already in use. Please choose a different one.');
    const realm = await tx.realm.create({ data: { subdomain: input.subdomain, name: input.name } });
    await tx.userGroup.createMany({
      data: SYSTEM_GROUPS.map((g) => ({ realmId: realm.id, name: g.name, description: g.description, isSystemGroup: true })),
    });
    const owner = await insertUser(tx, realm.id, { ...input.owner, role: Role.OWNER, canCreateUsers: true }, passwordHash);
    return { realmId: realm.id, owner };
  });
  const realm = (await app.realms.reload(realmId))!;
  return { realm, owner };
}

/** POST /users and the CLI: adds a user (or bot) and tells the organization. */
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
    return user;
  });
}

/** The `realm_user` add events of a user just written, in the current transaction. */
export async function announceNewUser(app: App, realm: RealmInfo, user: User): Promise<void> {
  const [viewers, canAccess] = await Promise.all([realmViewers(app, realm.id), whoCanAccess(app, realm, user)]);
  // What a viewer with access sees of the new user depends only on whether the real email is visible to them.
  const withAccess = viewers.filter(canAccess);
  const [canSee, cannotSee] = [withAccess.filter((v) => canSeeEmail(user, v, realm)), withAccess.filter((v) => !canSeeEmail(user, v, realm))];
  for (const group of [canSee, cannotSee]) {
    if (group.length === 0) continue;
    const person = formatUser(app, realm, user, group[0]!, { clientGravatar: false });
    sendOnCommit({ realmId: realm.id, userIds: group.map((v) => v.id), event: { type: 'realm_user', op: 'add', person } });
  }
  // Guests who cannot access the new user get an "Unknown user" (event-format drops it for
  // clients with user_list_incomplete).
  const without = viewers.filter((v) => !canAccess(v)).map((v) => v.id);
  sendOnCommit({ realmId: realm.id, userIds: without, event: { type: 'realm_user', op: 'add', person: unknownUser(app, realm, user.id), inaccessible_user: true } });
}
