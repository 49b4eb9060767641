// Channel actors: the serial writer of each channel in use (actors/serial.ts) also holds the
// channel's subscriber set, so a message to a busy channel reads no subscription rows. The set is
// loaded on first use, dropped after every subscription change (once it committed), and goes
// with the actor when it stops after a quiet spell, so an idle channel keeps nothing in memory.
import { SerialActors } from './serial.ts';

export class ChannelActors extends SerialActors {
  private readonly subscriberSets = new Map<number, Promise<readonly number[]>>();

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
  }

  private forgetIf(channelId: number, set: Promise<readonly number[]>): void {
    if (this.subscriberSets.get(channelId) === set) this.subscriberSets.delete(channelId);
  }
}
