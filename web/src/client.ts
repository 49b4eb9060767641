// One logged-in session: registers an event queue, keeps the state current from its events,
// loads the messages of the narrow on screen, and performs what the user does through the API.
import { Api, ApiError, describeError, endBrowserSession } from './api.ts';
import { EventClient, type Snapshot } from '../../packages/client/src/index.ts';
import type { DeliveredEvent, DeliveredOf } from './events.ts';
import { apiNarrow, messageDmKey, narrowHash, normalizeNarrow, sameNarrow, sameTopic, unresolvedTopic, type Route } from './narrow.ts';
import { addLocalEcho, applyEvent, emptyView, ingestMessage, removeLocalEcho, stateFromRegister, type AppState, type View } from './state.ts';
import { notify } from './notifications.ts';
import { Store } from './store.ts';
import type { Destination, Message, Narrow } from './types.ts';

/** How long a failed topic list waits before it is asked for again. */
const TOPICS_RETRY_MS = 3000;

/** What the compose box is asked to do: write to `to`, with `text` added (a quote), or a draft's text in its place. */
export interface ComposeRequest {
  to: Destination;
  text: string;
  draftId?: number;
}

const PAGE_SIZE = 50;
/** The newest messages that recent conversations are made of. */
const RECENT_MESSAGES = 400;
/** Messages flagged per request of a "mark all" (Zulip's web app asks 1000 at a time). */
const FLAG_BATCH = 1000;
const PRESENCE_INTERVAL_MS = 60_000;
const READ_BATCH_DELAY_MS = 250;
/** Zulip's clients renew a typing notification every 10 seconds while typing goes on. */
const TYPING_RENEW_MS = 10_000;
const RESOLVED_PREFIX = '✔ ';
/** Events that change messages already loaded (see loadPage). */
const REPLAYED = new Set(['update_message', 'delete_message', 'reaction', 'update_message_flags']);

const REGISTER_PARAMS = {
  apply_markdown: true,
  client_gravatar: true,
  slim_presence: true,
  include_subscribers: false,
  fetch_event_types: [
    'realm',
    'realm_user',
    'subscription',
    'stream',
    'update_message_flags',
    'recent_private_conversations',
    'presence',
    'user_topic',
    'channel_folders',
    'realm_emoji',
    'realm_user_groups',
    'drafts',
    'scheduled_messages',
    'reminders',
    'message',
    'starred_messages',
    'user_settings',
    'realm_linkifiers',
    'default_streams',
    'custom_profile_fields',
    'user_status',
    'invites_changed',
    'realm_bot',
  ],
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_settings_object: true,
    stream_typing_notifications: true,
    simplified_presence_events: true,
    linkifier_url_template: true,
  },
};

export class ChatClient {
  readonly store = new Store<AppState | null>(null);
  readonly composeRequests = new Store<ComposeRequest | null>(null);
  private events: EventClient<DeliveredEvent> | null = null;
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private pendingRead = new Set<number>();
  private readTimer: ReturnType<typeof setTimeout> | null = null;
  private topicsLoading = new Set<number>();
  /** Channels whose topic list changed while it was being fetched. */
  private topicsStale = new Set<number>();
  private typingSentAt = 0;
  /** The last local id given to a message sent from here (local echo). */
  private localIds = 0;
  private typingTo: string | null = null;
  private stopped = false;
  /** Events that came while a page of messages was loading, kept to apply again to what it brings. */
  private readonly replays = new Set<DeliveredEvent[]>();

  constructor(
    readonly api: Api,
    private readonly onLoggedOut: (reason: string | null) => void,
  ) {}

  get state(): AppState {
    return this.store.get()!;
  }

  /** Registers and starts listening; the view opens on `route`. */
  async start(route: Route): Promise<void> {
    await this.register(emptyView(route.narrow, route.near));
    this.timers.push(setInterval(() => void this.sendPresence(), PRESENCE_INTERVAL_MS));
    this.timers.push(setInterval(() => this.expireTyping(), 5000));
    void this.sendPresence();
  }

  private async register(view: View): Promise<void> {
    const events = new EventClient<DeliveredEvent>({
      call: this.api.call,
      register: REGISTER_PARAMS,
      socketUrl: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/events/socket`,
      onEvents: (events) => this.onEvents(events),
      onReset: (snapshot) => void this.reset(snapshot),
      onConnection: (state) => this.store.update((s) => s && { ...s, connection: state }),
      onFatal: (err) => void this.logout(describeError(err)),
    });
    let snapshot: Snapshot;
    try {
      snapshot = await events.start();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return this.logout(describeError(err));
      throw err;
    }
    this.events = events;
    if (this.stopped) return void events.close({ keepQueue: true });
    await this.show(snapshot, view);
  }

  /** The state from a register snapshot, then the view's messages. */
  private async show(snapshot: Snapshot, view: View): Promise<void> {
    const connection = this.store.get()?.connection ?? 'connecting';
    this.store.set({ ...stateFromRegister(snapshot, { ...view, narrow: normalizeNarrow(view.narrow, snapshot.user_id) }), connection });
    // The messages first: the sidebar's topic lists are asked for once they are on screen, so the
    // two requests do not share the server while the user waits for the messages.
    await this.loadView();
    this.loadMissingTopics();
  }

  /** The queue was gone (the server forgot it, or it expired while the computer slept) and a new one is registered: start over, same view. */
  private async reset(snapshot: Snapshot): Promise<void> {
    const { narrow, near } = this.state.view;
    await this.show(snapshot, emptyView(narrow, near));
  }

  stop(): void {
    this.stopped = true;
    void this.events?.close({ keepQueue: true });
    for (const timer of this.timers) clearInterval(timer);
    if (this.readTimer) clearTimeout(this.readTimer);
  }

  async logout(reason: string | null = null): Promise<void> {
    const queueId = this.events?.queueId;
    this.stop();
    if (queueId) await this.api.delete('/events', { queue_id: queueId }).catch(() => undefined);
    if (this.api.auth === 'session') await endBrowserSession().catch(() => undefined);
    this.onLoggedOut(reason);
  }

  private onEvents(events: DeliveredEvent[]): void {
    const changes = events.filter((e) => REPLAYED.has(e.type));
    if (changes.length) for (const replay of this.replays) replay.push(...changes);
    let state = this.state;
    for (const event of events) {
      this.followMovedTopic(state, event);
      state = applyEvent(state, event);
      if (event.type === 'message') this.alert(state, event);
    }
    this.store.set(state);
    this.loadMissingTopics();
  }

  /** A desktop notification or sound for a new message, as the user's settings say; clicking one opens its conversation. */
  private alert(state: AppState, event: DeliveredOf<'message'>): void {
    const message = ingestMessage(event.message, state.me.userId, event.flags);
    const narrow: Narrow =
      message.type === 'stream'
        ? { kind: 'topic', streamId: message.stream_id!, topic: message.subject }
        : { kind: 'dm', userIds: messageDmKey(message, state.me.userId).split(',').map(Number) };
    notify(state, message, () => (location.hash = this.hashOf(narrow)));
  }

  /** When the topic on screen moves as a whole (renamed, resolved, moved), the view goes with it. */
  private followMovedTopic(state: AppState, e: DeliveredEvent): void {
    const { narrow, messages } = state.view;
    const moved = e.type === 'update_message' && (e.subject !== undefined || e.new_stream_id !== undefined);
    if (!moved || e.propagate_mode !== 'change_all' || narrow.kind !== 'topic') return;
    const ids = new Set<number>(e.message_ids);
    if (!messages.some((m) => ids.has(m.id))) return;
    const destination: Narrow = { kind: 'topic', streamId: e.new_stream_id ?? narrow.streamId, topic: e.subject ?? narrow.topic };
    // After this batch of events is applied: the new address names the channel by its new state.
    queueMicrotask(() => {
      history.replaceState(null, '', this.hashOf(destination));
      this.open({ narrow: destination, near: null });
    });
  }

  hashOf(narrow: Narrow): string {
    return narrowHash(narrow, {
      channel: (id) => this.state.subs.get(id)?.name ?? this.state.channels.get(id)?.name ?? String(id),
      user: (id) => this.state.users.get(id)?.full_name ?? String(id),
    });
  }

  /** Shows another narrow (the address changed). */
  open(route: Route): void {
    const narrow = normalizeNarrow(route.narrow, this.state.me.userId);
    const { view } = this.state;
    if (sameNarrow(view.narrow, narrow) && view.near === route.near && !view.error) return;
    this.reloadView(narrow, route.near);
  }

  /** Loads a narrow's messages afresh (also to retry after an error). */
  reloadView(narrow: Narrow = this.state.view.narrow, near: number | null = this.state.view.near): void {
    this.store.update((s) => s && { ...s, view: emptyView(narrow, near) });
    void this.loadView();
    this.loadMissingTopics();
  }

  private async fetchMessages(view: View, anchor: number | string, before: number, after: number): Promise<any> {
    return this.api.get('/messages', {
      anchor: String(anchor),
      num_before: before,
      num_after: after,
      include_anchor: typeof anchor === 'string' || view.near === anchor,
      narrow: JSON.stringify(apiNarrow(view.narrow)),
      apply_markdown: true,
      client_gravatar: true,
    });
  }

  /** Applies a fetch's result if the view it was made for is still on screen. */
  private settle(view: View, change: (current: View) => View): void {
    this.store.update((s) => (s && sameNarrow(s.view.narrow, view.narrow) && s.view.near === view.near ? { ...s, view: change(s.view) } : s));
  }

  /**
   * Fetches one page of the view's messages and lets `place` put them in; the view shows an
   * error instead if the fetch fails. The server may have answered before or after the changes
   * whose events came meanwhile: those are applied again (they are idempotent), so a message
   * deleted or edited during the fetch is not brought back as it was.
   */
  private async loadPage(
    anchor: number | string,
    before: number,
    after: number,
    loading: View['loading'],
    place: (current: View, fetched: Message[], r: any) => View,
  ): Promise<void> {
    const view = this.state.view;
    if (loading !== 'initial') this.settle(view, (current) => ({ ...current, loading }));
    const replay: DeliveredEvent[] = [];
    this.replays.add(replay);
    try {
      const r = await this.fetchMessages(view, anchor, before, after);
      const fetched: Message[] = r.messages.map((m: any) => ingestMessage(m, this.state.me.userId));
      this.settle(view, (current) => ({ ...place(current, fetched, r), loading: null }));
      if (replay.length) {
        this.store.update((s) => s && replay.reduce(applyEvent, s));
        // A replayed move drops the topic lists it touched again: they are fetched anew.
        this.loadMissingTopics();
      }
    } catch (err) {
      this.settle(view, (current) => ({ ...current, loading: null, error: describeError(err) }));
    } finally {
      this.replays.delete(replay);
    }
  }

  private loadView(): Promise<void> {
    const { near, narrow } = this.state.view;
    // The inbox is the unread state itself; recent conversations are the newest messages.
    if (narrow.kind === 'inbox')
      return Promise.resolve(this.settle(this.state.view, (current) => ({ ...current, loading: null, foundOldest: true, foundNewest: true })));
    if (narrow.kind === 'recent')
      return this.loadPage('newest', RECENT_MESSAGES, 0, 'initial', (current, fetched, r) => ({
        ...withNewer(current, fetched, r.found_newest),
        foundOldest: r.found_oldest,
      }));
    return this.loadPage(near ?? 'first_unread', PAGE_SIZE, PAGE_SIZE, 'initial', (current, fetched, r) => ({
      ...withNewer(current, fetched, r.found_newest),
      foundOldest: r.found_oldest,
    }));
  }

  async loadOlder(): Promise<void> {
    const { loading, foundOldest, messages } = this.state.view;
    if (loading || foundOldest || !messages.length) return;
    await this.loadPage(messages[0]!.id, PAGE_SIZE, 0, 'older', (current, fetched, r) => ({
      ...current,
      messages: mergeMessages(fetched, current.messages),
      foundOldest: r.found_oldest,
    }));
  }

  async loadNewer(): Promise<void> {
    const { loading, foundNewest, messages } = this.state.view;
    if (loading || foundNewest || !messages.length) return;
    await this.loadPage(messages.at(-1)!.id, 0, PAGE_SIZE, 'newer', (current, fetched, r) => withNewer(current, fetched, r.found_newest));
  }

  /** Fetches the topic list of the channel on screen when it is not known (first visit, or after a move). */
  private loadMissingTopics(): void {
    const { narrow } = this.state.view;
    if (narrow.kind === 'channel' || narrow.kind === 'topic') this.loadTopics(narrow.streamId);
  }

  /** Fetches a subscribed channel's topic list when it is not known (the view's, or one the compose box completes). */
  loadTopics(streamId: number): void {
    if (this.state.topics.has(streamId) || !this.state.subs.has(streamId)) return;
    // A move while the list is on its way makes that answer stale: it is fetched again after it.
    if (this.topicsLoading.has(streamId)) {
      this.topicsStale.add(streamId);
      return;
    }
    this.topicsLoading.add(streamId);
    this.api
      .get(`/users/me/${streamId}/topics`)
      .then((r) => {
        if (!this.topicsStale.has(streamId)) this.store.update((s) => s && { ...s, topics: new Map(s.topics).set(streamId, r.topics) });
      })
      .catch((err) => {
        console.warn('topics', describeError(err));
        // Asked again in a while rather than left "Loading topics…".
        setTimeout(() => this.loadTopics(streamId), TOPICS_RETRY_MS);
      })
      .finally(() => {
        this.topicsLoading.delete(streamId);
        if (this.topicsStale.delete(streamId)) this.loadTopics(streamId);
      });
  }

  /** Marks messages read at once on screen, and tells the server in batches. */
  markRead(ids: number[]): void {
    const fresh = ids.filter((id) => !this.pendingRead.has(id));
    if (fresh.length === 0) return;
    for (const id of fresh) this.pendingRead.add(id);
    this.store.update(
      (s) => s && applyEvent(s, { id: -1, type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: fresh, all: false }),
    );
    this.readTimer ??= setTimeout(() => {
      this.readTimer = null;
      const messages = [...this.pendingRead];
      this.pendingRead.clear();
      this.api.post('/messages/flags', { messages, op: 'add', flag: 'read' }).catch((err) => console.warn('marking read', describeError(err)));
    }, READ_BATCH_DELAY_MS);
  }

  /** Opens the compose box on a message's conversation (`r`); quoting adds its Markdown, as Zulip quotes it. */
  async reply(message: Message, quote: boolean): Promise<void> {
    const myId = this.state.me.userId;
    const to: Destination =
      message.type === 'stream'
        ? { kind: 'stream', streamId: message.stream_id!, topic: message.subject }
        : { kind: 'dm', userIds: messageDmKey(message, myId).split(',').map(Number) };
    let text = '';
    if (quote) {
      const raw = await this.rawContent(message.id);
      const narrow: Narrow = to.kind === 'stream' ? { kind: 'topic', streamId: to.streamId, topic: to.topic } : { kind: 'dm', userIds: to.userIds };
      const longestRun = Math.max(0, ...[...raw.matchAll(/`+/g)].map((r) => r[0].length));
      const fence = '`'.repeat(Math.max(3, longestRun + 1));
      text = `@_**${message.sender_full_name}|${message.sender_id}** [said](${this.hashOf(narrow)}/near/${message.id}):\n${fence}quote\n${raw}\n${fence}\n`;
    }
    this.composeRequests.set({ to, text });
  }

  async setStarred(messageId: number, starred: boolean): Promise<void> {
    await this.api.post('/messages/flags', { messages: [messageId], op: starred ? 'add' : 'remove', flag: 'starred' });
  }

  /** Marks every unread message of a view read ("Mark all as read"), a batch at a time, as Zulip's web app does. */
  async markNarrowRead(narrow: Narrow): Promise<void> {
    const terms = narrow.kind === 'home' || narrow.kind === 'inbox' || narrow.kind === 'recent' ? [] : apiNarrow(narrow);
    await this.flagRange([...terms, { operator: 'is', operand: 'unread' }], 'oldest', 'add');
  }

  /**
   * Marks the message and those after it in the view unread again. Reading then pauses in this
   * view (the messages stay on screen): else they would be read again at once.
   */
  async markUnreadFrom(messageId: number): Promise<void> {
    const { narrow } = this.state.view;
    this.store.update((s) => (s && sameNarrow(s.view.narrow, narrow) ? { ...s, view: { ...s.view, readingPaused: true } } : s));
    await this.flagRange(apiNarrow(narrow), messageId, 'remove');
  }

  /** POST /messages/flags/narrow on the `read` flag from `anchor` to the newest message, in batches. */
  private async flagRange(narrow: ReturnType<typeof apiNarrow>, anchor: number | 'oldest', op: 'add' | 'remove'): Promise<void> {
    let next: number | string = anchor;
    let includeAnchor = true;
    for (;;) {
      const r = await this.api.post('/messages/flags/narrow', {
        anchor: String(next),
        include_anchor: includeAnchor,
        num_before: 0,
        num_after: FLAG_BATCH,
        narrow,
        op,
        flag: 'read',
      });
      if (r.found_newest || r.last_processed_id === null) return;
      next = r.last_processed_id;
      includeAnchor = false;
    }
  }

  /**
   * Sends a message, shown at once as a local echo (plain text) that the server's message replaces
   * when its event comes back to this queue (`local_message_id`); a refused message takes its echo away.
   */
  async send(to: Destination, content: string): Promise<void> {
    this.typing(to, 'stop');
    const localId = String(++this.localIds);
    const queueId = this.events?.queueId;
    if (queueId) this.store.update((s) => s && addLocalEcho(s, this.localEcho(to, content, localId)));
    const echo = { queue_id: queueId, local_id: queueId ? localId : undefined };
    try {
      if (to.kind === 'stream') await this.api.post('/messages', { type: 'stream', to: to.streamId, topic: to.topic, content, ...echo });
      else await this.api.post('/messages', { type: 'direct', to: to.userIds, content, ...echo });
    } catch (err) {
      this.store.update((s) => s && removeLocalEcho(s, localId));
      throw err;
    }
  }

  private localEcho(to: Destination, content: string, localId: string): Omit<Message, 'id'> {
    const { me, users, subs } = this.state;
    const person = (id: number) => ({ id, email: users.get(id)?.email ?? '', full_name: users.get(id)?.full_name ?? '' });
    const text = document.createElement('p');
    text.textContent = content;
    return {
      localId,
      sender_id: me.userId,
      sender_full_name: me.fullName,
      sender_email: me.email,
      avatar_url: users.get(me.userId)?.avatar_url ?? null,
      content: text.outerHTML,
      timestamp: Math.floor(Date.now() / 1000),
      is_me_message: false,
      flags: ['read'],
      reactions: [],
      ...(to.kind === 'stream'
        ? { type: 'stream' as const, stream_id: to.streamId, subject: to.topic, display_recipient: subs.get(to.streamId)?.name ?? '' }
        : { type: 'private' as const, subject: '', display_recipient: [...new Set([me.userId, ...to.userIds])].map(person) }),
    };
  }

  /** Typing notifications for what is being composed: start (renewed while typing goes on) and stop. */
  typing(to: Destination, op: 'start' | 'stop'): void {
    const key = JSON.stringify(to);
    if (op === 'start' && this.typingTo === key && Date.now() - this.typingSentAt < TYPING_RENEW_MS) return;
    if (op === 'stop' && this.typingTo === null) return;
    this.typingTo = op === 'start' ? key : null;
    this.typingSentAt = Date.now();
    const params = to.kind === 'stream' ? { type: 'stream', stream_id: to.streamId, topic: to.topic, op } : { type: 'direct', to: to.userIds, op };
    this.api.post('/typing', params).catch((err) => console.warn('typing', describeError(err)));
  }

  render(content: string): Promise<string> {
    return this.api.post('/messages/render', { content }).then((r) => r.rendered);
  }

  rawContent(messageId: number): Promise<string> {
    return this.api.get(`/messages/${messageId}`, { apply_markdown: false }).then((r) => r.message.content);
  }

  async edit(messageId: number, content: string): Promise<void> {
    await this.api.patch(`/messages/${messageId}`, { content });
  }

  async remove(messageId: number): Promise<void> {
    await this.api.delete(`/messages/${messageId}`);
  }

  async toggleReaction(message: Message, emojiName: string): Promise<void> {
    const mine = message.reactions.some((r) => r.emoji_name === emojiName && r.user_id === this.state.me.userId);
    if (mine) await this.api.delete(`/messages/${message.id}/reactions`, { emoji_name: emojiName });
    else await this.api.post(`/messages/${message.id}/reactions`, { emoji_name: emojiName });
  }

  /** Moves a whole topic to another name, channel, or both (the server checks who may). */
  async moveTopic(streamId: number, topic: string, to: { streamId: number; topic: string }): Promise<void> {
    const anyMessage = this.state.view.messages.at(-1)?.id ?? this.state.topics.get(streamId)?.find((t) => sameTopic(t.name, topic))?.max_id;
    if (anyMessage === undefined) return;
    await this.api.patch(`/messages/${anyMessage}`, {
      propagate_mode: 'change_all',
      ...(to.topic !== topic ? { topic: to.topic } : {}),
      ...(to.streamId !== streamId ? { stream_id: to.streamId } : {}),
    });
  }

  /** Resolves a topic (Zulip marks it with a leading ✔) or unresolves it. */
  setResolved(streamId: number, topic: string, resolved: boolean): Promise<void> {
    return this.moveTopic(streamId, topic, { streamId, topic: resolved ? RESOLVED_PREFIX + topic : unresolvedTopic(topic) });
  }

  async setChannelMuted(streamId: number, muted: boolean): Promise<void> {
    await this.api.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: streamId, property: 'is_muted', value: muted }] });
  }

  /** A link to an uploaded file, which needs credentials, opened through a temporary URL. */
  async openUpload(path: string): Promise<void> {
    // Opened at once, while the click still counts as the user's (else it is a blocked pop-up).
    const win = window.open('', '_blank');
    if (win) win.opener = null;
    try {
      const { url } = await this.api.get(`/user_uploads/${path.replace(/^\/user_uploads\//, '')}`);
      if (win) win.location.href = url;
    } catch (err) {
      win?.close();
      throw err;
    }
  }

  private async sendPresence(): Promise<void> {
    const status = document.visibilityState === 'visible' ? 'active' : 'idle';
    await this.api.post('/users/me/presence', { status, ping_only: true, new_user_input: status === 'active' }).catch(() => undefined);
  }

  private expireTyping(): void {
    const now = Date.now();
    const s = this.store.get();
    if (!s || ![...s.typing.values()].some((who) => [...who.values()].some((until) => until <= now))) return;
    const typing = new Map([...s.typing].map(([place, who]) => [place, new Map([...who].filter(([, until]) => until > now))]));
    this.store.set({ ...s, typing });
  }
}

export const isResolved = (topic: string) => topic.startsWith(RESOLVED_PREFIX);

/**
 * A view with fetched messages added at its newer end. Messages that arrived live during the
 * fetch are kept if the fetch reached the newest message, else they lie past a gap and go.
 */
function withNewer(view: View, fetched: Message[], foundNewest: boolean): View {
  const newestFetched = fetched.at(-1)?.id ?? Infinity;
  const messages = mergeMessages(view.messages, fetched);
  return { ...view, messages: foundNewest ? messages : messages.filter((m) => m.id <= newestFetched), foundNewest };
}

/** Two runs of messages as one, by id, each message once. */
function mergeMessages(a: Message[], b: Message[]): Message[] {
  const byId = new Map(a.map((m) => [m.id, m]));
  for (const m of b) byId.set(m.id, m);
  return [...byId.values()].sort((x, y) => x.id - y.id);
}
