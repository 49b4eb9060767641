// Accounts of the LDAP directory (src/auth/ldap.ts): logging in with a directory username or
// address and password (Zulip's ZulipLDAPAuthBackend: the account is made on first login where the
// organization's domains allow, and brought in line with its entry at each), and sync-ldap
// (Zulip's sync_ldap_user_data: every account of the organization brought in line).
import type { App } from '../app.ts';
import { DirectoryUnavailable, type DirectoryEntry, type LdapDirectory } from '../auth/ldap.ts';
import type { User } from '../db/generated/client.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { ApiError, realmDeactivated, userDeactivated } from '../errors.ts';
import type { Log } from '../log.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { setAvatarFromDirectory } from './avatars.ts';
import { setProfileDataFromDirectory } from './profile-fields.ts';
import { registerExternalUser } from './registration.ts';
import { applyDirectoryState } from './user-admin.ts';

/** What the directory refused or could not give; the login answers as for a wrong password. */
export class LdapRefusal extends Error {}

/** The name, avatar and custom profile fields of the entry on an active account (Zulip's populate_user). */
async function syncProfile(app: App, realm: RealmInfo, ldap: LdapDirectory, user: User, entry: DirectoryEntry, log: Log): Promise<User> {
  const synced = await applyDirectoryState(app, realm, user.id, { fullName: ldap.fullName(entry) ?? undefined });
  const avatar = ldap.avatar(entry);
  try {
    if (avatar) await setAvatarFromDirectory(app, realm, synced, avatar);
  } catch (err) {
    // As Zulip's: a picture that is not an image is logged and left out.
    if (!(err instanceof ApiError)) throw err;
    log.warn('LDAP avatar not usable', { userId: user.id, error: err.message });
  }
  await setProfileDataFromDirectory(app, realm, synced, ldap.profileValues(entry));
  return app.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
}

/**
 * The account whose directory entry `login` names and `password` opens, brought in line with the
 * entry; null when the directory does not know the login or the password is not the entry's (the
 * organization's own passwords may then be tried). A disabled entry deactivates the account.
 */
export async function ldapLogin(app: App, realm: RealmInfo, ldap: LdapDirectory, login: string, password: string, log: Log): Promise<User | null> {
  let entry: DirectoryEntry | null;
  try {
    entry = await ldap.findUser(login);
    if (!entry || !(await ldap.checkPassword(entry, password))) return null;
  } catch (err) {
    if (!(err instanceof DirectoryUnavailable)) throw err;
    log.warn('LDAP directory unavailable', { error: err.message });
    return null;
  }
  if (realm.deactivated) throw realmDeactivated();
  const email = ldap.emailOf(entry, login);
  if (!email) throw new LdapRefusal(`the entry ${entry.dn} has no email address`);
  const user = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(email) } });
  if (user?.isBot) throw new LdapRefusal(`${email} is a bot`);
  if (ldap.isDisabled(entry)) {
    if (user?.isActive) {
      await applyDirectoryState(app, realm, user.id, { active: false });
      log.info('LDAP: deactivated a user disabled in the directory', { userId: user.id });
    }
    throw userDeactivated();
  }
  if (user && !user.isActive) throw userDeactivated();
  if (user) return syncProfile(app, realm, ldap, user, entry, log);
  const fullName = ldap.fullName(entry);
  if (!fullName) throw new LdapRefusal(`the entry ${entry.dn} has no name`);
  let created: User;
  try {
    created = await registerExternalUser(app, realm, email, fullName, log, 'directory');
  } catch (err) {
    if (err instanceof ApiError) throw new LdapRefusal(`no account made for ${email}: ${err.message}`);
    throw err;
  }
  return syncProfile(app, realm, ldap, created, entry, log);
}

export interface LdapSyncReport {
  updated: string[];
  deactivated: string[];
  reactivated: string[];
  not_found: string[];
  failed: { email: string; error: string }[];
}

/**
 * sync-ldap: every human account of the organization brought in line with its entry (name,
 * avatar, custom profile fields, deactivated or reactivated as the directory says); one the
 * directory lacks is deactivated only with LDAP_DEACTIVATE_NON_MATCHING_USERS.
 */
export async function syncLdapUsers(app: App, realm: RealmInfo, ldap: LdapDirectory, log: Log): Promise<LdapSyncReport> {
  const report: LdapSyncReport = { updated: [], deactivated: [], reactivated: [], not_found: [], failed: [] };
  const users = await app.prisma.user.findMany({ where: { realmId: realm.id, isBot: false }, orderBy: { id: 'asc' } });
  for (const user of users) {
    const email = user.deliveryEmail;
    try {
      const entry = await ldap.findUser(email);
      if (!entry) {
        if (app.config.LDAP_DEACTIVATE_NON_MATCHING_USERS && user.isActive) {
          await applyDirectoryState(app, realm, user.id, { active: false });
          report.deactivated.push(email);
        } else report.not_found.push(email);
        continue;
      }
      if (ldap.isDisabled(entry)) {
        if (user.isActive) {
          await applyDirectoryState(app, realm, user.id, { active: false });
          report.deactivated.push(email);
        }
        continue;
      }
      if (!user.isActive) {
        // Only a directory that says whether an account is disabled brings one back.
        if (!ldap.tracksDisabled) continue;
        await applyDirectoryState(app, realm, user.id, { active: true });
        report.reactivated.push(email);
      }
      await syncProfile(app, realm, ldap, user, entry, log);
      report.updated.push(email);
    } catch (err) {
      if (!(err instanceof ApiError) && !(err instanceof DirectoryUnavailable)) throw err;
      report.failed.push({ email, error: err.message });
    }
  }
  return report;
}
