// Channels and who may see them. Every endpoint that touches a channel or its messages asks here,
// so the rules (public/private, web-public, guests, protected history, archived) live in one place.
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { CHANNEL_PERMISSION_DEFAULTS, type ChannelPermission } from '../domain/channel-settings.ts';
import type { GroupSettingValue } from '../domain/realm-settings.ts';
import { isInGroupSetting, type PermissionSubject } from '../auth/permissions.ts';
import { badRequest } from '../errors.ts';
import { currentTransaction, inTransaction } from '../db/transaction.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import type { GroupInfo, RealmInfo } from './realms.ts';
import { defaultChannelIds } from './default-channels.ts';
import type { z } from 'zod';
import type { channel as channelSchema } from '../events/schemas.ts';
import { recordOf } from '../domain/records.ts';
import { isAdmin, isGuest } from '../auth/policy.ts';

export const CHANNEL_PERMISSIONS = Object.keys(CHANNEL_PERMISSION_DEFAULTS) as ChannelPermission[];

export function channelPermission(realm: RealmInfo, channel: Channel, setting: ChannelPermission): GroupSettingValue {
  const stored = (channel.permissions ?? {}) as Partial<Record<ChannelPermission, GroupSettingValue>>;
  return stored[setting] ?? realm.systemGroups[CHANNEL_PERMISSION_DEFAULTS[setting]];
}

export async function userHasChannelPermission(app: App, realm: RealmInfo, user: User, channel: Channel, setting: ChannelPermission): Promise<boolean> {
  return isInGroupSetting(user, channelPermission(realm, channel, setting), await app.realms.groups(realm.id), realm);
}

export async function isSubscribed(app: App, userId: number, channelId: number): Promise<boolean> {
  const sub = await app.prisma.subscription.findUnique({ where: { userId_channelId: { userId, channelId } }, select: { active: true } });
  return sub?.active ?? false;
}

/**
 * Active subscribers who are active users: the recipients of the channel's messages (held by its
 * actor). Inside a transaction, as that transaction sees them: it may be the one changing them.
 */
export function subscriberIds(app: App, channelId: number): Promise<readonly number[]> {
  if (inTransaction()) return loadSubscriberIds(app, channelId);
  return app.channels.subscribers(channelId, () => loadSubscriberIds(app, channelId));
}

async function loadSubscriberIds(app: App, channelId: number): Promise<number[]> {
  // One array value instead of a row per subscriber: every channel message reads this, and with
  // a thousand subscribers the rows cost twice as much to decode (Prisma and pg) as to find.
  const [row] = await app.prisma.$queryRawUnsafe<{ ids: number[] | null }[]>(
    'SELECT array_agg(s."userId" ORDER BY s."userId") AS ids FROM "Subscription" s JOIN "User" u ON u.id = s."userId" WHERE s."channelId" = $1 AND s.active AND u."isActive"',
    channelId,
  );
  return row?.ids ?? [];
}

export interface ChannelAccess {
  channel: Channel;
  subscribed: boolean;
  /** May read the channel's messages (subject to protected history for private channels). */
  content: boolean;
  /** May know the channel exists and see its settings and subscribers. */
  metadata: boolean;
}

/**
 * Zulip's access rules: everyone reads web-public channels; members read public channels without
 * subscribing; guests only what they are subscribed to; private channels' content only
 * subscribers and those who may subscribe (themselves or others), their metadata also those who
 * administer the channel and organization administrators. The group permissions never count for
 * guests (those settings cannot include them).
 */
export function accessRules(
  user: PermissionSubject,
  channel: Channel,
  subscribed: boolean,
  groups: Map<number, GroupInfo>,
  realm: RealmInfo,
): { content: boolean; metadata: boolean } {
  if (channel.isWebPublic || subscribed) return { content: true, metadata: true };
  if (isGuest(user)) return { content: false, metadata: false };
  if (!channel.inviteOnly) return { content: true, metadata: true };
  const has = (setting: ChannelPermission) => isInGroupSetting(user, channelPermission(realm, channel, setting), groups, realm);
  const content = has('can_add_subscribers_group') || has('can_subscribe_group');
  return { content, metadata: content || isAdmin(user) || has('can_administer_channel_group') };
}

/**
 * Whether the user actively subscribes to the channel. Outside a transaction an active user's
 * answer comes from the subscribers the channel actors hold for the send path: no statement.
 */
async function subscribedNow(app: App, user: User, channelId: number): Promise<boolean> {
  if (inTransaction() || !user.isActive) return isSubscribed(app, user.id, channelId);
  return (await subscriberIds(app, channelId)).includes(user.id);
}

export async function channelAccess(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<ChannelAccess> {
  const subscribed = await subscribedNow(app, user, channel.id);
  return { channel, subscribed, ...accessRules(user, channel, subscribed, await app.realms.groups(realm.id), realm) };
}

/** Organization administrators administer every channel; others need can_administer_channel_group. */
export function canAdministerChannel(user: PermissionSubject, channel: Channel, groups: Map<number, GroupInfo>, realm: RealmInfo): boolean {
  if (isAdmin(user)) return true;
  return !isGuest(user) && isInGroupSetting(user, channelPermission(realm, channel, 'can_administer_channel_group'), groups, realm);
}

export async function channelById(app: App, realm: RealmInfo, id: number): Promise<Channel> {
  const channel = await app.prisma.channel.findFirst({ where: { id, realmId: realm.id } });
  if (!channel) throw badRequest('Invalid channel ID');
  return channel;
}

export interface AccessRequirement {
  /** Require content access, not just metadata (Zulip's default for most endpoints). */
  content?: boolean;
  /** Treat archived channels as missing. */
  active?: boolean;
}

/** A channel the user may see (metadata, or content when asked); otherwise the same error as a missing one. */
export async function accessibleChannel(app: App, realm: RealmInfo, user: User, id: number, need: AccessRequirement = {}): Promise<ChannelAccess> {
  const channel = await app.prisma.channel.findFirst({ where: { id, realmId: realm.id } });
  const access = channel && (await channelAccess(app, realm, user, channel));
  if (!access || !access.metadata || (need.content && !access.content) || (need.active && access.channel.isArchived)) {
    throw badRequest('Invalid channel ID');
  }
  return access;
}

/**
 * For changing or archiving a channel: administrators of the channel may; those who can read it
 * learn that they may not; everyone else gets the error of a missing channel.
 */
export async function administrableChannel(app: App, realm: RealmInfo, user: User, id: number): Promise<ChannelAccess> {
  const channel = await channelById(app, realm, id);
  const access = await channelAccess(app, realm, user, channel);
  if (canAdministerChannel(user, channel, await app.realms.groups(realm.id), realm)) return access;
  if (access.content) throw badRequest('You do not have permission to administer this channel.');
  throw badRequest('Invalid channel ID');
}

export async function channelByName(app: App, realm: RealmInfo, name: string): Promise<Channel | null> {
  return app.prisma.channel.findFirst({ where: { realmId: realm.id, name: equalsIgnoringCase(name.trim()) } });
}

/** Zulip's access_stream_by_name: an active channel whose messages the user may read, else "Invalid channel name". */
export async function accessibleChannelByName(app: App, realm: RealmInfo, user: User, name: string): Promise<Channel> {
  const channel = await channelByName(app, realm, name);
  const access = channel && !channel.isArchived && (await channelAccess(app, realm, user, channel));
  if (!access || !access.content) throw badRequest(`Invalid channel name '${name}'`);
  return access.channel;
}

/**
 * A channel of the realm by id or name for the send path, held by the channel actors until any
 * channel changes. Not for checks inside a transaction: those read the row the transaction sees.
 */
export async function cachedChannel(app: App, realm: RealmInfo, ref: number | string): Promise<Channel | null> {
  if (currentTransaction())
    return typeof ref === 'number' ? app.prisma.channel.findFirst({ where: { id: ref, realmId: realm.id } }) : channelByName(app, realm, ref);
  const channel =
    typeof ref === 'number'
      ? await app.channels.row(ref, () => app.prisma.channel.findUnique({ where: { id: ref } }))
      : await app.channels.row(`${realm.id}:${ref.trim().toLowerCase()}`, () => channelByName(app, realm, ref));
  return channel?.realmId === realm.id ? channel : null;
}

/** The channels the user is actively subscribed to, as a set of ids. */
export async function subscribedChannelIds(app: App, userId: number): Promise<Set<number>> {
  const rows = await app.prisma.subscription.findMany({ where: { userId, active: true }, select: { channelId: true } });
  return new Set(rows.map((r) => r.channelId));
}

/**
 * Everyone who may see the channel's metadata: the recipients of `stream` events and of the
 * channel's peer_add/peer_remove events.
 */
export async function metadataUserIds(app: App, realm: RealmInfo, channel: Channel): Promise<number[]> {
  const [users, subscribers, groups] = await Promise.all([
    app.prisma.user.findMany({
      where: { realmId: realm.id, isActive: true, isSystemBot: false },
      select: { id: true, role: true, dateJoined: true, isActive: true },
      orderBy: { id: 'asc' },
    }),
    subscriberIds(app, channel.id),
    app.realms.groups(realm.id),
  ]);
  const subscribed = new Set(subscribers);
  return users.filter((u) => accessRules(u, channel, subscribed.has(u.id), groups, realm).metadata).map((u) => u.id);
}

const DAY_MS = 86_400_000;
/** Zulip marks a channel inactive after this many days without messages. */
const RECENTLY_ACTIVE_DAYS = 180;

export interface ChannelStats {
  /** The last day (UTC) with a message counted, within RECENTLY_ACTIVE_DAYS. */
  lastMessageAt: Date | null;
  /** Messages of the last four weeks. */
  recentMessages: number;
}

/** Midnight UTC `days` days ago, as ChannelMessageDay's days are. */
const daysAgo = (days: number) => new Date(Math.floor(Date.now() / DAY_MS - days) * DAY_MS);

/**
 * Within a register's snapshot, by its transaction client: every channel's stats of the
 * organization, read once at the first need. The snapshot reads one point in time and writes
 * nothing, so its sections (subscriptions, the channels not subscribed to, streams) share them.
 */
const snapshotStats = new WeakMap<object, () => Promise<Map<number, ChannelStats>>>();

/** Channel stats asked for through `app.prisma`, a register's snapshot, come from one read of the organization's. */
export function shareStatsWithin(app: App, realmId: number): void {
  let all: Promise<Map<number, ChannelStats>> | undefined;
  snapshotStats.set(app.prisma, () => (all ??= realmTraffic(app, realmId)));
}

/**
 * Traffic of some of an organization's channels. It comes from the daily counts of
 * src/ops/history-upkeep.ts (Zulip's analytics), never from Message: it lags by up to that job's
 * interval, as Zulip's does.
 */
export async function channelStats(app: App, realmId: number, channelIds: number[]): Promise<Map<number, ChannelStats>> {
  const all = await (snapshotStats.get(app.prisma)?.() ?? realmTraffic(app, realmId));
  return new Map(channelIds.map((id) => [id, all.get(id) ?? noStats()]));
}

interface TrafficRow {
  channelId: number;
  recent: number;
  lastDay: Date | string;
}

/**
 * An organization's traffic: messages of the last four weeks ($1) and last counted day since $2
 * per channel counted, unless `$4` (the counted-to message id of the copy held, for the same
 * day) is still the counting job's: ChannelMessageDay changes only in the job's transactions,
 * which move that id, so equal ids mean equal rows within the reader's snapshot. The aggregate is
 * an InitPlan, run only when the CASE needs it.
 */
const REALM_TRAFFIC = `SELECT s."countedToMessageId" AS counted,
    CASE WHEN s."countedToMessageId" IS DISTINCT FROM $4::int THEN
      (SELECT coalesce(json_agg(t), '[]') FROM (
         SELECT "channelId", coalesce(sum(messages) FILTER (WHERE day > $1::date), 0)::int AS recent, max(day) AS "lastDay"
           FROM "ChannelMessageDay" WHERE "channelId" IN (SELECT id FROM "Channel" WHERE "realmId" = $3::int) AND day >= $2::date
          GROUP BY "channelId") t) END AS traffic
   FROM (SELECT 1) one LEFT JOIN "ChannelTrafficState" s ON s.id = 1`;

interface TrafficCopy {
  /** The UTC day (days since the epoch) it was read on: the four weeks and the 180 days move with it. */
  day: number;
  counted: number;
  stats: Map<number, ChannelStats>;
}

// By the bus, which is one per server: tests run several servers, with their own databases, in one process.
const trafficCopies = new WeakMap<object, Map<number, TrafficCopy>>();

/**
 * The organization's channel traffic (channels without any left out), the same for each of its
 * readers until the counting job (src/ops/history-upkeep.ts) writes again, on any node: each
 * reader checks the job's counted-to id in its own snapshot or transaction, so the copy it takes
 * is what it would read. A request about a few channels pays that check, not their 180 days.
 */
async function realmTraffic(app: App, realmId: number): Promise<Map<number, ChannelStats>> {
  let copies = trafficCopies.get(app.bus);
  if (!copies) trafficCopies.set(app.bus, (copies = new Map()));
  const day = Math.floor(Date.now() / DAY_MS);
  const held = copies.get(realmId);
  const known = held?.day === day ? held.counted : -1;
  const [row] = await app.prisma.$queryRawUnsafe<{ counted: number | null; traffic: TrafficRow[] | null }[]>(
    REALM_TRAFFIC,
    daysAgo(28),
    daysAgo(RECENTLY_ACTIVE_DAYS),
    realmId,
    known,
  );
  // No traffic read: the copy held is current (the aggregate runs whenever the job's row is missing).
  if (!row?.traffic) return held!.stats;
  const stats = new Map(row.traffic.map((t) => [t.channelId, { lastMessageAt: new Date(t.lastDay), recentMessages: t.recent }]));
  if (row.counted !== null) copies.set(realmId, { day, counted: row.counted, stats });
  return stats;
}

const noStats = (): ChannelStats => ({ lastMessageAt: null, recentMessages: 0 });

/** Zulip's estimate of messages per week: none for channels younger than a week, two significant digits. */
function weeklyTraffic(channel: Channel, recentMessages: number): number | null {
  const ageDays = Math.floor((Date.now() - channel.dateCreated.getTime()) / DAY_MS);
  if (ageDays < 7) return null;
  let average = ageDays >= 28 ? Math.floor(recentMessages / 4) : Math.floor((recentMessages * 7) / ageDays);
  if (average === 0 && recentMessages > 0) average = 1;
  const scale = 10 ** Math.max(0, String(average).length - 2);
  return Math.round(average / scale) * scale;
}

/** The legacy posting-policy fields, read from can_send_message_group (1 when it is no system group). */
export function postPolicyFields(realm: RealmInfo, channel: Channel): { stream_post_policy: number; is_announcement_only: boolean } {
  const value = channelPermission(realm, channel, 'can_send_message_group');
  const byGroup: Record<number, number> = {
    [realm.systemGroups['role:administrators']]: 2,
    [realm.systemGroups['role:fullmembers']]: 3,
    [realm.systemGroups['role:moderators']]: 4,
  };
  const policy = typeof value === 'number' ? (byGroup[value] ?? 1) : 1;
  return { stream_post_policy: policy, is_announcement_only: policy === 2 };
}

/**
 * A channel as GET /streams and `stream` events show it. Its subscriber count is the row's: the row
 * must be read after the last change of the channel's subscriptions the answer or event follows.
 */
export function formatChannel(realm: RealmInfo, channel: Channel, stats: ChannelStats): ChannelObject {
  const activeSince = Date.now() - RECENTLY_ACTIVE_DAYS * DAY_MS;
  return {
    stream_id: channel.id,
    name: channel.name,
    is_archived: channel.isArchived,
    description: channel.description,
    rendered_description: channel.renderedDescription,
    date_created: Math.floor(channel.dateCreated.getTime() / 1000),
    creator_id: channel.creatorId,
    invite_only: channel.inviteOnly,
    is_web_public: channel.isWebPublic,
    history_public_to_subscribers: channel.historyPublicToSubscribers,
    message_retention_days: channel.messageRetentionDays,
    first_message_id: channel.firstMessageId,
    folder_id: channel.folderId,
    topics_policy: channel.topicsPolicy,
    is_recently_active: channel.dateCreated.getTime() >= activeSince || stats.lastMessageAt !== null,
    stream_weekly_traffic: weeklyTraffic(channel, stats.recentMessages),
    subscriber_count: channel.subscriberCount,
    ...postPolicyFields(realm, channel),
    ...recordOf(CHANNEL_PERMISSIONS, (setting) => channelPermission(realm, channel, setting)),
  };
}

/** A channel as GET /streams and `stream` events show it. */
export type ChannelObject = z.infer<typeof channelSchema>;

/** One channel formatted as it is now: its row read again (the caller's may predate a change of its subscriptions), with its traffic. */
export async function channelDict(app: App, realm: RealmInfo, channel: Channel): Promise<ChannelObject> {
  const [row, stats] = await Promise.all([app.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } }), channelStats(app, realm.id, [channel.id])]);
  return formatChannel(realm, row, stats.get(channel.id)!);
}

export interface ChannelListOptions {
  includePublic: boolean;
  includeWebPublic: boolean;
  includeSubscribed: boolean;
  excludeArchived: boolean;
  includeAll: boolean;
  includeDefault: boolean;
  includeOwnerSubscribed: boolean;
  includeCanAccessContent: boolean;
}

/** GET /streams: the union of the sources asked for, each limited to what the user may see, by name. */
export async function listChannels(app: App, realm: RealmInfo, user: User, o: ChannelListOptions): Promise<ChannelObject[]> {
  const [all, groups, subscribed] = await Promise.all([
    app.prisma.channel.findMany({ where: { realmId: realm.id, ...(o.excludeArchived ? { isArchived: false } : {}) } }),
    app.realms.groups(realm.id),
    subscribedChannelIds(app, user.id),
  ]);
  const access = (c: Channel) => accessRules(user, c, subscribed.has(c.id), groups, realm);
  const ownerSubscribed =
    o.includeOwnerSubscribed && user.isBot && user.botOwnerId !== null ? await subscribedChannelIds(app, user.botOwnerId) : new Set<number>();
  const picked = all.filter((c) => {
    if (o.includeAll) return access(c).metadata;
    if (ownerSubscribed.has(c.id)) return true;
    if (o.includeCanAccessContent) return access(c).content;
    return (
      (o.includeSubscribed && subscribed.has(c.id)) ||
      (o.includePublic && !isGuest(user) && !c.inviteOnly) ||
      (o.includeWebPublic && c.isWebPublic && !c.inviteOnly && !c.isArchived)
    );
  });
  picked.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const stats = await channelStats(
    app,
    realm.id,
    picked.map((c) => c.id),
  );
  const defaults = o.includeDefault ? new Set(await defaultChannelIds(app, realm.id)) : null;
  return picked.map((c) => ({ ...formatChannel(realm, c, stats.get(c.id)!), ...(defaults ? { is_default: defaults.has(c.id) } : {}) }));
}

/**
 * The channel's topics with their newest message id, newest first. With protected history
 * only the messages the user received count.
 */
export function channelTopics(app: App, user: User, channel: Channel): Promise<{ name: string; max_id: number }[]> {
  return app.prisma.$queryRawUnsafe(channelTopicsSql(channel.historyPublicToSubscribers), channel.id, ...(channel.historyPublicToSubscribers ? [] : [user.id]));
}

/**
 * A skip scan of the (channel, upper(topic), id) index: one descent per topic, however long each
 * topic's history, then its newest message for the name it shows; under protected history
 * (`shared` false) the newest one user $2 received, walking back from the newest (a topic they
 * received nothing of is read whole). Joining the channel with the user's rows instead read every
 * message of the channel, or every row of the user.
 */
export const channelTopicsSql = (shared: boolean) => `WITH RECURSIVE topics(key) AS (
    (SELECT upper("topic") FROM "Message" WHERE "channelId" = $1 ORDER BY upper("topic") LIMIT 1)
    UNION ALL
    SELECT (SELECT upper("topic") FROM "Message" WHERE "channelId" = $1 AND upper("topic") > topics.key ORDER BY upper("topic") LIMIT 1)
      FROM topics WHERE topics.key IS NOT NULL)
  SELECT newest."topic" AS name, newest."id" AS max_id FROM topics
  CROSS JOIN LATERAL (SELECT m."id", m."topic" FROM "Message" m WHERE m."channelId" = $1 AND upper(m."topic") = topics.key${
    shared ? '' : ' AND EXISTS (SELECT 1 FROM "UserMessage" um WHERE um."userId" = $2 AND um."messageId" = m.id)'
  }
    ORDER BY upper(m."topic") DESC, m."id" DESC LIMIT 1) newest
  WHERE topics.key IS NOT NULL
  ORDER BY newest."id" DESC`;
