// The logged-in page: top bar, conversations on the side, the narrow's messages and the compose box.
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api.ts';
import { isResolved, type ChatClient } from '../client.ts';
import type { Connection } from '../events.ts';
import { narrowTitle } from '../format.ts';
import { parseHash } from '../narrow.ts';
import { channelSettingsHash, isAdmin, parseChannelsHash, subscribe } from '../channels.ts';
import { useLazy } from '../lazy.ts';
import { parseOrganizationHash, parseUserHash } from '../organization.ts';
import { parseSettingsHash } from '../settings.ts';
import { parseDraftsHash } from '../drafts.ts';
import { narrowUnread, nextUnreadTopic, type AppState } from '../state.ts';
import { applyColorScheme } from '../theme.ts';
import { Compose } from './Compose.tsx';
import { Inbox, RecentConversations } from './Conversations.tsx';
import { KeyboardHelp } from './KeyboardHelp.tsx';
import { MessageList } from './MessageList.tsx';
import { SearchBox } from './SearchBox.tsx';
import { Sidebar } from './Sidebar.tsx';
import { TypingNotice } from './TypingNotice.tsx';

const CONNECTION_LABELS: Record<Connection, string> = {
  connecting: 'Connecting…',
  socket: 'Live',
  polling: 'Live (long-polling)',
  offline: 'Offline, retrying…',
};

/** Keys that act on the page when no text field has focus. */
function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

export function Chat({ client, state }: { client: ChatClient; state: AppState }) {
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const searchRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const title = narrowTitle(state, state.view.narrow);
  // An overlay's address (`#channels/…`, `#settings/…`) keeps the conversation under it.
  const [hash, setHash] = useState(location.hash);
  const channelsRoute = parseChannelsHash(hash);
  const settingsTab = parseSettingsHash(hash);
  const orgSection = parseOrganizationHash(hash);
  const profileId = parseUserHash(hash);
  const ChannelsOverlay = useLazy(() => import('./ChannelsOverlay.tsx').then((m) => m.ChannelsOverlay), channelsRoute !== null);
  const SettingsOverlay = useLazy(() => import('./SettingsOverlay.tsx').then((m) => m.SettingsOverlay), settingsTab !== null);
  const draftsTab = parseDraftsHash(hash);
  const DraftsOverlay = useLazy(() => import('./DraftsOverlay.tsx').then((m) => m.DraftsOverlay), draftsTab !== null);
  const UserProfile = useLazy(() => import('./UserProfile.tsx').then((m) => m.UserProfile), profileId !== null);
  const OrganizationOverlay = useLazy(() => import('./OrganizationOverlay.tsx').then((m) => m.OrganizationOverlay), orgSection !== null);
  const closeHref = client.hashOf(state.view.narrow);

  useEffect(() => {
    const onHash = () => {
      setHash(location.hash);
      const h = location.hash;
      const overlay = parseChannelsHash(h) || parseSettingsHash(h) || parseDraftsHash(h) || parseOrganizationHash(h) || parseUserHash(h);
      if (!overlay) client.open(parseHash(h));
      setSidebarOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setSidebarOpen(false);
        setHelpOpen(false);
        if (e.target instanceof HTMLElement && e.target.id === 'compose-content') e.target.blur();
      }
      if (isTyping(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      const act = SHORTCUT_ACTIONS[e.key];
      if (!act) return;
      e.preventDefault();
      act();
    };
    const SHORTCUT_ACTIONS: Record<string, () => void> = {
      '/': () => searchRef.current?.focus(),
      c: () => document.getElementById('compose-content')?.focus(),
      '?': () => setHelpOpen((open) => !open),
      r: () => {
        const { messages } = client.state.view;
        const selected = Number((document.activeElement as HTMLElement | null)?.closest<HTMLElement>('.message')?.dataset.messageId);
        const message = messages.find((m) => m.id === selected) ?? [...messages].reverse().find((m) => !m.localId);
        if (message) void client.reply(message, false);
      },
      n: () => {
        const next = nextUnreadTopic(client.state);
        if (next) location.hash = client.hashOf(next);
      },
    };
    window.addEventListener('hashchange', onHash);
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('keydown', onKey);
    };
  }, [client]);

  useEffect(() => applyColorScheme(state.settings.color_scheme), [state.settings.color_scheme]);
  // Logged out, the page follows the system again.
  useEffect(() => () => applyColorScheme(1), []);

  const unreadTotal = state.unread.size;
  useEffect(() => {
    document.title = `${unreadTotal ? `(${unreadTotal}) ` : ''}${title} · ${state.realmName}`;
  }, [unreadTotal, title, state.realmName]);

  return (
    <div class={`chat${sidebarOpen ? ' sidebar-open' : ''}`}>
      <button type="button" class="skip-link" onClick={() => listRef.current?.focus()}>
        Skip to messages
      </button>
      <header class="topbar">
        <button
          type="button"
          class="icon-button menu-button"
          aria-label="Conversations"
          aria-expanded={sidebarOpen}
          aria-controls="sidebar"
          onClick={() => setSidebarOpen(!sidebarOpen)}
        >
          ☰
        </button>
        <a class="realm-name" href="#">
          {state.realmName}
        </a>
        <SearchBox client={client} state={state} inputRef={searchRef} />
        <span class={`connection connection-${state.connection}`} role="status" data-connection={state.connection}>
          {CONNECTION_LABELS[state.connection]}
        </span>
        {isAdmin(state) && (
          <a class="me" href="#organization/organization-profile">
            Organization settings
          </a>
        )}
        <a class="me" href="#settings/profile" title={`${state.me.email}: personal settings`}>
          {state.me.fullName}
        </a>
        <button type="button" class="button button-secondary" onClick={() => void client.logout()}>
          Log out
        </button>
      </header>
      <Sidebar state={state} client={client} />
      <main class="conversation" aria-labelledby="narrow-title">
        <NarrowHeader client={client} state={state} title={title} />
        {state.view.narrow.kind === 'inbox' ? (
          <Inbox client={client} state={state} />
        ) : state.view.narrow.kind === 'recent' ? (
          <RecentConversations client={client} state={state} />
        ) : (
          <>
            <MessageList client={client} state={state} listRef={listRef} />
            <TypingNotice state={state} />
          </>
        )}
        <Compose client={client} state={state} />
      </main>
      {sidebarOpen && <div class="backdrop" onClick={() => setSidebarOpen(false)} />}
      {helpOpen && <KeyboardHelp onClose={() => setHelpOpen(false)} />}
      {channelsRoute && ChannelsOverlay && <ChannelsOverlay client={client} state={state} route={channelsRoute} closeHref={closeHref} />}
      {settingsTab && SettingsOverlay && <SettingsOverlay client={client} state={state} tab={settingsTab} closeHref={closeHref} />}
      {draftsTab && DraftsOverlay && <DraftsOverlay client={client} state={state} tab={draftsTab} closeHref={closeHref} />}
      {profileId && UserProfile && <UserProfile client={client} state={state} userId={profileId} closeHref={closeHref} />}
      {orgSection && OrganizationOverlay && <OrganizationOverlay client={client} state={state} section={orgSection} closeHref={closeHref} />}
    </div>
  );
}

function NarrowHeader({ client, state, title }: { client: ChatClient; state: AppState; title: string }) {
  const { narrow } = state.view;
  const [error, setError] = useState<string | null>(null);
  const [moving, setMoving] = useState(false);
  useEffect(() => {
    setError(null);
    setMoving(false);
  }, [narrow]);
  const act = (action: Promise<void>) => action.catch((err) => setError(describeError(err)));
  const sub = narrow.kind === 'channel' || narrow.kind === 'topic' ? state.subs.get(narrow.streamId) : undefined;
  return (
    <div class="narrow-header">
      <h1 id="narrow-title">{title}</h1>
      {narrowUnread(state, narrow) > 0 && (
        <button type="button" class="button button-secondary button-small" onClick={() => act(client.markNarrowRead(narrow))}>
          Mark all as read
        </button>
      )}
      {narrow.kind === 'topic' && (
        <>
          <button
            type="button"
            class="button button-secondary button-small"
            onClick={() => act(client.setResolved(narrow.streamId, narrow.topic, !isResolved(narrow.topic)))}
          >
            {isResolved(narrow.topic) ? 'Unresolve topic' : 'Resolve topic'}
          </button>
          <button type="button" class="button button-secondary button-small" aria-expanded={moving} onClick={() => setMoving(!moving)}>
            Move topic
          </button>
        </>
      )}
      {(narrow.kind === 'channel' || narrow.kind === 'topic') && <ChannelActions client={client} state={state} streamId={narrow.streamId} onError={setError} />}
      {narrow.kind === 'channel' && sub && (
        <button
          type="button"
          class="button button-secondary button-small"
          aria-pressed={sub.is_muted}
          onClick={() => act(client.setChannelMuted(sub.stream_id, !sub.is_muted))}
        >
          {sub.is_muted ? 'Unmute channel' : 'Mute channel'}
        </button>
      )}
      {moving && narrow.kind === 'topic' && <MoveTopicForm client={client} state={state} streamId={narrow.streamId} topic={narrow.topic} onError={setError} />}
      {error && (
        <p class="alert alert-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** A channel one is not subscribed to shows as a preview with a Subscribe button; every channel links to its settings. */
function ChannelActions({ client, state, streamId, onError }: { client: ChatClient; state: AppState; streamId: number; onError: (msg: string) => void }) {
  const channel = state.channels.get(streamId);
  if (!channel) return null;
  return (
    <>
      {!state.subs.has(streamId) && (
        <button type="button" class="button button-small" onClick={() => subscribe(client.api, channel.name).catch((err) => onError(describeError(err)))}>
          Subscribe
        </button>
      )}
      <a class="button button-secondary button-small" href={channelSettingsHash(channel)}>
        Channel settings
      </a>
    </>
  );
}

/** Where to move the topic on screen: a new name, another channel, or both. */
function MoveTopicForm({
  client,
  state,
  streamId,
  topic,
  onError,
}: {
  client: ChatClient;
  state: AppState;
  streamId: number;
  topic: string;
  onError: (msg: string) => void;
}) {
  const [to, setTo] = useState({ streamId, topic });
  const subs = [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
  function submit(e: Event) {
    e.preventDefault();
    client.moveTopic(streamId, topic, { streamId: to.streamId, topic: to.topic.trim() }).catch((err) => onError(describeError(err)));
  }
  return (
    <form class="move-topic" onSubmit={submit} aria-label="Move topic">
      <label for="move-channel">Channel</label>
      <select id="move-channel" value={to.streamId} onChange={(e) => setTo({ ...to, streamId: Number(e.currentTarget.value) })}>
        {subs.map((s) => (
          <option key={s.stream_id} value={s.stream_id}>
            #{s.name}
          </option>
        ))}
      </select>
      <label for="move-topic-name">Topic</label>
      <input id="move-topic-name" value={to.topic} required onInput={(e) => setTo({ ...to, topic: e.currentTarget.value })} />
      <button type="submit" class="button button-small" disabled={!to.topic.trim() || (to.streamId === streamId && to.topic.trim() === topic)}>
        Move
      </button>
    </form>
  );
}
