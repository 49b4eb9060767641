// Administering other users (Zulip's update_user_backend, deactivate/reactivate): role changes
// with the owner rules, names, profile fields, deactivation. Checks first, one transaction, then
// the `realm_user` (and derived group and subscription) events.
import type { App } from '../app.ts';
import { isAdmin, isOwner, requireRole } from '../auth/policy.ts';
import type { User } from '../db/generated/client.ts';
import { Role, roleSystemGroup, roleValue, SYSTEM_GROUPS, systemGroupDirectlyContains, type SystemGroupName } from '../domain/roles.ts';
import { ApiError, badRequest } from '../errors.ts';
import { metadataUserIds } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { realmViewers } from '../queries/users.ts';
import { botManagerIds } from './api-keys.ts';
import { expireInvitationsOf } from './invites.ts';
import { sendToRealm } from './realm.ts';
import { adminSetProfileData } from './profile-fields.ts';
import { atomic, lockUser, onCommit, sendOnCommit } from './transaction.ts';
import { sendAboutUser, trackAccess } from './user-access.ts';
import { checkNameAvailable, checkFullName } from './users.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { ChatEvent } from '../events/schemas.ts';

/** Zulip's access_user_by_id(for_admin=True). */
export async function accessUserForAdmin(
  app: App,
  realm: RealmInfo,
  actor: User,
  userId: number,
  o: { allowDeactivated: boolean; allowBots: boolean },
): Promise<User> {
  const target = await app.prisma.user.findFirst({ where: { id: userId, realmId: realm.id } });
  // System bots are cross-realm in Zulip: no organization's administrator can reach them.
  if (!target || target.isSystemBot || (target.isBot && !o.allowBots)) throw badRequest('No such user');
  if (!target.isActive && !o.allowDeactivated) throw badRequest('User is deactivated');
  if (!isAdmin(actor) && target.botOwnerId !== actor.id) throw badRequest('Insufficient permission');
  return target;
}

async function isLastOwner(app: App, realm: RealmInfo, user: User): Promise<boolean> {
  if (!isOwner(user) || user.isBot) return false;
  return (await app.prisma.user.count({ where: { realmId: realm.id, role: Role.OWNER, isBot: false, isActive: true } })) === 1;
}

export interface UserUpdate {
  fullName?: string;
  role?: number;
  profileData?: { id: number; value: string | unknown[] | null }[];
}

async function checkRoleChange(app: App, realm: RealmInfo, actor: User, target: User, role: number): Promise<void> {
  if (role === Role.OWNER || isOwner(target)) requireRole(actor, Role.OWNER);
  else requireRole(actor, Role.ADMINISTRATOR);
  if (await isLastOwner(app, realm, target)) throw badRequest('The owner permission cannot be removed from the only organization owner.');
}

async function checkNewName(app: App, realm: RealmInfo, target: User, raw: string): Promise<string> {
  const name = checkFullName(raw);
  await checkNameAvailable(app.prisma, realm, name, target.id);
  return name;
}

/** PATCH /users/{user_id}. */
export async function updateUser(app: App, realm: RealmInfo, actor: User, userId: number, u: UserUpdate): Promise<void> {
  await atomic(app, async () => {
    await lockUser(app, userId);
    const target = await accessUserForAdmin(app, realm, actor, userId, { allowDeactivated: true, allowBots: true });
    const role = u.role !== undefined && u.role !== target.role ? u.role : undefined;
    if (role !== undefined) await checkRoleChange(app, realm, actor, target, role);
    // Zulip ignores an empty name here rather than refusing it.
    const rename = u.fullName !== undefined && u.fullName !== target.fullName && u.fullName.trim() !== '';
    const fullName = rename ? await checkNewName(app, realm, target, u.fullName!) : undefined;
    if (role !== undefined || fullName !== undefined) await app.prisma.user.update({ where: { id: target.id }, data: { role, fullName } });
    onCommit(() => cacheChanged(app, { cache: 'user', userId: target.id }));
    if (role !== undefined) {
      await sendAboutUser(app, realm, target, { type: 'realm_user', op: 'update', person: { user_id: target.id, role: roleValue(role) } });
      await announceRoleGroups(app, realm, target.id, target.role, role);
    }
    if (fullName !== undefined)
      await sendAboutUser(app, realm, target, { type: 'realm_user', op: 'update', person: { user_id: target.id, full_name: fullName } });
    if (u.profileData) await adminSetProfileData(app, realm, actor, target, u.profileData);
  });
}

/** Group events as these always went, without the snapshot filter: applying one twice changes nothing. */
const sendGroupEvent = (app: App, realm: RealmInfo, event: ChatEvent) => sendToRealm(app, realm, event, { alwaysDeliver: true });

/** System-group membership follows the role: the old role's groups lose the user, the new ones gain them. */
async function announceRoleGroups(app: App, realm: RealmInfo, userId: number, before: number, after: number): Promise<void> {
  const event = (op: 'add_members' | 'remove_members', name: SystemGroupName): ChatEvent => ({
    type: 'user_group',
    op,
    group_id: realm.systemGroups[name],
    user_ids: [userId],
  });
  await sendGroupEvent(app, realm, event('remove_members', roleSystemGroup(before)));
  await sendGroupEvent(app, realm, event('add_members', roleSystemGroup(after)));
  // role:fullmembers is the one system group not named after a role.
  const full = (role: number) => systemGroupDirectlyContains('role:fullmembers', role);
  if (full(before) !== full(after)) await sendGroupEvent(app, realm, event(full(after) ? 'add_members' : 'remove_members', 'role:fullmembers'));
}

/** Channels a user is subscribed to, with who may see each one's subscribers. */
async function subscribedChannels(app: App, realm: RealmInfo, userId: number) {
  return app.prisma.channel.findMany({ where: { realmId: realm.id, subscriptions: { some: { userId, active: true } } }, orderBy: { id: 'asc' } });
}

async function announcePeers(app: App, realm: RealmInfo, userId: number, op: 'peer_add' | 'peer_remove'): Promise<void> {
  for (const channel of await subscribedChannels(app, realm, userId)) {
    const recipients = (await metadataUserIds(app, realm, channel)).filter((id) => id !== userId);
    sendOnCommit(
      { realmId: realm.id, userIds: recipients, event: { type: 'subscription', op, stream_ids: [channel.id], user_ids: [userId] } },
      { alwaysDeliver: true },
    );
  }
}

/**
 * In the caller's transaction, before its checks: deactivations of one organization run one at a
 * time, since each checks who else stays active (the last owner, the last user).
 */
async function serializeDeactivations(app: App, realm: RealmInfo, userId: number): Promise<void> {
  await app.prisma.$queryRaw`SELECT id FROM "Realm" WHERE id = ${realm.id} FOR NO KEY UPDATE`;
  await lockUser(app, userId);
}

/** Zulip's do_deactivate_user, in the caller's transaction: the bots the user owns first, then the user. */
export async function deactivateWithBots(app: App, realm: RealmInfo, target: User): Promise<void> {
  const bots = await app.prisma.user.findMany({ where: { realmId: realm.id, botOwnerId: target.id, isActive: true }, orderBy: { id: 'asc' } });
  const users = [...bots, target];
  const ids = users.map((u) => u.id);
  // Guests who shared only channels with them lose access to them.
  const announceAccess = await trackAccess(app, realm, async () => (await realmViewers(app, realm.id)).map((v) => v.id).filter((id) => !ids.includes(id)));
  await app.prisma.user.updateMany({ where: { id: { in: ids } }, data: { isActive: false } });
  await expireInvitationsOf(app, realm, ids);
  // Subscriber sets count active users only; a deactivated user can't authenticate, and their event queues end.
  onCommit(() => {
    cacheChanged(app, { cache: 'subscribers', channelIds: 'all' });
    for (const id of ids) cacheChanged(app, { cache: 'sign-out', userId: id });
  });
  for (const user of users) {
    await announcePeers(app, realm, user.id, 'peer_remove');
    await sendAboutUser(app, realm, user, { type: 'realm_user', op: 'update', person: { user_id: user.id, is_active: false } });
    if (user.isBot) {
      sendOnCommit({
        realmId: realm.id,
        userIds: await botManagerIds(app, realm, user),
        event: { type: 'realm_bot', op: 'update', bot: { user_id: user.id, is_active: false } },
      });
    }
  }
  await announceAccess();
}

/** DELETE /users/{user_id}: the user and the bots they own. */
export async function deactivateUser(app: App, realm: RealmInfo, actor: User, userId: number): Promise<void> {
  await atomic(app, async () => {
    await serializeDeactivations(app, realm, userId);
    const target = await accessUserForAdmin(app, realm, actor, userId, { allowDeactivated: false, allowBots: false });
    if (isOwner(target) && !isOwner(actor)) requireRole(actor, Role.OWNER);
    if (await isLastOwner(app, realm, target)) throw badRequest('Cannot deactivate the only organization owner');
    await deactivateWithBots(app, realm, target);
  });
}

/** Zulip's CannotDeactivateLastUserError. */
function cannotDeactivateLastUser(isLastOwner: boolean): ApiError {
  const entity = isLastOwner ? 'organization owner' : 'user';
  return new ApiError(`Cannot deactivate the only ${entity}.`, 'CANNOT_DEACTIVATE_LAST_USER', 400, { is_last_owner: isLastOwner, entity });
}

/** DELETE /users/me (Zulip's deactivate_user_own_backend): anyone but the last user or the last owner. */
export async function deactivateOwnUser(app: App, realm: RealmInfo, user: User): Promise<void> {
  await atomic(app, async () => {
    await serializeDeactivations(app, realm, user.id);
    if ((await app.prisma.user.count({ where: { realmId: realm.id, isActive: true, isSystemBot: false } })) === 1) throw cannotDeactivateLastUser(false);
    if (await isLastOwner(app, realm, user)) throw cannotDeactivateLastUser(true);
    await deactivateWithBots(app, realm, user);
  });
}

/** POST /users/{user_id}/reactivate. */
export async function reactivateUser(app: App, realm: RealmInfo, actor: User, userId: number): Promise<void> {
  await atomic(app, async () => {
    await lockUser(app, userId);
    const target = await accessUserForAdmin(app, realm, actor, userId, { allowDeactivated: true, allowBots: true });
    await reactivate(app, realm, target);
  });
}

/** Zulip's do_reactivate_user, in the caller's transaction with the user's row locked. */
async function reactivate(app: App, realm: RealmInfo, target: User): Promise<void> {
  if (target.isActive) return;
  await app.prisma.user.update({ where: { id: target.id }, data: { isActive: true } });
  onCommit(() => {
    cacheChanged(app, { cache: 'subscribers', channelIds: 'all' });
    cacheChanged(app, { cache: 'user', userId: target.id });
  });
  await sendAboutUser(app, realm, target, { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: true } });
  if (target.isBot) {
    sendOnCommit({
      realmId: realm.id,
      userIds: await botManagerIds(app, realm, target),
      event: { type: 'realm_bot', op: 'update', bot: { user_id: target.id, is_active: true } },
    });
  }
  await announcePeers(app, realm, target.id, 'peer_add');
  const groups = await app.realms.groups(realm.id);
  const named = [...groups.values()].filter((g) => !g.isSystemGroup && g.name !== null && g.members.has(target.id)).map((g) => g.id);
  const system = SYSTEM_GROUPS.filter((g) => systemGroupDirectlyContains(g.name, target.role)).map((g) => realm.systemGroups[g.name]);
  for (const groupId of [...system, ...named].sort((a, b) => a - b)) {
    await sendGroupEvent(app, realm, { type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [target.id] });
  }
}

/**
 * What the organization's directory says of an account (LDAP: on login and sync-ldap), with no
 * acting user: whether it is active, and its name.
 */
export async function applyDirectoryState(app: App, realm: RealmInfo, userId: number, wanted: { fullName?: string; active?: boolean }): Promise<User> {
  return atomic(app, async () => {
    await serializeDeactivations(app, realm, userId);
    const target = await app.prisma.user.findUniqueOrThrow({ where: { id: userId } });
    if (wanted.active === false) {
      if (target.isActive) await deactivateWithBots(app, realm, target);
    } else {
      if (wanted.active) await reactivate(app, realm, target);
      if (wanted.fullName !== undefined && wanted.fullName !== target.fullName) {
        const fullName = await checkNewName(app, realm, target, wanted.fullName);
        await app.prisma.user.update({ where: { id: target.id }, data: { fullName } });
        onCommit(() => cacheChanged(app, { cache: 'user', userId: target.id }));
        await sendAboutUser(app, realm, target, { type: 'realm_user', op: 'update', person: { user_id: target.id, full_name: fullName } });
      }
    }
    return app.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  });
}
