// Muting users (Zulip's zerver/actions/muted_users.py): the muted user's messages are marked read,
// a batch per transaction, and arrive read from then on (deliverMessage), read receipts leave both sides out, and
// the user's clients get the whole list in a `muted_users` event.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import { mutedUsers } from '../queries/muted-users.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { canAccessUser } from '../queries/user-access.ts';
import { userById } from '../queries/users.ts';
import { asUser, markSenderAsRead, markSenderBatchAsRead } from './flags.ts';
import { atomic, sendOnCommit } from './transaction.ts';

/** Zulip's access_user_by_id_including_cross_realm with bots and deactivated users allowed. */
async function accessMutedUser(app: App, realm: RealmInfo, user: User, mutedUserId: number): Promise<User> {
  const target = await userById(app, realm, mutedUserId);
  if (!(await canAccessUser(app, realm, user, target))) throw badRequest('Insufficient permission');
  return target;
}

async function sendMutedUsers(app: App, realm: RealmInfo, user: User): Promise<void> {
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'muted_users', muted_users: await mutedUsers(app, user.id) } });
}

/**
 * POST /users/me/muted_users/{muted_user_id}: ordered with the user's other read-flag changes. The
 * mute commits with the first batch of the muted user's unread messages marked read (Zulip's
 * events in Zulip's order when that is all of them); the rest follow a batch per transaction.
 */
export async function muteUser(app: App, realm: RealmInfo, user: User, mutedUserId: number): Promise<void> {
  if (mutedUserId === user.id) throw badRequest('Cannot mute self');
  const target = await accessMutedUser(app, realm, user, mutedUserId);
  const first = await asUser(app, user, async () => {
    const { count } = await app.prisma.mutedUser.createMany({ data: [{ userId: user.id, mutedUserId: target.id }], skipDuplicates: true });
    if (count === 0) throw badRequest('User already muted');
    const batch = await markSenderBatchAsRead(app, realm, user, target.id, 0);
    await sendMutedUsers(app, realm, user);
    return batch;
  });
  if (first.more) await markSenderAsRead(app, realm, user, target.id, first.last);
}

/** DELETE /users/me/muted_users/{muted_user_id}. */
export async function unmuteUser(app: App, realm: RealmInfo, user: User, mutedUserId: number): Promise<void> {
  const target = await accessMutedUser(app, realm, user, mutedUserId);
  await atomic(app, async () => {
    const { count } = await app.prisma.mutedUser.deleteMany({ where: { userId: user.id, mutedUserId: target.id } });
    if (count === 0) throw badRequest('User is not muted');
    await sendMutedUsers(app, realm, user);
  });
}
