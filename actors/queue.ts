// One event queue: the events a client has not acknowledged yet, and its life, an xstate machine
// (actors/queue-life.ts): registered, parked (a long-poll waits), streaming (a WebSocket reads),
// idle, and at the end expired or saved.
//
// A queue is a plain object, not an xstate actor: it sits on the fan-out hot path (one push per
// event per queue) and tens of thousands of them idle at once, where an actor's ~4.7 KB and
// ~30 µs per send (measured, see the toolchain note) would cost more than everything else. It
// keeps its state's name in one field and moves it through the machine's pure `transition` when
// its life changes (attach, detach, expire, save), remembered per state and event; pushing events
// does not touch the machine. The state is one string field, as before the machine: an idle
// registered queue costs the registry 753 bytes with its maps before and after
// (`node --expose-gc --import tsx bench/micro/idle-queues.ts 100000 1000`; the server's idle
// bench, whole heap, measured 0.31 KB a queue on main). Its timers are the registry's one
// shared tick, so an expired queue leaves no timer behind.
import type { StreamPlace } from '../src/bus/bus.ts';
import { seenBy, type Snapshot } from '../src/db/commits.ts';
import { initialQueueState, queueEnded, queueTransition, type QueueLifeEventType, type QueueState } from './queue-life.ts';
import type { QueueOptions } from './queue-options.ts';

export type { QueueState } from './queue-life.ts';

/** Something that reads a queue: a parked long-poll or a WebSocket. */
export interface Consumer {
  readonly kind: 'poll' | 'socket';
  /** Hands the pending events to the client; true when the consumer is finished (a poll answered). */
  flush(queue: EventQueue): boolean;
  /**
   * Hands the client a heartbeat (`json`, carrying the id of the newest event it was handed, so
   * it takes no id of its own); true when the consumer is finished. Called after `flush`.
   */
  heartbeat(queue: EventQueue, json: string): boolean;
  /** The queue was taken over by another consumer, deleted, or the server is stopping. */
  close(queue: EventQueue, reason: 'replaced' | 'deleted' | 'shutdown'): void;
}

export class QueueError extends Error {}

/**
 * Where a queue's events wait while nobody reads it: its user's log in the registry, shared by
 * all the user's queues. `end` is the position after the newest entry; `catchUp` moves the
 * queue's own events from its cursor to the end.
 */
export interface EventLog {
  readonly end: number;
  catchUp(queue: EventQueue): void;
}

/**
 * An event as queues hold it: serialized once per fan-out and shared by every queue that gets the
 * same bytes, so a pending event costs a queue one reference; its id is written when it is read.
 */
export class QueuedEvent {
  /** UTF-8 size of the JSON, for the queue's byte bound. */
  readonly bytes: number;

  constructor(
    /** The event's JSON object without its opening brace, which `{"id":N,` replaces. */
    readonly tail: string,
    /** The transaction that made the change, while a register snapshot may still contain it. */
    readonly xid?: number,
    /** Where a reader of the cluster's stream starts to get it again (EventEnvelope.seq). */
    readonly seq?: number,
    /** The stream sequence that completed its frame (EventEnvelope.endSeq). */
    readonly endSeq?: number,
  ) {
    this.bytes = Buffer.byteLength(tail);
  }
}

export interface SavedQueue {
  id: string;
  userId: number;
  realmId: number;
  options: QueueOptions;
  /**
   * The pending events, oldest first, by position in the list of events saved with the queue, as
   * runs of consecutive positions (`[first, count, first, count, ...]`): queues that got the same
   * events in the same order need only a few numbers.
   */
  events: number[];
  nextEventId: number;
  newestPrunedId: number;
  lastConnection: number;
}

/** Pruned slots are dropped once they are this many and at least half the array. */
const COMPACT_AFTER = 32;

export class EventQueue {
  /** Where the queue is in its life (actors/queue-life.ts); changed only by `move`. */
  state: QueueState = initialQueueState;
  /**
   * Pending events are `events[head..]`; their ids are consecutive and end at `nextEventId - 1`.
   * Only events take ids (heartbeats repeat the newest), so replaying the same events through the
   * same filter numbers them the same.
   */
  private events: QueuedEvent[] = [];
  private head = 0;
  private pendingBytes = 0;
  nextEventId = 0;
  newestPrunedId = -1;
  /** How many events before `head` came from the same stream frame as the event at `head` (checkpoints replay whole frames). */
  private headRun = 0;
  consumer: Consumer | null = null;
  /** When a parked queue next gets a heartbeat (ms since epoch). */
  heartbeatDue = 0;
  /**
   * The snapshot the client's register state was read in: changes it saw are not queued again,
   * even when their events are published after register answered (commit comes before publish).
   */
  snapshot: Snapshot | null = null;
  /**
   * Events for a queue nobody reads wait in its user's log, not in the queue: a queue costs the
   * fan-out nothing until it is read. Null for queues given every event at once (all_public_streams).
   */
  log: EventLog | null = null;
  /** The log position of the first entry this queue has not taken yet. */
  cursor = 0;
  /**
   * Last time its client acknowledged events, or could not have (the queue was made or restored,
   * or the cluster's NATS came back): the bound on pending events is for queues nobody reads.
   */
  lastRead: number;

  constructor(
    readonly id: string,
    readonly userId: number,
    readonly realmId: number,
    readonly options: QueueOptions,
    /** Last time a client was attached (ms); idle expiry counts from here. */
    public lastConnection: number,
  ) {
    this.lastRead = lastConnection;
  }

  /** Takes what waits for this queue in its user's log. */
  sync(): void {
    if (this.log !== null && this.cursor < this.log.end) this.log.catchUp(this);
  }

  /** How many events are pending. */
  get size(): number {
    this.sync();
    return this.events.length - this.head;
  }

  /** UTF-8 size of the pending events' JSON. */
  get bytes(): number {
    this.sync();
    return this.pendingBytes;
  }

  /** Whether the client's register state already holds the change made by transaction `xid`. */
  alreadyHas(xid: number | undefined): boolean {
    return xid !== undefined && this.snapshot !== null && seenBy(this.snapshot, xid);
  }

  push(events: readonly QueuedEvent[]): void {
    for (const event of events) {
      this.events.push(event);
      this.pendingBytes += event.bytes;
    }
    this.nextEventId += events.length;
  }

  /** Acknowledges every event up to `lastEventId`, with Zulip's two consistency errors. */
  prune(lastEventId: number, now = Date.now()): void {
    this.lastRead = now;
    this.sync();
    if (lastEventId < this.newestPrunedId) throw new QueueError(`An event newer than ${this.newestPrunedId} has already been pruned!`);
    const cut = Math.min(lastEventId - this.firstId() + 1, this.size);
    if (cut > 0) {
      let run = this.headRun;
      for (let i = this.head; i < this.head + cut; i++) {
        const event = this.events[i]!;
        this.pendingBytes -= event.bytes;
        run = i > this.head && event.endSeq !== this.events[i - 1]!.endSeq ? 1 : run + 1;
      }
      const next = this.events[this.head + cut];
      this.headRun = next !== undefined && next.endSeq !== undefined && next.endSeq === this.events[this.head + cut - 1]!.endSeq ? run : 0;
      this.newestPrunedId = this.firstId() + cut - 1;
      this.head += cut;
      if (this.head === this.events.length) this.clear();
      else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.events.length) {
        this.events = this.events.slice(this.head);
        this.head = 0;
      }
    }
    if (lastEventId !== this.newestPrunedId) throw new QueueError(`Event ${lastEventId} was not in this queue`);
  }

  /**
   * Register read the client's state in `snapshot`: drops the events queued meanwhile for changes
   * the state already holds and filters later ones the same way. Nobody has read the queue yet,
   * so the events kept are numbered afresh from the first id.
   */
  applySnapshot(snapshot: Snapshot): void {
    this.sync();
    this.snapshot = snapshot;
    const kept = this.events.slice(this.head).filter((e) => !this.alreadyHas(e.xid));
    this.nextEventId = this.firstId() + kept.length;
    this.events = kept;
    this.head = 0;
    this.pendingBytes = kept.reduce((sum, e) => sum + e.bytes, 0);
  }

  /**
   * Where replaying the cluster's stream rebuilds this queue, given that everything before
   * `position` has been delivered to it: where to start, and the id the first event it then passes
   * gets (the oldest pending event's frame is replayed whole, from its start). Null while the oldest
   * pending event came from outside the stream (register's and restart's own events), or the queue
   * has not taken what waits for it.
   */
  checkpoint(position: StreamPlace): { from: StreamPlace; nextId: number } | null {
    if (this.log !== null && this.cursor < this.log.end) return null;
    if (this.head === this.events.length) return { from: position, nextId: this.nextEventId };
    const oldest = this.events[this.head]!;
    if (oldest.seq === undefined || oldest.endSeq === undefined) return null;
    return { from: { afterSeq: oldest.seq - 1, deliveredThrough: oldest.endSeq - 1 }, nextId: this.firstId() - this.headRun };
  }

  /** Calls `send` with each pending event newer than `after`, as JSON, oldest first. */
  forEachAfter(after: number, send: (id: number, json: string) => void): void {
    this.sync();
    const first = this.firstId();
    for (let i = Math.max(this.head, this.head + after - first + 1); i < this.events.length; i++) {
      send(first + i - this.head, `{"id":${first + i - this.head},${this.events[i]!.tail}`);
    }
  }

  /** JSON array of the pending events newer than `after` (forEachAfter's, without a callback: every answered poll writes one). */
  pendingJson(after = -1): string {
    this.sync();
    const first = this.firstId();
    let out = '[';
    for (let i = Math.max(this.head, this.head + after - first + 1); i < this.events.length; i++) {
      out += `${out.length > 1 ? ',' : ''}{"id":${first + i - this.head},${this.events[i]!.tail}`;
    }
    return `${out}]`;
  }

  private firstId(): number {
    return this.nextEventId - this.size;
  }

  private clear(): void {
    this.events = [];
    this.head = 0;
    this.headRun = 0;
    this.pendingBytes = 0;
  }

  /** Whether the queue has ended (expired or saved): nothing reads it and nothing reaches it. */
  get ended(): boolean {
    return queueEnded(this.state);
  }

  /** Moves the queue's state as its machine does on `event`; false when the machine does not take it. */
  private move(event: QueueLifeEventType): boolean {
    const next = queueTransition(this.state, event);
    if (next === null) return false;
    this.state = next;
    return true;
  }

  attach(consumer: Consumer, now: number, heartbeatDue: number): void {
    if (!this.move(consumer.kind === 'poll' ? 'POLL' : 'SOCKET')) throw new QueueError('queue expired');
    const previous = this.consumer;
    this.consumer = consumer;
    this.heartbeatDue = heartbeatDue;
    this.lastConnection = now;
    previous?.close(this, 'replaced');
  }

  /** The consumer left (or finished); only the current consumer can detach itself. */
  detach(consumer: Consumer, now: number): void {
    if (this.consumer !== consumer) return;
    this.consumer = null;
    this.move('DETACH');
    this.lastConnection = now;
  }

  isIdleExpired(now: number): boolean {
    return (this.state === 'registered' || this.state === 'idle') && now - this.lastConnection >= this.options.idleTimeoutSecs * 1000;
  }

  /** The queue ends: deleted, dropped at shutdown, or saved (its saved copy stored) at shutdown. */
  expire(reason: 'deleted' | 'shutdown' | 'saved'): void {
    const consumer = this.consumer;
    this.consumer = null;
    this.move(reason === 'saved' ? 'SAVE' : 'EXPIRE');
    this.log = null;
    this.clear();
    consumer?.close(this, reason === 'saved' ? 'shutdown' : reason);
  }

  /** The queue's state, its pending events given by `positionOf` in the list saved with it. */
  save(positionOf: (event: QueuedEvent) => number): SavedQueue {
    this.sync();
    const { id, userId, realmId, options, nextEventId, newestPrunedId, lastConnection } = this;
    const runs: number[] = [];
    for (let i = this.head; i < this.events.length; i++) {
      const position = positionOf(this.events[i]!);
      const last = runs.length - 2;
      if (last >= 0 && runs[last]! + runs[last + 1]! === position) runs[last + 1]!++;
      else runs.push(position, 1);
    }
    return { id, userId, realmId, options, events: runs, nextEventId, newestPrunedId, lastConnection };
  }

  static restore(saved: SavedQueue, options: QueueOptions, eventAt: (position: number) => QueuedEvent): EventQueue {
    const queue = new EventQueue(saved.id, saved.userId, saved.realmId, options, saved.lastConnection);
    const events: QueuedEvent[] = [];
    for (let r = 0; r < saved.events.length; r += 2) {
      for (let position = saved.events[r]!; position < saved.events[r]! + saved.events[r + 1]!; position++) events.push(eventAt(position));
    }
    queue.nextEventId = saved.nextEventId - events.length;
    queue.push(events);
    queue.newestPrunedId = saved.newestPrunedId;
    return queue;
  }
}
