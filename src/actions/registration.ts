// Redeeming invitations (Zulip's zerver/views/registration.py and process_new_human_user): a
// reusable link first confirms the address by mail; a confirmation link then creates the account
// with the invited role, channels and groups, and Welcome Bot and the inviter are told.
import type { App } from '../app.ts';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/passwords.ts';
import type { Invitation, MultiuseInvite, User } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import type { Log } from '../log.ts';
import { defaultChannelIds } from '../queries/default-channels.ts';
import { confirmationLink, INVITE_STATUS, invitationByKey, type LinkState, linkState } from '../queries/invites.ts';
import { realmEmailChecker } from '../queries/realm-domains.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { generateKey, notifyInvitesChanged } from './invites.ts';
import { sendBotDirectMessage } from './messages.ts';
import { silentMention } from './messages-content.ts';
import { systemBot } from './users.ts';
import { sendWelcomeMessages } from './onboarding.ts';
import { addSubscriptions } from './subscriptions.ts';
import { atomic, onCommit } from './transaction.ts';
import { addUserToGroups } from './user-groups.ts';
import { isValidEmail } from '../domain/email-address.ts';
import { announceNewUser, checkFullName, checkNameAvailable, insertUser } from './users.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { Role } from '../domain/roles.ts';
import { joinDefaultChannels } from './subscriptions.ts';

/** Zulip's CONFIRMATION_LINK_DEFAULT_VALIDITY_DAYS: an address confirmed through a reusable link has a day to sign up. */
const SIGNUP_CONFIRMATION_MINUTES = 24 * 60;

/** A link that leads nowhere any more; the page says why. */
export class UnusableLink extends Error {
  constructor(readonly state: Exclude<LinkState, 'usable'>) {
    super(`link ${state}`);
  }
}

function checkRealmOpen(realm: RealmInfo): void {
  if (realm.deactivated) throw badRequest('This organization has been deactivated.');
}

/** A reusable link of this organization, held until the commit so a revocation cannot slip past. */
async function lockMultiuse(app: App, realm: RealmInfo, key: string): Promise<MultiuseInvite> {
  const [row] = await app.prisma.$queryRaw<MultiuseInvite[]>`SELECT * FROM "MultiuseInvite" WHERE key = ${key} AND "realmId" = ${realm.id} FOR SHARE`;
  const state = linkState(row ?? null);
  if (state !== 'usable') throw new UnusableLink(state);
  return row!;
}

/** Whether `email` may have an account here (allowed domain, not taken); the reason when not. */
async function checkNewAddress(app: App, realm: RealmInfo, email: string): Promise<void> {
  if (!isValidEmail(email)) throw badRequest('Please enter a valid email address.');
  const problem = (await realmEmailChecker(app, realm))(email);
  if (problem) throw badRequest(problem);
  const existing = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: { equals: email, mode: 'insensitive' } } });
  if (existing)
    throw badRequest(existing.isActive ? 'An account with this email address already exists.' : 'The account with this email address has been deactivated.');
}

/**
 * POST /join/<key>/: the address someone gives on a reusable link's page gets a confirmation link
 * carrying the link's terms. Returns the address.
 */
export async function requestSignup(app: App, realm: RealmInfo, key: string, rawEmail: string, log: Log): Promise<string> {
  checkRealmOpen(realm);
  const email = rawEmail.trim();
  await atomic(app, async () => {
    const invite = await lockMultiuse(app, realm, key);
    await checkNewAddress(app, realm, email);
    const signup = await app.prisma.invitation.create({
      data: {
        realmId: realm.id,
        email,
        multiuseInviteId: invite.id,
        invitedAs: invite.invitedAs,
        channelIds: invite.channelIds,
        groupIds: invite.groupIds,
        includeRealmDefaultSubscriptions: invite.includeRealmDefaultSubscriptions,
        welcomeMessageCustomText: invite.welcomeMessageCustomText,
        notifyReferrerOnJoin: false,
        key: generateKey(),
        expiresAt: new Date(Date.now() + SIGNUP_CONFIRMATION_MINUTES * 60_000),
      },
    });
    const text = [
      'Hello,',
      `To finish creating your account in ${realm.name} (${app.realms.url(realm)}), open this link:\n\n${confirmationLink(app, realm, signup.key)}`,
      `This link expires on ${signup.expiresAt!.toUTCString()}.`,
      'If you did not ask for an account, you can ignore this message.',
    ].join('\n\n');
    onCommit(() => app.mail.send({ to: email, subject: `Confirm your email address for ${realm.name}`, text }, log));
  });
  return email;
}

export interface RegistrationForm {
  key: string;
  fullName: string;
  password: string;
}

function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) throw badRequest(`Your password must have at least ${PASSWORD_MIN_LENGTH} characters.`);
  if (length > PASSWORD_MAX_LENGTH) throw badRequest(`Your password must have at most ${PASSWORD_MAX_LENGTH} characters.`);
}

/** The channels and groups an invitation names that still exist, plus the default channels when it asks. */
async function invitedPlaces(app: App, realm: RealmInfo, invitation: Invitation) {
  const channelIds = new Set(invitation.channelIds);
  if (invitation.includeRealmDefaultSubscriptions) for (const id of await defaultChannelIds(app, realm.id)) channelIds.add(id);
  const channels = await app.prisma.channel.findMany({ where: { realmId: realm.id, id: { in: [...channelIds] }, isArchived: false }, orderBy: { id: 'asc' } });
  const groups = await app.realms.groups(realm.id);
  const groupIds = invitation.groupIds.filter((id) => groups.get(id)?.name && !groups.get(id)!.deactivated && !groups.get(id)!.isSystemGroup);
  return { channels, groupIds };
}

/** The account of a confirmation link's invitation, with everything the invitation gives it. */
async function createInvitedAccount(app: App, realm: RealmInfo, form: Pick<RegistrationForm, 'key'>, name: string, passwordHash: string | null) {
  const [row] = await app.prisma.$queryRaw<{ multiuseInviteId: number | null }[]>`
    SELECT "multiuseInviteId" FROM "Invitation" WHERE key = ${form.key} AND "realmId" = ${realm.id} FOR UPDATE`;
  // A sign-up's reusable link is held too: revoking the link waits, or finds the sign-up done.
  if (row?.multiuseInviteId) await app.prisma.$queryRaw`SELECT id FROM "MultiuseInvite" WHERE id = ${row.multiuseInviteId} FOR SHARE`;
  const { state, invitation } = await invitationByKey(app, realm, form.key);
  if (state !== 'usable') throw new UnusableLink(state);
  // One account at a time per organization: names and addresses are checked against all of them.
  await app.prisma.$queryRaw`SELECT id FROM "Realm" WHERE id = ${realm.id} FOR UPDATE`;
  await checkNameAvailable(app.prisma, realm, name, 0);
  const user = await insertUser(app.prisma, realm.id, { email: invitation!.email, fullName: name, role: invitation!.invitedAs }, passwordHash);
  await announceNewUser(app, realm, user);
  const { channels, groupIds } = await invitedPlaces(app, realm, invitation!);
  await addSubscriptions(app, realm, [user], channels);
  await addUserToGroups(app, realm, user.id, groupIds);
  await app.prisma.invitation.update({ where: { id: invitation!.id }, data: { status: INVITE_STATUS.USED, createdUserId: user.id } });
  // Other invitations of the same address are spent too.
  const sameAddress = { realmId: realm.id, status: INVITE_STATUS.PENDING, email: equalsIgnoringCase(user.deliveryEmail) };
  const others = await app.prisma.invitation.findMany({ where: sameAddress, select: { referredById: true } });
  await app.prisma.invitation.updateMany({ where: sameAddress, data: { status: INVITE_STATUS.REVOKED } });
  const referrers = [invitation!.referredById, ...others.map((o) => o.referredById)].filter((id) => id !== null);
  if (referrers.length) await notifyInvitesChanged(app, realm, referrers);
  return { user, invitation: invitation! };
}

/** POST /accounts/register/: creates the account; Welcome Bot and the inviter speak once it exists. */
export async function register(app: App, realm: RealmInfo, form: RegistrationForm, log: Log): Promise<User> {
  checkRealmOpen(realm);
  const name = checkFullName(form.fullName);
  checkPassword(form.password);
  const passwordHash = await hashPassword(form.password, app.config.PASSWORD_HASH_COST);
  const { user, invitation } = await atomic(app, () => createInvitedAccount(app, realm, form, name, passwordHash));
  try {
    await sendJoinMessages(app, app.realms.byId(realm.id) ?? realm, user, invitation);
  } catch (err) {
    // The account exists and works: its page says so, and the log says what was not sent.
    log.error('messages to a new account not sent', { userId: user.id, error: err instanceof Error ? err.stack : String(err) });
  }
  return user;
}

/**
 * The account of someone an identity provider vouched for (single sign-on with auto sign-up): as
 * Zulip's, where the organization requires invitations only an invited address joins, with what
 * its invitation gives; otherwise any address the organization's domains allow joins as a member.
 * A directory (LDAP) vets its users itself: its users join without invitation, as Zulip's.
 * The account has no password: it logs in through the provider.
 */
export async function registerExternalUser(
  app: App,
  realm: RealmInfo,
  email: string,
  fullName: string,
  log: Log,
  vettedBy: 'provider' | 'directory' = 'provider',
): Promise<User> {
  checkRealmOpen(realm);
  // A provider may know no name: the address's local part stands in, as Zulip's registration form proposes.
  const name = checkFullName(fullName.trim() || email.split('@')[0]!);
  const pending = await app.prisma.invitation.findFirst({
    where: { realmId: realm.id, email: equalsIgnoringCase(email), status: INVITE_STATUS.PENDING, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    orderBy: { id: 'desc' },
  });
  if (!pending && realm.settings.invite_required && vettedBy === 'provider')
    throw badRequest(`Please request an invite for ${email} from the organization administrator.`);
  const { user, invitation } = await atomic(app, async () => {
    if (pending) return createInvitedAccount(app, realm, { key: pending.key }, name, null);
    await checkNewAddress(app, realm, email);
    await app.prisma.$queryRaw`SELECT id FROM "Realm" WHERE id = ${realm.id} FOR UPDATE`;
    await checkNameAvailable(app.prisma, realm, name, 0);
    const created = await insertUser(app.prisma, realm.id, { email, fullName: name, role: Role.MEMBER }, null);
    await announceNewUser(app, realm, created);
    await joinDefaultChannels(app, realm, created);
    return { user: created, invitation: null };
  });
  try {
    if (invitation) await sendJoinMessages(app, app.realms.byId(realm.id) ?? realm, user, invitation);
    else await sendWelcomeMessages(app, realm, user, realm.settings.welcome_message_custom_text);
  } catch (err) {
    log.error('messages to a new account not sent', { userId: user.id, error: err instanceof Error ? err.stack : String(err) });
  }
  return user;
}

/** The inviter's note from the Notification Bot, when they asked for one, then Welcome Bot's messages. */
async function sendJoinMessages(app: App, realm: RealmInfo, user: User, invitation: Invitation): Promise<void> {
  if (invitation.referredById !== null && invitation.notifyReferrerOnJoin) {
    const referrer = await app.prisma.user.findUnique({ where: { id: invitation.referredById } });
    if (referrer?.isActive) {
      const bot = await systemBot(app, realm, 'notification');
      await sendBotDirectMessage(app, realm, bot, referrer, `${silentMention(user)} accepted your invitation to join ${realm.name}.`);
    }
  }
  await sendWelcomeMessages(app, realm, user, invitation.welcomeMessageCustomText ?? realm.settings.welcome_message_custom_text);
}
