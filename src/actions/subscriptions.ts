// Subscribing and unsubscribing users (creating channels on the way), creating a channel with its
// subscribers (POST /channels/create), and per-user subscription settings: checks first, one
// transaction, then the `stream`/`subscription` events after commit.
import type { App } from '../app.ts';
import { hasRealmPermission, isInGroupSetting } from '../auth/permissions.ts';
import type { Channel, Prisma, Subscription, User } from '../db/generated/client.ts';
import type { ChannelPermission } from '../domain/channel-settings.ts';
import { CHANNEL_PERMISSION_DEFAULTS, MAX_CHANNEL_DESCRIPTION_LENGTH, SUBSCRIPTION_COLORS } from '../domain/channel-settings.ts';
import type { GroupSettingValue } from '../domain/realm-settings.ts';
import { FLAG_BITS, HISTORICAL_FLAGS } from '../domain/message-flags.ts';
import { inheritedNotificationSettings } from '../domain/user-settings.ts';
import { badRequest } from '../errors.ts';
import {
  CHANNEL_PERMISSIONS,
  accessRules,
  canAdministerChannel,
  channelPermission,
  channelStats,
  formatChannel,
  metadataUserIds,
  subscribedChannelIds,
  subscriberIds,
} from '../queries/channels.ts';
import type { GroupInfo, RealmInfo } from '../queries/realms.ts';
import { formatSubscription, subscribersByChannel } from '../queries/subscriptions.ts';
import { userByEmail } from '../queries/users.ts';
import { markDefault } from './default-channels.ts';
import { trackAccess } from './user-access.ts';
import {
  type TopicsPolicy,
  announceVisibilityChange,
  checkChannelName,
  checkFolder,
  checkNameAvailable,
  checkGroupSettings,
  checkPrivacy,
  parseRetention,
  requireOwner,
  checkTopicCreation,
  checkTopicsPolicy,
  cleanDescription,
  sendToUsers,
} from './channels.ts';
import { renderDescription } from '../queries/render-context.ts';
import { atomic, onCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { isAdmin, isGuest, refuseGuests } from '../auth/policy.ts';

/** Zulip's check_color: 3 to 6 hex digits. */
const COLOR_RE = /^#[0-9a-fA-F]{3,6}$/;

export type Principals = number[] | string[];

/** The users named by `principals` (ids or API emails), as Zulip's bulk_access_users_by_id/_by_email: all must be active users of the realm. */
async function resolvePrincipals(app: App, realm: RealmInfo, actor: User, principals: Principals): Promise<User[]> {
  const users: User[] = [];
  for (const p of principals) {
    const user = typeof p === 'number' ? await app.prisma.user.findFirst({ where: { id: p, realmId: realm.id } }) : await userByEmail(app, realm, p, actor);
    if (!user) throw badRequest('No such user');
    if (!user.isActive) throw badRequest('User is deactivated');
    if (!users.some((u) => u.id === user.id)) users.push(user);
  }
  return users;
}

/** Advisory-lock class of channel creation (the second key is the realm id). */
const CHANNEL_CREATION_LOCK = 0x4348414e;

/** Serializes a realm's channel creations, so a name found free stays free until the insert. */
async function lockChannelCreation(app: App, realmId: number): Promise<void> {
  await app.prisma.$executeRawUnsafe('SELECT pg_advisory_xact_lock($1, $2)', CHANNEL_CREATION_LOCK, realmId);
}

async function insertChannel(app: App, realm: RealmInfo, data: ChannelCreateData, name: string, description: string): Promise<Channel> {
  return app.prisma.channel.create({ data: { ...data, name, description, renderedDescription: await renderDescription(app, realm, description) } });
}

export interface NewChannelOptions {
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers?: boolean;
  messageRetentionDays?: string | number;
  topicsPolicy?: TopicsPolicy;
  folderId?: number;
  /** New channels become default channels (administrators only; never private ones). */
  isDefault?: boolean;
  groupSettings: Partial<Record<ChannelPermission, GroupSettingValue>>;
}

export interface SubscribeRequest {
  subscriptions: { name: string; description?: string; color?: string }[];
  principals?: Principals;
  authorizationErrorsFatal: boolean;
  newChannels: NewChannelOptions;
}

type ChannelCreateData = Omit<Prisma.ChannelUncheckedCreateInput, 'name' | 'description' | 'renderedDescription'>;

/** Everything a new channel gets besides its name and description, checked once for all of them. */
async function checkNewChannels(app: App, realm: RealmInfo, user: User, o: NewChannelOptions): Promise<ChannelCreateData> {
  const history = o.inviteOnly ? (o.historyPublicToSubscribers ?? false) : true;
  await checkPrivacy(
    app,
    realm,
    user,
    { inviteOnly: o.inviteOnly, isWebPublic: o.isWebPublic, historyPublicToSubscribers: history },
    { inviteOnly: true, webPublic: true },
  );
  if (o.isDefault && !isAdmin(user)) throw badRequest('Insufficient permission');
  if (o.isDefault && o.inviteOnly) throw badRequest('A default channel cannot be private.');
  const retention = parseRetention(o.messageRetentionDays ?? 'realm_default');
  if (retention !== null) requireOwner(user);
  if (o.topicsPolicy) await checkTopicsPolicy(app, realm, user, o.topicsPolicy);
  if (o.folderId !== undefined) await checkFolder(app, realm, o.folderId);
  const given = await checkGroupSettings(app, realm, user, o.groupSettings);
  // The creator administers the channel unless told otherwise.
  const permissions: Record<string, GroupSettingValue> = { can_administer_channel_group: { direct_members: [user.id], direct_subgroups: [] } };
  for (const setting of CHANNEL_PERMISSIONS) {
    permissions[setting] = given[setting] ?? permissions[setting] ?? realm.systemGroups[CHANNEL_PERMISSION_DEFAULTS[setting]];
  }
  checkTopicCreation(realm, history, permissions.can_create_topic_group!);
  return {
    realmId: realm.id,
    inviteOnly: o.inviteOnly,
    isWebPublic: o.isWebPublic,
    historyPublicToSubscribers: history,
    messageRetentionDays: retention,
    topicsPolicy: o.topicsPolicy ?? 'inherit',
    folderId: o.folderId ?? null,
    creatorId: user.id,
    permissions,
  };
}

/** Whether `user` may subscribe others to `channel` (which they can read). */
export function canAddSubscribers(user: User, channel: Channel, groups: Map<number, GroupInfo>, realm: RealmInfo, realmWide: boolean): boolean {
  if (realmWide || canAdministerChannel(user, channel, groups, realm)) return true;
  return !isGuest(user) && isInGroupSetting(user, channelPermission(realm, channel, 'can_add_subscribers_group'), groups, realm);
}

interface SubscribePlan {
  existing: Channel[];
  unauthorized: Channel[];
  missing: { name: string; description: string }[];
  created: ChannelCreateData | null;
  targets: User[];
}

async function checkSubscribe(app: App, realm: RealmInfo, user: User, req: SubscribeRequest): Promise<SubscribePlan> {
  refuseGuests(user);
  const wanted = new Map<string, { name: string; description: string }>();
  for (const s of req.subscriptions) {
    const name = checkChannelName(s.name);
    const description = cleanDescription(s.description ?? '');
    if (description.length > MAX_CHANNEL_DESCRIPTION_LENGTH) throw badRequest(`description is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`);
    if (s.color !== undefined && !COLOR_RE.test(s.color)) throw badRequest('add.color is not a valid hex color code');
    if (!wanted.has(name.toLowerCase())) wanted.set(name.toLowerCase(), { name, description });
  }
  const findWanted = () =>
    app.prisma.channel.findMany({ where: { realmId: realm.id, OR: [...wanted.values()].map((w) => ({ name: equalsIgnoringCase(w.name) })) } });
  let found = await findWanted();
  if (found.length < wanted.size) {
    // Some will be created: look again under the lock, in case a concurrent request just did.
    await lockChannelCreation(app, realm.id);
    found = await findWanted();
  }
  const missing = [...wanted.entries()].filter(([lower]) => !found.some((c) => c.name.toLowerCase() === lower)).map(([, w]) => w);
  const created = missing.length ? await checkNewChannels(app, realm, user, req.newChannels) : null;

  const [groups, subscribed] = [await app.realms.groups(realm.id), await subscribedChannelIds(app, user.id)];
  const unauthorized = found.filter((c) => !accessRules(user, c, subscribed.has(c.id), groups, realm).content);
  if (unauthorized.length && req.authorizationErrorsFatal) throw badRequest(`Unable to access channel (${unauthorized[0]!.name}).`);
  const existing = found.filter((c) => !unauthorized.includes(c));

  const targets = req.principals?.length ? await resolvePrincipals(app, realm, user, req.principals) : [user];
  if (targets.some((t) => t.id !== user.id)) {
    const realmWide = await hasRealmPermission(app.realms, realm, user, 'can_add_subscribers_group');
    if (existing.some((c) => !canAddSubscribers(user, c, groups, realm, realmWide))) throw badRequest('Insufficient permission');
  }
  return { existing, unauthorized, missing, created, targets };
}

/** Colors for one user's new subscriptions: requested ones, else the first palette colors they do not use yet. */
function pickColors(used: Set<string>, count: number): string[] {
  const free = SUBSCRIPTION_COLORS.filter((c) => !used.has(c));
  return Array.from({ length: count }, (_, i) => free[i] ?? SUBSCRIPTION_COLORS[(used.size + i) % SUBSCRIPTION_COLORS.length]!);
}

async function writeSubscriptions(tx: Prisma.TransactionClient, targets: User[], channels: Channel[], colors: Map<string, string>) {
  // Two requests subscribing the same person at once (themselves and an admin) would both find no
  // row and both insert it: the targets' rows, locked in id order, make the second read the first's.
  await tx.$queryRawUnsafe(
    `SELECT 1 FROM "User" WHERE id = ANY($1::int[]) ORDER BY id FOR NO KEY UPDATE`,
    targets.map((t) => t.id),
  );
  const rows = await tx.subscription.findMany({ where: { userId: { in: targets.map((t) => t.id) } } });
  const added: { user: User; channel: Channel }[] = [];
  const already: { user: User; channel: Channel }[] = [];
  for (const target of targets) {
    const mine = rows.filter((r) => r.userId === target.id);
    const fresh = channels.filter((c) => !mine.some((r) => r.channelId === c.id));
    const palette = pickColors(new Set(mine.map((r) => r.color)), fresh.length);
    await tx.subscription.createMany({
      data: fresh.map((c, i) => ({ userId: target.id, channelId: c.id, color: colors.get(c.name.toLowerCase()) ?? palette[i]! })),
    });
    const inactive = mine.filter((r) => !r.active && channels.some((c) => c.id === r.channelId)).map((r) => r.channelId);
    await tx.subscription.updateMany({ where: { userId: target.id, channelId: { in: inactive } }, data: { active: true } });
    for (const c of channels) {
      const row = mine.find((r) => r.channelId === c.id);
      (row?.active ? already : added).push({ user: target, channel: c });
    }
  }
  return { added, already };
}

/** POST /users/me/subscriptions. */
export async function subscribe(app: App, realm: RealmInfo, user: User, req: SubscribeRequest): Promise<Record<string, unknown>> {
  const { plan, added, already } = await atomic(app, async () => {
    const plan = await checkSubscribe(app, realm, user, req);
    const colors = new Map(req.subscriptions.filter((s) => s.color).map((s) => [s.name.trim().toLowerCase(), s.color!]));
    const created: Channel[] = [];
    for (const m of plan.missing) created.push(await insertChannel(app, realm, plan.created!, m.name, m.description));
    const { added, already } = await addSubscriptions(app, realm, plan.targets, plan.existing, created, colors);
    if (req.newChannels.isDefault) for (const channel of created) await markDefault(app, realm, channel);
    return { plan, added, already };
  });
  const byUser = (pairs: { user: User; channel: Channel }[]) => {
    const out: Record<string, string[]> = {};
    for (const { user: u, channel } of pairs) (out[String(u.id)] ??= []).push(channel.name);
    return out;
  };
  return {
    subscribed: byUser(added),
    already_subscribed: byUser(already),
    ...(req.authorizationErrorsFatal ? {} : { unauthorized: plan.unauthorized.map((c) => c.name) }),
  };
}

/** Zulip's backfill for a new user: this many recent messages of their channels, the newest few unread. */
const HISTORY_MESSAGES = 1000;
const UNREAD_HISTORY_MESSAGES = 20;

/**
 * A new person joins the organization's default channels, as the people already in them see
 * (Zulip's set_up_streams_and_groups_for_new_human_user), and finds their recent messages in
 * their feed (add_new_user_history). Runs in the creating transaction.
 */
export async function joinDefaultChannels(app: App, realm: RealmInfo, user: User): Promise<void> {
  const channels = await app.prisma.channel.findMany({ where: { realmId: realm.id, isArchived: false, defaultFor: { isNot: null } }, orderBy: { id: 'asc' } });
  if (!channels.length) return;
  await addSubscriptions(app, realm, [user], channels);
  const readable = channels.filter((c) => c.historyPublicToSubscribers).map((c) => c.id);
  if (!readable.length) return;
  await app.prisma.$executeRawUnsafe(
    `INSERT INTO "UserMessage" ("userId", "messageId", flags)
     SELECT $1, recent.id, CASE WHEN recent.position > ${UNREAD_HISTORY_MESSAGES} THEN ${HISTORICAL_FLAGS} ELSE ${FLAG_BITS.historical} END
       FROM (SELECT id, row_number() OVER (ORDER BY id DESC) AS position FROM "Message"
              WHERE "realmId" = $2 AND "channelId" = ANY($3::int[]) ORDER BY id DESC LIMIT ${HISTORY_MESSAGES}) recent
     ON CONFLICT DO NOTHING`,
    user.id,
    realm.id,
    readable,
  );
}

/**
 * Subscribes `targets` to `existing` channels and to channels `created` in this transaction
 * (nobody saw those before), with the events; the caller checked that it may. Returns who was
 * newly subscribed where, and who already was.
 */
export async function addSubscriptions(
  app: App,
  realm: RealmInfo,
  targets: User[],
  existing: Channel[],
  created: Channel[] = [],
  colors = new Map<string, string>(),
) {
  const before = new Map<number, Set<number>>();
  for (const c of existing) before.set(c.id, new Set(await metadataUserIds(app, realm, c)));
  // Guests among the new subscribers and those already there may gain access to each other.
  const announceAccess = await trackAccess(app, realm, async () => [...targets.map((t) => t.id), ...(await subscribersOf(app, existing))]);
  const channels = [...existing, ...created];
  const { added, already } = await writeSubscriptions(app.prisma, targets, channels, colors);
  onCommit(() => cacheChanged(app, { cache: 'subscribers', channelIds: added.map((a) => a.channel.id) }));
  await announceSubscriptions(app, realm, channels, before, added);
  await announceAccess();
  return { added, already };
}

/**
 * Events of new subscriptions and channels: the channel to who newly sees it (everyone who sees
 * a new one), the subscriptions to the subscribers, peer_add to the rest.
 */
async function announceSubscriptions(
  app: App,
  realm: RealmInfo,
  channels: Channel[],
  before: Map<number, Set<number>>,
  added: { user: User; channel: Channel }[],
) {
  const touched = channels.filter((c) => !before.has(c.id) || added.some((a) => a.channel.id === c.id));
  if (!touched.length) return;
  const ids = touched.map((c) => c.id);
  // The rows again, with the subscriber counts the writes just changed.
  const [rows, stats, subscribers] = await Promise.all([
    app.prisma.channel.findMany({ where: { id: { in: ids } } }),
    channelStats(app, realm.id, ids),
    subscribersByChannel(app, ids),
  ]);
  const counted = new Map(rows.map((r) => [r.id, r]));
  const format = (c: Channel) => formatChannel(realm, counted.get(c.id)!, stats.get(c.id)!);
  const after = new Map<number, number[]>();
  for (const c of touched) {
    after.set(c.id, await metadataUserIds(app, realm, c));
    const gaining = after.get(c.id)!.filter((id) => !(before.get(c.id)?.has(id) ?? false));
    sendToUsers(realm, gaining, { type: 'stream', op: 'create', streams: [format(c)], for_unarchiving: false });
  }
  const subs = await app.prisma.subscription.findMany({ where: { channelId: { in: ids }, userId: { in: added.map((a) => a.user.id) } } });
  for (const userId of new Set(added.map((a) => a.user.id))) {
    const mine = added.filter((a) => a.user.id === userId).map((a) => a.channel);
    const objects = mine.map((c) => ({
      ...formatSubscription(format(c), subs.find((s) => s.userId === userId && s.channelId === c.id)!),
      subscribers: [...(subscribers.get(c.id) ?? [])],
    }));
    // The queue resolves null notification settings for clients that want values (see event-format).
    const inherited = inheritedNotificationSettings(added.find((a) => a.user.id === userId)!.user.settings);
    sendToUsers(realm, [userId], { type: 'subscription', op: 'add', subscriptions: objects, inherited_notification_settings: inherited });
  }
  for (const c of touched) {
    const altered = added
      .filter((a) => a.channel.id === c.id)
      .map((a) => a.user.id)
      .sort((a, b) => a - b);
    if (altered.length)
      sendToUsers(
        realm,
        after.get(c.id)!.filter((id) => !altered.includes(id)),
        { type: 'subscription', op: 'peer_add', stream_ids: [c.id], user_ids: altered },
      );
  }
}

export interface NewChannel {
  name: string;
  description: string;
  /** Who is subscribed at once; may be nobody. */
  subscribers: number[];
  options: NewChannelOptions;
}

/** POST /channels/create (Zulip's create_channel): a new channel, never an existing one; returns its id. */
export async function createChannel(app: App, realm: RealmInfo, user: User, req: NewChannel): Promise<number> {
  refuseGuests(user);
  const name = checkChannelName(req.name);
  const description = cleanDescription(req.description);
  return atomic(app, async () => {
    await lockChannelCreation(app, realm.id);
    await checkNameAvailable(app, realm, name);
    const data = await checkNewChannels(app, realm, user, req.options);
    const targets = req.subscribers.length ? await resolvePrincipals(app, realm, user, req.subscribers) : [];
    // Guests among the subscribers may gain access to each other.
    const announceAccess = await trackAccess(app, realm, async () => targets.map((t) => t.id));
    const channel = await insertChannel(app, realm, data, name, description);
    const { added } = await writeSubscriptions(app.prisma, targets, [channel], new Map());
    onCommit(() => cacheChanged(app, { cache: 'subscribers', channelIds: [channel.id] }));
    await announceSubscriptions(app, realm, [channel], new Map(), added);
    if (req.options.isDefault) await markDefault(app, realm, channel);
    await announceAccess();
    return channel.id;
  });
}

/** Removing others needs administering every channel, or seeing it and being in can_remove_subscribers_group. */
async function checkCanRemoveOthers(app: App, realm: RealmInfo, user: User, channels: Channel[]): Promise<void> {
  if (isAdmin(user)) return;
  const [groups, subscribed] = [await app.realms.groups(realm.id), await subscribedChannelIds(app, user.id)];
  const allowed = (c: Channel) =>
    canAdministerChannel(user, c, groups, realm) ||
    (accessRules(user, c, subscribed.has(c.id), groups, realm).metadata &&
      isInGroupSetting(user, channelPermission(realm, c, 'can_remove_subscribers_group'), groups, realm));
  if (isGuest(user) || !channels.every(allowed)) throw badRequest('Insufficient permission');
}

/** DELETE /users/me/subscriptions. */
export async function unsubscribe(
  app: App,
  realm: RealmInfo,
  user: User,
  names: string[],
  principals?: Principals,
): Promise<{ removed: string[]; not_removed: string[] }> {
  return atomic(app, () => unsubscribeInTransaction(app, realm, user, names, principals));
}

async function unsubscribeInTransaction(
  app: App,
  realm: RealmInfo,
  user: User,
  names: string[],
  principals?: Principals,
): Promise<{ removed: string[]; not_removed: string[] }> {
  const targets = principals?.length ? await resolvePrincipals(app, realm, user, principals) : [user];
  const wanted = [...new Set(names.map((n) => checkChannelName(n)))];
  const channels = await app.prisma.channel.findMany({ where: { realmId: realm.id, OR: wanted.map((n) => ({ name: equalsIgnoringCase(n) })) } });
  const missing = wanted.filter((n) => !channels.some((c) => c.name.toLowerCase() === n.toLowerCase()));
  if (missing.length) throw badRequest(`Channel(s) (${missing.join(', ')}) do not exist`);
  if (targets.some((t) => t.id !== user.id && !(t.isBot && t.botOwnerId === user.id))) await checkCanRemoveOthers(app, realm, user, channels);

  const active = await app.prisma.subscription.findMany({
    where: { userId: { in: targets.map((t) => t.id) }, channelId: { in: channels.map((c) => c.id) }, active: true },
  });
  const removed = targets.flatMap((t) =>
    channels.filter((c) => active.some((s) => s.userId === t.id && s.channelId === c.id)).map((c) => ({ user: t, channel: c })),
  );
  const notRemoved = targets.flatMap((t) => channels.filter((c) => !active.some((s) => s.userId === t.id && s.channelId === c.id)).map((c) => c.name));
  const touched = channels.filter((c) => removed.some((r) => r.channel.id === c.id));
  const before = new Map<number, Set<number>>();
  for (const c of touched) before.set(c.id, new Set(await metadataUserIds(app, realm, c)));
  // Guests among those leaving and those staying may lose access to each other.
  const announceAccess = await trackAccess(app, realm, () => subscribersOf(app, touched));

  await app.prisma.subscription.updateMany({ where: { id: { in: active.map((s) => s.id) } }, data: { active: false } });
  onCommit(() => cacheChanged(app, { cache: 'subscribers', channelIds: touched.map((c) => c.id) }));

  for (const t of targets) {
    const mine = removed.filter((r) => r.user.id === t.id).map((r) => ({ name: r.channel.name, stream_id: r.channel.id }));
    if (mine.length) sendToUsers(realm, [t.id], { type: 'subscription', op: 'remove', subscriptions: mine });
  }
  for (const c of touched) {
    const after = await metadataUserIds(app, realm, c);
    await announceVisibilityChange(app, realm, c, before.get(c.id)!, after);
    const altered = removed
      .filter((r) => r.channel.id === c.id)
      .map((r) => r.user.id)
      .sort((a, b) => a - b);
    sendToUsers(
      realm,
      after.filter((id) => !altered.includes(id)),
      { type: 'subscription', op: 'peer_remove', stream_ids: [c.id], user_ids: altered },
    );
  }
  await announceAccess();
  return { removed: removed.map((r) => r.channel.name), not_removed: notRemoved };
}

/** The subscribers of `channels`, as their actors hold them. */
async function subscribersOf(app: App, channels: Channel[]): Promise<number[]> {
  return (await Promise.all(channels.map((c) => subscriberIds(app, c.id)))).flat();
}

const BOOLEAN_PROPERTIES = new Set([
  'in_home_view',
  'is_muted',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'pin_to_top',
  'wildcard_mentions_notify',
]);
const COLUMNS: Record<string, keyof Subscription> = {
  color: 'color',
  is_muted: 'isMuted',
  pin_to_top: 'pinToTop',
  desktop_notifications: 'desktopNotifications',
  audible_notifications: 'audibleNotifications',
  push_notifications: 'pushNotifications',
  email_notifications: 'emailNotifications',
  wildcard_mentions_notify: 'wildcardMentionsNotify',
};

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

/** Zulip's SubscriptionPropertyChangeRequest: the property must exist and the value fit it. */
function checkPropertyValue(property: string, value: unknown): string | boolean {
  if (property === 'color') {
    if (typeof value !== 'string' || !COLOR_RE.test(value)) throw badRequest('color is not a valid hex color code');
    return value;
  }
  if (!BOOLEAN_PROPERTIES.has(property)) throw badRequest(`Unknown subscription property: ${property}`);
  if (typeof value !== 'boolean') throw badRequest(`${property} is not a boolean`);
  return value;
}

/**
 * POST /users/me/subscriptions/properties and PATCH /users/me/subscriptions/{id}: every change is
 * validated, then every channel checked, before anything is written, all in one transaction.
 */
export async function updateSubscriptionProperties(app: App, realm: RealmInfo, user: User, changes: PropertyChange[]): Promise<void> {
  const values = changes.map((c) => checkPropertyValue(c.property, c.value));
  await atomic(app, async () => {
    const groups = await app.realms.groups(realm.id);
    const subscribed = await subscribedChannelIds(app, user.id);
    const writes: { channelId: number; property: string; value: string | boolean }[] = [];
    for (const [i, { stream_id, property }] of changes.entries()) {
      const channel = await app.prisma.channel.findFirst({ where: { id: stream_id, realmId: realm.id } });
      if (!channel || !accessRules(user, channel, subscribed.has(channel.id), groups, realm).content) throw badRequest('Invalid channel ID');
      if (!subscribed.has(channel.id)) throw badRequest(`Not subscribed to channel ID ${stream_id}`);
      // in_home_view is the old, inverted name of is_muted.
      writes.push(
        property === 'in_home_view'
          ? { channelId: channel.id, property: 'is_muted', value: !values[i] }
          : { channelId: channel.id, property, value: values[i]! },
      );
    }
    for (const w of writes) {
      await app.prisma.subscription.update({
        where: { userId_channelId: { userId: user.id, channelId: w.channelId } },
        data: { [COLUMNS[w.property]!]: w.value },
      });
      // Zulip still sends the legacy in_home_view event first, for clients that know only it.
      if (w.property === 'is_muted')
        sendToUsers(realm, [user.id], { type: 'subscription', op: 'update', property: 'in_home_view', value: !w.value, stream_id: w.channelId });
      sendToUsers(realm, [user.id], { type: 'subscription', op: 'update', property: w.property, value: w.value, stream_id: w.channelId });
    }
  });
}

/** PATCH /users/me/subscriptions (Zulip's update_subscriptions_backend): subscribe and unsubscribe in one transaction. */
export async function updateSubscriptions(
  app: App,
  realm: RealmInfo,
  user: User,
  add: SubscribeRequest['subscriptions'],
  remove: string[],
): Promise<Record<string, unknown>> {
  if (add.length === 0 && remove.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  return atomic(app, async () => {
    const subscribed = await subscribe(app, realm, user, {
      subscriptions: add,
      authorizationErrorsFatal: true,
      newChannels: { inviteOnly: false, isWebPublic: false, groupSettings: {} },
    });
    return { ...subscribed, ...(await unsubscribe(app, realm, user, remove)) };
  });
}
