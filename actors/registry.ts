// All event queues of this process: creation and lookup, fan-out of bus events to the queues of
// their recipients, one shared tick for heartbeats and idle expiry, and save/restore across a
// restart. Delivery to clients is deferred to setImmediate so the request that published an
// event is answered first, and each parked client is then completed once with all it has.
import { randomUUID } from 'node:crypto';
import type { EventBus, EventEnvelope } from '../src/bus/bus.ts';
import { log } from '../src/log.ts';
import { ownParts, passesNarrow, shapeEvent, type OwnParts } from './event-format.ts';
import { EventQueue, QueuedEvent, type Consumer, type EventLog, type SavedQueue } from './queue.ts';
import { OptionsPool, type QueueOptions } from './queue-options.ts';
import type { ChatEvent } from '../src/events/schemas.ts';

export interface RegistrySettings {
  heartbeatSeconds: number;
  heartbeatJitterSeconds: number;
  /** How often heartbeats and idle expiry are checked. */
  tickMs: number;
  /**
   * A queue holding more unacknowledged events than this, or more bytes of them, is discarded
   * once its client has read nothing for a heartbeat interval (with its jitter).
   */
  maxEvents: number;
  maxBytes: number;
  /** Starts every queue id: the node's id in a cluster (`node:`), so any node knows whose a queue is. */
  idPrefix?: string;
  now?: () => number;
}

/**
 * An event after which its recipients' queues end once it is delivered: their organization was
 * deactivated, and none of its users can poll again (Zulip sends it to flush their long-polls).
 */
function endsQueues(event: ChatEvent): boolean {
  return event.type === 'realm' && event.op === 'deactivated';
}

/** One event's fan-out: the shapes serialized so far, by the queue options they are for. */
interface Fanout {
  /** What of the envelope its queues need: not its recipients, which idle queues' logs would keep. */
  envelope: Pick<EventEnvelope, 'event' | 'xid' | 'perQueue' | 'seq' | 'endSeq'>;
  shapes: Map<QueueOptions, { bases: string[]; byParts: Map<string, QueuedEvent[]> }>;
  ends: boolean;
}

/** A recipient's own parts of an event (message flags), and the same as JSON members. */
interface Parts {
  own: OwnParts;
  extras: string;
}

/**
 * One user's events that not every queue of theirs has taken yet, oldest first. A queue nobody
 * reads keeps only its position here, so an event costs a user one entry however many idle
 * queues they hold (a load test or a busy bot holds thousands), and an idle queue costs the
 * fan-out nothing; a queue takes its events when it is read. The registry drops the entries
 * every queue has taken.
 */
class UserLog implements EventLog {
  /** Pairs: an event's fan-out, then the user's parts of it. */
  private entries: (Fanout | Parts)[] = [];
  /** The position of the oldest entry. */
  private first = 0;

  constructor(private readonly take: (fanout: Fanout, queue: EventQueue, parts: Parts) => void) {}

  get end(): number {
    return this.first + this.entries.length / 2;
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  append(fanout: Fanout, parts: Parts): void {
    this.entries.push(fanout, parts);
  }

  catchUp(queue: EventQueue): void {
    const from = 2 * (queue.cursor - this.first);
    const to = this.entries.length;
    // Moved first: taking an event reads the queue, which must not catch up again.
    queue.cursor = this.end;
    for (let i = from; i < to && !queue.ended; i += 2) this.take(this.entries[i] as Fanout, queue, this.entries[i + 1] as Parts);
  }

  /** Forgets the entries before `position`. */
  dropBefore(position: number): void {
    const count = 2 * (position - this.first);
    if (count <= 0) return;
    this.entries = count === this.entries.length ? [] : this.entries.slice(count);
    this.first = position;
  }
}

/** A recipient's own parts as JSON members to append to the shared event (`,"flags":[...]`). */
function partsJson(own: OwnParts): string {
  let out = '';
  if (own.flags !== undefined) out += `,"flags":${JSON.stringify(own.flags)}`;
  if (own.local_message_id !== undefined) out += `,"local_message_id":${JSON.stringify(own.local_message_id)}`;
  return out;
}

export class QueueRegistry {
  private readonly queues = new Map<string, EventQueue>();
  /** Sets, not arrays: a bot or load test may hold thousands of queues, and removal must stay O(1). */
  private readonly byUser = new Map<number, Set<EventQueue>>();
  private readonly logs = new Map<number, UserLog>();
  private readonly take = (fanout: Fanout, queue: EventQueue, parts: Parts) => this.takeEvent(fanout, queue, parts);
  /** Queues registered with all_public_streams, by realm: they also get public channels' messages. */
  private readonly allPublic = new Map<number, Set<EventQueue>>();
  private readonly dirty = new Set<EventQueue>();
  /** Queues deleted at the next flush, once their client got what they hold. */
  private readonly ending = new Set<EventQueue>();
  private flushScheduled = false;
  /** Events the bus delivered into queues, once per queue (a metric). */
  delivered = 0;
  /** Set at shutdown: queues keep collecting events but no client reads them any more. */
  private closing = false;
  readonly optionsPool = new OptionsPool();
  private readonly ticker: NodeJS.Timeout;
  private readonly unsubscribe: (() => void)[];
  private readonly now: () => number;

  constructor(
    bus: EventBus,
    readonly settings: RegistrySettings,
  ) {
    this.now = settings.now ?? Date.now;
    // Queues that may have missed events end: their clients register again and read the
    // database, so nothing they acknowledged is lost.
    // Clients cut off from their queues with the bus had no chance to read: their time starts over.
    this.unsubscribe = [
      bus.subscribe((envelope) => this.deliver(envelope)),
      bus.listen({ lost: () => this.deleteAll(), reconnected: () => this.forgiveAll() }),
    ];
    this.ticker = setInterval(() => this.tick(), settings.tickMs);
    this.ticker.unref();
  }

  get size(): number {
    return this.queues.size;
  }

  create(userId: number, realmId: number, options: QueueOptions): EventQueue {
    const queue = new EventQueue(`${this.settings.idPrefix ?? ''}${randomUUID()}`, userId, realmId, this.optionsPool.acquire(options), this.now());
    this.add(queue);
    return queue;
  }

  private add(queue: EventQueue): void {
    this.queues.set(queue.id, queue);
    const set = this.byUser.get(queue.userId);
    if (set) set.add(queue);
    else this.byUser.set(queue.userId, new Set([queue]));
    if (queue.options.allPublicStreams) {
      // Given every event at once: public channels' messages reach them apart from their user's.
      const set = this.allPublic.get(queue.realmId) ?? new Set();
      set.add(queue);
      this.allPublic.set(queue.realmId, set);
    } else {
      let log = this.logs.get(queue.userId);
      if (!log) this.logs.set(queue.userId, (log = new UserLog(this.take)));
      queue.log = log;
      queue.cursor = log.end;
    }
  }

  /** The queue, if it exists and belongs to `userId` (another user's queue is as good as none). */
  get(queueId: string, userId: number): EventQueue | undefined {
    const queue = this.queues.get(queueId);
    return queue && queue.userId === userId ? this.current(queue) : undefined;
  }

  /** Whether this process holds the queue, read or not. */
  has(queueId: string): boolean {
    return this.queues.has(queueId);
  }

  /** The queue by id alone, for callers that prove ownership by knowing the id. */
  peek(queueId: string): EventQueue | undefined {
    const queue = this.queues.get(queueId);
    return queue && this.current(queue);
  }

  /** The queue with what waited for it in its user's log, unless that took it over its bound. */
  private current(queue: EventQueue): EventQueue | undefined {
    queue.sync();
    return queue.ended ? undefined : queue;
  }

  queuesOf(userId: number): ReadonlySet<EventQueue> {
    return this.byUser.get(userId) ?? new Set();
  }

  delete(queue: EventQueue, reason: 'deleted' | 'shutdown' | 'saved' = 'deleted'): void {
    if (!this.queues.delete(queue.id)) return;
    const set = this.byUser.get(queue.userId);
    set?.delete(queue);
    if (set?.size === 0) {
      this.byUser.delete(queue.userId);
      this.logs.delete(queue.userId);
    }
    this.allPublic.get(queue.realmId)?.delete(queue);
    this.dirty.delete(queue);
    this.ending.delete(queue);
    this.optionsPool.release(queue.options);
    queue.expire(reason);
  }

  private deleteAll(): void {
    for (const queue of this.all()) this.delete(queue);
  }

  private forgiveAll(): void {
    const now = this.now();
    for (const queue of this.queues.values()) queue.lastRead = now;
  }

  /**
   * Whether a queue over its bound is abandoned: its client read nothing for a heartbeat interval.
   * A client that reads keeps its queue through a burst (what waited during a NATS outage), which
   * it takes in its next reads.
   */
  private abandoned(queue: EventQueue): boolean {
    return this.now() - queue.lastRead > (this.settings.heartbeatSeconds + this.settings.heartbeatJitterSeconds) * 1000;
  }

  /** Readers attached now: parked long-polls and open WebSockets (a metric: one pass over the queues). */
  readers(): { polls: number; sockets: number } {
    let polls = 0;
    let sockets = 0;
    for (const queue of this.queues.values()) {
      if (queue.consumer?.kind === 'poll') polls++;
      else if (queue.consumer?.kind === 'socket') sockets++;
    }
    return { polls, sockets };
  }

  /** Every queue, in creation order, each with what waited for it. */
  all(): EventQueue[] {
    for (const queue of this.queues.values()) queue.sync();
    return [...this.queues.values()];
  }

  /** Attaches a consumer; pending events are handed over on the next flush. */
  attach(queue: EventQueue, consumer: Consumer): void {
    if (this.closing) return consumer.close(queue, 'shutdown');
    const jitter = Math.random() * this.settings.heartbeatJitterSeconds;
    queue.attach(consumer, this.now(), this.now() + (this.settings.heartbeatSeconds + jitter) * 1000);
    if (queue.size) this.markDirty(queue);
  }

  /** Shutdown: answers parked polls, closes sockets, and turns later readers away. */
  closeConsumers(): void {
    this.closing = true;
    for (const queue of this.queues.values()) {
      const consumer = queue.consumer;
      if (!consumer) continue;
      queue.detach(consumer, this.now());
      consumer.close(queue, 'shutdown');
    }
  }

  /** A new reader that answers at once (dont_block, pending events) still ends the previous one. */
  release(queue: EventQueue): void {
    const previous = queue.consumer;
    if (!previous) return;
    queue.detach(previous, this.now());
    previous.close(queue, 'replaced');
  }

  detach(queue: EventQueue, consumer: Consumer): void {
    queue.detach(consumer, this.now());
  }

  /** Appends events to one queue (the register-time and restart events). */
  pushTo(queue: EventQueue, events: readonly Record<string, unknown>[]): void {
    this.append(
      queue,
      events.map((e) => new QueuedEvent(JSON.stringify(e).slice(1))),
    );
  }

  private append(queue: EventQueue, events: readonly QueuedEvent[]): void {
    // After what waits in the log: a queue's events keep their order.
    queue.sync();
    queue.push(events);
    if ((queue.size > this.settings.maxEvents || queue.bytes > this.settings.maxBytes) && this.abandoned(queue)) {
      // Its client gets BAD_EVENT_QUEUE_ID and registers again, as after any lost queue.
      log.warn('discarded an event queue over its bound', { userId: queue.userId, events: queue.size, bytes: queue.bytes });
      this.delete(queue);
    } else if (queue.consumer) {
      this.markDirty(queue);
    }
  }

  deliver(envelope: EventEnvelope): void {
    // Alike queues share the same events: each distinct shape is serialized once per fan-out, and
    // each distinct set of the recipient's own parts (message flags, local_message_id) appended
    // to it once, so most recipients of a message share one event object. A recipient's own parts
    // are worked out once for all their queues: a wide channel's message visits every queue of
    // every subscriber, so that loop does as little as it can.
    const fanout: Fanout = {
      envelope: { event: envelope.event, xid: envelope.xid, perQueue: envelope.perQueue, seq: envelope.seq, endSeq: envelope.endSeq },
      shapes: new Map(),
      ends: endsQueues(envelope.event),
    };
    const publicQueues = envelope.publicChannelMessage ? this.allPublic.get(envelope.realmId) : undefined;
    // Recipients with the same parts usually share one object (a message's flags): serialized once.
    // Alike parts are one object whatever the publisher gave: idle queues' logs keep them.
    const byPerUser = new Map<unknown, Parts>();
    const byExtras = new Map<string, Parts>();
    for (const userId of envelope.userIds) {
      const queues = this.byUser.get(userId);
      if (queues === undefined) continue;
      const perUser = envelope.perUser?.[userId];
      let parts = byPerUser.get(perUser);
      if (!parts) {
        const own = ownParts(envelope, userId, null);
        const extras = partsJson(own);
        parts = byExtras.get(extras) ?? { own, extras };
        byExtras.set(extras, parts);
        byPerUser.set(perUser, parts);
      }
      this.logs.get(userId)?.append(fanout, parts);
      for (const queue of queues) {
        // A queue being read takes the event now; an idle one when its client comes back, or now
        // when the event ends it. Those with all_public_streams get public channels' messages below.
        if (queue.log !== null) {
          if (queue.consumer !== null || fanout.ends) queue.sync();
        } else if (!publicQueues?.has(queue)) {
          this.takeEvent(fanout, queue, parts);
        }
      }
    }
    if (publicQueues) {
      for (const queue of publicQueues) {
        const own = ownParts(envelope, queue.userId, queue.id);
        this.deliverTo(fanout, queue, own, partsJson(own));
      }
    }
  }

  /**
   * Gives a queue outside the registry what `deliver` would have given it here: a queue rebuilt by
   * replaying the cluster's stream (src/gateway/queue-takeover.ts), which `adopt` then adds. True
   * when the event would have ended the queue (it is not given to it).
   */
  replayInto(queue: EventQueue, envelope: EventEnvelope): boolean {
    const fanout: Fanout = {
      envelope: { event: envelope.event, xid: envelope.xid, perQueue: envelope.perQueue, seq: envelope.seq, endSeq: envelope.endSeq },
      shapes: new Map(),
      ends: false,
    };
    if (envelope.publicChannelMessage && queue.options.allPublicStreams && envelope.realmId === queue.realmId) {
      const own = ownParts(envelope, queue.userId, queue.id);
      this.deliverTo(fanout, queue, own, partsJson(own));
      return false;
    }
    if (!envelope.userIds.includes(queue.userId)) return false;
    if (endsQueues(envelope.event)) return true;
    const own = ownParts(envelope, queue.userId, null);
    this.takeEvent(fanout, queue, { own, extras: partsJson(own) });
    return false;
  }

  /** A queue rebuilt outside the registry joins it, as if its client had just polled; the bus's next events reach it. */
  adopt(queue: EventQueue): void {
    queue.lastConnection = queue.lastRead = this.now();
    this.add(queue);
  }

  /** One recipient's event into one of their queues, with what the queue alone gets (local_message_id). */
  private takeEvent(fanout: Fanout, queue: EventQueue, { own, extras }: Parts): void {
    const forQueue = fanout.envelope.perQueue?.[queue.id];
    if (forQueue === undefined) this.deliverTo(fanout, queue, own, extras);
    else this.deliverTo(fanout, queue, { ...own, ...forQueue }, partsJson({ ...own, ...forQueue }));
  }

  private deliverTo({ envelope, shapes, ends }: Fanout, queue: EventQueue, own: OwnParts, extras: string): void {
    if (ends) {
      this.ending.add(queue);
      this.markDirty(queue);
    }
    if (queue.alreadyHas(envelope.xid)) return;
    if (!passesNarrow(envelope.event, queue.options, own)) return;
    let shape = shapes.get(queue.options);
    if (!shape) {
      // Without the closing brace, so the recipient's parts can follow.
      shape = { bases: shapeEvent(envelope.event, queue.options).map((e) => JSON.stringify(e).slice(1, -1)), byParts: new Map() };
      shapes.set(queue.options, shape);
    }
    if (shape.bases.length === 0) return;
    let events = shape.byParts.get(extras);
    if (!events) {
      const b = shape.bases;
      events = b.map((base) => new QueuedEvent(`${base}${extras}}`, envelope.xid, envelope.seq, envelope.endSeq));
      shape.byParts.set(extras, events);
    }
    this.delivered += events.length;
    this.append(queue, events);
  }

  private markDirty(queue: EventQueue): void {
    this.dirty.add(queue);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const now = this.now();
    for (const queue of this.dirty) {
      const consumer = queue.consumer;
      if (consumer && consumer.flush(queue)) queue.detach(consumer, now);
    }
    this.dirty.clear();
    for (const queue of this.ending) this.delete(queue);
  }

  /** Heartbeats for parked queues that are due, and removal of queues idle too long. */
  tick(): void {
    const now = this.now();
    for (const queue of this.queues.values()) {
      if ((queue.state === 'parked' || queue.state === 'streaming') && now >= queue.heartbeatDue) {
        queue.heartbeatDue = now + (this.settings.heartbeatSeconds + Math.random() * this.settings.heartbeatJitterSeconds) * 1000;
        this.beat(queue, queue.consumer!, now);
      } else if (queue.isIdleExpired(now)) {
        this.delete(queue);
      }
    }
    this.trimLogs();
  }

  /**
   * A heartbeat for a queue's reader. What waits goes first, so the heartbeat's id, the newest
   * event's, is one the client has been handed: a client keeping the largest id it saw loses
   * nothing by seeing it twice.
   */
  private beat(queue: EventQueue, consumer: Consumer, now: number): void {
    if (queue.size > 0 && consumer.flush(queue)) return queue.detach(consumer, now);
    if (consumer.heartbeat(queue, `{"id":${queue.nextEventId - 1},"type":"heartbeat"}`)) queue.detach(consumer, now);
  }

  /**
   * Drops the log entries every queue of their user has taken. An abandoned queue further behind
   * than the event bound is discarded without taking them (that would hold what the bound is there to
   * free): its client registers again, as after any lost queue.
   */
  private trimLogs(): void {
    for (const [userId, userLog] of this.logs) {
      if (userLog.empty) continue;
      let oldest = userLog.end;
      for (const queue of this.byUser.get(userId) ?? []) {
        if (queue.log !== userLog || queue.cursor === userLog.end) continue;
        if (userLog.end - queue.cursor > this.settings.maxEvents && this.abandoned(queue)) {
          log.warn('discarded an event queue over its bound', { userId, behind: userLog.end - queue.cursor });
          this.delete(queue);
        } else {
          oldest = Math.min(oldest, queue.cursor);
        }
      }
      userLog.dropBefore(oldest);
    }
  }

  /** Brings back a saved queue, as if its client had just polled; `eventAt` finds the events saved with it. */
  restore(saved: SavedQueue, eventAt: (position: number) => QueuedEvent): EventQueue {
    const queue = EventQueue.restore({ ...saved, lastConnection: this.now() }, this.optionsPool.acquire(saved.options), eventAt);
    this.add(queue);
    return queue;
  }

  stop(): void {
    clearInterval(this.ticker);
    for (const stop of this.unsubscribe) stop();
  }
}
