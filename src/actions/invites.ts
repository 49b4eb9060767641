// Invitations (Zulip's zerver/views/invite.py and zerver/actions/invites.py): email invitations
// and reusable links, with who may invite whom, to which channels and groups; resending and
// revoking. Checks and writes in one transaction; `invites_changed` events and the mail leave
// after it committed.
import { randomBytes } from 'node:crypto';
import type { App } from '../app.ts';
import { hasRealmPermission } from '../auth/permissions.ts';
import { isAdmin, refuseGuests, requireRole } from '../auth/policy.ts';
import type { Channel, Invitation, MultiuseInvite, User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { Log } from '../log.ts';
import { accessRules, subscribedChannelIds } from '../queries/channels.ts';
import { defaultChannelIds } from '../queries/default-channels.ts';
import { confirmationLink, INVITE_STATUS, multiuseLink } from '../queries/invites.ts';
import { realmEmailChecker } from '../queries/realm-domains.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { systemBotEmail } from './users.ts';
import { canAddSubscribers } from './subscriptions.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { accessGroupForUpdate } from './user-groups.ts';
import { isValidEmail } from '../domain/email-address.ts';

/** Zulip's INVITES_MIN_USER_AGE_DAYS: where no invitation is required, newer accounts may not invite. */
const MIN_INVITER_AGE_DAYS = 3;
const DAY_MS = 86_400_000;
const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** A link secret as Zulip's generate_key makes them: 24 characters of base32, 120 random bits. */
export function generateKey(): string {
  return Array.from(randomBytes(24), (b) => KEY_ALPHABET[b % 32]).join('');
}

/** What the account made from an invitation gets. */
export interface InvitationTerms {
  invitedAs: number;
  channelIds: number[];
  groupIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  /** null: the organization's text; "": no custom welcome message. */
  welcomeMessageCustomText: string | null;
  /** null: never expires. */
  expiresInMinutes: number | null;
}

type Failure = [email: string, reason: string, deactivated: boolean];

/** Zulip's InvitationError: nothing was sent unless `sent` says otherwise. */
function invitationFailed(msg: string, errors: Failure[], o: { sent?: boolean; dailyLimit?: boolean } = {}): ApiError {
  return new ApiError(msg, 'INVITATION_FAILED', 400, {
    errors,
    sent_invitations: o.sent ?? false,
    // This server has no licenses to run out of.
    license_limit_reached: false,
    daily_limit_reached: o.dailyLimit ?? false,
  });
}

/** Zulip's require_member_or_admin. */
export function requireMemberOrAdmin(user: User): void {
  refuseGuests(user);
  if (user.isBot) throw badRequest('This endpoint does not accept bot requests.');
}

/**
 * Roles no more privileged than the inviter's own (spec 4.6): owners only by owners,
 * administrators by administrators, moderators by moderators.
 */
function checkInviteRole(user: User, invitedAs: number): void {
  if (invitedAs === Role.OWNER) requireRole(user, Role.OWNER);
  if (invitedAs < user.role && invitedAs <= Role.MODERATOR) throw badRequest('Must be an organization administrator');
}

/** Managing someone else's invitation takes an administrator, and an owner for an owner's invitation. */
function checkManageOthers(user: User, invite: { referredById: number | null; invitedAs: number }): void {
  if (invite.referredById === user.id) return;
  if (invite.invitedAs === Role.OWNER) requireRole(user, Role.OWNER);
  if (!isAdmin(user)) throw badRequest('Must be an organization administrator');
}

/** The addresses of `invitee_emails` (Zulip's get_invitee_emails_set): `Name <address>` gives the address. */
export function parseInviteeEmails(raw: string): string[] {
  const byLower = new Map<string, string>();
  for (const part of raw.split(/[,\n]/)) {
    const email = (/<(.*)>/.exec(part)?.[1] ?? part).trim();
    if (email !== '' && !byLower.has(email.toLowerCase())) byLower.set(email.toLowerCase(), email);
  }
  return [...byLower.values()];
}

/** Zulip's access_streams_for_invite: channels the inviter can read, and may add others to unless they are defaults. */
async function accessChannelsForInvite(app: App, realm: RealmInfo, user: User, ids: number[]): Promise<Channel[]> {
  if (ids.length === 0) return [];
  const [groups, subscribed] = [await app.realms.groups(realm.id), await subscribedChannelIds(app, user.id)];
  const channels: Channel[] = [];
  for (const id of new Set(ids)) {
    const channel = await app.prisma.channel.findFirst({ where: { id, realmId: realm.id, isArchived: false } });
    if (!channel || !accessRules(user, channel, subscribed.has(id), groups, realm).content) {
      throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
    }
    channels.push(channel);
  }
  const defaults = new Set(await defaultChannelIds(app, realm.id));
  const realmWide = await hasRealmPermission(app.realms, realm, user, 'can_add_subscribers_group');
  if (channels.some((c) => !defaults.has(c.id) && !canAddSubscribers(user, c, groups, realm, realmWide))) {
    throw badRequest('You do not have permission to subscribe other users to channels.');
  }
  return channels;
}

/** The checks every invitation passes, email or reusable; returns the terms as stored. */
async function checkTerms(app: App, realm: RealmInfo, user: User, t: InvitationTerms) {
  const channels = await accessChannelsForInvite(app, realm, user, t.channelIds);
  const groups = await app.realms.groups(realm.id);
  const groupIds = [...new Set(t.groupIds)];
  for (const id of groupIds) await accessGroupForUpdate(app, realm, user, groups, id, 'can_add_members_group', false);
  if (t.welcomeMessageCustomText !== null && !isAdmin(user)) throw badRequest('Must be an organization administrator');
  const now = new Date();
  return {
    realmId: realm.id,
    referredById: user.id,
    invitedAs: t.invitedAs,
    channelIds: channels.map((c) => c.id),
    groupIds,
    includeRealmDefaultSubscriptions: t.includeRealmDefaultSubscriptions,
    welcomeMessageCustomText: t.welcomeMessageCustomText,
    expiresAt: t.expiresInMinutes === null ? null : new Date(now.getTime() + t.expiresInMinutes * 60_000),
    createdAt: now,
  };
}

/** `invites_changed` to the administrators (bots too) and the creators of the changed invitations (Zulip's notify_invites_changed). */
export async function notifyInvitesChanged(app: App, realm: RealmInfo, referrerIds: readonly (number | null)[]): Promise<void> {
  const admins = await app.prisma.user.findMany({ where: { realmId: realm.id, isActive: true, role: { lte: Role.ADMINISTRATOR } }, select: { id: true } });
  const userIds = admins.map((a) => a.id);
  for (const id of referrerIds) if (id !== null && !userIds.includes(id)) userIds.push(id);
  // Nothing in the register snapshot describes invitations: clients refetch GET /invites.
  sendOnCommit({ realmId: realm.id, userIds, event: { type: 'invites_changed' } }, { alwaysDeliver: true });
}

/** Holds the organization's row: invitations of one organization are counted against its daily limit one at a time. */
async function lockRealm(app: App, realm: RealmInfo): Promise<void> {
  await app.prisma.$queryRaw`SELECT id FROM "Realm" WHERE id = ${realm.id} FOR UPDATE`;
}

/** Zulip's check_invite_limit, with the limit of the server's settings. */
async function checkDailyLimit(app: App, realm: RealmInfo, count: number): Promise<void> {
  const recent = await app.prisma.invitationEmail.count({ where: { realmId: realm.id, sentAt: { gte: new Date(Date.now() - DAY_MS) } } });
  if (recent + count > app.config.INVITES_DAILY_LIMIT) {
    throw invitationFailed(
      'To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
      [],
      { dailyLimit: true },
    );
  }
}

/** Zulip's validate_email_is_valid and get_existing_user_errors for each address. */
async function checkInvitees(app: App, realm: RealmInfo, emails: string[]): Promise<{ invalid: Failure[]; taken: Failure[] }> {
  const problem = await realmEmailChecker(app, realm);
  const invalid: Failure[] = [];
  for (const email of emails) {
    const reason = isValidEmail(email) ? problem(email) : 'Invalid address.';
    if (reason) invalid.push([email, reason, false]);
  }
  const systemBots = new Set([systemBotEmail(app, realm, 'notification'), systemBotEmail(app, realm, 'welcome')]);
  const existing = await app.prisma.user.findMany({
    where: { realmId: realm.id, OR: emails.map((e) => ({ deliveryEmail: { equals: e, mode: 'insensitive' as const } })) },
    select: { deliveryEmail: true, isActive: true },
  });
  const taken: Failure[] = [];
  for (const email of emails) {
    const user = existing.find((u) => u.deliveryEmail.toLowerCase() === email.toLowerCase());
    if (systemBots.has(email.toLowerCase())) taken.push([email, 'Reserved for system bots.', false]);
    else if (user) taken.push([email, user.isActive ? 'Already has an account.' : 'Account has been deactivated.', !user.isActive]);
  }
  return { invalid, taken };
}

/** The mail of an email invitation; it leaves once the transaction committed. */
async function mailInvitation(app: App, realm: RealmInfo, invitation: Invitation, referrer: User, log: Log): Promise<void> {
  await app.prisma.invitationEmail.create({ data: { realmId: realm.id } });
  const expiry = invitation.expiresAt ? `This link expires on ${invitation.expiresAt.toUTCString()}.` : 'This link does not expire.';
  const text = [
    'Hello,',
    `${referrer.fullName} (${referrer.deliveryEmail}) has invited you to join ${realm.name}, a team chat organization at ${app.realms.url(realm)}.`,
    `To create your account, open this link:\n\n${confirmationLink(app, realm, invitation.key)}`,
    expiry,
    'If you did not expect this invitation, you can ignore this message.',
  ].join('\n\n');
  const mail = { to: invitation.email, subject: `${referrer.fullName} invited you to join ${realm.name}`, text };
  onCommit(() => app.mail.send(mail, log));
}

export interface EmailInviteRequest extends InvitationTerms {
  inviteeEmails: string;
  notifyReferrerOnJoin: boolean;
}

/**
 * POST /invites. Returns normally when every address was invited; throws INVITATION_FAILED when
 * some were skipped (after inviting the rest) or none could be invited (then nothing was written).
 */
export async function inviteUsers(app: App, realm: RealmInfo, user: User, req: EmailInviteRequest, log: Log): Promise<void> {
  requireMemberOrAdmin(user);
  if (!(await hasRealmPermission(app.realms, realm, user, 'can_invite_users_group'))) throw badRequest('Insufficient permission');
  checkInviteRole(user, req.invitedAs);
  const emails = parseInviteeEmails(req.inviteeEmails);
  if (emails.length === 0) throw badRequest('You must specify at least one email address.');
  const skipped = await atomic(app, async () => {
    const { createdAt, ...terms } = await checkTerms(app, realm, user, req);
    await lockRealm(app, realm);
    await checkDailyLimit(app, realm, emails.length);
    if (!realm.settings.invite_required && !isAdmin(user) && Date.now() - user.dateJoined.getTime() < MIN_INVITER_AGE_DAYS * DAY_MS) {
      throw invitationFailed('Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.', []);
    }
    const { invalid, taken } = await checkInvitees(app, realm, emails);
    if (invalid.length) throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", [...invalid, ...taken]);
    if (taken.length === emails.length) throw invitationFailed("We weren't able to invite anyone.", taken);
    for (const email of emails.filter((e) => !taken.some(([t]) => t === e))) {
      const invitation = await app.prisma.invitation.create({
        data: { ...terms, invitedAt: createdAt, email, notifyReferrerOnJoin: req.notifyReferrerOnJoin, key: generateKey() },
      });
      await mailInvitation(app, realm, invitation, user, log);
    }
    await notifyInvitesChanged(app, realm, [user.id]);
    return taken;
  });
  if (skipped.length) {
    throw invitationFailed(
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      skipped,
      { sent: true },
    );
  }
}

/** POST /invites/multiuse: returns the link. */
export async function createMultiuseInvite(app: App, realm: RealmInfo, user: User, terms: InvitationTerms): Promise<string> {
  requireMemberOrAdmin(user);
  if (!(await hasRealmPermission(app.realms, realm, user, 'create_multiuse_invite_group'))) throw badRequest('Insufficient permission');
  checkInviteRole(user, terms.invitedAs);
  return atomic(app, async () => {
    const data = await checkTerms(app, realm, user, terms);
    const invite = await app.prisma.multiuseInvite.create({ data: { ...data, key: generateKey() } });
    await notifyInvitesChanged(app, realm, [user.id]);
    return multiuseLink(app, realm, invite.key);
  });
}

/** Zulip's access_invite_by_id, with the row held until the commit. */
async function accessInvitation(app: App, realm: RealmInfo, user: User, id: number): Promise<Invitation> {
  const [row] = await app.prisma.$queryRaw<Invitation[]>`SELECT * FROM "Invitation" WHERE id = ${id} FOR UPDATE`;
  // Sign-ups through reusable links have no inviter, and are nobody's to manage.
  if (!row || row.realmId !== realm.id || row.referredById === null || row.status !== INVITE_STATUS.PENDING) throw badRequest('No such invitation');
  checkManageOthers(user, row);
  return row;
}

/** DELETE /invites/{id}. */
export async function revokeInvitation(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  requireMemberOrAdmin(user);
  await atomic(app, async () => {
    const invitation = await accessInvitation(app, realm, user, id);
    await app.prisma.invitation.update({ where: { id }, data: { status: INVITE_STATUS.REVOKED } });
    await notifyInvitesChanged(app, realm, [invitation.referredById]);
  });
}

/** POST /invites/{id}/resend: the same link again, counted against the daily limit. */
export async function resendInvitation(app: App, realm: RealmInfo, user: User, id: number, log: Log): Promise<void> {
  requireMemberOrAdmin(user);
  await atomic(app, async () => {
    const invitation = await accessInvitation(app, realm, user, id);
    await lockRealm(app, realm);
    await checkDailyLimit(app, realm, 1);
    const referrer = await app.prisma.user.findUniqueOrThrow({ where: { id: invitation.referredById! } });
    await mailInvitation(app, realm, invitation, referrer, log);
  });
}

/** DELETE /invites/multiuse/{id}. */
export async function revokeMultiuseInvite(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  requireMemberOrAdmin(user);
  await atomic(app, async () => {
    const [row] = await app.prisma.$queryRaw<MultiuseInvite[]>`SELECT * FROM "MultiuseInvite" WHERE id = ${id} FOR UPDATE`;
    if (!row || row.realmId !== realm.id) throw badRequest('No such invitation');
    checkManageOthers(user, row);
    if (row.status === INVITE_STATUS.REVOKED) throw badRequest('Invitation has already been revoked');
    await app.prisma.multiuseInvite.update({ where: { id }, data: { status: INVITE_STATUS.REVOKED } });
    await notifyInvitesChanged(app, realm, [row.referredById]);
  });
}

/** What PATCH /invites/multiuse/{id} may change; an absent field stays as it is. */
export interface MultiuseInviteChanges {
  invitedAs?: number;
  channelIds?: number[];
  groupIds?: number[];
  includeRealmDefaultSubscriptions?: boolean;
}

/**
 * PATCH /invites/multiuse/{id}: the terms of a link that can still be used, under the checks of
 * creating one; its key, and so the link already shared, stays the same.
 */
export async function editMultiuseInvite(app: App, realm: RealmInfo, user: User, id: number, changes: MultiuseInviteChanges): Promise<void> {
  requireMemberOrAdmin(user);
  if (!(await hasRealmPermission(app.realms, realm, user, 'create_multiuse_invite_group'))) throw badRequest('Insufficient permission');
  await atomic(app, async () => {
    const [row] = await app.prisma.$queryRaw<MultiuseInvite[]>`SELECT * FROM "MultiuseInvite" WHERE id = ${id} FOR UPDATE`;
    const usable = row && row.realmId === realm.id && row.status === INVITE_STATUS.PENDING && (row.expiresAt === null || row.expiresAt > new Date());
    if (!usable) throw badRequest('No such invitation');
    checkManageOthers(user, row);
    const invitedAs = changes.invitedAs ?? row.invitedAs;
    checkInviteRole(user, invitedAs);
    const terms = await checkTerms(app, realm, user, {
      invitedAs,
      channelIds: changes.channelIds ?? row.channelIds,
      groupIds: changes.groupIds ?? row.groupIds,
      includeRealmDefaultSubscriptions: changes.includeRealmDefaultSubscriptions ?? row.includeRealmDefaultSubscriptions,
      welcomeMessageCustomText: null,
      expiresInMinutes: null,
    });
    await app.prisma.multiuseInvite.update({
      where: { id },
      data: { invitedAs, channelIds: terms.channelIds, groupIds: terms.groupIds, includeRealmDefaultSubscriptions: terms.includeRealmDefaultSubscriptions },
    });
    await notifyInvitesChanged(app, realm, [row.referredById]);
  });
}

/**
 * In the transaction deactivating `userIds`: their invitations that could still be used expire
 * now (Zulip's revoke_invites_generated_by_user).
 */
export async function expireInvitationsOf(app: App, realm: RealmInfo, userIds: number[]): Promise<void> {
  const now = new Date();
  const where = { realmId: realm.id, referredById: { in: userIds }, status: INVITE_STATUS.PENDING, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
  const emails = await app.prisma.invitation.updateMany({ where, data: { expiresAt: now } });
  const links = await app.prisma.multiuseInvite.updateMany({ where, data: { expiresAt: now } });
  if (emails.count + links.count > 0) await notifyInvitesChanged(app, realm, []);
}
