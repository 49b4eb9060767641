// PATCH /settings (Zulip's json_change_settings and zerver/actions/user_settings.py): a user's own
// name, password, time zone and personal settings. Everything is checked first, written in one
// transaction under a lock on the user row, and then each change is announced in Zulip's order:
// the name to everyone, each setting to the user's own queues, and what a change of time zone or
// email visibility means for what others see of the user.
import type { App } from '../app.ts';
import { endOtherSessions } from '../auth/web-sessions.ts';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword } from '../auth/passwords.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { EMAIL_VISIBILITY } from '../domain/realm-settings.ts';
import { LANGUAGE_NAMES, NOTIFICATION_SOUNDS, userSettingsSchema, type UserSettingName, type UserSettings } from '../domain/user-settings.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { whoCanAccess } from '../queries/user-access.ts';
import { apiEmail, avatarChange, canSeeEmail, emailVisibility, humanAdminIds, realmViewers, type Viewer } from '../queries/users.ts';
import { atomic, lockUser, onCommit, sendOnCommit } from './transaction.ts';
import { checkFullName, checkNameAvailable } from './users.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { ChatEvent } from '../events/schemas.ts';
import { isAdmin } from '../auth/policy.ts';

const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

export interface SettingsChange {
  fullName?: string;
  oldPassword?: string;
  newPassword?: string;
  timezone?: string;
  /** The browser session that asks (it stays logged in through a password change; the user's others end). */
  sessionId?: string | null;
  /** Validated values of personal settings, in the order they are to be applied and announced. */
  settings: Partial<UserSettings>;
}

/** Zulip's check_settings_values: the checks its parameter types cannot express. */
export function checkSettingValues(settings: Partial<UserSettings>): void {
  const sound = settings.notification_sound;
  if (sound !== undefined && sound !== 'none' && !(NOTIFICATION_SOUNDS as readonly string[]).includes(sound)) {
    throw badRequest(`Invalid notification sound '${sound}'`);
  }
  const period = settings.email_notifications_batching_period_seconds;
  if (period !== undefined && (period <= 0 || period > MAX_BATCHING_PERIOD_SECONDS)) throw badRequest(`Invalid email batching period: ${period} seconds`);
}

async function checkNewPassword(user: User, oldPassword: string | undefined, newPassword: string): Promise<void> {
  if (!(await verifyPassword(oldPassword ?? '', user.passwordHash))) throw badRequest('Wrong password!');
  const length = [...newPassword].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) throw badRequest('New password is too weak!');
}

/** A new full name, or undefined when there is none to apply (unchanged, or silently refused as Zulip does). */
async function checkNameChange(tx: Prisma.TransactionClient, realm: RealmInfo, user: User, raw: string | undefined): Promise<string | undefined> {
  if (raw === undefined || raw === user.fullName) return undefined;
  // Zulip ignores the change without an error: clients never offer it, so only API probing gets here.
  if (realm.settings.name_changes_disabled && !isAdmin(user)) return undefined;
  const name = checkFullName(raw);
  await checkNameAvailable(tx, realm, name, user.id);
  return name === user.fullName ? undefined : name;
}

/** The settings whose value really changes, compared with what applies now (defaults included). */
function changedSettings(user: User, requested: Partial<UserSettings>): Partial<UserSettings> {
  const current: Record<string, unknown> = userSettingsSchema.parse(user.settings ?? {});
  return Object.fromEntries(Object.entries(requested).filter(([name, value]) => value !== undefined && current[name] !== value));
}

export async function updateSettings(app: App, realm: RealmInfo, user: User, change: SettingsChange): Promise<void> {
  if (user.isBot) throw badRequest('This endpoint does not accept bot requests.');
  checkSettingValues(change.settings);
  if (change.newPassword !== undefined) await checkNewPassword(user, change.oldPassword, change.newPassword);
  const passwordHash = change.newPassword !== undefined ? await hashPassword(change.newPassword, app.config.PASSWORD_HASH_COST) : undefined;
  await atomic(app, async () => {
    const tx = app.prisma;
    // The settings are one JSON value: lock the row so concurrent changes cannot drop each other.
    await lockUser(app, user.id);
    const before = await tx.user.findUniqueOrThrow({ where: { id: user.id } });
    const fullName = await checkNameChange(tx, realm, before, change.fullName);
    const settings = changedSettings(before, change.settings);
    const timezone = change.timezone !== undefined && change.timezone !== before.timezone ? change.timezone : undefined;
    const after = await tx.user.update({
      where: { id: user.id },
      data: { fullName, timezone, passwordHash, settings: { ...(before.settings as Prisma.JsonObject), ...settings } },
    });
    if (passwordHash !== undefined) await endOtherSessions(tx, user.id, change.sessionId ?? null);
    // Turning synchronization off forgets the stored drafts, without events: the clients keep theirs.
    if (settings.enable_drafts_synchronization === false) await tx.draft.deleteMany({ where: { userId: user.id } });
    onCommit(() => cacheChanged(app, { cache: 'user', userId: user.id }));
    await announce(app, realm, before, after, settings);
  });
}

async function announce(app: App, realm: RealmInfo, before: User, after: User, settings: Partial<UserSettings>): Promise<void> {
  // News about the user reaches only who can access them (can_access_all_users_group).
  const [all, canAccess] = await Promise.all([realmViewers(app, realm.id), whoCanAccess(app, realm, after)]);
  const viewers = all.filter(canAccess);
  const everyone = viewers.map((v) => v.id);
  // Users' settings reach the register state through the authentication cache, so without the
  // snapshot filter, as these always went: applying one twice changes nothing.
  const send = (userIds: readonly number[], ...events: ChatEvent[]) => {
    for (const event of events) sendOnCommit({ realmId: realm.id, userIds, event }, { alwaysDeliver: true });
  };
  if (after.fullName !== before.fullName) send(everyone, { type: 'realm_user', op: 'update', person: { user_id: after.id, full_name: after.fullName } });
  const own = (property: string, value: unknown) => {
    const language = property === 'default_language' && typeof value === 'string' ? { language_name: LANGUAGE_NAMES[value] } : {};
    send([after.id], { type: 'user_settings', op: 'update', property, value, ...language });
  };
  for (const [property, value] of Object.entries(settings) as [UserSettingName, unknown][]) {
    own(property, value);
    if (property === 'email_address_visibility') announceEmailVisibility(app, realm, before, after, viewers, send);
    if (property === 'allow_private_data_export' && typeof value === 'boolean') {
      send(await humanAdminIds(app, realm.id), { type: 'realm_export_consent', user_id: after.id, consented: value });
    }
  }
  if (after.timezone !== before.timezone) {
    own('timezone', after.timezone);
    send(everyone, { type: 'realm_user', op: 'update', person: { email: apiEmail(app, realm, after), user_id: after.id, timezone: after.timezone } });
  }
}

/**
 * Zulip's send_delivery_email_update_events: those who gain or lose sight of the real address
 * learn it (or `null`); a change to or from "everyone" also changes the address all clients use.
 */
function announceEmailVisibility(
  app: App,
  realm: RealmInfo,
  before: User,
  after: User,
  viewers: Viewer[],
  send: (userIds: readonly number[], event: ChatEvent) => void,
): void {
  const gained = viewers.filter((v) => !canSeeEmail(before, v) && canSeeEmail(after, v)).map((v) => v.id);
  const lost = viewers.filter((v) => canSeeEmail(before, v) && !canSeeEmail(after, v)).map((v) => v.id);
  send(gained, { type: 'realm_user', op: 'update', person: { user_id: after.id, delivery_email: after.deliveryEmail } });
  send(lost, { type: 'realm_user', op: 'update', person: { user_id: after.id, delivery_email: null } });
  if (![emailVisibility(before), emailVisibility(after)].includes(EMAIL_VISIBILITY.EVERYONE)) return;
  const everyone = viewers.map((v) => v.id);
  send(everyone, { type: 'realm_user', op: 'update', person: { user_id: after.id, new_email: apiEmail(app, realm, after) } });
  send(everyone, {
    type: 'realm_user',
    op: 'update',
    person: avatarChange(after),
  });
}
