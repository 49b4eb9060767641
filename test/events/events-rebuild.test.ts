// The events-rebuild property (Zulip's verify_action in zerver/tests/test_events.py): a client
// that applies the events of its queue to its register state ends with the state a new register
// returns. Queues of an administrator and of a member, each for the newest clients (every
// client capability) and for old ones (none), watch a scripted sequence of every kind of change
// (test/events/events-rebuild-steps.ts); after each step, each queue's rebuilt state must equal a fresh
// register of the same user with the same options.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CAPABILITIES } from '../../actors/queue-options.ts';
import { EVENT_SCHEMAS } from '../../src/events/schemas.ts';
import { applyEvents, EVENT_TYPES_APPLIED, type Event, type State } from '../helpers/apply-events.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { ok, setUp, STEPS, type Scene } from './events-rebuild-steps.ts';

interface ClientKind {
  name: string;
  capabilities: Record<string, boolean>;
  clientGravatar: boolean;
}

const KINDS: ClientKind[] = [
  // Neither asks for slim_presence: simplified_presence_events implies that format.
  { name: 'modern', capabilities: Object.fromEntries(CAPABILITIES.map((c) => [c, true])), clientGravatar: true },
  { name: 'old', capabilities: {}, clientGravatar: false },
];

interface Watcher {
  label: string;
  user: TestUser;
  kind: ClientKind;
  queueId: string;
  lastEventId: number;
  state: State;
}

const registerParams = (kind: ClientKind, capabilities: Record<string, boolean> = {}) => ({
  apply_markdown: true,
  client_gravatar: kind.clientGravatar,
  include_subscribers: 'true',
  client_capabilities: { ...kind.capabilities, ...capabilities },
});

/** A register of `user` with these options; the queue it opens is closed again unless kept. */
async function register(user: TestUser, params: Record<string, unknown>, keep = false): Promise<State> {
  const state = ok(await user.client.post('/register', params));
  if (!keep) ok(await user.client.delete('/events', { queue_id: state.queue_id }));
  return state;
}

/**
 * Keys that differ between two registers even with nothing changed in between, or that events do
 * not carry; everything else must match.
 */
function comparable(state: State): State {
  const {
    // Name the queue and its position, not the state.
    queue_id: _q,
    last_event_id: _l,
    // The time the register was answered.
    server_timestamp: _t,
    // Which presence update the state includes: events do not carry it (Zulip leaves it out too).
    presence_last_update_id: _p,
    ...rest
  } = structuredClone(state);
  // The order of these lists means nothing (Zulip compares its subscriptions keyed by name and
  // its bots by email; renames reorder the channel lists).
  const byKey = (list: State[] | undefined, key: string) => list?.sort((a, b) => a[key] - b[key]);
  for (const list of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) byKey(rest[list], 'stream_id');
  byKey(rest.realm_bots, 'user_id');
  return rest;
}

/** Where two states differ, one line per difference, values shortened. */
function differences(a: unknown, b: unknown, path = '', out: string[] = []): string[] {
  if (out.length >= 30) return out;
  const show = (v: unknown) => {
    const text = v === undefined ? 'missing' : JSON.stringify(v);
    return text.length > 240 ? `${text.slice(0, 240)}...` : text;
  };
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) differences((a as State)[k], (b as State)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`, out);
    return out;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path}: from events ${show(a)}, fresh ${show(b)}`);
  return out;
}

test('the client model has a rule for every event type the server publishes', () => {
  const types = new Set(Object.keys(EVENT_SCHEMAS).map((key) => key.split('/')[0]!));
  assert.equal(
    [...types].filter((type) => !EVENT_TYPES_APPLIED.has(type)),
    [],
  );
});

test('after every kind of change, each queue rebuilds the state a fresh register returns (modern and old clients, administrator and member)', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ name: 'Ada Admin', role: 200 });
  const member = await realm.addUser({ name: 'Mo Member' });
  const other = await realm.addUser({ name: 'Otto Other' });
  const bot = await realm.addUser({ name: 'Botty', bot: true, botOwnerId: member.id });
  const scene: Scene = { realm, owner: realm.owner, admin, member, other, bot, ids: {}, people: {} };
  await setUp(scene);

  const watchers: Watcher[] = [];
  for (const user of [admin, member]) {
    for (const kind of KINDS) {
      const state = await register(user, registerParams(kind), true);
      watchers.push({
        label: `${user === admin ? 'administrator' : 'member'}, ${kind.name} client`,
        user,
        kind,
        queueId: state.queue_id,
        lastEventId: state.last_event_id,
        state,
      });
    }
  }

  /** The events of the last step: everything before the owner's typing notification that closes it. */
  const eventsOfStep = async (w: Watcher): Promise<Event[]> => {
    const events: Event[] = [];
    // Each poll returns at the latest with a heartbeat (2 s in tests).
    for (let polls = 0; polls < 10; polls++) {
      const reply = ok(await w.user.client.get('/events', { queue_id: w.queueId, last_event_id: w.lastEventId }));
      for (const { id, ...event } of reply.events as Event[]) {
        w.lastEventId = id;
        if (event.type === 'typing' && event.sender.user_id === realm.owner.id) return events;
        events.push(event);
      }
    }
    throw new Error(`${w.label}: the typing notification closing the step never came`);
  };

  const failures: string[] = [];
  for (const step of STEPS) {
    try {
      await step.run(scene);
    } catch (err) {
      throw new Error(`step "${step.name}" failed: ${err instanceof Error ? err.message : String(err)}\n\nMismatches before it:\n${failures.join('\n\n')}`);
    }
    ok(await realm.owner.client.post('/typing', { op: 'start', to: [admin.id, member.id] }));
    // The queues are independent: they are checked at once (nothing changes until the next step).
    const checked = await Promise.all(
      watchers.map(async (w) => {
        // The step is over (its requests answered): the fresh register can be read while the events come.
        const [events, fresh] = await Promise.all([eventsOfStep(w), register(w.user, registerParams(w.kind))]);
        const rebuilt = await applyEvents(w.state, events, {
          userId: w.user.id,
          capabilities: new Set(Object.keys(w.kind.capabilities)),
          includeSubscribers: true,
          clientGravatar: w.kind.clientGravatar,
          refetch: (types, capabilities) => register(w.user, { ...registerParams(w.kind, capabilities), fetch_event_types: types, event_types: types }),
        });
        const diff = differences(comparable(rebuilt), comparable(fresh));
        // Each step starts from the true state, so one wrong event fails one step.
        w.state = fresh;
        return {
          count: events.length,
          failure: diff.length ? `${step.name} (${w.label}):\n  ${diff.join('\n  ')}\n  events: ${JSON.stringify(events).slice(0, 3000)}` : null,
        };
      }),
    );
    for (const { failure } of checked) if (failure) failures.push(failure);
    const seen = checked.reduce((sum, c) => sum + c.count, 0);
    // A step nobody hears about tests nothing (Zulip's verify_action checks the same).
    if (seen === 0) failures.push(`${step.name}: no queue got any event`);
  }
  assert.ok(failures.length === 0, `${failures.length} mismatches:\n${failures.join('\n\n')}`);
});

test.run();
