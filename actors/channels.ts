// Channel actors: the actor of each channel in use (channelMachine in actors/serial.ts) runs its
// writes and holds, in its context, the channel's subscriber set, so a message to a busy channel
// reads no subscription rows. The set is read on first use (loading, then held), dropped after
// every subscription change (once it committed), and goes with the actor when it stops after a
// quiet spell, so an idle channel keeps nothing in memory.
// Beside the actors, one cache of channel rows for the send path, found by id or by name (before
// any channel's actor is known), and dropped whole on any channel change: no channel's own state.
import type { ActorOptions, AnyActorLogic } from 'xstate';
import { channelMachine, SerialActors, type Turn } from './serial.ts';

export class ChannelActors extends SerialActors {
  /** Channel rows found by id or by a realm-scoped name key; misses are not kept. */
  private readonly rows = new Map<number | string, Promise<unknown>>();

  constructor(idleMs?: number, turn?: Turn | null, clock?: ActorOptions<AnyActorLogic>['clock']) {
    super(idleMs, turn, channelMachine, clock);
  }

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

  /** The channel's active subscribers who are active users, from `load` when its actor holds none. */
  subscribers(channelId: number, load: () => Promise<readonly number[]>): Promise<readonly number[]> {
    const actor = this.actorFor(channelId);
    const held = actor.getSnapshot().context.subscribers;
    if (held) return held;
    // Held before it resolves: a change committed meanwhile drops it, so nobody keeps a stale set.
    const set = load();
    actor.send({ type: 'LOAD', set });
    set.then(
      () => actor.send({ type: 'LOADED', set }),
      () => actor.send({ type: 'LOAD_FAILED', set }),
    );
    return set;
  }

  /** Whether the channel's subscriber set is held (or being read) now. */
  holdsSubscribers(channelId: number): boolean {
    return !!this.actors.get(channelId)?.getSnapshot().context.subscribers;
  }

  /** After a change of who subscribes (or who is active): the channels' sets are read again. */
  forgetSubscribers(channelIds: Iterable<number> | 'all'): void {
    if (channelIds === 'all') for (const actor of this.actors.values()) actor.send({ type: 'FORGET' });
    else for (const id of channelIds) this.actors.get(id)?.send({ type: 'FORGET' });
  }

  /** How many channels hold a subscriber set now. */
  get heldSets(): number {
    let held = 0;
    for (const actor of this.actors.values()) if (actor.getSnapshot().context.subscribers) held++;
    return held;
  }
}
