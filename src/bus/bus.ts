// The event bus: actions publish an event with the ids of the users who should get it, after
// their transaction committed; the delivery side (actors) subscribes. The in-process bus calls
// back inline; the NATS bus (bus/nats.ts) carries the same envelopes between the processes of a
// cluster, so they are plain JSON, together with the cache changes each process must hear of.
//
// Events are published in their fullest form and each queue trims them to what its client asked
// for: `message` events carry the rendered `content` plus `raw_content` (the Markdown source) and
// the avatar URL, and the queue applies apply_markdown/client_gravatar; `delete_message` is
// published in bulk form (`message_ids`) and split for clients without bulk_message_deletion.
import type { ChatEvent } from '../events/schemas.ts';

export interface EventEnvelope {
  realmId: number;
  userIds: readonly number[];
  event: ChatEvent;
  /**
   * Where a reader of the cluster's stream starts to be given this envelope again (the stream
   * sequence of its frame's first part, or of an earlier frame's still incomplete then), set by
   * the NATS bus as it delivers; queues checkpoint their place by it and `endSeq`
   * (cluster/queue-descriptors.ts). Absent in one process.
   */
  seq?: number;
  /** The stream sequence that completed the envelope's frame (its last part): frames reach queues in this order. */
  endSeq?: number;
  /** Per-recipient additions merged into the event for that user: a message's `flags`. */
  perUser?: Readonly<Record<number, { flags: string[] }>>;
  /** Additions for one queue only, by queue id: the sender's `local_message_id`. */
  perQueue?: Readonly<Record<string, { local_message_id: string }>>;
  /** A message to a public channel: queues registered with all_public_streams get it too. */
  publicChannelMessage?: boolean;
  /**
   * The transaction that committed the change (src/db/commits.ts), so a queue whose register
   * state already holds it does not get it twice. Absent for changes that are not in the
   * database (typing) or whose state register reads from a cache or not at all (settings,
   * uploads: applying those twice changes nothing). Set by actions/transaction.ts only.
   */
  xid?: number;
}

/**
 * A place in the cluster's stream to rebuild a queue from: reading after `afterSeq`, the frames
 * completed after `deliveredThrough`. The frames completed before it were delivered earlier: a
 * frame sent in parts completes after its first part, so others may come between.
 */
export interface StreamPlace {
  afterSeq: number;
  deliveredThrough: number;
}

export type EventHandler = (envelope: EventEnvelope) => void;

/**
 * A committed change to something processes cache (src/cluster/cache-sync.ts applies it): the
 * process that made it has updated its own copy already; the others drop theirs.
 */
export type CacheChange =
  | { cache: 'user'; userId: number }
  /** The user was deactivated: their event queues end too. */
  | { cache: 'sign-out'; userId: number }
  | { cache: 'realm'; realmId: number }
  | { cache: 'groups'; realmId: number }
  | { cache: 'subscribers'; channelIds: number[] | 'all' }
  | { cache: 'channel-rows' }
  | { cache: 'linkifiers'; realmId: number }
  | { cache: 'realm-emoji'; realmId: number }
  /** A scheduled message or reminder now falls due at `at` (ms): every scheduler wakes then. */
  | { cache: 'schedule'; at: number };

export interface BusListener {
  /** Another process made this change. */
  changed?(change: CacheChange): void;
  /**
   * Events may have been lost on the way (the NATS stream lost messages): whatever needs every
   * event (the event queues) must start over.
   */
  lost?(): void;
  /**
   * The bus was cut off from the other processes (NATS restarted) and is back: clients that
   * could not reach their queues meanwhile were not idle by choice.
   */
  reconnected?(): void;
}

export interface EventBus {
  /** Delivers the envelope to every subscriber of every process, in publication order per process. */
  publish(envelope: EventEnvelope): void;
  /**
   * Publishes the events of one change together: they reach each process all in one piece or not
   * at all. `outboxRow`: they are saved in that row (src/cluster/outbox.ts), and a process that
   * delivered the row's events drops them when another node publishes the row again.
   */
  publishAll(envelopes: readonly EventEnvelope[], outboxRow?: number): void;
  subscribe(handler: EventHandler): () => void;
  /** Tells the other processes of a cache change, in order with the events published around it. */
  announce(change: CacheChange): void;
  listen(listener: BusListener): () => void;
  /**
   * Starts delivering to the subscribers: after `position` (what `pause` returned before a
   * restart, so queues saved then get what was published meanwhile), or from now on.
   */
  resume(position: string | null): Promise<void>;
  /** Stops delivering, for queues to be saved; returns where to resume (null: one process has nothing to resume from and keeps delivering). */
  pause(): Promise<string | null>;
  /**
   * Resolves once what was published so far is on its way to every process (stored by NATS,
   * however long NATS is away); null when it already is, as in one process, where delivery is a call.
   */
  settled(): Promise<void> | null;
  /** Whether published events reach every process now (readiness); the in-process bus always does. */
  connected(): boolean;
  close(): Promise<void>;
}

/** How long a request waits for NATS to take its events before it is answered anyway. */
export const ANSWER_WITHIN_MS = 5_000;

/** Resolves when `promise` resolves, or after `ms`, whichever comes first. */
export function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Waits until the bus has what was published, or `ms` at most (the events stay queued): a client
 * is answered even while NATS is away. Null when there is nothing to wait for.
 */
export function storedOrLater(bus: EventBus, ms = ANSWER_WITHIN_MS): Promise<void> | null {
  const stored = bus.settled();
  return stored && waitAtMost(stored, ms);
}
