// Invitations as the API and the registration pages read them: GET /invites (Zulip's
// do_get_invites_controlled_by_user), the links, and what a link's key leads to.
import type { App } from '../app.ts';
import type { Invitation, MultiuseInvite, User } from '../db/generated/client.ts';
import type { RealmInfo } from './realms.ts';
import { isAdmin } from '../auth/policy.ts';

/** Zulip's confirmation statuses. */
export const INVITE_STATUS = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const unexpired = (now: Date) => ({ OR: [{ expiresAt: null }, { expiresAt: { gte: now } }] });

/** The link an email invitation (or a confirmed sign-up) is redeemed at. */
export const confirmationLink = (app: App, realm: RealmInfo, key: string) => `${app.realms.url(realm)}/accounts/do_confirm/${key}`;

/** A reusable invitation link, in Zulip's form. */
export const multiuseLink = (app: App, realm: RealmInfo, key: string) => `${app.realms.url(realm)}/join/${key}/`;

/** Unexpired, unused invitations `user` may manage: administrators all of them, others their own. */
export async function listInvites(app: App, realm: RealmInfo, user: User): Promise<Record<string, unknown>[]> {
  const now = new Date();
  const admin = isAdmin(user);
  const [emails, links] = await Promise.all([
    app.prisma.invitation.findMany({
      where: { realmId: realm.id, status: INVITE_STATUS.PENDING, referredById: admin ? { not: null } : user.id, ...unexpired(now) },
      orderBy: { id: 'asc' },
    }),
    app.prisma.multiuseInvite.findMany({
      where: { realmId: realm.id, status: INVITE_STATUS.PENDING, ...(admin ? {} : { referredById: user.id }), ...unexpired(now) },
      orderBy: { id: 'asc' },
    }),
  ]);
  return [
    ...emails.map((i) => ({
      id: i.id,
      email: i.email,
      invited_by_user_id: i.referredById,
      invited: seconds(i.invitedAt),
      expiry_date: i.expiresAt && seconds(i.expiresAt),
      invited_as: i.invitedAs,
      is_multiuse: false,
      notify_referrer_on_join: i.notifyReferrerOnJoin,
    })),
    ...links.map((m) => ({
      id: m.id,
      invited_by_user_id: m.referredById,
      invited: seconds(m.createdAt),
      expiry_date: m.expiresAt && seconds(m.expiresAt),
      invited_as: m.invitedAs,
      is_multiuse: true,
      link_url: multiuseLink(app, realm, m.key),
    })),
  ];
}

/** Why a link can no longer be used; 'usable' when it can. */
export type LinkState = 'usable' | 'invalid' | 'expired' | 'used' | 'revoked';

export function linkState(row: { status: number; expiresAt: Date | null } | null): LinkState {
  if (!row) return 'invalid';
  if (row.status === INVITE_STATUS.USED) return 'used';
  if (row.status === INVITE_STATUS.REVOKED) return 'revoked';
  if (row.expiresAt && row.expiresAt.getTime() < Date.now()) return 'expired';
  return 'usable';
}

/**
 * The invitation behind a confirmation link of this organization; a sign-up through a reusable
 * link is revoked with the link (though not expired with it: the address was confirmed in time).
 */
export async function invitationByKey(app: App, realm: RealmInfo, key: string): Promise<{ state: LinkState; invitation: Invitation | null }> {
  const invitation = await app.prisma.invitation.findFirst({ where: { key, realmId: realm.id } });
  const state = linkState(invitation);
  if (state !== 'usable' || invitation!.multiuseInviteId === null) return { state, invitation };
  const link = await app.prisma.multiuseInvite.findUnique({ where: { id: invitation!.multiuseInviteId }, select: { status: true } });
  return { state: link?.status === INVITE_STATUS.REVOKED ? 'revoked' : state, invitation };
}

/** The reusable invitation behind a /join/ link of this organization. */
export async function multiuseByKey(app: App, realm: RealmInfo, key: string): Promise<{ state: LinkState; invite: MultiuseInvite | null }> {
  const invite = await app.prisma.multiuseInvite.findFirst({ where: { key, realmId: realm.id } });
  return { state: linkState(invite), invite };
}
