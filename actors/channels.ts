// Channel actors: the serial writer of each channel in use (actors/serial.ts) also holds the
// channel's subscriber set, so a message to a busy channel reads no subscription rows. The set is
// loaded on first use, dropped after every subscription change (once it committed), and goes
// with the actor when it stops after a quiet spell, so an idle channel keeps nothing in memory.
// It also caches the channels' rows for the send path, dropped whole on any channel change.
import { SerialActors } from './serial.ts';

export class ChannelActors extends SerialActors {
  private readonly subscriberSets = new Map<number, Promise<readonly number[]>>();
  /** Channel rows found by id or by a realm-scoped name key; misses are not kept. */
  private readonly rows = new Map<number | string, Promise<unknown>>();

  /** The row under `key` (an id, or a name key), from `load` when not held; a null load is not held. */
  row<T extends { id: number } | null>(key: number | string, load: () => Promise<T>): Promise<T> {
    const held = this.rows.get(key);
    if (held) return held as Promise<T>;
    const row = load();
    this.rows.set(key, row);
    // Kept under its id too, unless a change dropped it while it loaded.
    row.then(
      (r) => (r === null ? this.forgetRowIf(key, row) : this.rows.get(key) === row && this.rows.set(r.id, row)),
      () => this.forgetRowIf(key, row),
    );
    return row;
  }

  /** After any channel's row changed (once it committed): every cached row is read again. */
  forgetRows(): void {
    this.rows.clear();
  }

  private forgetRowIf(key: number | string, row: Promise<unknown>): void {
    if (this.rows.get(key) === row) this.rows.delete(key);
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

  /** Whether the channel's subscriber set is held (or being read) now. */
  holdsSubscribers(channelId: number): boolean {
    return this.subscriberSets.has(channelId);
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
  }

  private forgetIf(channelId: number, set: Promise<readonly number[]>): void {
    if (this.subscriberSets.get(channelId) === set) this.subscriberSets.delete(channelId);
  }
}
