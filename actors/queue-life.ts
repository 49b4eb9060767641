// The life of an event queue as an xstate machine, run through xstate's pure functions: no actor
// per queue. A queue stores only its state's name (a string the machine's states share), and
// asks the machine for the next one when something changes its life (a reader attaches or
// leaves, the queue is saved or ends); pushing an event changes no state and never comes here.
//
//   registered --POLL--> parked     --DETACH--> idle --POLL/SOCKET--> parked/streaming
//              --SOCKET-> streaming --DETACH--> idle
//   any of them --EXPIRE--> expired, --SAVE--> saved (both final)
//
// The machine has no context and no guards, so the next state depends on the state's name and
// the event's type alone: each pair is asked of `transition` once, when the module loads, and a
// change of life costs a table lookup (a long-poll's attach and detach together: 299
// instructions before the machine, 785 with it, `scripts/callgrind-step.sh repark 200000`,
// where runs of nothing differ by about 300 a call). Running `transition` itself per change
// would cost microseconds a poll; an actor per queue kilobytes (see actors/queue.ts).
import { getInitialSnapshot, setup, transition } from 'xstate';

export type QueueLifeEvent = { type: 'POLL' } | { type: 'SOCKET' } | { type: 'DETACH' } | { type: 'EXPIRE' } | { type: 'SAVE' };

const ended = { EXPIRE: 'expired', SAVE: 'saved' } as const;

export const queueLife = setup({
  types: { events: {} as QueueLifeEvent },
}).createMachine({
  id: 'event-queue',
  initial: 'registered',
  states: {
    /** Made by register; nobody has read it yet. */
    registered: { on: { POLL: 'parked', SOCKET: 'streaming', ...ended } },
    /** A long-poll waits on it; one that comes next replaces it. */
    parked: { on: { POLL: 'parked', SOCKET: 'streaming', DETACH: 'idle', ...ended } },
    /** A WebSocket reads it; a reader that comes next replaces it. */
    streaming: { on: { POLL: 'parked', SOCKET: 'streaming', DETACH: 'idle', ...ended } },
    /** Read before, nobody reads it now: its events wait in its user's log; it expires when idle too long. */
    idle: { on: { POLL: 'parked', SOCKET: 'streaming', ...ended } },
    /** Deleted, discarded over its bound, idle too long, or its organization deactivated. */
    expired: { type: 'final' },
    /** Saved at shutdown, to be restored by the next start. */
    saved: { type: 'final' },
  },
});

export type QueueState = 'registered' | 'parked' | 'streaming' | 'idle' | 'expired' | 'saved';
export type QueueLifeEventType = QueueLifeEvent['type'];

const EVENT_TYPES: readonly QueueLifeEventType[] = ['POLL', 'SOCKET', 'DETACH', 'EXPIRE', 'SAVE'];

/**
 * `next[state][event]`: the state the machine moves to, or null when it takes no such event;
 * asked of xstate's `transition` once per pair, from one snapshot per state, when this module loads.
 */
const next = {} as Record<QueueState, Record<QueueLifeEventType, QueueState | null>>;
for (const state of Object.keys(queueLife.states) as QueueState[]) {
  const from = queueLife.resolveState({ value: state });
  const row = {} as Record<QueueLifeEventType, QueueState | null>;
  for (const type of EVENT_TYPES) {
    const event = { type } as QueueLifeEvent;
    row[type] = from.status === 'active' && from.can(event) ? (transition(queueLife, from, event)[0].value as QueueState) : null;
  }
  next[state] = row;
}

export const initialQueueState = getInitialSnapshot(queueLife).value as QueueState;

/** The state a queue in `state` moves to on `event`, or null when the machine does not take it there. */
export function queueTransition(state: QueueState, type: QueueLifeEventType): QueueState | null {
  return next[state][type];
}

const finalStates = new Set(
  Object.values(queueLife.states)
    .filter((node) => node.type === 'final')
    .map((node) => node.key as QueueState),
);

/** Whether a queue in `state` has ended (a final state): nothing reads it or is delivered to it. */
export function queueEnded(state: QueueState): boolean {
  return finalStates.has(state);
}
