// Channel actors: the serial writer of each channel in use (actors/serial.ts) also holds the
// channel's subscriber set, so a message to a busy channel reads no subscription rows. The set is
// loaded on first use, dropped after every subscription change (once it committed), and goes
// with the actor when it stops after a quiet spell, so an idle channel keeps nothing in memory.
// It also caches the channels' rows for the send path, dropped whole on any channel change.
// Group commit: messages that arrive while the channel is writing wait in one batch, written and
// published together by the channel's next write.
import { SerialActors } from './serial.ts';

interface Batch {
  items: unknown[];
  settles: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[];
}

export class ChannelActors extends SerialActors {
  private readonly subscriberSets = new Map<number, Promise<readonly number[]>>();
  /** Per channel, the batch queued behind its running write that later items may still join. */
  private readonly openBatches = new Map<number, Batch>();
  /** Channel rows found by id or by a realm-scoped name key; misses are not kept. */
  private readonly rows = new Map<number | string, Promise<unknown>>();

  /** The row under `key` (an id, or a name key), from `load` when not held; a null load is not held. */
  row<T extends { id: number } | null>(key: number | string, load: () => Promise<T>): Promise<T> {
    const held = this.rows.get(key);
    if (held) return held as Promise<T>;
    const row = load();
    this.rows.set(key, row);
    // Kept under its id too, unless a change dropped it while it loaded.
    row.then((r) => (r === null ? this.forgetRowIf(key, row) : this.rows.get(key) === row && this.rows.set(r.id, row)), () => this.forgetRowIf(key, row));
    return row;
  }

  /** After any channel's row changed (once it committed): every cached row is read again. */
  forgetRows(): void {
    this.rows.clear();
  }

  private forgetRowIf(key: number | string, row: Promise<unknown>): void {
    if (this.rows.get(key) === row) this.rows.delete(key);
  }

  /**
   * Any other write closes the channel's open batch: a message sent after it is written after it.
   */
  override run<T>(id: number, write: () => Promise<T>): Promise<T> {
    this.openBatches.delete(id);
    return super.run(id, write);
  }

  /**
   * Adds `item` to the channel's open batch, or opens one queued behind the channel's earlier
   * writes. `writeAll` (the first item's; every item of a channel's batches comes from the same
   * caller) writes the whole batch and returns one result per item, in order.
   */
  inBatch<T, R>(id: number, item: T, writeAll: (items: T[]) => Promise<R[]>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const open = this.openBatches.get(id);
      const settle = { resolve: resolve as (value: unknown) => void, reject };
      if (open) {
        open.items.push(item);
        open.settles.push(settle);
        return;
      }
      const batch: Batch = { items: [item], settles: [settle] };
      this.openBatches.set(id, batch);
      this.enqueue(id, async () => {
        if (this.openBatches.get(id) === batch) this.openBatches.delete(id);
        try {
          const results = await writeAll(batch.items as T[]);
          batch.settles.forEach((s, i) => s.resolve(results[i]));
        } catch (err) {
          for (const s of batch.settles) s.reject(err);
        }
      }).catch(() => {});
    });
  }

  /** The channel's active subscribers who are active users, from `load` when not held yet. */
  subscribers(channelId: number, load: () => Promise<readonly number[]>): Promise<readonly number[]> {
    const held = this.subscriberSets.get(channelId);
    if (held) return held;
    // Stored before it resolves: a change committed meanwhile drops it, so nobody keeps a stale set.
    const set = load();
    this.subscriberSets.set(channelId, set);
    set.catch(() => this.forgetIf(channelId, set));
    this.actorFor(channelId);
    return set;
  }

  /** After a change of who subscribes (or who is active): the channels' sets are read again. */
  forgetSubscribers(channelIds: Iterable<number> | 'all'): void {
    if (channelIds === 'all') this.subscriberSets.clear();
    else for (const id of channelIds) this.subscriberSets.delete(id);
  }

  /** How many channels hold a subscriber set now. */
  get heldSets(): number {
    return this.subscriberSets.size;
  }

  protected override stopped(channelId: number): void {
    this.subscriberSets.delete(channelId);
    this.openBatches.delete(channelId);
  }

  private forgetIf(channelId: number, set: Promise<readonly number[]>): void {
    if (this.subscriberSets.get(channelId) === set) this.subscriberSets.delete(channelId);
  }
}
