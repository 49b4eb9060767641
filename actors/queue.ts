// One event queue: the events a client has not acknowledged yet, and its lifecycle
//
//   waiting --attach--> parked --flush/abort/detach--> waiting --idle timeout--> expired
//
// A queue is a plain object, not an xstate actor: it sits on the fan-out hot path (one push per
// event per queue) and tens of thousands of them idle at once, where an actor's ~4.7 KB and
// ~30 µs per send (measured, see the toolchain note) would cost more than everything else. Its
// timers are the registry's one shared tick, so an expired queue leaves no timer behind.
import { seenBy, type Snapshot } from '../src/db/commits.ts';
import type { QueueOptions } from './queue-options.ts';

export type QueueState = 'waiting' | 'parked' | 'expired';

/** Something that reads a queue: a parked long-poll or a WebSocket. */
export interface Consumer {
  /** Hands the pending events to the client; true when the consumer is finished (a poll answered). */
  flush(queue: EventQueue): boolean;
  /** The queue was taken over by another consumer, deleted, or the server is stopping. */
  close(queue: EventQueue, reason: 'replaced' | 'deleted' | 'shutdown'): void;
}

export class QueueError extends Error {}

export interface PendingEvent {
  id: number;
  /** The event as JSON, id included. */
  json: string;
  /** The transaction that made the change, while a register snapshot may still contain it. */
  xid?: number;
}

export interface SavedQueue {
  id: string;
  userId: number;
  realmId: number;
  options: QueueOptions;
  pending: PendingEvent[];
  nextEventId: number;
  newestPrunedId: number;
  lastConnection: number;
}

export class EventQueue {
  state: QueueState = 'waiting';
  pending: PendingEvent[] = [];
  nextEventId = 0;
  newestPrunedId = -1;
  consumer: Consumer | null = null;
  /** When a parked queue next gets a heartbeat (ms since epoch). */
  heartbeatDue = 0;
  /**
   * The snapshot the client's register state was read in: changes it saw are not queued again,
   * even when their events are published after register answered (commit comes before publish).
   */
  snapshot: Snapshot | null = null;

  constructor(
    readonly id: string,
    readonly userId: number,
    readonly realmId: number,
    readonly options: QueueOptions,
    /** Last time a client was attached (ms); idle expiry counts from here. */
    public lastConnection: number,
  ) {}

  /** Whether the client's register state already holds the change made by transaction `xid`. */
  alreadyHas(xid: number | undefined): boolean {
    return xid !== undefined && this.snapshot !== null && seenBy(this.snapshot, xid);
  }

  /** Appends events given as JSON object bodies without their opening brace. */
  push(bodies: readonly string[], xid?: number): void {
    for (const body of bodies) {
      const id = this.nextEventId++;
      this.pending.push(xid === undefined || this.snapshot ? { id, json: `{"id":${id},${body}` } : { id, json: `{"id":${id},${body}`, xid });
    }
  }

  /** Acknowledges every event up to `lastEventId`, with Zulip's two consistency errors. */
  prune(lastEventId: number): void {
    if (lastEventId < this.newestPrunedId) throw new QueueError(`An event newer than ${this.newestPrunedId} has already been pruned!`);
    let cut = 0;
    while (cut < this.pending.length && this.pending[cut]!.id <= lastEventId) cut++;
    if (cut > 0) {
      this.newestPrunedId = this.pending[cut - 1]!.id;
      this.pending = this.pending.slice(cut);
    }
    if (lastEventId !== this.newestPrunedId) throw new QueueError(`Event ${lastEventId} was not in this queue`);
  }

  /**
   * Register read the client's state in `snapshot`: drops the events queued meanwhile for changes
   * the state already holds (ids may skip, as in Zulip) and filters later ones the same way.
   */
  applySnapshot(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    this.pending = this.pending.filter((e) => !this.alreadyHas(e.xid)).map((e) => (e.xid === undefined ? e : { id: e.id, json: e.json }));
  }

  /** JSON array of the pending events. */
  pendingJson(after = -1): string {
    let out = '[';
    for (const e of this.pending) if (e.id > after) out += (out.length > 1 ? ',' : '') + e.json;
    return out + ']';
  }

  attach(consumer: Consumer, now: number, heartbeatDue: number): void {
    if (this.state === 'expired') throw new QueueError('queue expired');
    const previous = this.consumer;
    this.consumer = consumer;
    this.state = 'parked';
    this.heartbeatDue = heartbeatDue;
    this.lastConnection = now;
    previous?.close(this, 'replaced');
  }

  /** The consumer left (or finished); only the current consumer can detach itself. */
  detach(consumer: Consumer, now: number): void {
    if (this.consumer !== consumer) return;
    this.consumer = null;
    this.state = 'waiting';
    this.lastConnection = now;
  }

  isIdleExpired(now: number): boolean {
    return this.state === 'waiting' && now - this.lastConnection >= this.options.idleTimeoutSecs * 1000;
  }

  expire(reason: 'deleted' | 'shutdown'): void {
    const consumer = this.consumer;
    this.consumer = null;
    this.state = 'expired';
    this.pending = [];
    consumer?.close(this, reason);
  }

  save(): SavedQueue {
    const { id, userId, realmId, options, pending, nextEventId, newestPrunedId, lastConnection } = this;
    return { id, userId, realmId, options, pending, nextEventId, newestPrunedId, lastConnection };
  }

  static restore(saved: SavedQueue, options: QueueOptions): EventQueue {
    const queue = new EventQueue(saved.id, saved.userId, saved.realmId, options, saved.lastConnection);
    queue.pending = saved.pending;
    queue.nextEventId = saved.nextEventId;
    queue.newestPrunedId = saved.newestPrunedId;
    return queue;
  }
}
