// Taking over the queue of a node that is gone (docs/cluster.md, "Queues that outlive their
// node"). A request for it that finds its node gone (NATS holds no such node and it has not been
// heard from: the liveness the outbox also goes by) claims the queue's row for this node; of nodes
// claiming at once, one wins and the others pass their requests to it. The winner rebuilds the
// queue by replaying the event stream from the row's checkpoint through the queue's filter, with
// its options, user and register snapshot, numbering from the row's next id, drops what the
// client had acknowledged, and serves it as its own: its client goes on with the same queue id
// and last event id, and gets each event once, in order. A queue whose replay ends it (its
// organization was deactivated) has ended, as it had on its node: BAD_EVENT_QUEUE_ID.
import { EventQueue, QueueError } from '../../actors/queue.ts';
import { restartEvent } from '../actions/event-queues.ts';
import type { App } from '../app.ts';
import { StreamGap } from '../bus/nats.ts';
import type { Claimed } from '../cluster/queue-descriptors.ts';
import { parseSnapshot } from '../db/commits.ts';
import { badQueueId } from '../errors.ts';
import { log } from '../log.ts';
import { queueUnreachable } from './queue-proxy.ts';

/** The replay reached an event that ends the queue. */
class QueueEnded extends Error {}

/** Queues other nodes took over that this node remembers the owner of (the rest it looks up). */
const REMEMBERED_MOVES = 100_000;

export class QueueTakeover {
  private readonly underway = new Map<string, Promise<string | null>>();
  /** Owners of queues of dead nodes, as their rows said. */
  private readonly moved = new Map<string, string>();

  constructor(private readonly app: App) {}

  /** The node a queue of a dead node moved to, as far as this node learned. */
  movedTo(queueId: string): string | undefined {
    return this.moved.get(queueId);
  }

  /** A takeover of the queue under way here: resolves with its owner then (null: this node). */
  pending(queueId: string): Promise<string | null> | undefined {
    return this.underway.get(queueId);
  }

  /**
   * `queueId`, last held by `dead`, which is gone: takes it over, or finds the node that did.
   * Resolves with the queue's owner now (null: this node); BAD_EVENT_QUEUE_ID when there is no
   * such queue (of `userId`, when known), or it cannot be rebuilt; 503 when it could not be
   * rebuilt now (the row is given back, so a later request tries again).
   */
  takeOver(queueId: string, userId: number | undefined, dead: string): Promise<string | null> {
    let running = this.underway.get(queueId);
    if (!running) {
      running = this.run(queueId, userId, dead).finally(() => this.underway.delete(queueId));
      this.underway.set(queueId, running);
    }
    return running;
  }

  private async run(queueId: string, userId: number | undefined, dead: string): Promise<string | null> {
    const descriptors = this.app.queueDescriptors!;
    this.moved.delete(queueId);
    const row = await descriptors.claim(queueId, userId, dead);
    if (!row) {
      const owner = await descriptors.ownerOf(queueId, userId);
      if (owner === null || owner === descriptors.node) throw badQueueId(queueId);
      this.moved.set(queueId, owner);
      if (this.moved.size > REMEMBERED_MOVES) this.moved.delete(this.moved.keys().next().value!);
      return owner;
    }
    const started = Date.now();
    try {
      const events = await this.rebuild(queueId, row);
      log.info('took over an event queue whose node is gone', { from: dead, userId: row.userId, events, ms: Date.now() - started });
      return null;
    } catch (err) {
      const lost = err instanceof StreamGap || err instanceof QueueError || err instanceof QueueEnded;
      if (err instanceof QueueEnded) log.info('an event queue whose node is gone had ended', { from: dead, userId: row.userId });
      else {
        log.warn(
          lost ? 'an event queue whose node is gone cannot be rebuilt' : 'could not rebuild an event queue whose node is gone; a later request tries again',
          { from: dead, error: String(err) },
        );
      }
      await descriptors.unclaim(queueId, lost ? null : dead);
      throw lost ? badQueueId(queueId) : queueUnreachable();
    }
  }

  /** Replays the stream into the queue and adds it to the registry once caught up; resolves with how many events it holds. */
  private async rebuild(queueId: string, row: Claimed): Promise<number> {
    const queues = this.app.queues;
    const options = queues.optionsPool.acquire(row.options);
    const queue = new EventQueue(queueId, row.userId, row.realmId, options, Date.now());
    queue.snapshot = parseSnapshot(row.snapshot);
    queue.nextEventId = row.nextEventId;
    // The restart events the checkpoint does not cover go back where they sat, between the frames.
    const restarts = row.restarts.filter(([id]) => id >= row.nextEventId).sort((a, b) => a[0] - b[0]);
    const restartsBefore = (seq: number) => {
      while (restarts.length > 0 && restarts[0]![1] < seq) {
        restarts.shift();
        queues.pushTo(queue, [restartEvent()]);
      }
    };
    let adopted = false;
    try {
      await this.app.cluster!.bus.replay(
        { afterSeq: row.afterSeq, deliveredThrough: row.deliveredThrough },
        (envelope) => {
          restartsBefore(envelope.endSeq!);
          // Its node ended it there, or would have: nothing more reaches it.
          if (queues.replayInto(queue, envelope)) throw new QueueEnded();
        },
        () => {
          restartsBefore(Number.POSITIVE_INFINITY);
          // A frame acknowledged in part is replayed whole: what the client had goes again.
          if (row.newestPrunedId >= row.nextEventId) queue.prune(row.newestPrunedId);
          else queue.newestPrunedId = row.newestPrunedId;
          queues.adopt(queue);
          this.app.queueDescriptors!.adopt(queue, row);
          adopted = true;
        },
      );
    } finally {
      if (!adopted) queues.optionsPool.release(options);
    }
    return queue.size;
  }
}
