// The state a client starts from (POST /register): one section per requested event type, in the
// shapes the matching events later update.
import { hasCapability, type QueueOptions } from '../../actors/queue-options.ts';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import {
  MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH,
} from '../domain/channel-settings.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, userSettingsSchema } from '../domain/realm-settings.ts';
import { Role, roleFlags } from '../domain/roles.ts';
import { EMOJISET_CHOICES, INTERNAL_USER_SETTINGS, NOTIFICATION_SOUNDS } from '../domain/user-settings.ts';
import { listChannels } from './channels.ts';
import { formatDraft, formatSnippet } from './drafts.ts';
import { realmPresence } from './presence.ts';
import { realmUserStatuses } from './user-status.ts';
import { navigationViews } from './navigation-views.ts';
import { channelFolders, spectatorChannelFolders, MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH } from './channel-folders.ts';
import { realmEmojiDict } from './realm-emoji.ts';
import type { RealmInfo } from './realms.ts';
import { subscribersByChannel, userSubscriptions } from './subscriptions.ts';
import { inheritedNotificationSettings, withInheritedSettings } from '../domain/user-settings.ts';
import { listGroups } from './user-groups.ts';
import { accessibleUserIds, unknownUser } from './user-access.ts';
import { avatarUrl, emailVisibility, formatUser, profileData } from './users.ts';
import { SERVER_GENERATION } from '../version.ts';

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

function serverLimits(app: App): State {
  return {
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: MAX_CHANNEL_FOLDER_NAME_LENGTH,
    max_channel_folder_description_length: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
    max_bulk_new_subscription_messages: 100,
    max_reminder_note_length: 1000,
    max_file_upload_size_mib: Math.floor(app.config.MAX_UPLOAD_BYTES / (1024 * 1024)),
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    password_min_length: 6,
    password_max_length: 100,
    password_min_guesses: 10000,
    event_queue_longpoll_timeout_seconds: 90,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 200,
    server_typing_started_expiry_period_milliseconds: 45000,
    server_typing_stopped_wait_period_milliseconds: 12000,
    server_typing_started_wait_period_milliseconds: 30000,
    server_generation: SERVER_GENERATION,
    server_needs_upgrade: false,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_web_public_streams_enabled: true,
    server_can_summarize_topics: false,
    server_jitsi_server_url: null,
    server_emoji_data_url: '',
    development_environment: false,
    giphy_api_key: '',
    zulip_plan_is_not_limited: true,
  };
}

function realmSection(app: App, realm: RealmInfo): State {
  const s = realm.settings;
  const url = app.realms.url(realm);
  const state: State = {
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: url,
    realm_uri: url,
    realm_date_created: seconds(realm.dateCreated),
    realm_icon_url: `${url}/static/images/logo/zulip-icon-128x128.png`,
    realm_icon_source: 'G',
    realm_org_type: s.org_type,
    realm_plan_type: 1,
    realm_invite_required: s.invite_required,
    realm_emails_restricted_to_domains: s.emails_restricted_to_domains,
    realm_disallow_disposable_email_addresses: true,
    realm_waiting_period_threshold: s.waiting_period_threshold,
    realm_allow_message_editing: s.allow_message_editing,
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
    realm_presence_disabled: s.presence_disabled,
    realm_inline_image_preview: s.inline_image_preview,
    realm_inline_url_embed_preview: s.inline_url_embed_preview,
    realm_send_welcome_emails: s.send_welcome_emails,
    realm_message_content_allowed_in_email_notifications: s.message_content_allowed_in_email_notifications,
    realm_digest_emails_enabled: s.digest_emails_enabled,
    realm_digest_weekday: s.digest_weekday,
    realm_video_chat_provider: s.video_chat_provider,
    realm_giphy_rating: s.giphy_rating,
    realm_want_advertise_in_communities_directory: s.want_advertise_in_communities_directory,
    realm_name_changes_disabled: s.name_changes_disabled,
    realm_email_changes_disabled: s.email_changes_disabled,
    realm_avatar_changes_disabled: s.avatar_changes_disabled,
    realm_require_unique_names: s.require_unique_names,
    realm_jitsi_server_url: s.jitsi_server_url,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    realm_is_zephyr_mirror_realm: false,
    realm_push_notifications_enabled: false,
    realm_enable_read_receipts: true,
    realm_enable_guest_user_indicator: true,
    realm_default_code_block_language: '',
    realm_new_stream_announcements_stream_id: -1,
    realm_signup_announcements_stream_id: -1,
    realm_zulip_update_announcements_stream_id: -1,
    realm_moderation_request_channel_id: -1,
    realm_upload_quota_mib: null,
    realm_authentication_methods: { Email: { enabled: true, available: true } },
    realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } },
    realm_domains: [],
  };
  for (const [setting, value] of Object.entries(realm.permissions)) state[`realm_${setting}`] = value;
  return Object.assign(state, serverLimits(app));
}

async function realmUserSection(app: App, realm: RealmInfo, user: User, o: SnapshotOptions): Promise<State> {
  const [all, accessible] = await Promise.all([
    app.prisma.user.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } }),
    accessibleUserIds(app, realm, user),
  ]);
  // Users the viewer cannot access: left out for clients that allow it, else an "Unknown user".
  const users = accessible && hasCapability(o.queue, 'user_list_incomplete') ? all.filter((u) => accessible.has(u.id)) : all;
  const profiles = await profileData(app, users.map((u) => u.id));
  const entries = users.map((u) =>
    accessible && !accessible.has(u.id)
      ? unknownUser(app, realm, u.id)
      : formatUser(app, realm, u, user, { clientGravatar: o.queue.clientGravatar, profileData: profiles.get(u.id) }),
  );
  const own = formatUser(app, realm, user, user, { clientGravatar: false });
  // Split by the entries' is_active (a placeholder always counts as active, as in Zulip); the two
  // lists say it by where they are, so their entries leave the key out.
  const withActive = (active: boolean) => entries.filter((e) => e.is_active === active).map(({ is_active: _, ...e }) => e);
  return {
    realm_users: withActive(true),
    realm_non_active_users: withActive(false),
    cross_realm_bots: [],
    user_id: user.id,
    email: own.email,
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    avatar_source: user.avatarSource,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrl(user),
    ...roleFlags(user.role),
    is_moderator: user.role === Role.MODERATOR,
    is_billing_admin: false,
    can_create_streams: user.role !== Role.GUEST,
    can_subscribe_other_users: user.role !== Role.GUEST,
    can_invite_others_to_realm: user.role !== Role.GUEST,
  };
}

async function subscriptionSection(app: App, realm: RealmInfo, user: User, o: SnapshotOptions): Promise<State> {
  const withSubscribers = o.includeSubscribers !== 'false';
  const subscriptions = await userSubscriptions(app, realm, user, withSubscribers);
  if (!hasCapability(o.queue, 'notification_settings_null')) {
    const inherited = inheritedNotificationSettings(user.settings);
    subscriptions.forEach((sub, i) => (subscriptions[i] = withInheritedSettings(sub, inherited)));
  }
  if (o.includeSubscribers === 'partial') await trimToPartial(app, subscriptions);
  const subscribedIds = new Set(subscriptions.map((s) => s.stream_id as number));
  const pastRows = await app.prisma.subscription.findMany({ where: { userId: user.id, active: false }, select: { channelId: true } });
  const past = new Set(pastRows.map((r) => r.channelId));
  const visible = await listChannels(app, realm, user, {
    includePublic: true, includeWebPublic: false, includeSubscribed: false, excludeArchived: !hasCapability(o.queue, 'archived_channels'),
    includeAll: true, includeDefault: false, includeOwnerSubscribed: false, includeCanAccessContent: false,
  });
  const others = visible.filter((c) => !subscribedIds.has(c.stream_id as number));
  const subscribers = withSubscribers ? await subscribersByChannel(app, others.map((c) => c.stream_id as number)) : undefined;
  const withList = (c: State) => (subscribers ? { ...c, subscribers: subscribers.get(c.stream_id as number) ?? [] } : c);
  return {
    subscriptions,
    unsubscribed: others.filter((c) => past.has(c.stream_id as number)).map(withList),
    never_subscribed: others.filter((c) => !past.has(c.stream_id as number)).map(withList),
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

async function unreadSection(app: App, user: User): Promise<State> {
  const unread = await app.prisma.$queryRawUnsafe<{ messageId: number; flags: number; channelId: number | null; topic: string; senderId: number; memberKey: string | null }[]>(
    `SELECT um."messageId", um.flags, m."channelId", m.topic, m."senderId", g."memberKey"
       FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId" LEFT JOIN "DirectMessageGroup" g ON g.id = m."directGroupId"
      WHERE um."userId" = $1 AND (um.flags & ${FLAG_BITS.read}) = 0 ORDER BY um."messageId" LIMIT 50000`,
    user.id,
  );
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  const mentionBits = FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;
  for (const r of unread) {
    if (r.flags & mentionBits) mentions.push(r.messageId);
    if (r.channelId !== null) {
      const key = `${r.channelId}\n${r.topic.toLowerCase()}`;
      const entry = streams.get(key) ?? { stream_id: r.channelId, topic: r.topic, unread_message_ids: [] };
      entry.unread_message_ids.push(r.messageId);
      streams.set(key, entry);
      continue;
    }
    const members = (r.memberKey ?? '').split(',').map(Number);
    if (members.length <= 2) {
      const other = members.find((id) => id !== user.id) ?? user.id;
      pms.set(other, [...(pms.get(other) ?? []), r.messageId]);
    } else {
      huddles.set(r.memberKey!, [...(huddles.get(r.memberKey!) ?? []), r.messageId]);
    }
  }
  return {
    unread_msgs: {
      count: unread.length,
      pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
      streams: [...streams.values()],
      huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
      mentions,
      old_unreads_missing: unread.length >= 50000,
    },
  };
}

async function recentConversations(app: App, user: User): Promise<State> {
  const rows = await app.prisma.$queryRawUnsafe<{ memberKey: string; maxId: number }[]>(
    `SELECT g."memberKey", MAX(m.id) AS "maxId"
       FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId" JOIN "DirectMessageGroup" g ON g.id = m."directGroupId"
      WHERE um."userId" = $1 GROUP BY g."memberKey" ORDER BY "maxId" DESC LIMIT 1000`,
    user.id,
  );
  return {
    recent_private_conversations: rows.map((r) => ({
      max_message_id: Number(r.maxId),
      user_ids: r.memberKey.split(',').map(Number).filter((id) => id !== user.id),
    })),
  };
}

async function presenceSection(app: App, realm: RealmInfo, o: SnapshotOptions): Promise<State> {
  const { presences, presence_last_update_id } = await realmPresence(app, realm, { slim: o.slimPresence, historyLimitDays: o.presenceHistoryLimitDays });
  return { presences, server_timestamp: Date.now() / 1000, presence_last_update_id };
}

async function groupsSection(app: App, realm: RealmInfo, o: SnapshotOptions): Promise<State> {
  return { realm_user_groups: await listGroups(app, realm, hasCapability(o.queue, 'include_deactivated_groups')) };
}

/** The user's personal settings (user_settings_object no longer changes anything at our feature level). */
function userSettingsSection(realm: RealmInfo, user: User): State {
  const settings: Record<string, unknown> = { ...userSettingsSchema.parse(user.settings ?? {}) };
  for (const internal of INTERNAL_USER_SETTINGS) delete settings[internal];
  return {
    user_settings: {
      ...settings,
      email_address_visibility: emailVisibility(user, realm),
      timezone: user.timezone,
      available_notification_sounds: NOTIFICATION_SOUNDS,
      emojiset_choices: EMOJISET_CHOICES,
    },
  };
}

/** What the user may learn at register time, for every event type in fetch_event_types (all when null). */
export async function fetchInitialState(app: App, realm: RealmInfo, user: User | null, o: SnapshotOptions): Promise<State> {
  const wants = (type: string) => o.fetchEventTypes === null || o.fetchEventTypes.includes(type);
  const state: State = {};
  if (wants('realm')) Object.assign(state, realmSection(app, realm));
  if (!user) {
    if (wants('channel_folders')) state.channel_folders = await spectatorChannelFolders(app, realm.id);
    return state;
  }
  const id = user.id;
  const sections: Promise<State>[] = [];
  if (wants('realm_user')) sections.push(realmUserSection(app, realm, user, o));
  if (wants('subscription')) sections.push(subscriptionSection(app, realm, user, o));
  if (wants('message')) {
    sections.push(
      app.prisma.userMessage.findFirst({ where: { userId: id }, orderBy: { messageId: 'desc' }, select: { messageId: true } }).then((r) => ({ max_message_id: r?.messageId ?? -1 })),
    );
  }
  if (wants('message') || wants('update_message_flags')) sections.push(unreadSection(app, user));
  if (wants('recent_private_conversations')) sections.push(recentConversations(app, user));
  if (wants('presence')) sections.push(presenceSection(app, realm, o));
  if (wants('realm_user_groups')) sections.push(groupsSection(app, realm, o));
  if (wants('user_settings')) Object.assign(state, userSettingsSection(realm, user));
  if (wants('stream') && o.includeStreams) {
    sections.push(
      listChannels(app, realm, user, {
        includePublic: true, includeWebPublic: true, includeSubscribed: true, excludeArchived: true,
        includeAll: false, includeDefault: false, includeOwnerSubscribed: false, includeCanAccessContent: false,
      }).then((streams) => ({ streams })),
    );
  }
  if (wants('drafts')) {
    sections.push(
      app.prisma.draft.findMany({ where: { userId: id }, orderBy: { lastEditTime: 'desc' }, take: 1000 }).then((rows) => ({
        drafts: rows.map(formatDraft),
      })),
    );
  }
  if (wants('saved_snippets')) {
    sections.push(
      app.prisma.savedSnippet.findMany({ where: { userId: id }, orderBy: { id: 'asc' } }).then((rows) => ({
        saved_snippets: rows.map(formatSnippet),
      })),
    );
  }
  if (wants('navigation_views')) {
    sections.push(
      navigationViews(app, id).then((navigation_views) => ({ navigation_views })),
    );
  }
  if (wants('channel_folders')) {
    sections.push(
      channelFolders(app, realm.id, true).then((channel_folders) => ({ channel_folders })),
    );
  }
  if (wants('custom_profile_fields')) {
    sections.push(
      app.prisma.customProfileField.findMany({ where: { realmId: realm.id }, orderBy: { order: 'asc' } }).then((rows) => ({
        custom_profile_fields: rows.map((f) => ({
          id: f.id, name: f.name, type: f.fieldType, hint: f.hint, field_data: f.fieldData, order: f.order,
          display_in_profile_summary: f.displayInProfileSummary, required: f.required, editable_by_user: f.editableByUser,
        })),
      })),
    );
  }
  if (wants('user_topic')) {
    sections.push(
      app.prisma.userTopic.findMany({ where: { userId: id } }).then((rows) => ({
        user_topics: rows.map((t) => ({ stream_id: t.channelId, topic_name: t.topic, last_updated: seconds(t.lastUpdated), visibility_policy: t.visibility })),
      })),
    );
  }
  if (wants('realm_linkifiers')) sections.push(linkifierSection(app, realm, o));
  if (wants('realm_emoji')) sections.push(realmEmojiSection(app, realm));
  if (wants('user_status')) sections.push(realmUserStatuses(app, realm, user).then((user_status) => ({ user_status })));
  for (const s of await Promise.all(sections)) Object.assign(state, s);
  if (wants('realm_filters')) state.realm_filters = [];
  if (wants('realm_playgrounds')) state.realm_playgrounds = [];
  if (wants('default_streams')) state.default_streams = [];
  if (wants('default_stream_groups')) state.default_stream_groups = [];
  if (wants('muted_users')) state.muted_users = [];
  if (wants('alert_words')) state.alert_words = [];
  if (wants('scheduled_messages')) state.scheduled_messages = [];
  if (wants('reminders')) state.reminders = [];
  if (wants('onboarding_steps')) state.onboarding_steps = [];
  if (wants('realm_bot')) state.realm_bots = [];
  return state;
}

async function linkifierSection(app: App, realm: RealmInfo, o: SnapshotOptions): Promise<State> {
  if (!hasCapability(o.queue, 'linkifier_url_template')) return { realm_linkifiers: [] };
  const rows = await app.prisma.linkifier.findMany({ where: { realmId: realm.id }, orderBy: [{ order: 'asc' }, { id: 'asc' }] });
  return {
    realm_linkifiers: rows.map((l) => ({
      id: l.id, pattern: l.pattern, url_template: l.urlTemplate, example_input: l.exampleInput,
      reverse_template: l.reverseTemplate, alternative_url_templates: l.alternativeUrlTemplates,
    })),
  };
}

async function realmEmojiSection(app: App, realm: RealmInfo): Promise<State> {
  return { realm_emoji: await realmEmojiDict(app.prisma, realm.id) };
}
