// The events that follow who can access whom under can_access_all_users_group (the rule itself is
// src/queries/user-access.ts): news about a user only to who can access them, and the guests'
// `realm_user` add and remove when a change makes them gain or lose access to someone.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { UNKNOWN_USER_NAME, accessibleUserIds, everyoneAccessible, whoCanAccess } from '../queries/user-access.ts';
import { formatUser, realmViewers } from '../queries/users.ts';
import { sendOnCommit } from './transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';

/**
 * An event about `target` (a `realm_user` update) for the users who can access them, on commit.
 * Without the snapshot filter, as these always went: applying a user update twice changes nothing.
 */
export async function sendAboutUser(app: App, realm: RealmInfo, target: User, event: ChatEvent): Promise<void> {
  const [viewers, canAccess] = await Promise.all([realmViewers(app, realm.id), whoCanAccess(app, realm, target)]);
  sendOnCommit({ realmId: realm.id, userIds: viewers.filter(canAccess).map((v) => v.id), event }, { alwaysDeliver: true });
}

/**
 * Call in the transaction before a change of subscriptions or of who is active, with how to find
 * the users it may concern (only asked when guests' access is limited); the function returned,
 * called after the change in the same transaction, tells the restricted guests among them whom they gained access to (`realm_user` add with the
 * real user) and whom they lost (`realm_user` remove).
 */
export async function trackAccess(app: App, realm: RealmInfo, concerned: () => Promise<Iterable<number>>): Promise<() => Promise<void>> {
  const guests = everyoneAccessible(realm)
    ? []
    : await app.prisma.user.findMany({
        where: { id: { in: [...new Set(await concerned())] }, realmId: realm.id, role: Role.GUEST, isActive: true },
        orderBy: { id: 'asc' },
      });
  const before = await Promise.all(guests.map((g) => accessibleUserIds(app, realm, g)));
  return async () => {
    for (const [i, guest] of guests.entries()) {
      const [was, now] = [before[i]!, (await accessibleUserIds(app, realm, guest))!];
      const gained = await app.prisma.user.findMany({ where: { id: { in: [...now].filter((id) => !was.has(id)) } }, orderBy: { id: 'asc' } });
      for (const user of gained) {
        // As Zulip's notify_created_user: the profile data follows only in later updates.
        const person = formatUser(app, realm, user, guest, { clientGravatar: false, profileData: {} });
        sendOnCommit({ realmId: realm.id, userIds: [guest.id], event: { type: 'realm_user', op: 'add', person } }, { alwaysDeliver: true });
      }
      for (const id of [...was].filter((id) => !now.has(id)).sort((a, b) => a - b)) {
        const person = { user_id: id, full_name: UNKNOWN_USER_NAME };
        sendOnCommit({ realmId: realm.id, userIds: [guest.id], event: { type: 'realm_user', op: 'remove', person } }, { alwaysDeliver: true });
      }
    }
  };
}
