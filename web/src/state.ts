// The client's whole state, made from the register snapshot and kept equal to what a fresh
// register would give by applying each event (Zulip's apply_events, for the parts shown here).
// Updates are immutable: every change makes new objects along its path, so views re-render by identity.
import type { Connection, DeliveredEvent, DeliveredOf } from './events.ts';
import { dmKey, messageDmKey, narrowMatches, sameTopic, unresolvedTopic } from './narrow.ts';
import { prepareContent } from './content.ts';
import { trackChannels } from './channels.ts';
import { applyBotEvent, botsFromRegister, type Bot } from './bots.ts';
import type { Draft } from './drafts.ts';
import { organizationFromRegister, trackOrganization, type Organization } from './organization.ts';
import type { Reminder } from './reminders.ts';
import type { ScheduledMessage } from './scheduled.ts';
import { emailNotificationSettings, type EmailNotificationSettings } from './settings.ts';
import {
  TopicVisibility,
  type Channel,
  type ChannelFolder,
  type Message,
  type RealmEmoji,
  type Subscription,
  type Topic,
  type UnreadPlace,
  type User,
  type UserGroup,
  type Narrow,
} from './types.ts';

export interface View {
  narrow: Narrow;
  /** The message to show first, else the first unread one. */
  near: number | null;
  messages: Message[];
  foundOldest: boolean;
  foundNewest: boolean;
  loading: 'initial' | 'older' | 'newer' | null;
  error: string | null;
  /** After "Mark as unread from here": messages on screen are not marked read until the view changes. */
  readingPaused: boolean;
}

export interface UserSettings extends EmailNotificationSettings {
  enter_sends: boolean;
  twenty_four_hour_time: boolean;
  timezone: string;
  enable_desktop_notifications: boolean;
  enable_sounds: boolean;
  enable_stream_desktop_notifications: boolean;
  enable_stream_audible_notifications: boolean;
  /** 1 automatic, 2 dark, 3 light (theme.ts). */
  color_scheme: number;
}

export interface Presence {
  active: number;
  idle: number;
}

export interface AppState {
  me: { userId: number; email: string; fullName: string };
  realmName: string;
  allowEditing: boolean;
  /** Seconds after sending that content may still be edited (null: always). */
  editLimitSeconds: number | null;
  /** Organization settings that decide what a message's menu offers. */
  messagePolicy: MessagePolicy;
  users: Map<number, User>;
  subs: Map<number, Subscription>;
  /** Every channel the user can see, subscribed or not. */
  channels: Map<number, Channel>;
  folders: ChannelFolder[];
  /** Topic visibility policies, keyed by topicKey(). */
  topicPolicies: Map<string, number>;
  unread: Map<number, UnreadPlace>;
  /** Messages that mention the user; those still in `unread` count as unread mentions. */
  mentions: Set<number>;
  /** The user's starred messages. */
  starred: Set<number>;
  /** Direct-message conversations by dmKey(), with their newest message id. */
  recentDms: Map<string, number>;
  /** Each channel's topics, once fetched, newest first. */
  topics: Map<number, Topic[]>;
  presence: Map<number, Presence>;
  /** Who is typing where (placeKey()), until when (ms). */
  typing: Map<string, Map<number, number>>;
  realmEmoji: Map<string, RealmEmoji>;
  /** The user's drafts, newest first. */
  drafts: Draft[];
  /** The user's messages waiting to be sent, soonest first. */
  scheduled: ScheduledMessage[];
  /** The user's reminders waiting to be sent, soonest first. */
  reminders: Reminder[];
  /** User groups by id (mentions, direct-message recipients). */
  groups: Map<number, UserGroup>;
  /** The user's own settings this client acts on. */
  settings: UserSettings;
  /** What organization settings and profiles show (organization.ts). */
  org: Organization;
  /** The bots the user administers (their own; every bot for an administrator). */
  bots: Map<number, Bot>;
  view: View;
  connection: Connection;
}

export interface MessagePolicy {
  /** realm_enable_read_receipts: "View read receipts" is offered. */
  readReceipts: boolean;
  /** realm_message_edit_history_visibility_policy: what "EDITED"/"MOVED" open. */
  editHistory: 'all' | 'moves_only' | 'none';
  /** A moderation request channel is set (realm_moderation_request_channel_id is not -1): "Report message" is offered. */
  reporting: boolean;
}

/** The organization settings behind MessagePolicy, named without register's `realm_` prefix as realm events name them. */
interface PolicySettings {
  message_edit_history_visibility_policy?: MessagePolicy['editHistory'];
  allow_edit_history?: boolean;
  enable_read_receipts?: boolean;
  moderation_request_channel_id?: number;
}

/** The policy after a register snapshot's or a realm event's settings. */
function messagePolicyOf(settings: PolicySettings, was: MessagePolicy): MessagePolicy {
  const editHistory =
    settings.message_edit_history_visibility_policy ??
    (settings.allow_edit_history === undefined ? was.editHistory : settings.allow_edit_history ? 'all' : 'none');
  const readReceipts = settings.enable_read_receipts ?? was.readReceipts;
  const reporting = settings.moderation_request_channel_id === undefined ? was.reporting : settings.moderation_request_channel_id !== -1;
  if (editHistory === was.editHistory && readReceipts === was.readReceipts && reporting === was.reporting) return was;
  return { editHistory, readReceipts, reporting };
}

export const topicKey = (streamId: number, topic: string) => `${streamId}:${topic.toLowerCase()}`;

/** Where typing happens: a channel's topic or a direct-message conversation. */
export const placeKey = (place: { streamId: number; topic: string } | { dm: string }) =>
  'dm' in place ? `dm:${place.dm}` : `topic:${topicKey(place.streamId, place.topic)}`;

/** Typing notifications expire if their sender goes quiet (Zulip's clients wait 15 s between renewals). */
export const TYPING_EXPIRY_MS = 25_000;

export function emptyView(narrow: Narrow, near: number | null): View {
  return { narrow, near, messages: [], foundOldest: false, foundNewest: false, loading: 'initial', error: null, readingPaused: false };
}

function unreadFromSnapshot(unreadMsgs: any, myId: number): Map<number, UnreadPlace> {
  const unread = new Map<number, UnreadPlace>();
  for (const s of unreadMsgs.streams ?? []) for (const id of s.unread_message_ids) unread.set(id, { kind: 'stream', streamId: s.stream_id, topic: s.topic });
  for (const p of unreadMsgs.pms ?? []) for (const id of p.unread_message_ids) unread.set(id, { kind: 'dm', key: dmKey([p.other_user_id], myId) });
  for (const h of unreadMsgs.huddles ?? []) {
    const key = dmKey(String(h.user_ids_string).split(',').map(Number), myId);
    for (const id of h.unread_message_ids) unread.set(id, { kind: 'dm', key });
  }
  return unread;
}

export function stateFromRegister(r: any, view: View): AppState {
  const users = new Map<number, User>();
  for (const u of r.realm_users ?? []) users.set(u.user_id, { ...u, is_active: true });
  for (const u of r.realm_non_active_users ?? []) users.set(u.user_id, { ...u, is_active: false });
  // Notification Bot and the other system bots write to people too: their names come from here.
  for (const u of r.cross_realm_bots ?? []) users.set(u.user_id, u);
  return {
    me: { userId: r.user_id, email: r.email, fullName: r.full_name },
    realmName: r.realm_name,
    allowEditing: r.realm_allow_message_editing,
    editLimitSeconds: r.realm_message_content_edit_limit_seconds ?? null,
    messagePolicy: messagePolicyOf(
      {
        message_edit_history_visibility_policy: r.realm_message_edit_history_visibility_policy,
        enable_read_receipts: r.realm_enable_read_receipts,
        moderation_request_channel_id: r.realm_moderation_request_channel_id,
      },
      { editHistory: 'all', readReceipts: false, reporting: false },
    ),
    users,
    subs: new Map((r.subscriptions ?? []).map((s: Subscription) => [s.stream_id, s])),
    channels: new Map((r.streams ?? []).map((c: Channel) => [c.stream_id, c])),
    folders: r.channel_folders ?? [],
    topicPolicies: new Map((r.user_topics ?? []).map((t: any) => [topicKey(t.stream_id, t.topic_name), t.visibility_policy])),
    unread: unreadFromSnapshot(r.unread_msgs ?? {}, r.user_id),
    mentions: new Set(r.unread_msgs?.mentions ?? []),
    starred: new Set(r.starred_messages ?? []),
    recentDms: new Map((r.recent_private_conversations ?? []).map((c: any) => [dmKey(c.user_ids, r.user_id), c.max_message_id])),
    topics: new Map(),
    presence: new Map(Object.entries(r.presences ?? {}).map(([id, p]: [string, any]) => [Number(id), { active: p.active_timestamp, idle: p.idle_timestamp }])),
    typing: new Map(),
    realmEmoji: new Map(Object.values(r.realm_emoji ?? {}).map((e: any) => [e.name, e])),
    drafts: [...(r.drafts ?? [])].sort(newestFirst),
    scheduled: [...(r.scheduled_messages ?? [])].sort(soonestFirst),
    reminders: [...(r.reminders ?? [])].sort(reminderFirst),
    groups: new Map((r.realm_user_groups ?? []).map((g: UserGroup) => [g.id, g])),
    settings: {
      enter_sends: r.user_settings?.enter_sends ?? false,
      twenty_four_hour_time: r.user_settings?.twenty_four_hour_time ?? false,
      timezone: r.user_settings?.timezone ?? '',
      enable_desktop_notifications: r.user_settings?.enable_desktop_notifications ?? true,
      enable_sounds: r.user_settings?.enable_sounds ?? true,
      enable_stream_desktop_notifications: r.user_settings?.enable_stream_desktop_notifications ?? false,
      enable_stream_audible_notifications: r.user_settings?.enable_stream_audible_notifications ?? false,
      color_scheme: r.user_settings?.color_scheme ?? 1,
      ...emailNotificationSettings(r.user_settings),
    },
    org: organizationFromRegister(r),
    bots: botsFromRegister(r.realm_bots),
    view,
    connection: 'connecting',
  };
}

/** The message as this client keeps it: content prepared for the page (search results with their matches marked), flags on the message. */
export function ingestMessage(raw: any, myId: number, flags?: string[]): Message {
  return { ...raw, content: prepareContent(raw.match_content ?? raw.content, myId), flags: flags ?? raw.flags ?? [], reactions: raw.reactions ?? [] };
}

/** Adds a local echo (see Message.localId) to the view when it belongs there, after the newest message. */
export function addLocalEcho(state: AppState, echo: Omit<Message, 'id'>): AppState {
  const { view } = state;
  const last = view.messages.at(-1)?.id ?? 0;
  const message = { ...echo, id: last + 0.001 };
  if (!view.foundNewest || !narrowMatches(view.narrow, message, state.me.userId, () => false)) return state;
  return { ...state, view: { ...view, messages: [...view.messages, message] } };
}

export function removeLocalEcho(state: AppState, localId: string): AppState {
  return withMessages(state, (messages) => (messages.some((m) => m.localId === localId) ? messages.filter((m) => m.localId !== localId) : messages));
}

export function isTopicMuted(state: AppState, streamId: number, topic: string): boolean {
  const policy = state.topicPolicies.get(topicKey(streamId, topic)) ?? TopicVisibility.NONE;
  if (state.subs.get(streamId)?.is_muted) return policy !== TopicVisibility.UNMUTED && policy !== TopicVisibility.FOLLOWED;
  return policy === TopicVisibility.MUTED;
}

export function isMessageMuted(state: AppState, m: Message): boolean {
  return m.type === 'stream' && m.stream_id !== undefined && isTopicMuted(state, m.stream_id, m.subject);
}

const MENTION_FLAGS = new Set(['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'wildcard_mentioned']);

const unreadPlaceOf = (m: Message, myId: number): UnreadPlace =>
  m.type === 'stream' ? { kind: 'stream', streamId: m.stream_id!, topic: m.subject } : { kind: 'dm', key: messageDmKey(m, myId) };

function withMessages(state: AppState, update: (messages: Message[]) => Message[]): AppState {
  const messages = update(state.view.messages);
  return messages === state.view.messages ? state : { ...state, view: { ...state.view, messages } };
}

/** Applies `change` to the listed messages of the view that exist there. */
function changeMessages(state: AppState, ids: Iterable<number>, change: (m: Message) => Message): AppState {
  const wanted = new Set(ids);
  return withMessages(state, (messages) => (messages.some((m) => wanted.has(m.id)) ? messages.map((m) => (wanted.has(m.id) ? change(m) : m)) : messages));
}

function onMessage(state: AppState, event: DeliveredOf<'message'>): AppState {
  const myId = state.me.userId;
  const message = ingestMessage(event.message, myId, event.flags);
  let next = state;
  if (!message.flags.includes('read')) {
    next = { ...next, unread: new Map(next.unread).set(message.id, unreadPlaceOf(message, myId)) };
    if (message.flags.some((f) => MENTION_FLAGS.has(f))) next = { ...next, mentions: new Set(next.mentions).add(message.id) };
  }
  if (message.type === 'private') next = { ...next, recentDms: new Map(next.recentDms).set(messageDmKey(message, myId), message.id) };
  const known = message.stream_id !== undefined ? next.topics.get(message.stream_id) : undefined;
  if (known) {
    const topics = [{ name: message.subject, max_id: message.id }, ...known.filter((t) => !sameTopic(t.name, message.subject))];
    next = { ...next, topics: new Map(next.topics).set(message.stream_id!, topics) };
  }
  // One's own message, sent from this tab: it takes the place of its local echo.
  if (event.local_message_id !== undefined) next = withMessages(next, (messages) => messages.filter((m) => m.localId !== event.local_message_id));
  const view = next.view;
  // While the view loads its newer end, live messages are kept for the loader to place (client.ts withNewer).
  const appends = view.foundNewest || view.loading === 'initial' || view.loading === 'newer';
  if (appends && !view.messages.some((m) => m.id === message.id) && narrowMatches(view.narrow, message, myId, (m) => isMessageMuted(next, m))) {
    next = { ...next, view: { ...view, messages: [...view.messages, message] } };
  }
  return stopTyping(next, typingPlaceOf(message, myId), message.sender_id);
}

const typingPlaceOf = (m: Message, myId: number) =>
  placeKey(m.type === 'stream' ? { streamId: m.stream_id!, topic: m.subject } : { dm: messageDmKey(m, myId) });

function stopTyping(state: AppState, place: string, userId: number): AppState {
  if (!state.typing.get(place)?.has(userId)) return state;
  const who = new Map(state.typing.get(place));
  who.delete(userId);
  return { ...state, typing: new Map(state.typing).set(place, who) };
}

function onTyping(state: AppState, e: DeliveredOf<'typing'>): AppState {
  const myId = state.me.userId;
  const userId = e.sender.user_id;
  if (userId === myId) return state;
  const place =
    e.message_type === 'stream'
      ? placeKey({ streamId: e.stream_id, topic: e.topic })
      : placeKey({
          dm: dmKey(
            e.recipients.map((r) => r.user_id),
            myId,
          ),
        });
  if (e.op === 'stop') return stopTyping(state, place, userId);
  const who = new Map(state.typing.get(place)).set(userId, Date.now() + TYPING_EXPIRY_MS);
  return { ...state, typing: new Map(state.typing).set(place, who) };
}

function onFlags(state: AppState, e: DeliveredOf<'update_message_flags'>): AppState {
  const ids = e.messages;
  let next = changeMessages(state, ids, (m) => ({
    ...m,
    flags: e.op === 'add' ? [...new Set([...m.flags, e.flag])] : m.flags.filter((f) => f !== e.flag),
  }));
  if (e.flag === 'starred') {
    const starred = new Set(next.starred);
    for (const id of ids) {
      if (e.op === 'add') starred.add(id);
      else starred.delete(id);
    }
    return { ...next, starred };
  }
  if (e.flag !== 'read') return next;
  if (e.op === 'add' && e.all) {
    next = { ...next, unread: new Map() };
    return withMessages(next, (messages) => messages.map((m) => (m.flags.includes('read') ? m : { ...m, flags: [...m.flags, 'read'] })));
  }
  const unread = new Map(next.unread);
  const mentions = new Set(next.mentions);
  if (e.op === 'add') for (const id of ids) unread.delete(id);
  else {
    for (const id of ids) {
      const d = e.message_details?.[id];
      if (!d) continue;
      unread.set(id, d.type === 'stream' ? { kind: 'stream', streamId: d.stream_id, topic: d.topic } : { kind: 'dm', key: dmKey(d.user_ids, state.me.userId) });
      if (d.mentioned) mentions.add(id);
    }
  }
  return { ...next, unread, mentions };
}

function onUpdateMessage(state: AppState, e: DeliveredOf<'update_message'>): AppState {
  let next = state;
  const rendered = e.rendered_content;
  if (rendered !== undefined) {
    next = changeMessages(next, [e.message_id], (m) => ({
      ...m,
      content: prepareContent(rendered, state.me.userId),
      ...(e.rendering_only ? {} : { last_edit_timestamp: e.edit_timestamp }),
    }));
  }
  const moved = e.subject !== undefined || e.new_stream_id !== undefined;
  // Only channel messages move, and the events of a move name their channel.
  const from = e.stream_id;
  if (!moved || from === undefined) return next;
  const streamId = e.new_stream_id ?? from;
  const ids = e.message_ids;
  // Resolving or unresolving a topic alone does not count as moving its messages, as in Zulip.
  const resolveOnly =
    e.new_stream_id === undefined && e.subject !== undefined && e.orig_subject !== undefined && unresolvedTopic(e.subject) === unresolvedTopic(e.orig_subject);
  next = changeMessages(next, ids, (m) => ({
    ...m,
    stream_id: streamId,
    subject: e.subject ?? m.subject,
    display_recipient: next.subs.get(streamId)?.name ?? m.display_recipient,
    ...(resolveOnly ? {} : { last_moved_timestamp: e.edit_timestamp }),
  }));
  const unread = new Map(next.unread);
  for (const id of ids) {
    const place = unread.get(id);
    if (place?.kind === 'stream') unread.set(id, { kind: 'stream', streamId, topic: e.subject ?? place.topic });
  }
  // Moved messages leave a channel or topic view they no longer belong to.
  const { narrow } = next.view;
  const stays = (m: Message) =>
    !ids.includes(m.id) ||
    narrowMatches(narrow, m, next.me.userId, () => false) ||
    ['home', 'search', 'mentions', 'starred', 'dms', 'recent'].includes(narrow.kind);
  next = withMessages({ ...next, unread }, (messages) => (messages.every(stays) ? messages : messages.filter(stays)));
  // The channels' topic lists are fetched again (client.ts): which topics remain is the server's to say.
  const topics = new Map(next.topics);
  topics.delete(from);
  topics.delete(streamId);
  return { ...next, topics };
}

function onDelete(state: AppState, e: DeliveredOf<'delete_message'>): AppState {
  const ids = new Set('message_ids' in e ? e.message_ids : [e.message_id]);
  const unread = new Map(state.unread);
  for (const id of ids) unread.delete(id);
  const next = withMessages({ ...state, unread }, (messages) => messages.filter((m) => !ids.has(m.id)));
  if (e.message_type !== 'stream') return next;
  const topics = new Map(next.topics);
  topics.delete(e.stream_id);
  return { ...next, topics };
}

function onReaction(state: AppState, e: DeliveredOf<'reaction'>): AppState {
  const same = (r: { emoji_code: string; reaction_type: string; user_id: number }) =>
    r.emoji_code === e.emoji_code && r.reaction_type === e.reaction_type && r.user_id === e.user_id;
  return changeMessages(state, [e.message_id], (m) => ({
    ...m,
    reactions:
      e.op === 'add'
        ? m.reactions.some(same)
          ? m.reactions
          : [...m.reactions, { emoji_name: e.emoji_name, emoji_code: e.emoji_code, reaction_type: e.reaction_type, user_id: e.user_id }]
        : m.reactions.filter((r) => !same(r)),
  }));
}

function updateSub(state: AppState, streamId: number, change: Partial<Subscription>): AppState {
  const sub = state.subs.get(streamId);
  return sub ? { ...state, subs: new Map(state.subs).set(streamId, { ...sub, ...change }) } : state;
}

function onSubscription(state: AppState, e: DeliveredOf<'subscription'>): AppState {
  switch (e.op) {
    case 'add': {
      const subs = new Map(state.subs);
      for (const s of e.subscriptions) subs.set(s.stream_id, s);
      return { ...state, subs };
    }
    case 'remove': {
      const subs = new Map(state.subs);
      for (const s of e.subscriptions) subs.delete(s.stream_id);
      return { ...state, subs };
    }
    case 'update':
      if (e.property === 'in_home_view') return updateSub(state, e.stream_id, { is_muted: !e.value });
      return updateSub(state, e.stream_id, { [e.property]: e.value });
    default:
      return state;
  }
}

function onStream(state: AppState, e: DeliveredOf<'stream'>): AppState {
  if (e.op === 'update') return updateSub(state, e.stream_id, { [e.property]: e.value });
  if (e.op !== 'delete') return state;
  const subs = new Map(state.subs);
  for (const id of e.stream_ids) subs.delete(id);
  return { ...state, subs };
}

function onFolder(state: AppState, e: DeliveredOf<'channel_folder'>): AppState {
  if (e.op === 'add') return { ...state, folders: [...state.folders, e.channel_folder] };
  if (e.op === 'update') return { ...state, folders: state.folders.map((f) => (f.id === e.channel_folder_id ? { ...f, ...e.data } : f)) };
  if (e.op === 'reorder') return { ...state, folders: state.folders.map((f) => ({ ...f, order: e.order.indexOf(f.id) })) };
  return state;
}

function onRealmUser(state: AppState, e: DeliveredOf<'realm_user'>): AppState {
  const id = e.person.user_id;
  const known = state.users.get(id);
  if (e.op === 'add') return { ...state, users: new Map(state.users).set(id, { ...e.person, is_active: true }) };
  if (e.op !== 'update' || !known) return state;
  const p = e.person;
  const change: Partial<User> = {
    ...('full_name' in p && { full_name: p.full_name }),
    ...('avatar_url' in p && { avatar_url: p.avatar_url }),
    ...('new_email' in p && { email: p.new_email }),
    ...('delivery_email' in p && { delivery_email: p.delivery_email }),
    ...('is_active' in p && { is_active: p.is_active }),
    ...('role' in p && { role: p.role }),
    ...('custom_profile_field' in p && {
      profile_data: {
        ...known.profile_data,
        [p.custom_profile_field.id]: { value: p.custom_profile_field.value, rendered_value: p.custom_profile_field.rendered_value },
      },
    }),
  };
  return {
    ...state,
    me: id === state.me.userId && change.full_name ? { ...state.me, fullName: change.full_name } : state.me,
    users: new Map(state.users).set(id, { ...known, ...change }),
  };
}

/** A list kept by add, update and remove events: what comes takes the place of items with its id, what is removed goes. */
function changeList<T>(list: T[], idOf: (item: T) => number, added: T[], removed: number[], order: (a: T, b: T) => number): T[] {
  const gone = new Set([...removed, ...added.map(idOf)]);
  return [...list.filter((item) => !gone.has(idOf(item))), ...added].sort(order);
}

const newestFirst = (a: Draft, b: Draft) => b.timestamp - a.timestamp;
const soonestFirst = (a: ScheduledMessage, b: ScheduledMessage) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp;

function onDrafts(state: AppState, e: DeliveredOf<'drafts'>): AppState {
  const added: Draft[] = e.op === 'add' ? e.drafts : e.op === 'update' ? [e.draft] : [];
  return { ...state, drafts: changeList(state.drafts, (d) => d.id, added, e.op === 'remove' ? [e.draft_id] : [], newestFirst) };
}

function onScheduled(state: AppState, e: DeliveredOf<'scheduled_messages'>): AppState {
  const added: ScheduledMessage[] = e.op === 'add' ? e.scheduled_messages : e.op === 'update' ? [e.scheduled_message] : [];
  const removed = e.op === 'remove' ? [e.scheduled_message_id] : [];
  return { ...state, scheduled: changeList(state.scheduled, (m) => m.scheduled_message_id, added, removed, soonestFirst) };
}

const reminderFirst = (a: Reminder, b: Reminder) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp;

function onReminders(state: AppState, e: DeliveredOf<'reminders'>): AppState {
  const added: Reminder[] = e.op === 'add' ? e.reminders : [];
  return { ...state, reminders: changeList(state.reminders, (r) => r.reminder_id, added, e.op === 'remove' ? [e.reminder_id] : [], reminderFirst) };
}

function onUserGroup(state: AppState, e: DeliveredOf<'user_group'>): AppState {
  const groups = new Map(state.groups);
  if (e.op === 'add') return { ...state, groups: groups.set(e.group.id, e.group) };
  const group = groups.get(e.group_id);
  const changeMembers = (members: number[]) => group && groups.set(group.id, { ...group, members });
  switch (e.op) {
    case 'remove':
      groups.delete(e.group_id);
      break;
    case 'update':
      if (group) groups.set(group.id, { ...group, ...e.data });
      break;
    case 'add_members':
      changeMembers([...new Set([...(group?.members ?? []), ...e.user_ids])]);
      break;
    case 'remove_members':
      changeMembers((group?.members ?? []).filter((id) => !e.user_ids.includes(id)));
      break;
    default:
      return state;
  }
  return { ...state, groups };
}

function onRealm(state: AppState, e: DeliveredOf<'realm'>): AppState {
  if (e.op !== 'update_dict' && e.op !== 'update') return state;
  const data: Record<string, unknown> = e.op === 'update' ? { [e.property]: e.value } : e.data;
  const { name, allow_message_editing: allowEditing, message_content_edit_limit_seconds: limit } = data;
  return {
    ...state,
    realmName: typeof name === 'string' ? name : state.realmName,
    allowEditing: typeof allowEditing === 'boolean' ? allowEditing : state.allowEditing,
    // null: no limit.
    editLimitSeconds: typeof limit === 'number' || limit === null ? limit : state.editLimitSeconds,
    messagePolicy: messagePolicyOf(data, state.messagePolicy),
  };
}

export function applyEvent(state: AppState, e: DeliveredEvent): AppState {
  switch (e.type) {
    case 'message':
      return onMessage(state, e);
    case 'update_message':
      return onUpdateMessage(state, e);
    case 'delete_message':
      return onDelete(state, e);
    case 'update_message_flags':
      return onFlags(state, e);
    case 'reaction':
      return onReaction(state, e);
    case 'typing':
      return onTyping(state, e);
    case 'subscription':
      return onSubscription(trackChannels(state, e), e);
    case 'stream':
      return onStream(trackChannels(state, e), e);
    case 'channel_folder':
      return onFolder(state, e);
    case 'realm_user':
      return onRealmUser(state, e);
    case 'realm':
      return trackOrganization(onRealm(state, e), e);
    case 'user_group':
      return onUserGroup(state, e);
    case 'drafts':
      return onDrafts(state, e);
    case 'scheduled_messages':
      return onScheduled(state, e);
    case 'reminders':
      return onReminders(state, e);
    case 'user_settings':
      return e.op === 'update' && e.property in state.settings ? { ...state, settings: { ...state.settings, [e.property]: e.value } } : state;
    case 'realm_bot':
      return { ...state, bots: applyBotEvent(state.bots, e) };
    case 'realm_emoji':
      // Without individual_emoji_changes (this client's case) every change comes as the whole list.
      return 'realm_emoji' in e ? { ...state, realmEmoji: new Map(Object.values(e.realm_emoji).map((r) => [r.name, r])) } : state;
    case 'user_topic':
      return { ...state, topicPolicies: new Map(state.topicPolicies).set(topicKey(e.stream_id, e.topic_name), e.visibility_policy) };
    case 'presence': {
      // This client registers with simplified_presence_events, which brings `presences` only.
      if (!('presences' in e)) return state;
      const presence = new Map(state.presence);
      for (const [id, p] of Object.entries(e.presences)) {
        presence.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
      }
      return { ...state, presence };
    }
    default:
      return trackOrganization(state, e);
  }
}

/** Unread counts: per channel (muted topics left out, unless the whole channel is muted), per topic, per conversation. */
export interface UnreadCounts {
  channels: Map<number, number>;
  topics: Map<string, number>;
  dms: Map<string, number>;
}

export function unreadCounts(state: AppState): UnreadCounts {
  const counts: UnreadCounts = { channels: new Map(), topics: new Map(), dms: new Map() };
  const add = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const place of state.unread.values()) {
    if (place.kind === 'dm') {
      add(counts.dms, place.key);
      continue;
    }
    add(counts.topics, topicKey(place.streamId, place.topic));
    if (!isTopicMuted(state, place.streamId, place.topic) || state.subs.get(place.streamId)?.is_muted) add(counts.channels, place.streamId);
  }
  return counts;
}

/** How many unread messages a view holds, as its "Mark all as read" would mark (none for a search). */
export function narrowUnread(state: AppState, narrow: Narrow, counts: UnreadCounts = unreadCounts(state)): number {
  const count = (keep: (id: number, place: UnreadPlace) => boolean) => [...state.unread].filter(([id, place]) => keep(id, place)).length;
  switch (narrow.kind) {
    case 'home':
    case 'inbox':
    case 'recent':
      return count((_, p) => p.kind === 'dm' || !isTopicMuted(state, p.streamId, p.topic));
    case 'channel':
      return counts.channels.get(narrow.streamId) ?? 0;
    case 'topic':
      return counts.topics.get(topicKey(narrow.streamId, narrow.topic)) ?? 0;
    case 'dm':
      return counts.dms.get(narrow.userIds.join(',')) ?? 0;
    case 'dms':
      return count((_, p) => p.kind === 'dm');
    case 'mentions':
      return count((id) => state.mentions.has(id));
    case 'starred':
      return count((id) => state.starred.has(id));
    case 'search':
      return 0;
  }
}

/** The `n` key's destination: the unread topic (not muted) whose oldest unread message is oldest, other than the one on screen. */
export function nextUnreadTopic(state: AppState): Narrow | null {
  const { narrow } = state.view;
  const here = narrow.kind === 'topic' ? topicKey(narrow.streamId, narrow.topic) : null;
  let best: { id: number; streamId: number; topic: string } | null = null;
  for (const [id, place] of state.unread) {
    if (place.kind !== 'stream' || topicKey(place.streamId, place.topic) === here || isTopicMuted(state, place.streamId, place.topic)) continue;
    if (!best || id < best.id) best = { id, streamId: place.streamId, topic: place.topic };
  }
  return best && { kind: 'topic', streamId: best.streamId, topic: best.topic };
}

export type PresenceStatus = 'active' | 'idle' | 'offline';

/** Zulip's rule: seen within the last 140 seconds. */
export function presenceStatus(p: Presence | undefined, nowSeconds: number): PresenceStatus {
  if (p && nowSeconds - p.active < 140) return 'active';
  if (p && nowSeconds - p.idle < 140) return 'idle';
  return 'offline';
}
