// What a Zulip client does with its event queue: it starts from the register state and applies
// each event to it (Zulip's zerver/lib/events.py `apply_event`, written again here for our events
// and the client-visible register shapes). Where Zulip's apply_event reads its database because
// the event does not carry the data (the newest message id after a deletion, a user's new rights
// after a role change, ...), `refetch` asks the server the same question over the API.
//
// The events-rebuild test (test/events/events-rebuild.test.ts) holds the server to the property Zulip's
// verify_action checks: applying the events of a change to the state from before it gives the
// state a new register returns after it. A new event type needs its rule in RULES below.

export type State = Record<string, any>;
export type Event = Record<string, any>;

export interface ApplyOptions {
  /** The user whose queue this is. */
  userId: number;
  /** The client_capabilities the queue was registered with (those set to true). */
  capabilities: ReadonlySet<string>;
  includeSubscribers: boolean;
  clientGravatar: boolean;
  /**
   * A fresh register state of the same user and options, for these fetch_event_types, with
   * `capabilities` overriding the queue's: the server's answer where Zulip's apply_event reads
   * the database.
   */
  refetch(fetchEventTypes: string[], capabilities?: Record<string, boolean>): Promise<State>;
}

const GRAVATAR = 'https://secure.gravatar.com/';
/** The per-channel notification settings a subscription may leave to the user's defaults. */
const STREAM_NOTIFICATION_DEFAULTS: Record<string, string> = {
  desktop_notifications: 'enable_stream_desktop_notifications',
  audible_notifications: 'enable_stream_audible_notifications',
  push_notifications: 'enable_stream_push_notifications',
  email_notifications: 'enable_stream_email_notifications',
  wildcard_mentions_notify: 'wildcard_mentions_notify',
};

type UnreadEntry =
  | { kind: 'stream'; stream_id: number; topic: string }
  | { kind: 'private'; other_user_id: number }
  | { kind: 'huddle'; user_ids_string: string };

/** The register state while events apply: lists that events change by key held as maps (Zulip's raw_* forms). */
interface Working {
  state: State;
  users?: Map<number, State>;
  /** Unread messages; `wildcards` mention the user only while their channel and topic count (see countsAsUnread). */
  unread?: { messages: Map<number, UnreadEntry>; mentions: Set<number>; wildcards: Set<number>; oldUnreadsMissing: boolean };
  recent?: Map<string, { user_ids: number[]; max_message_id: number }>;
  o: ApplyOptions;
  has(capability: string): boolean;
}

type Rule = (w: Working, e: Event) => void | Promise<void>;

/** The state after `events`, from a copy of `state`. */
export async function applyEvents(state: State, events: Event[], o: ApplyOptions): Promise<State> {
  const w = toWorking(structuredClone(state), o);
  for (const event of events) {
    const rule = RULES[event.type];
    if (!rule) throw new Error(`apply-events: no rule for event type ${event.type}; add one to RULES`);
    await rule(w, event);
  }
  return fromWorking(w);
}

function toWorking(state: State, o: ApplyOptions): Working {
  const w: Working = { state, o, has: (c) => o.capabilities.has(c) };
  if ('realm_users' in state) {
    w.users = new Map();
    for (const u of state.realm_users) w.users.set(u.user_id, { ...u, is_active: true });
    for (const u of state.realm_non_active_users) w.users.set(u.user_id, { ...u, is_active: false });
  }
  if ('unread_msgs' in state) {
    const u = state.unread_msgs;
    const messages = new Map<number, UnreadEntry>();
    for (const s of u.streams) for (const id of s.unread_message_ids) messages.set(id, { kind: 'stream', stream_id: s.stream_id, topic: s.topic });
    for (const p of u.pms) for (const id of p.unread_message_ids) messages.set(id, { kind: 'private', other_user_id: p.other_user_id });
    for (const h of u.huddles) for (const id of h.unread_message_ids) messages.set(id, { kind: 'huddle', user_ids_string: h.user_ids_string });
    w.unread = { messages, mentions: new Set(u.mentions), wildcards: new Set(), oldUnreadsMissing: u.old_unreads_missing };
  }
  if ('recent_private_conversations' in state) w.recent = recentMap(state.recent_private_conversations);
  return w;
}

const recentMap = (list: State[]) => new Map(list.map((c) => [c.user_ids.join(','), { user_ids: c.user_ids, max_message_id: c.max_message_id }]));

/** Zulip's post_process_state: the maps back into the lists register returns. */
function fromWorking(w: Working): State {
  const s = w.state;
  if (w.users) {
    const users = [...w.users.values()].sort((a, b) => a.user_id - b.user_id);
    const strip = ({ is_active: _, ...u }: State) => u;
    s.realm_users = users.filter((u) => u.is_active).map(strip);
    s.realm_non_active_users = users.filter((u) => !u.is_active).map(strip);
  }
  if (w.unread) s.unread_msgs = aggregateUnread(w);
  if (w.recent) s.recent_private_conversations = [...w.recent.values()].sort((a, b) => b.max_message_id - a.max_message_id);
  // `streams` has no subscriber lists: its counts are those of the same channels in the lists above.
  for (const c of s.streams ?? []) {
    const known = channelEntries(s, c.stream_id).find((entry) => 'subscribers' in entry);
    if (known) c.subscriber_count = known.subscriber_count;
  }
  return s;
}

/** Zulip's aggregate_unread_data: one bucket per conversation, buckets and ids in ascending order. */
function aggregateUnread(w: Working): State {
  const u = w.unread!;
  const buckets = (kind: UnreadEntry['kind'], key: (m: any) => (string | number)[], fields: (m: any) => State) => {
    const byKey = new Map<string, { sort: (string | number)[]; obj: State }>();
    for (const [id, m] of [...u.messages].sort((a, b) => a[0] - b[0])) {
      if (m.kind !== kind) continue;
      const k = JSON.stringify(key(m));
      if (!byKey.has(k)) byKey.set(k, { sort: key(m), obj: { ...fields(m), unread_message_ids: [] } });
      byKey.get(k)!.obj.unread_message_ids.push(id);
    }
    return [...byKey.values()].sort((a, b) => compareTuples(a.sort, b.sort)).map((b) => b.obj);
  };
  const pms = buckets(
    'private',
    (m) => [m.other_user_id],
    (m) => ({ other_user_id: m.other_user_id, sender_id: m.other_user_id }),
  );
  const huddles = buckets(
    'huddle',
    (m) => [m.user_ids_string],
    (m) => ({ user_ids_string: m.user_ids_string }),
  );
  const streams = buckets(
    'stream',
    (m) => [m.stream_id, m.topic.toLowerCase()],
    (m) => ({ stream_id: m.stream_id, topic: m.topic }),
  );
  // Muting is read as it is now, as a fresh register reads it.
  const counts = (m: UnreadEntry) => m.kind !== 'stream' || countsAsUnread(w, m.stream_id, m.topic);
  const count = [...u.messages.values()].filter(counts).length;
  const mentions = [...u.mentions, ...[...u.wildcards].filter((id) => counts(u.messages.get(id)!))];
  return { count, pms, streams, huddles, mentions: sortedIds(mentions), old_unreads_missing: u.oldUnreadsMissing };
}

function compareTuples(a: (string | number)[], b: (string | number)[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i]! < b[i]!) return -1;
    if (a[i]! > b[i]!) return 1;
  }
  return 0;
}

const noop: Rule = () => {};
const byId = <T extends State>(list: T[], id: unknown, key = 'id') => list.find((x) => x[key] === id);
const sortedIds = (ids: Iterable<number>) => [...new Set(ids)].sort((a, b) => a - b);

/** Every channel list of the state that has the channel. */
function channelEntries(s: State, streamId: number, lists = ['subscriptions', 'unsubscribed', 'never_subscribed']): State[] {
  return lists.flatMap((l) => (s[l] ?? []).filter((c: State) => c.stream_id === streamId));
}

/**
 * Changes a channel's subscriber list; its subscriber_count, which the API asks clients to keep
 * with the peer events, is the list's length (both count the active subscribers).
 */
function changeSubscribers(w: Working, streamId: number, change: (ids: number[]) => number[]): void {
  for (const c of channelEntries(w.state, streamId)) {
    if (!('subscribers' in c)) continue;
    c.subscribers = change(c.subscribers);
    c.subscriber_count = c.subscribers.length;
  }
}

const RULES: Record<string, Rule> = {
  heartbeat: noop,
  restart: noop,
  // Transient, or carried by the messages a client fetches: not in the register state.
  typing: noop,
  typing_edit_message: noop,
  reaction: noop,
  submessage: noop,
  attachment: noop,
  invites_changed: noop,
  realm_export: noop,
  realm_export_consent: noop,

  message(w, e) {
    const s = w.state;
    const m = e.message;
    if ('max_message_id' in s) s.max_message_id = Math.max(s.max_message_id, m.id);
    if (w.unread && !e.flags.includes('read')) addUnreadMessage(w, m, e.flags);
    if (m.type !== 'stream') {
      if (w.recent) {
        const others = sortedIds(m.display_recipient.map((r: State) => r.id).filter((id: number) => id !== w.o.userId));
        const key = others.join(',');
        w.recent.set(key, { user_ids: others, max_message_id: m.id });
      }
      return;
    }
    for (const c of [...(s.subscriptions ?? []), ...(s.streams ?? [])]) {
      if (c.stream_id === m.stream_id && c.first_message_id === null) c.first_message_id = m.id;
    }
  },

  async update_message(w, e) {
    if (!w.unread) return;
    // Moved to a channel the user is not subscribed to: their copies are gone (the event's flags
    // are those of the edited message, which may be read either way); Zulip reads max_message_id again.
    if ('new_stream_id' in e && !byId(w.state.subscriptions ?? [], e.new_stream_id, 'stream_id')) {
      for (const id of e.message_ids) removeUnread(w, id);
      if ('max_message_id' in w.state) w.state.max_message_id = (await w.o.refetch(['message'])).max_message_id;
      return;
    }
    for (const id of e.message_ids) {
      const m = w.unread.messages.get(id);
      if (m?.kind !== 'stream') continue;
      if ('new_stream_id' in e) m.stream_id = e.new_stream_id;
      if ('subject' in e) m.topic = e.subject;
    }
  },

  async delete_message(w, e) {
    const s = w.state;
    const ids: number[] = e.message_ids ?? [e.message_id];
    // Zulip reads the newest message id the user has from the database.
    if ('max_message_id' in s) s.max_message_id = (await w.o.refetch(['message'])).max_message_id;
    if (w.unread) for (const id of ids) removeUnread(w, id);
    // A deleted message is starred no more (Zulip's apply_event leaves this to the client).
    if ('starred_messages' in s) s.starred_messages = s.starred_messages.filter((id: number) => !ids.includes(id));
    if (w.recent && e.message_type === 'private') w.recent = recentMap((await w.o.refetch(['recent_private_conversations'])).recent_private_conversations);
  },

  update_message_flags(w, e) {
    const s = w.state;
    if (w.unread && e.flag === 'read') {
      // `all` (mark all as read) lists no messages: every message is read now.
      if (e.op === 'add' && e.all) for (const id of [...w.unread.messages.keys()]) removeUnread(w, id);
      else if (e.op === 'add') for (const id of e.messages) removeUnread(w, id);
      else for (const [id, details] of Object.entries(e.message_details ?? {})) addUnreadFromDetails(w, Number(id), details as State);
    }
    if (e.flag === 'starred' && 'starred_messages' in s) {
      if (e.op === 'add') s.starred_messages = [...s.starred_messages, ...e.messages];
      else s.starred_messages = s.starred_messages.filter((id: number) => !e.messages.includes(id));
    }
  },

  async realm_user(w, e) {
    const person = e.person;
    if (e.op === 'add') return addPerson(w, person);
    if (e.op === 'remove') return removePerson(w, person.user_id);
    if (e.op === 'update') return updatePerson(w, person);
    throw new Error(`apply-events: realm_user/${e.op}`);
  },

  realm_bot(w, e) {
    const s = w.state;
    if (!('realm_bots' in s)) return;
    if (e.op === 'add') s.realm_bots.push(e.bot);
    else if (e.op === 'delete') s.realm_bots = s.realm_bots.filter((b: State) => b.user_id !== e.bot.user_id);
    else if (e.op === 'update') {
      const bot = byId(s.realm_bots, e.bot.user_id, 'user_id');
      if (bot) Object.assign(bot, e.bot);
    } else throw new Error(`apply-events: realm_bot/${e.op}`);
  },

  async stream(w, e) {
    if (e.op === 'create') return createStreams(w, e.streams);
    if (e.op === 'delete') {
      // Archived or out of sight: the event does not say which, and only archiving takes the
      // channel's topic settings out of the state; the client asks the server again.
      await refetchTopicSettings(w);
      return deleteStreams(
        w,
        e.streams.map((c: State) => c.stream_id),
      );
    }
    if (e.op === 'update' && e.property === 'is_archived' && e.value === true) forgetTopicSettings(w, e.stream_id);
    if (e.op === 'update') return updateStream(w, e);
    throw new Error(`apply-events: stream/${e.op}`);
  },

  subscription(w, e) {
    const s = w.state;
    if (e.op === 'add') {
      const added = new Set(e.subscriptions.map((sub: State) => sub.stream_id));
      const existing = new Set(s.subscriptions.map((sub: State) => sub.stream_id));
      for (const sub of e.subscriptions) {
        if (existing.has(sub.stream_id)) continue;
        const copy = structuredClone(sub);
        if (!w.o.includeSubscribers) delete copy.subscribers;
        s.subscriptions.push(copy);
      }
      s.unsubscribed = s.unsubscribed.filter((c: State) => !added.has(c.stream_id));
      s.never_subscribed = s.never_subscribed.filter((c: State) => !added.has(c.stream_id));
    } else if (e.op === 'remove') {
      const removed = new Set(e.subscriptions.map((sub: State) => sub.stream_id));
      const leaving = s.subscriptions.filter((c: State) => removed.has(c.stream_id));
      s.subscriptions = s.subscriptions.filter((c: State) => !removed.has(c.stream_id));
      s.unsubscribed.push(...leaving);
      if (w.o.includeSubscribers) for (const c of leaving) changeSubscribers(w, c.stream_id, (ids) => ids.filter((id) => id !== w.o.userId));
    } else if (e.op === 'update') {
      for (const c of s.subscriptions.filter((c: State) => c.stream_id === e.stream_id)) c[e.property] = e.value;
    } else if (e.op === 'peer_add' || e.op === 'peer_remove') {
      if (!w.o.includeSubscribers) return;
      const users = new Set<number>(e.user_ids);
      for (const id of e.stream_ids) {
        changeSubscribers(w, id, (ids) => (e.op === 'peer_add' ? sortedIds([...ids, ...users]) : ids.filter((u) => !users.has(u))));
      }
    } else throw new Error(`apply-events: subscription/${e.op}`);
  },

  realm(w, e) {
    if (e.op === 'update') return updateRealm(w, { [e.property]: e.value });
    if (e.op === 'update_dict') return updateRealm(w, e.data);
    if (e.op === 'deactivated') return;
    throw new Error(`apply-events: realm/${e.op}`);
  },

  realm_user_settings_defaults(w, e) {
    w.state.realm_user_settings_defaults[e.property] = e.value;
  },

  async user_settings(w, e) {
    const s = w.state;
    s.user_settings[e.property] = e.value;
    // The legacy top-level copies, where register still returns them.
    if (e.property in s) s[e.property] = e.value;
    if (Object.values(STREAM_NOTIFICATION_DEFAULTS).includes(e.property) && !w.has('notification_settings_null')) await reinheritNotificationSettings(w);
  },

  user_group(w, e) {
    const s = w.state;
    const groups: State[] = s.realm_user_groups;
    const group = byId(groups, e.group_id);
    switch (e.op) {
      case 'add':
        groups.push(e.group);
        groups.sort((a, b) => a.id - b.id);
        return;
      case 'remove':
        s.realm_user_groups = groups.filter((g) => g.id !== e.group_id);
        return;
      case 'update':
        if (group) Object.assign(group, e.data);
        return;
      case 'add_members':
        if (group) group.members = sortedIds([...group.members, ...e.user_ids]);
        return;
      case 'remove_members':
        if (group) group.members = group.members.filter((id: number) => !e.user_ids.includes(id));
        return;
      case 'add_subgroups':
        if (group) group.direct_subgroup_ids = sortedIds([...group.direct_subgroup_ids, ...e.direct_subgroup_ids]);
        return;
      case 'remove_subgroups':
        if (group) group.direct_subgroup_ids = group.direct_subgroup_ids.filter((id: number) => !e.direct_subgroup_ids.includes(id));
        return;
      default:
        throw new Error(`apply-events: user_group/${e.op}`);
    }
  },

  user_status(w, e) {
    const all = w.state.user_status;
    const key = String(e.user_id);
    const status: State = all[key] ?? {};
    if (e.away !== undefined) {
      if (e.away) status.away = true;
      else delete status.away;
    }
    if (e.status_text !== undefined) {
      if (e.status_text === '') delete status.status_text;
      else status.status_text = e.status_text;
      if (e.emoji_name !== undefined) {
        for (const field of ['emoji_name', 'emoji_code'] as const) {
          if (e[field] === undefined) continue;
          if (e[field] === '') delete status[field];
          else status[field] = e[field];
        }
        if (e.reaction_type !== undefined) {
          if (e.reaction_type === 'unicode_emoji' && e.emoji_name === '') delete status.reaction_type;
          else status.reaction_type = e.reaction_type;
        }
      }
    }
    if (Object.keys(status).length) all[key] = status;
    else delete all[key];
  },

  presence(w, e) {
    const presences = w.state.presences;
    if (e.presences) {
      Object.assign(presences, e.presences);
      return;
    }
    // The legacy form: by email, the one client the server reports and the aggregate of it.
    const key = 'email' in e ? e.email : String(e.user_id);
    const [client] = Object.values(e.presence) as State[];
    presences[key] = { ...e.presence, aggregated: { client: client!.client, status: client!.status, timestamp: client!.timestamp } };
  },

  realm_emoji(w, e) {
    const s = w.state;
    if (e.op === 'update') s.realm_emoji = e.realm_emoji;
    else if (e.op === 'add') s.realm_emoji[e.emoji.id] = e.emoji;
    else if (e.op === 'update_one') Object.assign(s.realm_emoji[e.emoji_id], e.data);
    else throw new Error(`apply-events: realm_emoji/${e.op}`);
  },

  realm_linkifiers(w, e) {
    if (w.has('linkifier_url_template')) w.state.realm_linkifiers = e.realm_linkifiers;
  },

  realm_domains(w, e) {
    const s = w.state;
    if (e.op === 'add') s.realm_domains.push(e.realm_domain);
    else if (e.op === 'change') Object.assign(byId(s.realm_domains, e.realm_domain.domain, 'domain') ?? {}, e.realm_domain);
    else if (e.op === 'remove') s.realm_domains = s.realm_domains.filter((d: State) => d.domain !== e.domain);
    else throw new Error(`apply-events: realm_domains/${e.op}`);
  },

  drafts(w, e) {
    const s = w.state;
    if (e.op === 'add') s.drafts.push(...e.drafts);
    else if (e.op === 'update') s.drafts[s.drafts.findIndex((d: State) => d.id === e.draft.id)] = e.draft;
    else if (e.op === 'remove') s.drafts = s.drafts.filter((d: State) => d.id !== e.draft_id);
    else throw new Error(`apply-events: drafts/${e.op}`);
  },

  saved_snippets(w, e) {
    const s = w.state;
    if (e.op === 'add') s.saved_snippets.push(e.saved_snippet);
    else if (e.op === 'update') s.saved_snippets[s.saved_snippets.findIndex((x: State) => x.id === e.saved_snippet.id)] = e.saved_snippet;
    else if (e.op === 'remove') s.saved_snippets = s.saved_snippets.filter((x: State) => x.id !== e.saved_snippet_id);
    else throw new Error(`apply-events: saved_snippets/${e.op}`);
  },

  navigation_view(w, e) {
    const s = w.state;
    if (e.op === 'add') s.navigation_views.push(e.navigation_view);
    else if (e.op === 'update') Object.assign(byId(s.navigation_views, e.fragment, 'fragment') ?? {}, e.data);
    else if (e.op === 'remove') s.navigation_views = s.navigation_views.filter((v: State) => v.fragment !== e.fragment);
    else throw new Error(`apply-events: navigation_view/${e.op}`);
  },

  device(w, e) {
    const devices = w.state.devices;
    const key = String(e.device_id);
    if (e.op === 'add') {
      devices[key] = {
        push_key_id: null,
        push_token_id: null,
        pending_push_token_id: null,
        push_token_last_updated_timestamp: null,
        push_registration_error_code: null,
      };
    } else if (e.op === 'remove') delete devices[key];
    else if (e.op === 'update') {
      const { type: _t, op: _o, device_id: _d, ...changed } = e;
      Object.assign(devices[key], changed);
    } else throw new Error(`apply-events: device/${e.op}`);
  },

  channel_folder(w, e) {
    const s = w.state;
    if (e.op === 'add') {
      s.channel_folders.push(e.channel_folder);
      s.channel_folders.sort((a: State, b: State) => a.id - b.id);
    } else if (e.op === 'update') Object.assign(byId(s.channel_folders, e.channel_folder_id) ?? {}, e.data);
    else if (e.op === 'reorder') {
      for (const f of s.channel_folders) f.order = e.order.indexOf(f.id);
      s.channel_folders.sort((a: State, b: State) => a.order - b.order);
    } else throw new Error(`apply-events: channel_folder/${e.op}`);
  },

  scheduled_messages(w, e) {
    const s = w.state;
    const byTime = (a: State, b: State) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp;
    if (e.op === 'add') s.scheduled_messages.push(...e.scheduled_messages);
    else if (e.op === 'update') {
      const i = s.scheduled_messages.findIndex((m: State) => m.scheduled_message_id === e.scheduled_message.scheduled_message_id);
      s.scheduled_messages[i] = e.scheduled_message;
    } else if (e.op === 'remove') s.scheduled_messages = s.scheduled_messages.filter((m: State) => m.scheduled_message_id !== e.scheduled_message_id);
    else throw new Error(`apply-events: scheduled_messages/${e.op}`);
    s.scheduled_messages.sort(byTime);
  },

  reminders(w, e) {
    const s = w.state;
    if (e.op === 'add') s.reminders.push(...e.reminders);
    else if (e.op === 'remove') s.reminders = s.reminders.filter((r: State) => r.reminder_id !== e.reminder_id);
    else throw new Error(`apply-events: reminders/${e.op}`);
    // Register lists them by delivery time, then id.
    s.reminders.sort((a: State, b: State) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || a.reminder_id - b.reminder_id);
  },

  user_topic(w, e) {
    const s = w.state;
    s.user_topics = s.user_topics.filter((t: State) => !(t.stream_id === e.stream_id && t.topic_name === e.topic_name));
    // INHERIT (0) removes the topic's entry.
    if (e.visibility_policy !== 0) {
      s.user_topics.push({ stream_id: e.stream_id, topic_name: e.topic_name, visibility_policy: e.visibility_policy, last_updated: e.last_updated });
    }
  },

  custom_profile_fields(w, e) {
    w.state.custom_profile_fields = e.fields;
    const ids = new Set(e.fields.map((f: State) => String(f.id)));
    for (const u of w.users?.values() ?? []) {
      if (!u.profile_data) continue;
      for (const id of Object.keys(u.profile_data)) if (!ids.has(id)) delete u.profile_data[id];
    }
  },

  // Events that replace their whole section.
  alert_words: replaces('alert_words'),
  muted_topics: replaces('muted_topics'),
  muted_users: replaces('muted_users'),
  realm_playgrounds: replaces('realm_playgrounds'),
  onboarding_steps: replaces('onboarding_steps'),
  default_stream_groups: (w, e) => void (w.state.realm_default_stream_groups = e.default_stream_groups),
  default_streams: (w, e) => void (w.state.realm_default_streams = e.default_streams),
  has_zoom_token: (w, e) => void (w.state.has_zoom_token = e.value),
};

/** The event types this client model knows. */
export const EVENT_TYPES_APPLIED: ReadonlySet<string> = new Set(Object.keys(RULES));

function replaces(key: string): Rule {
  return (w, e) => void (w.state[key] = e[key]);
}

/**
 * Whether a channel message counts in `count` (Zulip's unmuted_stream_msgs): outside muted
 * channels and topics, or in an unmuted (2) or followed (3) topic of a muted channel.
 */
function countsAsUnread(w: Working, streamId: number, topic: string): boolean {
  const muted = byId(w.state.subscriptions ?? [], streamId, 'stream_id')?.is_muted ?? false;
  const name = topic.toLowerCase();
  const policy = (w.state.user_topics ?? []).find((t: State) => t.stream_id === streamId && t.topic_name.toLowerCase() === name)?.visibility_policy ?? 0;
  return muted ? policy === 2 || policy === 3 : policy !== 1;
}

/** A topic as this client shows it: the empty topic by its display name for clients without empty_topic_name. */
function displayTopic(w: Working, topic: string): string {
  return topic === '' && !w.has('empty_topic_name') ? (w.state.realm_empty_topic_display_name ?? 'general chat') : topic;
}

/** Zulip's apply_unread_message_event. */
function addUnreadMessage(w: Working, m: State, flags: string[]): void {
  const u = w.unread!;
  if (m.type === 'stream') {
    u.messages.set(m.id, { kind: 'stream', stream_id: m.stream_id, topic: m.subject });
  } else {
    const others = m.display_recipient.filter((r: State) => r.id !== w.o.userId);
    if (others.length <= 1) u.messages.set(m.id, { kind: 'private', other_user_id: others[0]?.id ?? w.o.userId });
    else u.messages.set(m.id, { kind: 'huddle', user_ids_string: sortedIds(m.display_recipient.map((r: State) => r.id)).join(',') });
  }
  if (flags.includes('mentioned')) u.mentions.add(m.id);
  else if (flags.includes('stream_wildcard_mentioned') || flags.includes('topic_wildcard_mentioned')) u.wildcards.add(m.id);
}

/** Zulip's add_message_to_unread_msgs: a message marked unread again, from the event's details. */
function addUnreadFromDetails(w: Working, id: number, d: State): void {
  const u = w.unread!;
  if (d.mentioned) u.mentions.add(id);
  if (d.type === 'stream') {
    // Details name the topic as stored; Zulip's clients show it as register does.
    u.messages.set(id, { kind: 'stream', stream_id: d.stream_id, topic: displayTopic(w, d.topic) });
    return;
  }
  const others = (d.user_ids as number[]).filter((uid) => uid !== w.o.userId);
  if (others.length <= 1) u.messages.set(id, { kind: 'private', other_user_id: others[0] ?? w.o.userId });
  else u.messages.set(id, { kind: 'huddle', user_ids_string: sortedIds([...others, w.o.userId]).join(',') });
}

function removeUnread(w: Working, id: number): void {
  w.unread!.messages.delete(id);
  w.unread!.mentions.delete(id);
  w.unread!.wildcards.delete(id);
}

function addPerson(w: Working, person: State): void {
  if (!w.users) return;
  const p = structuredClone(person);
  // client_gravatar: the client computes a gravatar from the address, when that is the real one.
  if (w.o.clientGravatar && String(p.avatar_url).startsWith(GRAVATAR) && p.email === p.delivery_email) p.avatar_url = null;
  p.is_active = true;
  if (!p.is_bot) p.profile_data = {};
  w.users.set(p.user_id, p);
}

async function removePerson(w: Working, userId: number): Promise<void> {
  if (w.users?.has(userId)) {
    if (w.has('user_list_incomplete')) w.users.delete(userId);
    else {
      // The "Unknown user" that replaces someone the client may no longer access: the server's.
      const fresh = await w.o.refetch(['realm_user']);
      w.users.set(userId, { ...[...fresh.realm_users, ...fresh.realm_non_active_users].find((u: State) => u.user_id === userId), is_active: true });
    }
  }
  if (w.o.includeSubscribers) dropSubscriber(w, userId);
}

function dropSubscriber(w: Working, userId: number): void {
  for (const c of ['subscriptions', 'unsubscribed', 'never_subscribed'].flatMap((l) => w.state[l] ?? [])) {
    changeSubscribers(w, c.stream_id, (ids) => ids.filter((id) => id !== userId));
  }
}

/** Keys of the own-user part of the state a role change recomputes (Zulip asks the database). */
const OWN_RIGHTS = [
  'is_admin',
  'is_owner',
  'is_moderator',
  'is_guest',
  'can_create_private_streams',
  'can_create_public_streams',
  'can_create_web_public_streams',
  'can_create_streams',
  'can_invite_others_to_realm',
];

async function updatePerson(w: Working, person: State): Promise<void> {
  const s = w.state;
  const id = person.user_id;
  if (id === w.o.userId) {
    if ('avatar_url' in person && 'avatar_url' in s) {
      s.avatar_source = person.avatar_source;
      s.avatar_url = person.avatar_url;
      s.avatar_url_medium = person.avatar_url_medium;
    }
    if ('role' in person && 'is_admin' in s) {
      const fresh = await w.o.refetch(['realm_user']);
      for (const key of OWN_RIGHTS) s[key] = fresh[key];
      if ('realm_default_streams' in s) s.realm_default_streams = (await w.o.refetch(['default_streams'])).realm_default_streams;
      const wasAdmin = w.users?.get(id)?.is_admin;
      if ('realm_bots' in s && wasAdmin !== fresh.is_admin) s.realm_bots = (await w.o.refetch(['realm_bot'])).realm_bots;
    }
    for (const field of ['delivery_email', 'email', 'full_name']) if (field in person && field in s) s[field] = person[field];
    if ('new_email' in person && 'email' in s) s.email = person.new_email;
  }
  const p = w.users?.get(id);
  if (!p) return;
  const update = { ...person };
  if ('avatar_url' in update && w.o.clientGravatar && String(update.avatar_url).startsWith(GRAVATAR) && p.email === p.delivery_email) {
    update.avatar_url = null;
    update.avatar_url_medium = null;
  }
  for (const field of Object.keys(p)) if (field in update) p[field] = update[field];
  if ('role' in update) {
    p.is_admin = update.role <= 200;
    p.is_owner = update.role === 100;
    p.is_guest = update.role === 600;
  }
  if ('custom_profile_field' in update) {
    const { id: fieldId, value, rendered_value } = update.custom_profile_field;
    p.profile_data ??= {};
    if (value === null) delete p.profile_data[String(fieldId)];
    else p.profile_data[String(fieldId)] = rendered_value === undefined ? { value } : { value, rendered_value };
  }
  if ('new_email' in update) p.email = update.new_email;
  if (update.is_active === false) forgetDeactivatedUser(w, id);
}

/** A deactivated user leaves every subscriber list, group and group setting (Zulip's apply_event). */
function forgetDeactivatedUser(w: Working, userId: number): void {
  const s = w.state;
  if (w.o.includeSubscribers) dropSubscriber(w, userId);
  const without = (setting: unknown) => {
    if (setting && typeof setting === 'object') {
      const anonymous = setting as { direct_members: number[] };
      anonymous.direct_members = anonymous.direct_members.filter((id) => id !== userId);
    }
  };
  for (const group of s.realm_user_groups ?? []) {
    group.members = group.members.filter((id: number) => id !== userId);
    for (const [key, value] of Object.entries(group)) if (key.startsWith('can_') && key.endsWith('_group')) without(value);
  }
  for (const [key, value] of Object.entries(s)) if (key.startsWith('realm_can_') && key.endsWith('_group')) without(value);
}

async function createStreams(w: Working, streams: State[]): Promise<void> {
  const s = w.state;
  for (const stream of streams) {
    const entry = structuredClone(stream);
    if (w.o.includeSubscribers) entry.subscribers = [];
    // A channel seen again that the user was once subscribed to comes back with their subscription's
    // settings, in `unsubscribed`; Zulip reads that from the database, and so does the server here.
    const fresh = await w.o.refetch(['subscription']);
    const formerly = byId(fresh.unsubscribed, stream.stream_id, 'stream_id');
    if (formerly) s.unsubscribed.push({ ...formerly, ...entry });
    else s.never_subscribed.push(entry);
    if ('streams' in s) s.streams.push(stream);
  }
  const byName = (a: State, b: State) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  s.unsubscribed.sort(byName);
  s.never_subscribed.sort(byName);
  if ('streams' in s) s.streams.sort(byName);
}

/**
 * Personal topic settings in archived channels are not in the state (Zulip's get_user_topics
 * leaves them out) and no event says so: a client drops them with the channel.
 */
function forgetTopicSettings(w: Working, streamId: number): void {
  const s = w.state;
  if ('user_topics' in s) s.user_topics = s.user_topics.filter((t: State) => t.stream_id !== streamId);
  if ('muted_topics' in s) {
    const names = new Set(channelEntries(s, streamId, ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']).map((c) => c.name));
    s.muted_topics = s.muted_topics.filter(([channel]: [string]) => !names.has(channel));
  }
}

/** The topic settings as the server has them now (user_topics and the legacy muted_topics come from separate asks). */
async function refetchTopicSettings(w: Working): Promise<void> {
  const s = w.state;
  if ('user_topics' in s) s.user_topics = (await w.o.refetch(['user_topic'])).user_topics;
  if ('muted_topics' in s) s.muted_topics = (await w.o.refetch(['muted_topics'])).muted_topics;
}

function deleteStreams(w: Working, ids: number[]): void {
  const s = w.state;
  const gone = (c: State) => !ids.includes(c.stream_id);
  for (const list of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) if (list in s) s[list] = s[list].filter(gone);
}

function updateStream(w: Working, e: Event): void {
  const s = w.state;
  const named = (c: State) => c.name.toLowerCase() === e.name.toLowerCase();
  const apply = (c: State, onlyKnown: boolean) => {
    if (onlyKnown && !(e.property in c)) return;
    c[e.property] = e.value;
    if (e.property === 'description') c.rendered_description = e.rendered_description;
    if (e.history_public_to_subscribers !== undefined) c.history_public_to_subscribers = e.history_public_to_subscribers;
    if (e.is_web_public !== undefined) c.is_web_public = e.is_web_public;
  };
  for (const list of ['subscriptions', 'unsubscribed', 'never_subscribed']) for (const c of (s[list] ?? []).filter(named)) apply(c, false);
  for (const c of (s.streams ?? []).filter(named)) apply(c, true);
}

/** Realm settings, and what Zulip's apply_event derives from them (asking the database where it does). */
async function updateRealm(w: Working, data: State): Promise<void> {
  const s = w.state;
  let derived = false;
  for (const [key, value] of Object.entries(data)) {
    if (key === 'max_file_upload_size_mib') {
      s.max_file_upload_size_mib = value;
      continue;
    }
    s[`realm_${key}`] = value;
    if (key === 'jitsi_server_url') s.jitsi_server_url = value ?? s.server_jitsi_server_url;
    if (key === 'message_edit_history_visibility_policy') s.realm_allow_edit_history = value !== 'none';
    if (key === 'authentication_methods') {
      s.realm_password_auth_enabled = Boolean(value.Email?.enabled || value.LDAP?.enabled);
      s.realm_email_auth_enabled = Boolean(value.Email?.enabled);
    }
    if (key === 'plan_type') s.zulip_plan_is_not_limited = value !== 1;
    if (DERIVED_FROM[key]) derived = true;
  }
  if (!derived) return;
  // The deprecated policies and the user's own rights follow these group settings; Zulip
  // recomputes them from the database.
  const fresh = await w.o.refetch(['realm', 'realm_user']);
  for (const [key, keys] of Object.entries(DERIVED_FROM)) {
    if (!(key in data)) continue;
    for (const k of keys) if (k in s) s[k] = fresh[k];
  }
}

const CAN_CREATE = ['can_create_streams'];
const DERIVED_FROM: Record<string, string[]> = {
  can_create_public_channel_group: ['realm_create_public_stream_policy', 'can_create_public_streams', ...CAN_CREATE],
  can_create_private_channel_group: ['realm_create_private_stream_policy', 'can_create_private_streams', ...CAN_CREATE],
  can_create_web_public_channel_group: ['realm_create_web_public_stream_policy', 'can_create_web_public_streams', ...CAN_CREATE],
  can_invite_users_group: ['can_invite_others_to_realm'],
  can_mention_many_users_group: ['realm_wildcard_mention_policy'],
};

/**
 * Clients without notification_settings_null see a subscription's unset notification settings
 * as the user's defaults (Zulip fills them in post_process_state from its raw state); which
 * settings are unset is what the server says with that capability.
 */
async function reinheritNotificationSettings(w: Working): Promise<void> {
  const s = w.state;
  const raw = await w.o.refetch(['subscription'], { notification_settings_null: true });
  for (const list of ['subscriptions', 'unsubscribed']) {
    for (const c of s[list] ?? []) {
      const unset = byId(raw[list], c.stream_id, 'stream_id');
      if (!unset) continue;
      for (const [field, setting] of Object.entries(STREAM_NOTIFICATION_DEFAULTS)) {
        if (unset[field] === null) c[field] = s.user_settings[setting];
      }
    }
  }
}
