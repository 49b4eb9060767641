// An optional helper: keeps the common parts of the register snapshot current by applying events
// to it (users, channels, subscriptions, the organization's settings, the newest message id). A
// client that needs more applies the other event types itself; after a reset it starts again from
// the new snapshot.
import type { Snapshot } from './client.ts';
import type { ServerEvent } from './stream.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows of the snapshot, of many shapes
type Row = Record<string, any>;

/** Replaces the row whose `key` is `id` by the same row with `changes`; other rows stay as they are. */
function patch(rows: Row[] | undefined, key: string, id: unknown, changes: Row): Row[] | undefined {
  return rows?.map((row) => (row[key] === id ? { ...row, ...changes } : row));
}

function without(rows: Row[] | undefined, key: string, ids: unknown[]): Row[] | undefined {
  return rows?.filter((row) => !ids.includes(row[key]));
}

/** The snapshot after one event (a new object; parts the event does not touch are shared). */
export function applyEvent(state: Snapshot, event: ServerEvent): Snapshot {
  switch (`${event.type}/${event.op ?? ''}`) {
    case 'message/':
      return { ...state, max_message_id: Math.max(state.max_message_id ?? -1, event.message.id) };
    case 'realm_user/add':
      return { ...state, realm_users: state.realm_users && [...state.realm_users, event.person] };
    case 'realm_user/remove':
      return { ...state, realm_users: without(state.realm_users, 'user_id', [event.person.user_id]) };
    case 'realm_user/update': {
      const { user_id, ...changes } = event.person;
      return { ...state, realm_users: patch(state.realm_users, 'user_id', user_id, changes) };
    }
    case 'stream/create':
      return { ...state, streams: state.streams && [...state.streams, ...event.streams] };
    case 'stream/delete': {
      const ids = event.stream_ids ?? event.streams.map((s: Row) => s.stream_id);
      return { ...state, streams: without(state.streams, 'stream_id', ids), subscriptions: without(state.subscriptions, 'stream_id', ids) };
    }
    case 'stream/update': {
      // Beside the property, some updates carry what follows from it (rendered_description, ...).
      const { type: _t, op: _o, id: _i, stream_id, name: _n, property, value, ...follows } = event;
      const changes = { [property]: value, ...follows };
      // A channel's properties are also in the subscription rows (as Zulip's clients keep them).
      const rows = ['streams', 'subscriptions', 'unsubscribed', 'never_subscribed'].map((key) => [key, patch(state[key], 'stream_id', stream_id, changes)]);
      return { ...state, ...Object.fromEntries(rows) };
    }
    case 'subscription/add':
      return { ...state, subscriptions: state.subscriptions && [...state.subscriptions, ...event.subscriptions] };
    case 'subscription/remove':
      return {
        ...state,
        subscriptions: without(
          state.subscriptions,
          'stream_id',
          event.subscriptions.map((s: Row) => s.stream_id),
        ),
      };
    case 'subscription/update':
      return { ...state, subscriptions: patch(state.subscriptions, 'stream_id', event.stream_id, { [event.property]: event.value }) };
    case 'realm/update':
      return { ...state, [`realm_${event.property}`]: event.value };
    case 'realm/update_dict':
      return { ...state, ...Object.fromEntries(Object.entries(event.data).map(([k, v]) => [`realm_${k}`, v])) };
    default:
      return state;
  }
}

/** A snapshot kept current: `apply` the events as they come, `reset` to a new snapshot. */
export class ChatState {
  constructor(public current: Snapshot) {}

  apply(events: ServerEvent[]): Snapshot {
    for (const event of events) this.current = applyEvent(this.current, event);
    return this.current;
  }

  reset(snapshot: Snapshot): void {
    this.current = snapshot;
  }
}
