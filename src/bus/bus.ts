// The event bus: actions publish an event with the ids of the users who should get it, after
// their transaction committed; the delivery side (actors) subscribes. The in-process bus calls
// back inline; a NATS bus carries the same envelopes between processes, so they are plain JSON.
//
// Events are published in their fullest form and each queue trims them to what its client asked
// for: `message` events carry the rendered `content` plus `raw_content` (the Markdown source) and
// the avatar URL, and the queue applies apply_markdown/client_gravatar; `delete_message` is
// published in bulk form (`message_ids`) and split for clients without bulk_message_deletion.

export interface EventEnvelope {
  realmId: number;
  userIds: readonly number[];
  event: Record<string, unknown>;
  /** Per-recipient additions merged into the event for that user (e.g. message `flags`). */
  perUser?: Readonly<Record<number, Record<string, unknown>>>;
  /** Additions for one queue only (e.g. the sender's `local_message_id`), by queue id. */
  perQueue?: Readonly<Record<string, Record<string, unknown>>>;
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

export type EventHandler = (envelope: EventEnvelope) => void;

export interface EventBus {
  publish(envelope: EventEnvelope): void;
  subscribe(handler: EventHandler): () => void;
  /** Whether published events reach every process now (readiness); the in-process bus always does. */
  connected(): boolean;
  close(): Promise<void>;
}
