// PATCH /realm (Zulip's update_realm): organization settings and realm permissions, checked
// together, written in one transaction, then announced to every active user; deactivating and
// reactivating the organization.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import { checkMethodsChange, methodsForClients, realmMethods } from '../auth/methods.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import {
  type GroupSettingChange,
  type GroupSettingValue,
  REALM_PERMISSION_DEFAULTS,
  REALM_PERMISSION_RULES,
  type RealmPermission,
  type RealmSettings,
} from '../domain/realm-settings.ts';
import { Role } from '../domain/roles.ts';
import { LANGUAGE_NAMES } from '../domain/user-settings.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { MAX_DEACTIVATED_REALM_DELETION_DAYS, MIN_DEACTIVATED_REALM_DELETION_DAYS } from '../queries/server-state.ts';
import { checkGroupSetting, normalizeGroupSetting, sameGroupSetting } from './group-settings.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { realmChanged } from '../cluster/cache-sync.ts';
import { EVENT_SCHEMAS, type ChatEvent } from '../events/schemas.ts';

/** One event of the current transaction to every active user, on commit (`opts` as in sendOnCommit). */
export async function sendToRealm(app: App, realm: RealmInfo, event: ChatEvent, opts: { alwaysDeliver?: boolean } = {}): Promise<void> {
  const users = await app.prisma.user.findMany({
    where: { realmId: realm.id, isActive: true, isSystemBot: false },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  sendOnCommit({ realmId: realm.id, userIds: users.map((u) => u.id), event }, opts);
}

/** Settings only an owner may change (Zulip raises OrganizationOwnerRequiredError for them). */
const OWNER_ONLY = new Set<string>([
  'invite_required',
  'authentication_methods',
  'emails_restricted_to_domains',
  'waiting_period_threshold',
  'message_retention_days',
  'create_multiuse_invite_group',
  'can_create_groups',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
]);
const TIME_LIMITS = new Set<string>([
  'message_content_edit_limit_seconds',
  'message_content_delete_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
]);
const VIDEO_CHAT_PROVIDERS = [0, 1];
const GIPHY_RATINGS = [0, 1, 2, 3, 4, 5];
const ORG_TYPES = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];
const TOPICS_POLICY_VALUES = { allow_empty_topic: 2, disable_empty_topic: 3 } as const;
const MAX_JITSI_URL_LENGTH = 200;

export interface RealmUpdate {
  name?: string;
  description?: string;
  /** Settings as the client sent them; time limits and retention may be strings such as "unlimited". */
  settings: Partial<Record<keyof RealmSettings, unknown>>;
  permissions: Partial<Record<RealmPermission, GroupSettingChange>>;
}

const badValue = (name: string, value: unknown) =>
  new ApiError(`Bad value for '${name}': ${value}`, 'REQUEST_VARIABLE_INVALID', 400, { var_name: name, bad_value: value });

/** One setting's value as stored, after Zulip's checks for it. */
function parseSetting(name: string, value: unknown): unknown {
  if (TIME_LIMITS.has(name)) {
    if (value === 'unlimited') return null;
    if (typeof value === 'number' && value > 0) return value;
    throw badValue(name, value);
  }
  switch (name) {
    case 'message_retention_days':
      if (value === 'unlimited') return -1;
      if (typeof value === 'number' && value > 0) return value;
      throw badValue(name, value);
    case 'default_language':
      if (!(String(value) in LANGUAGE_NAMES)) throw badRequest(`Invalid language '${value}'`);
      return value;
    case 'video_chat_provider':
      if (!VIDEO_CHAT_PROVIDERS.includes(value as number)) throw badRequest(`Invalid video_chat_provider ${value}`);
      return value;
    case 'giphy_rating':
      if (!GIPHY_RATINGS.includes(value as number)) throw badRequest(`Invalid giphy_rating ${value}`);
      return value;
    case 'org_type':
      if (!ORG_TYPES.includes(value as number)) throw badRequest('Invalid org_type');
      return value;
    case 'topics_policy':
      if (!(String(value) in TOPICS_POLICY_VALUES)) throw badRequest('Invalid topics_policy');
      return value;
    case 'jitsi_server_url':
      return parseJitsiUrl(value as string);
    default:
      return value;
  }
}

function parseJitsiUrl(value: string): string | null {
  if (value === 'default') return null;
  if (value.length > MAX_JITSI_URL_LENGTH || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw badRequest('jitsi_server_url is not an allowed_type');
  }
  return value;
}

/** A channel for message reports: an active private channel of the realm, or any negative id for none. */
async function checkModerationChannel(app: App, realm: RealmInfo, id: number): Promise<number> {
  if (id < 0) return -1;
  const channel = await app.prisma.channel.findFirst({ where: { id, realmId: realm.id, isArchived: false } });
  if (!channel) throw badRequest('Invalid channel ID');
  if (!channel.inviteOnly) throw badRequest('Moderation request channel must be private.');
  return id;
}

/** Realm settings that name a channel, with "none" as their value. */
const CHANNEL_SETTINGS = { moderation_request_channel_id: -1 } as const;

/**
 * Inside an archiving transaction: settings naming the archived channel go back to "none", and
 * every user hears of it in one update_dict event (Zulip's maybe_set_moderation_or_announcement_channels_none).
 */
export async function unsetChannelSettings(app: App, realm: RealmInfo, channelId: number): Promise<void> {
  const cleared = Object.fromEntries(Object.entries(CHANNEL_SETTINGS).filter(([name]) => realm.settings[name as keyof RealmSettings] === channelId));
  if (Object.keys(cleared).length === 0) return;
  await writeSettings(app, realm.id, cleared);
  await sendToRealm(app, realm, { type: 'realm', op: 'update_dict', property: 'default', data: cleared }, { alwaysDeliver: true });
}

/** Merges settings into the realm row; the realm cache is reloaded after the commit. */
async function writeSettings(app: App, realmId: number, settings: Record<string, unknown>, data: Prisma.RealmUpdateInput = {}): Promise<void> {
  const row = await app.prisma.realm.findUniqueOrThrow({ where: { id: realmId }, select: { settings: true } });
  await app.prisma.realm.update({
    where: { id: realmId },
    data: { ...data, settings: { ...(row.settings as object), ...settings } as Prisma.InputJsonObject },
  });
  onCommit(async () => {
    await realmChanged(app, realmId);
  });
}

/** What the response reports for a changed setting: Zulip answers "updated" for strings. */
function responseValue(name: string, value: unknown): unknown {
  // Zulip's response serializes the topics policy enum by its number.
  if (name === 'topics_policy') return TOPICS_POLICY_VALUES[value as keyof typeof TOPICS_POLICY_VALUES];
  return typeof value === 'string' ? 'updated' : value;
}

/** The event for one changed property: `update`, or `update_dict` for those Zulip moved there. */
function propertyEvent(name: string, value: unknown): ChatEvent {
  const dict = (data: Record<string, unknown>): ChatEvent => ({ type: 'realm', op: 'update_dict', property: 'default', data });
  switch (name) {
    case 'allow_message_editing':
    case 'message_content_edit_limit_seconds':
      return dict({ [name]: value });
    case 'authentication_methods':
      return dict({ authentication_methods: methodsForClients(value as Record<string, boolean>) });
    case 'topics_policy':
      return dict({ topics_policy: value, mandatory_topics: value === 'disable_empty_topic' });
    // The deprecated boolean reaches clients as the policy that replaced it (feature level 358);
    // register derives realm_allow_edit_history from that policy.
    case 'allow_edit_history':
      return { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: value ? 'all' : 'none' };
    default:
      return { type: 'realm', op: 'update', property: name, value: EVENT_SCHEMAS['realm/update'].shape.value.parse(value) };
  }
}

interface RealmChange {
  row: { name?: string; description?: string };
  settings: Record<string, unknown>;
  permissions: Partial<Record<RealmPermission, GroupSettingValue>>;
}

/** Every check of the request, before anything is written; returns only what really changes. */
async function planRealmUpdate(app: App, realm: RealmInfo, user: User, u: RealmUpdate): Promise<RealmChange> {
  requireRole(user, Role.ADMINISTRATOR);
  const requested = [...Object.keys(u.settings), ...Object.keys(u.permissions)];
  if (requested.some((k) => OWNER_ONLY.has(k))) requireRole(user, Role.OWNER);
  const change: RealmChange = { row: {}, settings: {}, permissions: {} };
  for (const [name, raw] of Object.entries(u.settings)) {
    if (name === 'authentication_methods') {
      const sent = raw as Record<string, boolean>;
      const after = await checkMethodsChange(app, realm, user, sent);
      // Stored whole, so that a method configured later starts on; answered as sent, as Zulip's.
      if (JSON.stringify(after) !== JSON.stringify(realmMethods(app, realm))) change.settings[name] = after;
      continue;
    }
    if (name === 'moderation_request_channel_id') {
      const id = await checkModerationChannel(app, realm, raw as number);
      // Zulip announces "disabled" again even when it already was.
      if (id !== realm.settings.moderation_request_channel_id || id === -1) change.settings[name] = id;
      continue;
    }
    const value = parseSetting(name, raw);
    if (value !== realm.settings[name as keyof RealmSettings]) change.settings[name] = value;
  }
  if (u.name !== undefined && u.name !== realm.name) change.row.name = u.name;
  if (u.description !== undefined && u.description !== realm.description) change.row.description = u.description;
  const groups = await app.realms.groups(realm.id);
  for (const [setting, c] of Object.entries(u.permissions) as [RealmPermission, GroupSettingChange][]) {
    const current = realm.permissions[setting];
    if (c.old !== undefined && !sameGroupSetting(normalizeGroupSetting(realm, c.old), current))
      throw badRequest("'old' value does not match the expected value.");
    if (sameGroupSetting(normalizeGroupSetting(realm, c.new), current)) continue;
    change.permissions[setting] = await checkGroupSetting(app.prisma, realm, groups, setting, c.new, REALM_PERMISSION_RULES[setting]);
  }
  return change;
}

/** PATCH /realm; returns the changed settings as Zulip's response reports them. */
export async function updateRealm(app: App, realm: RealmInfo, user: User, u: RealmUpdate): Promise<Record<string, unknown>> {
  return atomic(app, async () => {
    // Checks compare with the stored settings ('old' values): the row is held until the commit.
    await app.prisma.$queryRaw`SELECT id FROM "Realm" WHERE id = ${realm.id} FOR UPDATE`;
    const current = (await app.realms.reload(realm.id))!;
    const change = await planRealmUpdate(app, current, user, u);
    const changedSettings = Object.entries({ ...change.row, ...change.settings });
    const changedPermissions = Object.entries(change.permissions);
    if (changedSettings.length + changedPermissions.length === 0) return {};
    const row = await app.prisma.realm.findUniqueOrThrow({ where: { id: realm.id }, select: { permissions: true } });
    await writeSettings(app, realm.id, change.settings, {
      ...change.row,
      permissions: { ...(row.permissions as object), ...change.permissions } as Prisma.InputJsonObject,
    });
    // Clients read the organization's settings through the realm cache, hence alwaysDeliver.
    for (const [name, value] of changedSettings) await sendToRealm(app, realm, propertyEvent(name, value), { alwaysDeliver: true });
    for (const [setting, value] of changedPermissions) {
      await sendToRealm(app, realm, { type: 'realm', op: 'update_dict', property: 'default', data: { [setting]: value } }, { alwaysDeliver: true });
    }
    return {
      ...Object.fromEntries(
        changedSettings.map(([name, value]) => [name, name === 'authentication_methods' ? u.settings.authentication_methods : responseValue(name, value)]),
      ),
      ...change.permissions,
    };
  });
}

/** Every realm permission setting, for the parameter list of PATCH /realm. */
export const REALM_PERMISSIONS = Object.keys(REALM_PERMISSION_DEFAULTS) as RealmPermission[];

/** Zulip's bounds on when a deactivated organization's data may be deleted (null: never). */
function checkDeletionDelay(days: number | null): void {
  const max = MAX_DEACTIVATED_REALM_DELETION_DAYS;
  const min = MIN_DEACTIVATED_REALM_DELETION_DAYS;
  if (max !== null && (days === null || days > max)) throw badRequest(`Data deletion time must be at most ${max} days in the future.`);
  if (min !== null && days !== null && days < min) throw badRequest(`Data deletion time must be at least ${min} days in the future.`);
}

/**
 * POST /realm/deactivate (Zulip's deactivate_realm and do_deactivate_realm): owners only. The
 * users stay as they are, so a reactivation loses nothing, but none can authenticate any more;
 * each queue of the organization gets the `realm` deactivated event as its last (the queue
 * registry ends it once delivered), which completes every parked long-poll. No data is ever
 * deleted here, so `deletionDelayDays` is only checked against the bounds register announces.
 */
export async function deactivateRealm(app: App, realm: RealmInfo, actor: User, deletionDelayDays: number | null): Promise<void> {
  requireRole(actor, Role.OWNER);
  checkDeletionDelay(deletionDelayDays);
  await atomic(app, async () => {
    const { count } = await app.prisma.realm.updateMany({ where: { id: realm.id, deactivated: false }, data: { deactivated: true } });
    if (count === 0) return;
    onCommit(async () => {
      await realmChanged(app, realm.id);
    });
    await sendToRealm(app, realm, { type: 'realm', op: 'deactivated', realm_id: realm.id }, { alwaysDeliver: true });
  });
}

/** The CLI's reactivate-realm (Zulip's do_reactivate_realm): its users can authenticate again. */
export async function reactivateRealm(app: App, realm: RealmInfo): Promise<void> {
  await app.prisma.realm.update({ where: { id: realm.id }, data: { deactivated: false } });
  await realmChanged(app, realm.id);
}
