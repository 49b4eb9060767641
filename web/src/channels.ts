// Channels beyond one's subscriptions: the list of every channel the user can see, kept current by
// `stream` and `subscription` events (Zulip's stream_data), and the API calls that create,
// change, archive, join and leave them.
import type { Api } from './api.ts';
import type { DeliveredOf } from './events.ts';
import { narrowHash } from './narrow.ts';
import type { Channel, GroupSettingValue, Viewer } from './types.ts';

/** The part of the client's state this module keeps. */
interface ChannelsState {
  channels: Map<number, Channel>;
}

function withChannel<S extends ChannelsState>(state: S, id: number, change: (c: Channel) => Channel): S {
  const channel = state.channels.get(id);
  return channel ? { ...state, channels: new Map(state.channels).set(id, change(channel)) } : state;
}

function countSubscribers<S extends ChannelsState>(state: S, ids: number[], delta: number): S {
  return ids.reduce((s, id) => withChannel(s, id, (c) => ({ ...c, subscriber_count: Math.max(0, c.subscriber_count + delta) })), state);
}

/** Applies a `stream` or `subscription` event to `state.channels` (the subscriptions themselves are state.ts's). */
export function trackChannels<S extends ChannelsState>(state: S, e: DeliveredOf<'stream'> | DeliveredOf<'subscription'>): S {
  if (e.type === 'stream') {
    if (e.op === 'create') return { ...state, channels: new Map([...state.channels, ...e.streams.map((c) => [c.stream_id, c] as const)]) };
    if (e.op === 'delete') {
      const channels = new Map(state.channels);
      for (const id of e.stream_ids) channels.delete(id);
      return { ...state, channels };
    }
    if (e.op === 'update') {
      const rendered = e.property === 'description' && e.rendered_description !== undefined ? { rendered_description: e.rendered_description } : {};
      return withChannel(state, e.stream_id, (c) => ({ ...c, [e.property]: e.value, ...rendered }));
    }
    return state;
  }
  switch (e.op) {
    case 'add':
      return e.subscriptions.reduce((s, sub) => withChannel(s, sub.stream_id, (c) => ({ ...c, subscriber_count: sub.subscriber_count })), state);
    case 'remove':
      return countSubscribers(
        state,
        e.subscriptions.map((s) => s.stream_id),
        -1,
      );
    case 'peer_add':
      return e.user_ids.reduce((s) => countSubscribers(s, e.stream_ids, 1), state);
    case 'peer_remove':
      return e.user_ids.reduce((s) => countSubscribers(s, e.stream_ids, -1), state);
    default:
      return state;
  }
}

/** Administrators (and owners) manage every channel here; the server checks each change anyway. */
export const isAdmin = (state: Viewer) => (state.users.get(state.me.userId)?.role ?? 400) <= 200;

/**
 * The addresses of the channels overlay, as Zulip's: `#channels/subscribed`, `#channels/all`,
 * `#channels/new`, `#channels/<id>/<name>`; and `#channels/folders`, the folders' settings.
 */
export type ChannelsRoute = { tab: 'subscribed' | 'all' } | { tab: 'new' } | { tab: 'folders' } | { tab: 'channel'; streamId: number };

export function parseChannelsHash(hash: string): ChannelsRoute | null {
  const [head, part] = hash.replace(/^#/, '').split('/');
  if (head !== 'channels') return null;
  if (part === 'new') return { tab: 'new' };
  if (part === 'all') return { tab: 'all' };
  if (part === 'folders') return { tab: 'folders' };
  const id = Number.parseInt(part ?? '', 10);
  return Number.isInteger(id) && id > 0 ? { tab: 'channel', streamId: id } : { tab: 'subscribed' };
}

export const channelSettingsHash = (c: { stream_id: number; name: string }) => `#channels/${c.stream_id}/${encodeURIComponent(c.name.replace(/ /g, '-'))}`;

export const channelHash = (c: { stream_id: number; name: string }) =>
  narrowHash({ kind: 'channel', streamId: c.stream_id }, { channel: () => c.name, user: String });

/** The roles that may be given a permission, by their system group's name (Zulip's `role:…` groups). */
export const ROLE_GROUPS = [
  ['role:everyone', 'Everyone, guests included'],
  ['role:members', 'Members'],
  ['role:fullmembers', 'Full members'],
  ['role:moderators', 'Moderators'],
  ['role:administrators', 'Administrators'],
] as const;

/** System group ids by name (GET /user_groups). */
export async function systemGroups(api: Api): Promise<Map<string, number>> {
  const r = await api.get('/user_groups');
  return new Map(r.user_groups.filter((g: { is_system_group: boolean }) => g.is_system_group).map((g: { name: string; id: number }) => [g.name, g.id]));
}

export interface ChannelDraft {
  name: string;
  description: string;
  private: boolean;
  canSend: GroupSettingValue;
}

export async function createChannel(api: Api, me: number, d: ChannelDraft): Promise<number> {
  const r = await api.post('/channels/create', {
    name: d.name,
    description: d.description,
    subscribers: [me],
    invite_only: d.private,
    can_send_message_group: d.canSend,
  });
  return r.id;
}

/** PATCH /streams/{id} with only what changed. */
export async function updateChannel(api: Api, channel: Channel, d: ChannelDraft): Promise<void> {
  const params: Record<string, unknown> = {};
  if (d.name !== channel.name) params.new_name = d.name;
  if (d.description !== channel.description) params.description = d.description;
  if (d.private !== channel.invite_only) params.is_private = d.private;
  if (JSON.stringify(d.canSend) !== JSON.stringify(channel.can_send_message_group)) params.can_send_message_group = { new: d.canSend };
  if (Object.keys(params).length) await api.patch(`/streams/${channel.stream_id}`, params);
}

export async function archiveChannel(api: Api, streamId: number): Promise<void> {
  await api.delete(`/streams/${streamId}`);
}

/** Subscribes the user, or `userIds` (others need the right to add them). */
export async function subscribe(api: Api, name: string, userIds?: number[]): Promise<void> {
  await api.post('/users/me/subscriptions', { subscriptions: [{ name }], ...(userIds && { principals: userIds }) });
}

export async function unsubscribe(api: Api, name: string, userIds?: number[]): Promise<void> {
  await api.delete('/users/me/subscriptions', { subscriptions: [name], ...(userIds && { principals: userIds }) });
}

/** A channel's own desktop or sound choice for the user, over their default for channels. */
export async function setChannelAlert(api: Api, streamId: number, property: 'desktop_notifications' | 'audible_notifications', on: boolean): Promise<void> {
  await api.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: streamId, property, value: on }] });
}

export async function subscriberIds(api: Api, streamId: number): Promise<number[]> {
  return (await api.get(`/streams/${streamId}/members`)).subscribers;
}
