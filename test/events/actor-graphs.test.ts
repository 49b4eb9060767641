// The actors' machines, tested from their graphs: every transition of the event queue's life, of
// a channel's actor and of a user's is reached by a path xstate/graph finds (getShortestPaths to
// its source state, then its event), and each path is played on the real objects the server uses
// (EventQueue, ChannelActors, SerialActors), whose state must follow the machine's at every step.
// The transitions are also checked against the list written here, so a changed machine fails too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { initialTransition, SimulatedClock, transition, type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine, type AnyStateNode } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { ChannelActors } from '../../actors/channels.ts';
import { EventQueue, type Consumer } from '../../actors/queue.ts';
import { queueLife } from '../../actors/queue-life.ts';
import type { QueueOptions } from '../../actors/queue-options.ts';
import { channelMachine, SerialActors, userMachine } from '../../actors/serial.ts';

interface Transition {
  node: AnyStateNode;
  event: string;
  label: string;
}

/** Every transition the machine defines: `source --event--> target`, eventless ones as `always`. */
function transitionsOf(machine: AnyStateMachine): Transition[] {
  const out: Transition[] = [];
  const walk = (node: AnyStateNode) => {
    const name = (n: AnyStateNode) => n.path.join('.');
    const targets = (t: { target?: readonly AnyStateNode[] }) => (t.target ? t.target.map(name).join(',') : '(stays)');
    for (const [event, list] of node.transitions) for (const t of list) out.push({ node, event, label: `${name(node)} --${short(event)}--> ${targets(t)}` });
    for (const t of node.always ?? []) out.push({ node, event: 'always', label: `${name(node)} --always--> ${targets(t)}` });
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  return out;
}

const short = (event: string) => event.replace(/^xstate\.after\..*/, 'after idle');

const active = (snapshot: AnyMachineSnapshot, node: AnyStateNode) => (snapshot as unknown as { _nodes: AnyStateNode[] })._nodes.includes(node);

/**
 * For each transition, a path to a state where it is taken, and its event: the shortest path
 * xstate/graph finds to any state whose step by that event takes it.
 */
function pathsCovering(
  machine: AnyStateMachine,
  options: { input?: unknown; events: (s: AnyMachineSnapshot) => AnyEventObject[]; key: (s: AnyMachineSnapshot) => string },
  taken: (t: Transition, from: AnyMachineSnapshot, event: AnyEventObject) => boolean,
): Map<string, AnyEventObject[]> {
  const paths = getShortestPaths(machine, { input: options.input, events: options.events, serializeState: options.key } as never) as unknown as {
    state: AnyMachineSnapshot;
    steps: { event: AnyEventObject }[];
  }[];
  paths.sort((a, b) => a.steps.length - b.steps.length);
  const out = new Map<string, AnyEventObject[]>();
  for (const t of transitionsOf(machine)) {
    for (const path of paths) {
      const event = options.events(path.state).find((e) => taken(t, path.state, e));
      if (!event) continue;
      out.set(t.label, [...path.steps.map((s) => s.event).filter((e) => e.type !== 'xstate.init'), event]);
      break;
    }
    assert.ok(out.has(t.label), `no path takes ${t.label}`);
  }
  return out;
}

// ---------------------------------------------------------------- the event queue's life

const QUEUE_EVENTS = ['POLL', 'SOCKET', 'DETACH', 'EXPIRE', 'SAVE'].map((type) => ({ type }));

test("the event queue's life has the transitions it is meant to", () => {
  assert.equal(
    transitionsOf(queueLife)
      .map((t) => t.label)
      .sort(),
    [
      'idle --EXPIRE--> expired',
      'idle --POLL--> parked',
      'idle --SAVE--> saved',
      'idle --SOCKET--> streaming',
      'parked --DETACH--> idle',
      'parked --EXPIRE--> expired',
      'parked --POLL--> parked',
      'parked --SAVE--> saved',
      'parked --SOCKET--> streaming',
      'registered --EXPIRE--> expired',
      'registered --POLL--> parked',
      'registered --SAVE--> saved',
      'registered --SOCKET--> streaming',
      'streaming --DETACH--> idle',
      'streaming --EXPIRE--> expired',
      'streaming --POLL--> parked',
      'streaming --SAVE--> saved',
      'streaming --SOCKET--> streaming',
    ],
  );
});

test('every transition of the queue life, played on an EventQueue, moves it as the machine does', () => {
  const paths = pathsCovering(
    queueLife,
    { events: () => QUEUE_EVENTS, key: (s) => String(s.value) },
    (t, from, event) => event.type === t.event && active(from, t.node),
  );
  assert.is(paths.size, 18);
  for (const [label, events] of paths) {
    const queue = new EventQueue('q', 1, 1, { idleTimeoutSecs: 1 } as QueueOptions, 0);
    const closed: string[] = [];
    const reader = (kind: Consumer['kind']): Consumer => ({
      kind,
      flush: () => true,
      heartbeat: () => true,
      close: (_q, reason) => closed.push(`${kind} ${reason}`),
    });
    let [snapshot] = initialTransition(queueLife);
    for (const event of events) {
      const [next] = transition(queueLife, snapshot, event as never);
      if (event.type === 'POLL' || event.type === 'SOCKET') queue.attach(reader(event.type === 'POLL' ? 'poll' : 'socket'), 0, 0);
      else if (event.type === 'DETACH') queue.detach(queue.consumer!, 0);
      else queue.expire(event.type === 'SAVE' ? 'saved' : 'deleted');
      snapshot = next;
      assert.is(queue.state, String(snapshot.value), `${label}: after ${event.type}`);
      // What the registry reads of the state: readers get heartbeats, queues nobody reads expire.
      assert.is(queue.consumer !== null, queue.state === 'parked' || queue.state === 'streaming', `${label}: a reader iff parked or streaming`);
      assert.is(queue.isIdleExpired(10_000), queue.state === 'registered' || queue.state === 'idle', `${label}: expires when idle`);
      assert.is(queue.ended, snapshot.status === 'done', `${label}: ended iff final`);
    }
  }
});

test('an ended queue takes no reader', () => {
  for (const end of ['deleted', 'saved'] as const) {
    const queue = new EventQueue('q', 1, 1, { idleTimeoutSecs: 1 } as QueueOptions, 0);
    queue.expire(end);
    assert.throws(() => queue.attach({ kind: 'poll', flush: () => true, heartbeat: () => true, close: () => {} }, 0, 0), /queue expired/);
    queue.expire('deleted');
    assert.is(queue.state, end === 'saved' ? 'saved' : 'expired', 'an ended queue stays as it ended');
  }
});

// ---------------------------------------------------------------- channel and user actors

const IDLE_MS = 1000;
const DONE = 'WRITTEN';
const FAILED = 'WRITE_FAILED';

/** The writer's region, whichever machine. */
function writerOf(snapshot: AnyMachineSnapshot): string {
  const value = snapshot.value as string | { live: { writer: string } };
  return typeof value === 'string' ? value : value.live.writer;
}

function actorEvents(withSubscribers: boolean) {
  const job = { run: async () => 0, resolve: () => {}, reject: () => {} };
  // One read for every LOAD, so the path's LOADED names the read its LOAD started.
  const read = Promise.resolve([]);
  return (s: AnyMachineSnapshot): AnyEventObject[] => {
    if (s.status === 'done') return [];
    const writer = writerOf(s);
    const events: AnyEventObject[] = [];
    if (s.context.jobs.length < 2) events.push({ type: 'RUN', job });
    if (writer === 'writing') events.push({ type: DONE, output: 0 }, { type: FAILED, error: new Error('x') });
    if (writer === 'idle' && s.context.jobs.length === 0) events.push({ type: idleEvent(s.machine) });
    if (withSubscribers) {
      const set = s.context.subscribers;
      if (set === null) events.push({ type: 'LOAD', set: read });
      else events.push({ type: 'LOADED', set }, { type: 'LOAD_FAILED', set });
      events.push({ type: 'FORGET' });
    }
    return events;
  };
}

function idleEvent(machine: AnyStateMachine): string {
  return transitionsOf(machine).find((t) => t.event.startsWith('xstate.after.'))!.event;
}

const actorKey = (s: AnyMachineSnapshot) => `${JSON.stringify(s.value)} ${s.context.jobs.length} ${s.context.subscribers === null ? '-' : 'set'}`;

/** Whether `event` in `from` takes `t`, the writer's eventless step included (a write done with another waiting). */
function actorTakes(t: Transition, from: AnyMachineSnapshot, event: AnyEventObject): boolean {
  if (t.event === 'always') return (event.type === DONE || event.type === FAILED) && from.context.jobs.length > 1;
  if (event.type !== t.event || !active(from, t.node)) return false;
  return !('set' in event) || event.type === 'LOAD' || event.set === from.context.subscribers;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const settle = () => new Promise((r) => setImmediate(r));

/** Plays `events` on the real actors of one id and checks each step against the machine's. */
async function play(label: string, machine: AnyStateMachine, make: (clock: SimulatedClock) => SerialActors, events: AnyEventObject[]): Promise<void> {
  const clock = new SimulatedClock();
  const actors = make(clock);
  const channels = actors instanceof ChannelActors ? actors : null;
  const inner = actors as unknown as { actorFor(id: number): unknown; actors: Map<number, { getSnapshot(): AnyMachineSnapshot }> };
  inner.actorFor(1);
  let [expected] = initialTransition(machine, { idleMs: IDLE_MS });
  const writes: Deferred<number>[] = [];
  const loads: Deferred<number[]>[] = [];
  const outcomes: Promise<unknown>[] = [];
  for (const event of events) {
    [expected] = transition(machine, expected, event as never);
    if (event.type === 'RUN') {
      const write = deferred<number>();
      writes.push(write);
      outcomes.push(actors.run(1, () => write.promise).catch(() => 'failed'));
    } else if (event.type === DONE) writes.shift()!.resolve(1);
    else if (event.type === FAILED) writes.shift()!.reject(new Error('write failed'));
    else if (event.type.startsWith('xstate.after.')) clock.increment(IDLE_MS);
    else if (event.type === 'LOAD') {
      const load = deferred<number[]>();
      loads.push(load);
      outcomes.push(channels!.subscribers(1, () => load.promise).catch(() => 'failed'));
    } else if (event.type === 'LOADED') loads.at(-1)!.resolve([7]);
    else if (event.type === 'LOAD_FAILED') loads.at(-1)!.reject(new Error('read failed'));
    else if (event.type === 'FORGET') channels!.forgetSubscribers([1]);
    await settle();
    const real = inner.actors.get(1)?.getSnapshot();
    const step = `${label}: after ${short(event.type)}`;
    if (expected.status === 'done') {
      assert.is(real, undefined, `${step}: the actor stopped and is gone`);
      continue;
    }
    assert.ok(real, `${step}: the actor lives`);
    assert.equal(real.value, expected.value, step);
    assert.is(real.context.jobs.length, expected.context.jobs.length, `${step}: jobs waiting`);
    assert.is(real.context.subscribers === null, expected.context.subscribers === null, `${step}: subscriber set held`);
  }
  for (const write of writes) write.resolve(0);
  for (const load of loads) load.resolve([]);
  actors.stop();
}

test("a channel's actor has the transitions it is meant to", () => {
  assert.equal(
    transitionsOf(channelMachine).map((t) => t.label),
    [
      'live.writer.idle --RUN--> live.writer.writing',
      'live.writer.idle --after idle--> stopped',
      'live.writer.idle --always--> live.writer.writing',
      'live.writer.writing --RUN--> (stays)',
      'live.writer.writing --WRITTEN--> live.writer.idle',
      'live.writer.writing --WRITE_FAILED--> live.writer.idle',
      'live.subscribers.unknown --LOAD--> live.subscribers.loading',
      'live.subscribers.loading --LOADED--> live.subscribers.held',
      'live.subscribers.loading --LOAD_FAILED--> live.subscribers.unknown',
      'live.subscribers.loading --FORGET--> live.subscribers.unknown',
      'live.subscribers.held --FORGET--> live.subscribers.unknown',
    ],
  );
});

test("every transition of a channel's actor, played on ChannelActors, moves it as the machine does", async () => {
  const paths = pathsCovering(channelMachine, { input: { idleMs: IDLE_MS }, events: actorEvents(true), key: actorKey }, actorTakes);
  assert.is(paths.size, 11);
  for (const [label, events] of paths) await play(label, channelMachine, (clock) => new ChannelActors(IDLE_MS, null, clock), events);
});

test("a user's actor has the transitions it is meant to", () => {
  assert.equal(
    transitionsOf(userMachine).map((t) => t.label),
    [
      'idle --RUN--> writing',
      'idle --after idle--> stopped',
      'idle --always--> writing',
      'writing --RUN--> (stays)',
      'writing --WRITTEN--> idle',
      'writing --WRITE_FAILED--> idle',
    ],
  );
});

test("every transition of a user's actor, played on SerialActors, moves it as the machine does", async () => {
  const paths = pathsCovering(userMachine, { input: { idleMs: IDLE_MS }, events: actorEvents(false), key: actorKey }, actorTakes);
  assert.is(paths.size, 6);
  for (const [label, events] of paths) await play(label, userMachine, (clock) => new SerialActors(IDLE_MS, null, userMachine, clock), events);
});

test.run();
