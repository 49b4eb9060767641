// The channels overlay (Zulip's "Channel settings"), loaded the first time it opens: every channel
// one can see with its description and subscriber count, joining and leaving, creating a channel,
// and a channel's settings (one's own notifications for it; administrators change its settings,
// archive it, put it in a folder, add and remove subscribers; and manage the folders).
import { useEffect, useMemo, useState } from 'preact/hooks';
import {
  ROLE_GROUPS,
  archiveChannel,
  channelHash,
  channelSettingsHash,
  createChannel,
  isAdmin,
  setChannelAlert,
  subscribe,
  subscriberIds,
  systemGroups,
  unsubscribe,
  updateChannel,
  type ChannelDraft,
  type ChannelsRoute,
} from '../channels.ts';
import type { ChatClient } from '../client.ts';
import type { AppState } from '../state.ts';
import { useCloseOnEscape } from './OverlayKeys.ts';
import { ErrorLine, useAction } from './Action.tsx';
import { FolderPicker, FolderSettings } from './ChannelFolders.tsx';
import type { Channel } from '../types.ts';

interface Props {
  client: ChatClient;
  state: AppState;
  route: ChannelsRoute;
  /** Where closing leads: the conversation that was on screen. */
  closeHref: string;
}

export function ChannelsOverlay({ client, state, route, closeHref }: Props) {
  useCloseOnEscape(closeHref);
  const listed = route.tab === 'all' || route.tab === 'subscribed' ? route.tab : 'all';
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="channels-title">
      <div class="overlay-panel channels-overlay">
        <header class="overlay-header">
          <h1 id="channels-title">Channels</h1>
          <nav class="tabs" aria-label="Channel lists">
            <a href="#channels/subscribed" aria-current={route.tab === 'subscribed' ? 'page' : undefined}>
              Subscribed
            </a>
            <a href="#channels/all" aria-current={route.tab === 'all' ? 'page' : undefined}>
              All channels
            </a>
            {isAdmin(state) && (
              <a href="#channels/folders" aria-current={route.tab === 'folders' ? 'page' : undefined}>
                Folders
              </a>
            )}
          </nav>
          <a class="button button-small" href="#channels/new">
            Create channel
          </a>
          <a class="icon-button" href={closeHref} aria-label="Close">
            ✕
          </a>
        </header>
        <div class="overlay-body">
          <ChannelList client={client} state={state} which={listed} selected={route.tab === 'channel' ? route.streamId : null} />
          <section class="overlay-detail">
            {route.tab === 'new' && <CreateChannel client={client} state={state} />}
            {route.tab === 'folders' &&
              (isAdmin(state) ? <FolderSettings client={client} state={state} /> : <p class="hint">Only administrators manage folders.</p>)}
            {route.tab === 'channel' && <ChannelDetail key={route.streamId} client={client} state={state} streamId={route.streamId} />}
            {(route.tab === 'all' || route.tab === 'subscribed') && <p class="hint">Pick a channel to see its settings, or create one.</p>}
          </section>
        </div>
      </div>
    </div>
  );
}

function SubscribeButton({ client, state, channel }: { client: ChatClient; state: AppState; channel: Channel }) {
  const [error, run] = useAction();
  const subscribed = state.subs.has(channel.stream_id);
  return (
    <>
      <button
        type="button"
        class={`button button-small${subscribed ? ' button-secondary' : ''}`}
        aria-label={`${subscribed ? 'Unsubscribe from' : 'Subscribe to'} ${channel.name}`}
        onClick={() => run(() => (subscribed ? unsubscribe : subscribe)(client.api, channel.name))}
      >
        {subscribed ? 'Unsubscribe' : 'Subscribe'}
      </button>
      <ErrorLine error={error} />
    </>
  );
}

const subscriberCount = (n: number) => `${n} subscriber${n === 1 ? '' : 's'}`;

function ChannelList({ client, state, which, selected }: { client: ChatClient; state: AppState; which: 'all' | 'subscribed'; selected: number | null }) {
  const [filter, setFilter] = useState('');
  const channels = [...state.channels.values()]
    .filter((c) => (which === 'all' || state.subs.has(c.stream_id)) && c.name.toLowerCase().includes(filter.trim().toLowerCase()))
    .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
  return (
    <section class="overlay-list" aria-label={which === 'all' ? 'All channels' : 'Subscribed channels'}>
      <label for="channel-filter" class="visually-hidden">
        Filter channels
      </label>
      <input id="channel-filter" type="search" placeholder="Filter channels" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <ul class="channel-rows">
        {channels.length === 0 && <li class="hint">No channels.</li>}
        {channels.map((c) => (
          <li key={c.stream_id} class="channel-row" data-channel={c.name} aria-current={c.stream_id === selected ? 'true' : undefined}>
            <a href={channelSettingsHash(c)} class="channel-row-link">
              <span class="channel-row-name">
                <span aria-hidden="true">{c.invite_only ? '🔒 ' : '# '}</span>
                <span class="name">{c.name}</span>
              </span>
              {c.description && <span class="channel-row-description">{c.description}</span>}
              <span class="channel-row-count">{subscriberCount(c.subscriber_count)}</span>
            </a>
            <SubscribeButton client={client} state={state} channel={c} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** System group ids, fetched once per overlay opening. */
function useSystemGroups(client: ChatClient): Map<string, number> | null {
  const [groups, setGroups] = useState<Map<string, number> | null>(null);
  useEffect(() => {
    systemGroups(client.api).then(setGroups, () => setGroups(new Map()));
  }, [client]);
  return groups;
}

/** The fields a channel is made or changed with. */
function ChannelFields({
  draft,
  setDraft,
  groups,
  disabled = false,
}: {
  draft: ChannelDraft;
  setDraft: (d: ChannelDraft) => void;
  groups: Map<string, number>;
  disabled?: boolean;
}) {
  const known = typeof draft.canSend === 'number' && [...groups.values()].includes(draft.canSend);
  return (
    <fieldset class="channel-fields" disabled={disabled}>
      <label for="channel-name">Name</label>
      <input id="channel-name" required maxLength={60} value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
      <label for="channel-description">Description</label>
      <textarea
        id="channel-description"
        rows={2}
        maxLength={1024}
        value={draft.description}
        onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })}
      />
      <fieldset class="choices">
        <legend>Who can see it</legend>
        <label>
          <input type="radio" name="channel-privacy" checked={!draft.private} onChange={() => setDraft({ ...draft, private: false })} /> Public: anyone in the
          organization can find and join it
        </label>
        <label>
          <input type="radio" name="channel-privacy" checked={draft.private} onChange={() => setDraft({ ...draft, private: true })} /> Private: only subscribers
          see it
        </label>
      </fieldset>
      <label for="channel-can-send">Who can post</label>
      <select
        id="channel-can-send"
        value={known ? String(draft.canSend) : 'custom'}
        onChange={(e) => setDraft({ ...draft, canSend: Number(e.currentTarget.value) })}
      >
        {!known && <option value="custom">Custom</option>}
        {ROLE_GROUPS.filter(([name]) => groups.has(name)).map(([name, label]) => (
          <option key={name} value={String(groups.get(name))}>
            {label}
          </option>
        ))}
      </select>
    </fieldset>
  );
}

function CreateChannel({ client, state }: { client: ChatClient; state: AppState }) {
  const groups = useSystemGroups(client);
  const [draft, setDraft] = useState<ChannelDraft | null>(null);
  const [error, run] = useAction();
  useEffect(() => {
    if (groups && !draft) setDraft({ name: '', description: '', private: false, canSend: groups.get('role:everyone') ?? 0 });
  }, [groups]);
  if (!groups || !draft) return <p class="hint">Loading…</p>;
  async function submit(e: Event) {
    e.preventDefault();
    let id = 0;
    const name = draft!.name.trim();
    if (await run(async () => (id = await createChannel(client.api, state.me.userId, { ...draft!, name }))))
      location.hash = channelHash({ stream_id: id, name });
  }
  return (
    <form class="channel-form" aria-label="Create channel" onSubmit={submit}>
      <h2>Create a channel</h2>
      <ChannelFields draft={draft} setDraft={setDraft} groups={groups} />
      <ErrorLine error={error} />
      <button type="submit" class="button" disabled={!draft.name.trim()}>
        Create
      </button>
    </form>
  );
}

function ChannelDetail({ client, state, streamId }: { client: ChatClient; state: AppState; streamId: number }) {
  const channel = state.channels.get(streamId);
  if (!channel) return <p class="hint">This channel does not exist, or you cannot see it.</p>;
  const admin = isAdmin(state);
  return (
    <div class="channel-detail">
      <h2>
        <span aria-hidden="true">{channel.invite_only ? '🔒 ' : '# '}</span>
        {channel.name}
      </h2>
      {/* The server's rendering of the description (links, emoji), as every Zulip client shows it. */}
      <div class="channel-description rendered" dangerouslySetInnerHTML={{ __html: channel.rendered_description }} />
      <p class="channel-count">{subscriberCount(channel.subscriber_count)}</p>
      <div class="actions">
        <SubscribeButton client={client} state={state} channel={channel} />
        <a class="button button-small button-secondary" href={channelHash(channel)}>
          View channel
        </a>
      </div>
      {state.subs.has(streamId) && <ChannelAlerts client={client} state={state} streamId={streamId} />}
      {admin && (
        <ChannelSettingsForm
          key={JSON.stringify([channel.name, channel.description, channel.invite_only, channel.can_send_message_group])}
          client={client}
          channel={channel}
        />
      )}
      {admin && <FolderPicker client={client} state={state} channel={channel} />}
      <Subscribers client={client} state={state} channel={channel} canManage={admin} />
    </div>
  );
}

/** The user's notifications for a channel they are subscribed to: the channel's own choice, else their default. */
function ChannelAlerts({ client, state, streamId }: { client: ChatClient; state: AppState; streamId: number }) {
  const [error, run] = useAction();
  const sub = state.subs.get(streamId)!;
  const desktop = sub.desktop_notifications ?? state.settings.enable_stream_desktop_notifications;
  const sound = sub.audible_notifications ?? state.settings.enable_stream_audible_notifications;
  return (
    <fieldset class="choices">
      <legend>Your notifications for this channel</legend>
      <label>
        <input
          type="checkbox"
          checked={desktop}
          onChange={(e) => run(() => setChannelAlert(client.api, streamId, 'desktop_notifications', e.currentTarget.checked))}
        />{' '}
        Desktop notifications
      </label>
      <label>
        <input
          type="checkbox"
          checked={sound}
          onChange={(e) => run(() => setChannelAlert(client.api, streamId, 'audible_notifications', e.currentTarget.checked))}
        />{' '}
        Sound
      </label>
      <ErrorLine error={error} />
    </fieldset>
  );
}

function ChannelSettingsForm({ client, channel }: { client: ChatClient; channel: Channel }) {
  const groups = useSystemGroups(client);
  const [draft, setDraft] = useState<ChannelDraft>({
    name: channel.name,
    description: channel.description,
    private: channel.invite_only,
    canSend: channel.can_send_message_group,
  });
  const [error, run] = useAction();
  const [confirming, setConfirming] = useState(false);
  if (!groups) return <p class="hint">Loading…</p>;
  return (
    <form
      class="channel-form"
      aria-label="Channel settings"
      onSubmit={(e) => (e.preventDefault(), run(() => updateChannel(client.api, channel, { ...draft, name: draft.name.trim() })))}
    >
      <h3>Settings</h3>
      <ChannelFields draft={draft} setDraft={setDraft} groups={groups} />
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit" class="button button-small">
          Save changes
        </button>
        {!confirming && (
          <button type="button" class="button button-small button-danger" onClick={() => setConfirming(true)}>
            Archive channel
          </button>
        )}
        {confirming && (
          <>
            <span>Archive #{channel.name}? Nobody can post to it any more.</span>
            <button
              type="button"
              class="button button-small button-danger"
              onClick={() => run(() => archiveChannel(client.api, channel.stream_id)).then((ok) => ok && (location.hash = '#channels/all'))}
            >
              Archive
            </button>
            <button type="button" class="button button-small button-secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        )}
      </div>
    </form>
  );
}

function Subscribers({ client, state, channel, canManage }: { client: ChatClient; state: AppState; channel: Channel; canManage: boolean }) {
  const [ids, setIds] = useState<number[] | null>(null);
  const [adding, setAdding] = useState('');
  const [error, run] = useAction();
  // Fetched again when the count changes: someone joined or left, here or anywhere.
  useEffect(() => {
    subscriberIds(client.api, channel.stream_id).then(setIds, () => setIds([]));
  }, [channel.stream_id, channel.subscriber_count]);
  const others = useMemo(
    () => [...state.users.values()].filter((u) => u.is_active && !ids?.includes(u.user_id)).sort((a, b) => a.full_name.localeCompare(b.full_name)),
    [state.users, ids],
  );
  if (!ids) return null;
  const people = ids
    .map((id) => state.users.get(id))
    .filter((u) => u !== undefined)
    .sort((a, b) => a.full_name.localeCompare(b.full_name));
  return (
    <section class="subscribers" aria-label="Subscribers">
      <h3>Subscribers</h3>
      {canManage && (
        <form
          class="add-subscriber"
          onSubmit={(e) => (e.preventDefault(), adding && run(() => subscribe(client.api, channel.name, [Number(adding)])).then(() => setAdding('')))}
        >
          <label for="add-subscriber">Add a subscriber</label>
          <select id="add-subscriber" value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
            <option value="">Choose someone…</option>
            {others.map((u) => (
              <option key={u.user_id} value={String(u.user_id)}>
                {u.full_name}
              </option>
            ))}
          </select>
          <button type="submit" class="button button-small" disabled={!adding}>
            Add
          </button>
        </form>
      )}
      <ErrorLine error={error} />
      <ul class="subscriber-list">
        {people.map((u) => (
          <li key={u.user_id}>
            <span class="name">{u.full_name}</span>
            {canManage && u.user_id !== state.me.userId && (
              <button
                type="button"
                class="button button-small button-secondary"
                aria-label={`Remove ${u.full_name}`}
                onClick={() => run(() => unsubscribe(client.api, channel.name, [u.user_id]))}
              >
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
