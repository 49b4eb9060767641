// The state a client starts from (POST /register): one section per requested event type, in the
// shapes the matching events later update.
import { methodsForClients, realmMethods } from '../auth/methods.ts';
import { createHash } from 'node:crypto';
import { displayTopicFor, hasCapability, type QueueOptions } from '../../actors/queue-options.ts';
import type { App } from '../app.ts';
import { isInGroupSetting } from '../auth/permissions.ts';
import type { User } from '../db/generated/client.ts';
import { FLAG_BITS, IS_PRIVATE, MAX_UNREAD_MESSAGES } from '../domain/message-flags.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, type RealmPermission, userSettingsSchema } from '../domain/realm-settings.ts';
import { Role, roleFlags, type SystemGroupName } from '../domain/roles.ts';
import { EMOJISET_CHOICES, INTERNAL_USER_SETTINGS, NOTIFICATION_SOUNDS } from '../domain/user-settings.ts';
import { SUBSCRIPTION_COLORS } from '../domain/channel-settings.ts';
import { channelStats, formatChannel, listChannels, shareStatsWithin, type ChannelObject } from './channels.ts';
import { formatDraft, formatSnippet } from './drafts.ts';
import { realmPresence } from './presence.ts';
import { realmUserStatuses } from './user-status.ts';
import { navigationViews } from './navigation-views.ts';
import { listReminders, listScheduledMessages } from './scheduled-messages.ts';
import { userAlertWords } from './alert-words.ts';
import { mutedUsers } from './muted-users.ts';
import { mutedTopics, type TopicSettings, topicSettings, userTopics } from './user-topics.ts';
import { channelFolders, spectatorChannelFolders } from './channel-folders.ts';
import { defaultChannelGroups, defaultChannelIds, seesDefaultChannels } from './default-channels.ts';
import { profileFields } from './profile-fields.ts';
import { userDevices } from './devices.ts';
import { realmDomains } from './realm-domains.ts';
import { realmPlaygrounds } from './realm-playgrounds.ts';
import { realmEmojiDict } from './realm-emoji.ts';
import type { RealmInfo } from './realms.ts';
import { formatSubscription, subscribersByChannel, unmutedTopicCheck, userSubscriptions } from './subscriptions.ts';
import { inheritedNotificationSettings, withInheritedSettings } from '../domain/user-settings.ts';
import { listGroups } from './user-groups.ts';
import { accessibleUserIds, accessRestricted, unknownUser } from './user-access.ts';
import { activeMembers, cachedMemberRows, memberLists } from './member-list.ts';
import { avatarUrl, botDicts, crossRealmBots, formatUser, gravatarUrl, type Person, profileData, realmUserRows } from './users.ts';
import { SERVER_JITSI_URL, serverLimits } from './server-state.ts';
import { CUSTOM_PROFILE_FIELD_TYPES } from '../domain/profile-fields.ts';
import { integrationDict } from '../webhooks/integration.ts';
import { INTEGRATION_LIST } from '../webhooks/integrations/index.ts';
import { isAdmin, isModerator } from '../auth/policy.ts';

export interface SnapshotOptions {
  fetchEventTypes: readonly string[] | null;
  queue: QueueOptions;
  includeSubscribers: 'true' | 'false' | 'partial';
  slimPresence: boolean;
  presenceHistoryLimitDays: number;
  includeStreams: boolean;
}

type State = Record<string, unknown>;
const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
/** Above this many subscribers, `partial` leaves out the inactive humans. */
const PARTIAL_SUBSCRIBERS_THRESHOLD = 250;

/**
 * The deprecated integer policies register still derives from the group settings that replaced
 * them: the policy of the system group the setting names, else the least restrictive one.
 */
const COMMON_POLICIES: Partial<Record<SystemGroupName, number>> = { 'role:members': 1, 'role:administrators': 2, 'role:fullmembers': 3, 'role:moderators': 4 };
const LEGACY_POLICIES: [string, RealmPermission, Partial<Record<SystemGroupName, number>>, number][] = [
  ['create_public_stream_policy', 'can_create_public_channel_group', COMMON_POLICIES, 1],
  ['create_private_stream_policy', 'can_create_private_channel_group', COMMON_POLICIES, 1],
  [
    'create_web_public_stream_policy',
    'can_create_web_public_channel_group',
    { 'role:administrators': 2, 'role:moderators': 4, 'role:nobody': 6, 'role:owners': 7 },
    4,
  ],
  [
    'wildcard_mention_policy',
    'can_mention_many_users_group',
    {
      'role:everyone': 1,
      'role:members': 2,
      'role:fullmembers': 3,
      'role:administrators': 5,
      'role:nobody': 6,
      'role:moderators': 7,
    },
    1,
  ],
];

/** A stable id for the organization (realm_uuid), derived so that it needs no stored column. */
export function realmUuid(realm: RealmInfo): string {
  const hex = createHash('sha256').update(`realm:${realm.id}:${realm.dateCreated.toISOString()}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function realmSection(app: App, realm: RealmInfo, user: User | null): State {
  const s = realm.settings;
  const methods = realmMethods(app, realm);
  const url = app.realms.url(realm);
  const groupNames = new Map(Object.entries(realm.systemGroups).map(([name, id]) => [id, name as SystemGroupName]));
  const state: State = {
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: url,
    realm_uri: url,
    realm_uuid: realmUuid(realm),
    realm_bot_domain: new URL(url).hostname,
    realm_date_created: seconds(realm.dateCreated),
    realm_icon_url: `${url}/static/images/logo/zulip-icon-128x128.png`,
    realm_icon_source: 'G',
    realm_logo_url: `${url}/static/images/logo/zulip-org-logo.svg?version=0`,
    realm_logo_source: 'D',
    realm_night_logo_url: `${url}/static/images/logo/zulip-org-logo.svg?version=0`,
    realm_night_logo_source: 'D',
    realm_org_type: s.org_type,
    realm_plan_type: 1,
    realm_invite_required: s.invite_required,
    realm_emails_restricted_to_domains: s.emails_restricted_to_domains,
    realm_disallow_disposable_email_addresses: true,
    realm_waiting_period_threshold: s.waiting_period_threshold,
    // Spectators are shown these features as off: they could not use them.
    realm_allow_message_editing: user ? s.allow_message_editing : false,
    realm_allow_edit_history: s.allow_edit_history,
    realm_message_edit_history_visibility_policy: s.allow_edit_history ? 'all' : 'none',
    realm_message_content_edit_limit_seconds: s.message_content_edit_limit_seconds,
    realm_message_content_delete_limit_seconds: s.message_content_delete_limit_seconds,
    realm_move_messages_within_stream_limit_seconds: s.move_messages_within_stream_limit_seconds,
    realm_move_messages_between_streams_limit_seconds: s.move_messages_between_streams_limit_seconds,
    realm_topics_policy: s.topics_policy,
    realm_mandatory_topics: s.topics_policy === 'disable_empty_topic',
    realm_message_retention_days: s.message_retention_days,
    realm_default_language: s.default_language,
    realm_enable_spectator_access: s.enable_spectator_access,
    realm_presence_disabled: user ? s.presence_disabled : true,
    realm_inline_image_preview: s.inline_image_preview,
    realm_inline_url_embed_preview: s.inline_url_embed_preview,
    realm_send_welcome_emails: s.send_welcome_emails,
    realm_welcome_message_custom_text: s.welcome_message_custom_text,
    realm_message_content_allowed_in_email_notifications: s.message_content_allowed_in_email_notifications,
    realm_digest_emails_enabled: s.digest_emails_enabled,
    realm_digest_weekday: s.digest_weekday,
    realm_video_chat_provider: s.video_chat_provider,
    realm_gif_rating_policy: s.giphy_rating,
    realm_want_advertise_in_communities_directory: s.want_advertise_in_communities_directory,
    realm_name_changes_disabled: s.name_changes_disabled,
    realm_email_changes_disabled: s.email_changes_disabled,
    realm_avatar_changes_disabled: s.avatar_changes_disabled,
    realm_default_avatar_source: 'G',
    realm_require_unique_names: s.require_unique_names,
    // Zulip's defaults for settings this server does not offer to change: thumbnails at 100%
    // height, and billing that counts every member as a workplace user.
    realm_media_preview_size: 100,
    realm_workplace_users_group: realm.systemGroups['role:members'],
    realm_jitsi_server_url: s.jitsi_server_url,
    jitsi_server_url: s.jitsi_server_url ?? SERVER_JITSI_URL,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    realm_push_notifications_enabled: app.config.PUSH_RELAY_URL !== undefined,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_require_e2ee_push_notifications: false,
    realm_owner_full_content_access: false,
    realm_send_channel_events_messages: true,
    realm_enable_read_receipts: s.enable_read_receipts,
    realm_enable_guest_user_indicator: true,
    realm_enable_guest_user_dm_warning: true,
    realm_default_code_block_language: s.default_code_block_language,
    realm_new_stream_announcements_stream_id: -1,
    realm_signup_announcements_stream_id: -1,
    realm_zulip_update_announcements_stream_id: -1,
    realm_moderation_request_channel_id: s.moderation_request_channel_id,
    realm_upload_quota_mib: null,
    realm_authentication_methods: methodsForClients(methods),
    realm_email_auth_enabled: methods.Email === true,
    realm_password_auth_enabled: methods.Email === true || methods.LDAP === true,
    realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } },
  };
  for (const [setting, value] of Object.entries(realm.permissions)) state[`realm_${setting}`] = value;
  for (const [policy, setting, bySystemGroup, fallback] of LEGACY_POLICIES) {
    const value = realm.permissions[setting];
    const name = typeof value === 'number' ? groupNames.get(value) : undefined;
    state[`realm_${policy}`] = (name && bySystemGroup[name]) ?? fallback;
  }
  return Object.assign(state, serverLimits(app));
}

async function realmUserSection(app: App, realm: RealmInfo, user: User, o: SnapshotOptions): Promise<State> {
  const [lists, groups, systemBots] = await Promise.all([
    accessRestricted(realm, user)
      ? restrictedMemberLists(app, realm, user, o)
      : memberLists(app, realm, user, { clientGravatar: o.queue.clientGravatar, withProfiles: true }),
    app.realms.groups(realm.id),
    crossRealmBots(app, realm),
  ]);
  const own = formatUser(app, realm, user, user, { clientGravatar: false });
  const may = (setting: RealmPermission) => isInGroupSetting(user, realm.permissions[setting], groups, realm);
  const canCreate = {
    can_create_public_streams: may('can_create_public_channel_group'),
    can_create_private_streams: may('can_create_private_channel_group'),
    can_create_web_public_streams: may('can_create_web_public_channel_group'),
  };
  return {
    realm_users: lists[0],
    realm_non_active_users: lists[1],
    cross_realm_bots: systemBots,
    user_id: user.id,
    email: own.email,
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    avatar_source: user.avatarSource,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrl(user, true),
    ...roleFlags(user.role),
    is_moderator: isModerator(user),
    ...canCreate,
    can_create_streams: Object.values(canCreate).some(Boolean),
    can_invite_others_to_realm: may('can_invite_users_group'),
  };
}

/**
 * The member lists of a guest who can access only some users, made for them alone: those they
 * cannot access are left out for clients that allow it, else listed as an "Unknown user".
 */
async function restrictedMemberLists(app: App, realm: RealmInfo, user: User, o: SnapshotOptions): Promise<[Person[], Person[]]> {
  const [all, accessible] = await Promise.all([realmUserRows(app, realm.id), accessibleUserIds(app, realm, user)]);
  const users = accessible && hasCapability(o.queue, 'user_list_incomplete') ? all.filter((u) => accessible.has(u.id)) : all;
  const profiles = await profileData(
    app,
    users.map((u) => u.id),
  );
  const entries = users.map((u) =>
    accessible && !accessible.has(u.id)
      ? unknownUser(app, realm, u.id)
      : formatUser(app, realm, u, user, { clientGravatar: o.queue.clientGravatar, profileData: profiles.get(u.id) }),
  );
  // Split by the entries' is_active (a placeholder always counts as active, as in Zulip); the two
  // lists say it by where they are, so their entries leave the key out.
  const withActive = (active: boolean) => entries.filter((e) => e.is_active === active).map(({ is_active: _, ...e }) => e as Person);
  return [withActive(true), withActive(false)];
}

/** Every channel whose metadata the user may see (archived ones for clients that show them). */
function visibleChannels(app: App, realm: RealmInfo, user: User, o: SnapshotOptions): Promise<ChannelObject[]> {
  return listChannels(app, realm, user, {
    includePublic: false,
    includeWebPublic: false,
    includeSubscribed: false,
    excludeArchived: !hasCapability(o.queue, 'archived_channels'),
    includeAll: true,
    includeDefault: false,
    includeOwnerSubscribed: false,
    includeCanAccessContent: false,
  });
}

async function subscriptionSection(app: App, realm: RealmInfo, user: User, o: SnapshotOptions, readVisible: () => Promise<ChannelObject[]>): Promise<State> {
  const withSubscribers = o.includeSubscribers !== 'false';
  const archived = hasCapability(o.queue, 'archived_channels');
  const subscriptions = await userSubscriptions(app, realm, user, withSubscribers, archived);
  const subscribedIds = new Set(subscriptions.map((s) => s.stream_id));
  const pastRows = await app.prisma.subscription.findMany({ where: { userId: user.id, active: false } });
  const past = new Map(pastRows.map((r) => [r.channelId, r]));
  const visible = await readVisible();
  const others = visible.filter((c) => !subscribedIds.has(c.stream_id));
  const subscribers = withSubscribers
    ? await subscribersByChannel(
        app,
        others.map((c) => c.stream_id),
      )
    : undefined;
  const list = (c: ChannelObject) => subscribers?.get(c.stream_id) ?? [];
  const withList = (c: ChannelObject) => (subscribers ? { ...c, subscribers: list(c) } : c);
  // A former subscription keeps the user's settings for the channel, as in Zulip.
  const unsubscribed = others.filter((c) => past.has(c.stream_id)).map((c) => formatSubscription(c, past.get(c.stream_id)!, subscribers && list(c)));
  if (!hasCapability(o.queue, 'notification_settings_null')) {
    const inherited = inheritedNotificationSettings(user.settings);
    for (const subs of [subscriptions, unsubscribed]) subs.forEach((sub, i) => (subs[i] = withInheritedSettings(sub, inherited)));
  }
  if (o.includeSubscribers === 'partial') await trimToPartial(app, subscriptions);
  return {
    subscriptions,
    unsubscribed,
    never_subscribed: others.filter((c) => !past.has(c.stream_id)).map(withList),
  };
}

/** include_subscribers=partial: big channels list only bots and recently active users. */
async function trimToPartial(app: App, subscriptions: State[]): Promise<void> {
  const big = subscriptions.filter((s) => (s.subscribers as number[]).length >= PARTIAL_SUBSCRIBERS_THRESHOLD);
  if (big.length === 0) return;
  const since = new Date(Date.now() - 14 * 86400_000);
  const ids = [...new Set(big.flatMap((s) => s.subscribers as number[]))];
  const keep = await app.prisma.user.findMany({
    where: { id: { in: ids }, OR: [{ isBot: true }, { presence: { lastActiveTime: { gte: since } } }] },
    select: { id: true },
  });
  const kept = new Set(keep.map((u) => u.id));
  for (const s of big) {
    s.partial_subscribers = (s.subscribers as number[]).filter((id) => kept.has(id));
    delete s.subscribers;
  }
}

/** Zulip's RECENT_CONVERSATIONS_LIMIT: recent conversations come from this many newest direct messages. */
const RECENT_CONVERSATIONS_LIMIT = 1000;

const WILDCARD_MENTIONED = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/**
 * The user's newest unread messages by conversation (channel and exact topic, or direct message
 * group), each with its ids and those mentioning the user directly or by wildcard only. An unread
 * row carries its conversation (migration 20261129113000), so this reads the unread index alone;
 * rows written before that migration and not yet backfilled take theirs from Message. Grouped by
 * hashing, without sorting the rows (the sort cost a third of the statement): the lists come in
 * the order the rows are read, newest first, and ascendingIds puts them in id order.
 */
export const UNREAD_CONVERSATIONS = `WITH newest AS MATERIALIZED (
    SELECT "messageId", flags, "channelId", topic, "directGroupId" FROM "UserMessage"
     WHERE "userId" = $1 AND (flags & ${FLAG_BITS.read}) = 0 ORDER BY "messageId" DESC LIMIT ${MAX_UNREAD_MESSAGES}),
  unread AS (
    SELECT * FROM newest WHERE "channelId" IS NOT NULL OR "directGroupId" IS NOT NULL
    UNION ALL
    SELECT n."messageId", n.flags, m."channelId", m.topic, m."directGroupId" FROM newest n JOIN "Message" m ON m.id = n."messageId"
     WHERE n."channelId" IS NULL AND n."directGroupId" IS NULL),
  conversations AS (
    SELECT "channelId", topic, "directGroupId", array_agg("messageId") AS ids,
           array_agg("messageId") FILTER (WHERE (flags & ${FLAG_BITS.mentioned}) <> 0) AS mentioned,
           array_agg("messageId") FILTER (WHERE (flags & ${FLAG_BITS.mentioned}) = 0 AND (flags & ${WILDCARD_MENTIONED}) <> 0) AS wildcard
      FROM unread GROUP BY "channelId", topic, "directGroupId")
  SELECT "channelId", topic, ids, mentioned, wildcard,
         CASE WHEN "directGroupId" IS NOT NULL THEN (SELECT "memberKey" FROM "DirectMessageGroup" WHERE id = "directGroupId") END AS "memberKey"
    FROM conversations`;

interface UnreadConversation {
  channelId: number | null;
  topic: string | null;
  memberKey: string | null;
  ids: number[];
  mentioned: number[] | null;
  wildcard: number[] | null;
}

/**
 * Zulip's get_raw_unread_data + aggregate_unread_data: conversations sorted by key (channel and
 * lower-cased topic, other user, member list), `count` and wildcard mentions only for messages
 * outside muted channels and topics (an unmuted or followed topic of a muted channel counts).
 */
async function unreadSection(app: App, user: User, o: SnapshotOptions): Promise<State> {
  const [conversations, unmuted] = await Promise.all([
    app.prisma.$queryRawUnsafe<UnreadConversation[]>(UNREAD_CONVERSATIONS, user.id),
    unmutedTopicCheck(app, user.id),
  ]);
  const streams = new Map<string, { key: [number, string]; first: number; entry: { stream_id: number; topic: string; unread_message_ids: number[] } }>();
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  let listed = 0;
  for (const c of conversations) {
    c.ids = ascendingIds(c.ids);
    listed += c.ids.length;
    for (const id of c.mentioned ?? []) mentions.push(id);
    if (c.channelId !== null) {
      // Topics differing only in case are one conversation, shown as its oldest message names it.
      const topic = displayTopicFor(o.queue, c.topic!);
      const key: [number, string] = [c.channelId, topic.toLowerCase()];
      const id = JSON.stringify(key);
      const seen = streams.get(id);
      if (!seen) streams.set(id, { key, first: c.ids[0]!, entry: { stream_id: c.channelId, topic, unread_message_ids: c.ids } });
      else {
        seen.entry.unread_message_ids = [...seen.entry.unread_message_ids, ...c.ids].sort((a, b) => a - b);
        if (c.ids[0]! < seen.first) Object.assign(seen, { first: c.ids[0]!, entry: { ...seen.entry, topic } });
      }
      const counted = unmuted(c.channelId, c.topic!);
      if (counted) count += c.ids.length;
      if (counted) for (const id of c.wildcard ?? []) mentions.push(id);
      continue;
    }
    count += c.ids.length;
    for (const id of c.wildcard ?? []) mentions.push(id);
    const members = (c.memberKey ?? '').split(',').map(Number);
    if (members.length <= 2) appendAll(pms, members.find((id) => id !== user.id) ?? user.id, c.ids);
    else appendAll(huddles, c.memberKey!, c.ids);
  }
  const byKey = <K extends number | string>(a: [K, unknown], b: [K, unknown]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  return {
    unread_msgs: {
      count,
      pms: [...pms].sort(byKey).map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
      streams: [...streams.values()].sort((a, b) => a.key[0] - b.key[0] || (a.key[1] < b.key[1] ? -1 : a.key[1] > b.key[1] ? 1 : 0)).map((s) => s.entry),
      huddles: [...huddles].sort(byKey).map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
      mentions: mentions.sort((a, b) => a - b),
      old_unreads_missing: listed === MAX_UNREAD_MESSAGES,
    },
  };
}

/** A conversation's ids in ascending order: reversed when they came newest first, as they do, else sorted. */
function ascendingIds(ids: number[]): number[] {
  let ascending = true;
  let descending = true;
  for (let i = 1; i < ids.length; i++) {
    if (ids[i]! > ids[i - 1]!) descending = false;
    else ascending = false;
  }
  return ascending ? ids : descending ? ids.reverse() : ids.sort((a, b) => a - b);
}

/** Adds a conversation's ids (ascending) to those listed under `key`, keeping them ascending. */
function appendAll<K>(lists: Map<K, number[]>, key: K, ids: number[]): void {
  const list = lists.get(key);
  lists.set(key, list ? [...list, ...ids].sort((a, b) => a - b) : ids);
}

async function recentConversations(app: App, user: User): Promise<State> {
  const rows = await app.prisma.$queryRawUnsafe<{ memberKey: string; maxId: number }[]>(
    `SELECT g."memberKey", MAX(m.id) AS "maxId"
       FROM (SELECT "messageId" FROM "UserMessage" WHERE "userId" = $1 AND (flags & ${IS_PRIVATE}) <> 0
              ORDER BY "messageId" DESC LIMIT ${RECENT_CONVERSATIONS_LIMIT}) um
       JOIN "Message" m ON m.id = um."messageId" JOIN "DirectMessageGroup" g ON g.id = m."directGroupId"
      GROUP BY g."memberKey" ORDER BY "maxId" DESC`,
    user.id,
  );
  return {
    recent_private_conversations: rows.map((r) => ({
      max_message_id: Number(r.maxId),
      user_ids: r.memberKey
        .split(',')
        .map(Number)
        .filter((id) => id !== user.id),
    })),
  };
}

async function presenceSection(app: App, realm: RealmInfo, o: SnapshotOptions): Promise<State> {
  const { presences, presence_last_update_id } = await realmPresence(app, realm, { slim: o.slimPresence, historyLimitDays: o.presenceHistoryLimitDays });
  return { presences, server_timestamp: Date.now() / 1000, presence_last_update_id };
}

async function groupsSection(app: App, realm: RealmInfo, o: SnapshotOptions): Promise<State> {
  return { realm_user_groups: await listGroups(app, realm, hasCapability(o.queue, 'include_deactivated_groups'), activeMembers(app, realm.id)) };
}

/** Personal settings as register lists them (user_settings_object no longer changes anything at our feature level). */
function settingsObject(stored: unknown): State {
  const settings: State = { ...userSettingsSchema.parse(stored ?? {}) };
  for (const internal of INTERNAL_USER_SETTINGS) delete settings[internal];
  return { ...settings, available_notification_sounds: NOTIFICATION_SOUNDS, emojiset_choices: EMOJISET_CHOICES };
}

/** Event types whose state is empty here because the feature behind them is not built (yet). */
const EMPTY_STATE: Record<string, State> = {
  onboarding_steps: { onboarding_steps: [], navigation_tour_video_url: null },
  // The deprecated linkifier format, always empty since feature level 176.
  realm_filters: { realm_filters: [] },
  realm_embedded_bots: { realm_embedded_bots: [] },
  realm_billing: { realm_billing: { has_pending_sponsorship_request: false } },
  // Search ignores no words, so there are none to warn about.
  stop_words: { stop_words: [] },
  video_calls: { has_zoom_token: false },
  giphy: { giphy_api_key: '', tenor_api_key: '' },
};

type Wants = (type: string) => boolean;
/** Adds a section when its event type is wanted. */
type Query = (type: string, read: () => State | Promise<State>) => void;

/** Whether the state asked for includes what comes from the member lists (queries/member-list.ts). */
export const needsMemberLists = (o: SnapshotOptions): boolean =>
  o.fetchEventTypes === null || o.fetchEventTypes.includes('realm_user') || o.fetchEventTypes.includes('realm_user_groups');

/**
 * What the user may learn at register time, for every event type in fetch_event_types (all when
 * null), read within register's snapshot: `app.prisma` is its transaction, of one point in time.
 */
export async function fetchInitialState(app: App, realm: RealmInfo, user: User | null, o: SnapshotOptions): Promise<State> {
  shareStatsWithin(app, realm.id);
  const wants: Wants = (type) => o.fetchEventTypes === null || o.fetchEventTypes.includes(type);
  const sections: Promise<State>[] = [];
  const query: Query = (type, read) => {
    if (wants(type)) sections.push(Promise.resolve().then(read));
  };
  query('realm', () => realmSection(app, realm, user));
  for (const [type, empty] of Object.entries(EMPTY_STATE)) query(type, () => structuredClone(empty));
  query('realm_user_groups', () => groupsSection(app, realm, o));
  query('realm_user_settings_defaults', () => ({ realm_user_settings_defaults: settingsObject(realm.userSettingsDefaults) }));
  query('realm_linkifiers', () => linkifierSection(app, realm, o));
  query('realm_emoji', () => realmEmojiSection(app, realm));
  query('realm_domains', async () => ({ realm_domains: await realmDomains(app, realm.id) }));
  const defaults = seesDefaultChannels(user);
  query('default_streams', async () => ({ realm_default_streams: defaults ? await defaultChannelIds(app, realm.id) : [] }));
  query('default_stream_groups', async () => ({ realm_default_stream_groups: defaults ? await defaultChannelGroups(app, realm.id) : [] }));
  query('realm_incoming_webhook_bots', () => ({ realm_incoming_webhook_bots: INTEGRATION_LIST.map(integrationDict) }));
  query('realm_playgrounds', async () => ({ realm_playgrounds: await realmPlaygrounds(app.prisma, realm.id) }));
  if (user) userSections(app, realm, user, o, wants, query);
  else spectatorSections(app, realm, o, wants, query);
  return Object.assign({}, ...(await Promise.all(sections)));
}

/** Unread counts stay current only through both message and flag events, so only both ask for them. */
const wantsUnreads = (wants: Wants) => wants('message') && wants('update_message_flags');
/** The pre-user_topic format goes to clients that do not ask for user_topic instead. */
const wantsMutedTopics = (wants: Wants, o: SnapshotOptions) => wants('muted_topics') && (o.fetchEventTypes === null || !wants('user_topic'));

/** The newest message the user received: max_message_id. */
export const NEWEST_MESSAGE_ID = 'SELECT "messageId" FROM "UserMessage" WHERE "userId" = $1 ORDER BY "messageId" DESC LIMIT 1';

function userSections(app: App, realm: RealmInfo, user: User, o: SnapshotOptions, wants: Wants, query: Query): void {
  const id = user.id;
  query('realm_user', () => realmUserSection(app, realm, user, o));
  // The subscription and stream sections list the same channels: read once.
  let visible: Promise<ChannelObject[]> | undefined;
  const visibleOnce = () => (visible ??= visibleChannels(app, realm, user, o));
  query('subscription', () => subscriptionSection(app, realm, user, o, visibleOnce));
  query('message', async () => {
    // Through app.prisma: the register's snapshot transaction.
    const [newest] = await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(NEWEST_MESSAGE_ID, id);
    return { max_message_id: newest?.messageId ?? -1 };
  });
  if (wantsUnreads(wants)) query('message', () => unreadSection(app, user, o));
  query('starred_messages', () => starredMessages(app, user));
  query('recent_private_conversations', () => recentConversations(app, user));
  query('presence', () => presenceSection(app, realm, o));
  query('user_settings', () => ({ user_settings: { ...settingsObject(user.settings), timezone: user.timezone } }));
  if (o.includeStreams) query('stream', async () => ({ streams: await visibleOnce() }));
  query('drafts', async () => ({
    drafts: (await app.prisma.draft.findMany({ where: { userId: id }, orderBy: { lastEditTime: 'desc' }, take: 1000 })).map(formatDraft),
  }));
  query('saved_snippets', async () => ({
    saved_snippets: (await app.prisma.savedSnippet.findMany({ where: { userId: id }, orderBy: { id: 'asc' } })).map(formatSnippet),
  }));
  query('navigation_views', async () => ({ navigation_views: await navigationViews(app, id) }));
  query('scheduled_messages', async () => ({ scheduled_messages: await listScheduledMessages(app, id) }));
  query('reminders', async () => ({ reminders: await listReminders(app, id) }));
  query('channel_folders', async () => ({ channel_folders: await channelFolders(app, realm.id, true) }));
  query('user_status', async () => ({ user_status: await realmUserStatuses(app, realm, user) }));
  query('custom_profile_fields', async () => ({
    custom_profile_fields: await profileFields(app, realm.id),
    custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES,
  }));
  // Both lists come from the same settings: read once.
  let topics: Promise<TopicSettings> | undefined;
  const topicsOnce = () => (topics ??= topicSettings(app, id));
  query('user_topic', async () => ({ user_topics: await userTopics(app, id, topicsOnce()) }));
  if (wantsMutedTopics(wants, o)) query('muted_topics', async () => ({ muted_topics: await mutedTopics(app, id, topicsOnce()) }));
  query('muted_users', async () => ({ muted_users: await mutedUsers(app, id) }));
  query('alert_words', async () => ({ alert_words: await userAlertWords(app, id) }));
  query('realm_bot', () => ownedBots(app, realm, user));
  query('device', async () => ({ devices: await userDevices(app, id) }));
}

/** Who a spectator is in the state: an anonymous guest with id 0, as in Zulip. */
const SPECTATOR_EMAIL = 'username@example.com';

/**
 * A logged-out visitor of a web-public organization: the web-public channels and the people and
 * organization data needed to read them; everything personal is empty.
 */
function spectatorSections(app: App, realm: RealmInfo, o: SnapshotOptions, wants: Wants, query: Query): void {
  const webPublic = () =>
    app.prisma.channel.findMany({ where: { realmId: realm.id, isWebPublic: true, inviteOnly: false, isArchived: false }, orderBy: { name: 'asc' } });
  const formatted = async () => {
    const channels = await webPublic();
    const stats = await channelStats(
      app,
      realm.id,
      channels.map((c) => c.id),
    );
    return channels.map((c) => formatChannel(realm, c, stats.get(c.id)!));
  };
  query('realm_user', async () => {
    const [lists, systemBots] = await Promise.all([memberLists(app, realm, null, { clientGravatar: false, withProfiles: false }), crossRealmBots(app, realm)]);
    return {
      realm_users: lists[0],
      realm_non_active_users: lists[1],
      cross_realm_bots: systemBots,
      user_id: 0,
      email: SPECTATOR_EMAIL,
      delivery_email: SPECTATOR_EMAIL,
      full_name: 'Anonymous User',
      avatar_source: 'G',
      avatar_url: gravatarUrl(SPECTATOR_EMAIL, 1),
      avatar_url_medium: gravatarUrl(SPECTATOR_EMAIL, 1, true),
      ...roleFlags(Role.GUEST),
      is_moderator: false,
      can_create_public_streams: false,
      can_create_private_streams: false,
      can_create_web_public_streams: false,
      can_create_streams: false,
      can_invite_others_to_realm: false,
    };
  });
  // Each web-public channel as a fresh subscription would look.
  query('subscription', async () => ({
    subscriptions: (await formatted()).map((c, i) => ({
      ...c,
      color: SUBSCRIPTION_COLORS[i % SUBSCRIPTION_COLORS.length],
      is_muted: false,
      in_home_view: true,
      pin_to_top: false,
      desktop_notifications: true,
      audible_notifications: true,
      push_notifications: true,
      email_notifications: true,
      wildcard_mentions_notify: true,
    })),
    unsubscribed: [],
    never_subscribed: [],
  }));
  if (o.includeStreams) query('stream', async () => ({ streams: await formatted() }));
  query('channel_folders', async () => ({ channel_folders: await spectatorChannelFolders(app, realm.id) }));
  query('message', () => ({ max_message_id: -1 }));
  if (wantsUnreads(wants)) {
    query('message', () => ({ unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false } }));
  }
  query('presence', () => ({ presences: {}, server_timestamp: Date.now() / 1000 }));
  query('user_settings', () => ({
    user_settings: { ...settingsObject({ default_language: realm.settings.default_language, web_home_view: 'recent_topics' }), timezone: '' },
  }));
  query('custom_profile_fields', () => ({ custom_profile_fields: [], custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES }));
  if (wantsMutedTopics(wants, o)) query('muted_topics', () => ({ muted_topics: [] }));
  // Statuses need an account to be seen.
  query('user_status', () => ({ user_status: {} }));
  for (const [type, key] of NOTHING_FOR_SPECTATORS) query(type, () => ({ [key]: [] }));
  query('device', () => ({ devices: {} }));
}

/** Personal lists a spectator has none of: [event type, key]. */
const NOTHING_FOR_SPECTATORS: [string, string][] = [
  ['drafts', 'drafts'],
  ['saved_snippets', 'saved_snippets'],
  ['navigation_views', 'navigation_views'],
  ['starred_messages', 'starred_messages'],
  ['recent_private_conversations', 'recent_private_conversations'],
  ['user_topic', 'user_topics'],
  ['realm_bot', 'realm_bots'],
  ['scheduled_messages', 'scheduled_messages'],
  ['reminders', 'reminders'],
  ['muted_users', 'muted_users'],
  ['alert_words', 'alert_words'],
];

/** Zulip sends at most the oldest 10,000 starred messages. */
const MAX_STARRED_MESSAGES = 10000;

async function starredMessages(app: App, user: User): Promise<State> {
  const rows = await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(
    `SELECT "messageId" FROM "UserMessage" WHERE "userId" = $1 AND (flags & ${FLAG_BITS.starred}) <> 0 ORDER BY "messageId" LIMIT ${MAX_STARRED_MESSAGES}`,
    user.id,
  );
  return { starred_messages: rows.map((r) => r.messageId) };
}

/** The bots the user administers: their own, or every bot for organization administrators. */
async function ownedBots(app: App, realm: RealmInfo, user: User): Promise<State> {
  // From the member lists' rows when they are cached (a register with all data warmed them).
  const rows = await cachedMemberRows(app, realm.id);
  const owned = (u: User) => u.isBot && (isAdmin(user) || u.botOwnerId === user.id);
  const bots = rows
    ? rows.filter(owned)
    : await app.prisma.user.findMany({
        where: { realmId: realm.id, isBot: true, isSystemBot: false, ...(isAdmin(user) ? {} : { botOwnerId: user.id }) },
        orderBy: { id: 'asc' },
      });
  return { realm_bots: await botDicts(app, realm, bots) };
}

async function linkifierSection(app: App, realm: RealmInfo, o: SnapshotOptions): Promise<State> {
  if (!hasCapability(o.queue, 'linkifier_url_template')) return { realm_linkifiers: [] };
  const rows = await app.prisma.linkifier.findMany({ where: { realmId: realm.id }, orderBy: [{ order: 'asc' }, { id: 'asc' }] });
  return {
    realm_linkifiers: rows.map((l) => ({
      id: l.id,
      pattern: l.pattern,
      url_template: l.urlTemplate,
      example_input: l.exampleInput,
      reverse_template: l.reverseTemplate,
      alternative_url_templates: l.alternativeUrlTemplates,
    })),
  };
}

async function realmEmojiSection(app: App, realm: RealmInfo): Promise<State> {
  return { realm_emoji: await realmEmojiDict(app.prisma, realm.id) };
}
