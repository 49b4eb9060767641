// Channels (by folder, with unread counts and muted state), the open channel's topics, direct
// messages, and people with their presence.
import type { ComponentChildren } from 'preact';
import type { ChatClient } from '../client.ts';
import { dmName } from '../format.ts';
import { sameNarrow, sameTopic } from '../narrow.ts';
import { isTopicMuted, narrowUnread, presenceStatus, topicKey, unreadCounts, type AppState, type UnreadCounts } from '../state.ts';
import type { Subscription, Narrow } from '../types.ts';
import { userHash } from '../organization.ts';
import { Avatar } from './Avatar.tsx';
import { StatusText } from './StatusText.tsx';

function UnreadBadge({ count, muted = false }: { count: number | undefined; muted?: boolean }) {
  if (!count) return null;
  return (
    <span class={`unread-count${muted ? ' unread-muted' : ''}`} aria-label={`${count} unread`} data-unread={count}>
      {count}
    </span>
  );
}

function NavLink({ client, narrow, current, children }: { client: ChatClient; narrow: Narrow; current: Narrow; children: ComponentChildren }) {
  const here =
    narrow.kind === 'topic' && current.kind === 'topic'
      ? narrow.streamId === current.streamId && sameTopic(narrow.topic, current.topic)
      : sameNarrow(narrow, current);
  return (
    <a class="nav-link" href={client.hashOf(narrow)} aria-current={here ? 'page' : undefined}>
      {children}
    </a>
  );
}

function byName(a: Subscription, b: Subscription) {
  return a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });
}

/** Pinned channels first, then one group per folder (in the folders' order), then the rest. */
function channelGroups(state: AppState): { label: string; subs: Subscription[] }[] {
  const subs = [...state.subs.values()].sort(byName);
  const groups = [{ label: 'Pinned', subs: subs.filter((s) => s.pin_to_top) }];
  const folders = state.folders.filter((f) => !f.is_archived).sort((a, b) => a.order - b.order);
  for (const folder of folders) groups.push({ label: folder.name, subs: subs.filter((s) => !s.pin_to_top && s.folder_id === folder.id) });
  const foldered = new Set(folders.map((f) => f.id));
  groups.push({
    label: folders.length ? 'Other channels' : 'Channels',
    subs: subs.filter((s) => !s.pin_to_top && !(s.folder_id !== null && foldered.has(s.folder_id))),
  });
  return groups.filter((g) => g.subs.length > 0);
}

function ChannelItem({ client, state, sub, counts }: { client: ChatClient; state: AppState; sub: Subscription; counts: UnreadCounts }) {
  const { narrow } = state.view;
  const open = (narrow.kind === 'channel' || narrow.kind === 'topic') && narrow.streamId === sub.stream_id;
  const topics = open ? state.topics.get(sub.stream_id) : undefined;
  return (
    <li class={`channel${sub.is_muted ? ' muted' : ''}`} style={{ '--channel-color': sub.color }}>
      <NavLink client={client} narrow={{ kind: 'channel', streamId: sub.stream_id }} current={narrow}>
        <span class="channel-mark" aria-hidden="true">
          {sub.invite_only ? '🔒' : '#'}
        </span>
        <span class="name">{sub.name}</span>
        {sub.is_muted && <span class="muted-label">muted</span>}
        <UnreadBadge count={counts.channels.get(sub.stream_id)} muted={sub.is_muted} />
      </NavLink>
      {open && (
        <ul class="topics" aria-label={`Topics in ${sub.name}`}>
          {!topics && <li class="hint">Loading topics…</li>}
          {topics?.length === 0 && <li class="hint">No topics yet</li>}
          {topics?.map((t) => {
            const muted = isTopicMuted(state, sub.stream_id, t.name);
            return (
              <li key={t.name} class={muted ? 'muted' : ''}>
                <NavLink client={client} narrow={{ kind: 'topic', streamId: sub.stream_id, topic: t.name }} current={narrow}>
                  <span class="name">{t.name}</span>
                  {muted && <span class="muted-label">muted</span>}
                  <UnreadBadge count={counts.topics.get(topicKey(sub.stream_id, t.name))} muted={muted} />
                </NavLink>
              </li>
            );
          })}
        </ul>
      )}
    </li>
  );
}

/** The views at the top of the sidebar. */
const VIEWS: [name: string, narrow: Narrow][] = [
  ['Inbox', { kind: 'inbox' }],
  ['Recent conversations', { kind: 'recent' }],
  ['Combined feed', { kind: 'home' }],
  ['Mentions', { kind: 'mentions' }],
  ['Starred messages', { kind: 'starred' }],
  ['All direct messages', { kind: 'dms' }],
];

const PRESENCE_LABELS = { active: 'active', idle: 'idle', offline: 'offline' } as const;

/** A presence dot; its words go after the name (`status` below), for screen readers. */
function PresenceDot({ state, userId }: { state: AppState; userId: number }) {
  const status = presenceStatus(state.presence.get(userId), Date.now() / 1000);
  return <span class={`presence presence-${status}`} title={PRESENCE_LABELS[status]} aria-hidden="true" />;
}

function PresenceWords({ state, userId }: { state: AppState; userId: number }) {
  return <span class="visually-hidden">({PRESENCE_LABELS[presenceStatus(state.presence.get(userId), Date.now() / 1000)]})</span>;
}

export function Sidebar({ state, client }: { state: AppState; client: ChatClient }) {
  const counts = unreadCounts(state);
  const { narrow } = state.view;
  const dms = [...state.recentDms].sort((a, b) => b[1] - a[1]).map(([key]) => key);
  const people = [...state.users.values()]
    .filter((u) => u.is_active && !u.is_bot && u.user_id !== state.me.userId)
    .sort((a, b) => a.full_name.localeCompare(b.full_name));
  return (
    <nav id="sidebar" class="sidebar" aria-label="Conversations">
      <ul class="nav-list">
        {VIEWS.map(([name, view]) => (
          <li key={name}>
            <NavLink client={client} narrow={view} current={narrow}>
              <span class="name">{name}</span>
              {view.kind !== 'recent' && <UnreadBadge count={narrowUnread(state, view, counts)} />}
            </NavLink>
          </li>
        ))}
        {(
          [
            ['Drafts', '#drafts', state.drafts.length],
            ['Scheduled messages', '#scheduled', state.scheduled.length],
            ['Reminders', '#reminders', state.reminders.length],
          ] as const
        ).map(([name, href, count]) => (
          <li key={href}>
            <a class="nav-link" href={href}>
              <span class="name">{name}</span>
              {count > 0 && (
                <span class="draft-count" aria-label={`${count} waiting`}>
                  {count}
                </span>
              )}
            </a>
          </li>
        ))}
      </ul>
      {channelGroups(state).map((group) => (
        <section key={group.label} aria-label={group.label}>
          <h2>{group.label}</h2>
          <ul class="nav-list channels">
            {group.subs.map((sub) => (
              <ChannelItem key={sub.stream_id} client={client} state={state} sub={sub} counts={counts} />
            ))}
          </ul>
        </section>
      ))}
      {state.subs.size === 0 && <p class="hint">You are not subscribed to any channel.</p>}
      <p class="channel-links">
        <a href="#channels/all">Browse channels</a>
        <a href="#channels/new">Create a channel</a>
      </p>
      <section aria-label="Direct messages">
        <h2>Direct messages</h2>
        <ul class="nav-list dms">
          {dms.length === 0 && <li class="hint">No conversations yet</li>}
          {dms.map((key) => {
            const ids = key.split(',').map(Number);
            return (
              <li key={key}>
                <NavLink client={client} narrow={{ kind: 'dm', userIds: ids }} current={narrow}>
                  {ids.length === 1 ? (
                    <PresenceDot state={state} userId={ids[0]!} />
                  ) : (
                    <span class="group-mark" aria-hidden="true">
                      👥
                    </span>
                  )}
                  <span class="name">{dmName(state, key)}</span>
                  {ids.length === 1 && <PresenceWords state={state} userId={ids[0]!} />}
                  <UnreadBadge count={counts.dms.get(key)} />
                </NavLink>
              </li>
            );
          })}
        </ul>
      </section>
      <details class="people">
        <summary>
          <h2>People</h2>
        </summary>
        <ul class="nav-list">
          {people.map((u) => (
            <li key={u.user_id} class="person" data-user-id={u.user_id}>
              <NavLink client={client} narrow={{ kind: 'dm', userIds: [u.user_id] }} current={narrow}>
                <Avatar user={u} size="small" />
                <PresenceDot state={state} userId={u.user_id} />
                <span class="name">{u.full_name}</span>
                <PresenceWords state={state} userId={u.user_id} />
                <StatusText status={state.org.statuses.get(u.user_id)} />
              </NavLink>
              <a class="icon-button profile-link" href={userHash(u.user_id)} aria-label={`Profile of ${u.full_name}`} title="Profile">
                ⓘ
              </a>
            </li>
          ))}
        </ul>
      </details>
    </nav>
  );
}
