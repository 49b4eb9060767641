// Where an event queue lives and how a request for it reaches it: one interface for the API
// (POST /register, GET and DELETE /events) and the WebSocket gateway, with the single process's
// version (every queue is here) and the cluster's (a queue lives on the node that made it, and a
// request that reaches another node is passed to the owner over NATS). Whatever decides owners
// later (a user's shard, a queue rebuilt on another node after its own died) replaces `owner` and
// the relaying behind it; the callers stay as they are. docs/cluster.md, "Queues".
import type { QueueOptions } from '../../actors/queue-options.ts';
import type { EventQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import { currentSnapshot } from '../db/commits.ts';
import { badQueueId } from '../errors.ts';
import type { ANSWER_PENDING, HandlerOutcome, JsonFields } from '../http/route.ts';
import type { Log } from '../log.ts';
import { acknowledge, pollQueue, type PollRequest } from './long-poll.ts';
import { proxyDelete, proxyPoll, serveQueues, type DeleteCall, type PollCall } from './queue-proxy.ts';
import { SocketBridge } from './socket-bridge.ts';
import { LocalSource, openQueue, type SocketSource } from './socket-source.ts';

/** How a parked long-poll that reached this node is answered (long-poll.ts). */
export type Parked = Pick<PollRequest, 'onAbort' | 'answer'>;

export interface QueuePlacement {
  /** The node that holds the queue, or null when this one does (always, in one process). */
  owner(queueId: string): string | null;
  /**
   * A new queue of `holder` on this node, whose starting state `read` reads in one repeatable-read
   * transaction whose snapshot the queue then keeps: a change committed meanwhile is either in the
   * state or in the queue, never both nor neither. No queue for a spectator (`holder` null). The
   * queue is deleted again if `read` fails.
   */
  register<T>(
    holder: { userId: number; realmId: number } | null,
    options: QueueOptions,
    read: (prisma: App['prisma']) => Promise<T>,
  ): Promise<{ queue: EventQueue | null; state: T }>;
  /** A new queue on this node with no starting state (GET /events with dont_block and no queue id). */
  create(userId: number, realmId: number, options: QueueOptions): EventQueue;
  /** Acknowledges up to `lastEventId` and answers with what the queue holds, at once or when something comes. */
  poll(call: PollCall, parked: Parked, log: Log): HandlerOutcome;
  delete(call: DeleteCall): Promise<void>;
  /** What a client's WebSocket reads: the queue, resumed after `lastEventId` or after what was acknowledged. */
  openSocket(queueId: string, userId: number | undefined, lastEventId: string | null): Promise<SocketSource>;
}

/** Every queue in this process. Also what a cluster node does with its own queues. */
class LocalPlacement implements QueuePlacement {
  constructor(protected readonly app: App) {}

  owner(_queueId: string): string | null {
    return null;
  }

  async register<T>(holder: { userId: number; realmId: number } | null, options: QueueOptions, read: (prisma: App['prisma']) => Promise<T>) {
    const app = this.app;
    // The queue exists before the state is read, so nothing that happens meanwhile is missed.
    const queue = holder ? this.create(holder.userId, holder.realmId, options) : null;
    // In a cluster, replaying the stream after this point through the snapshot rebuilds the queue.
    const startsAfter = app.queueDescriptors?.position();
    try {
      const state = await app.prisma.$transaction(
        async (tx) => {
          const snapshot = queue && startsAfter !== undefined ? await app.queueDescriptors!.record(tx, queue, startsAfter) : await currentSnapshot(tx);
          const state = await read(tx as App['prisma']);
          queue?.applySnapshot(snapshot);
          return state;
        },
        // Prisma's 2 s / 5 s defaults are too short for a big organization's state, and under load a
        // register waits for a free connection of the pool behind the writes.
        { isolationLevel: 'RepeatableRead', maxWait: 10_000, timeout: 30_000 },
      );
      return { queue, state };
    } catch (err) {
      if (queue) app.queues.delete(queue);
      throw err;
    }
  }

  create(userId: number, realmId: number, options: QueueOptions): EventQueue {
    return this.app.queues.create(userId, realmId, options);
  }

  poll(call: PollCall, parked: Parked, _log: Log): HandlerOutcome {
    return this.pollHere(call, parked);
  }

  /** A poll of a queue of this node: answered through `parked.answer` if given, else by the promise returned. */
  protected pollHere(call: PollCall, parked: Parked & { answer: (result: JsonFields) => void }): JsonFields | typeof ANSWER_PENDING;
  protected pollHere(call: PollCall, parked?: Parked): JsonFields | Promise<JsonFields>;
  protected pollHere(call: PollCall, parked: Parked = {}): HandlerOutcome {
    const queue = this.app.queues.get(call.queueId, call.userId);
    if (!queue) throw badQueueId(call.queueId);
    acknowledge(queue, call.lastEventId);
    return pollQueue(this.app, queue, { dontBlock: call.dontBlock, ...parked });
  }

  async delete(call: DeleteCall): Promise<void> {
    const queue = this.app.queues.get(call.queueId, call.userId);
    if (!queue) throw badQueueId(call.queueId);
    this.app.queues.delete(queue);
  }

  async openSocket(queueId: string, userId: number | undefined, lastEventId: string | null): Promise<SocketSource> {
    const { queue, resumeAfter } = openQueue(this.app, queueId, userId, lastEventId);
    return new LocalSource(this.app, queue, resumeAfter);
  }
}

/**
 * A node of a cluster: a queue lives on the node that made it, whose NODE_ID starts the queue's
 * id (`node:uuid`); requests for another node's queue go there over NATS (queue-proxy.ts,
 * socket-bridge.ts), and this node answers the others' requests for its own.
 */
class NatsPlacement extends LocalPlacement {
  private readonly bridge: SocketBridge;
  private readonly here: string;

  constructor(app: App) {
    super(app);
    this.here = app.cluster!.id;
    this.bridge = new SocketBridge(app);
    serveQueues(app, { poll: (call) => this.pollHere(call), delete: (call) => super.delete(call) });
  }

  override owner(queueId: string): string | null {
    const colon = queueId.indexOf(':');
    if (colon <= 0) return null;
    const node = queueId.slice(0, colon);
    return node === this.here ? null : node;
  }

  override poll(call: PollCall, parked: Parked, log: Log): HandlerOutcome {
    const owner = this.owner(call.queueId);
    return owner ? proxyPoll(this.app, owner, call, log) : this.pollHere(call, parked);
  }

  override async delete(call: DeleteCall): Promise<void> {
    const owner = this.owner(call.queueId);
    return owner ? proxyDelete(this.app, owner, call) : super.delete(call);
  }

  override async openSocket(queueId: string, userId: number | undefined, lastEventId: string | null): Promise<SocketSource> {
    const owner = this.owner(queueId);
    return owner ? this.bridge.connect(owner, queueId, userId, lastEventId) : super.openSocket(queueId, userId, lastEventId);
  }
}

const placements = new WeakMap<App, QueuePlacement>();

/**
 * The placement of `app`'s queues, made at its first use: server.ts asks for it at start, so a
 * node answers the other nodes' requests for its queues from then on.
 */
export function queuePlacement(app: App): QueuePlacement {
  let placement = placements.get(app);
  if (!placement) placements.set(app, (placement = app.cluster ? new NatsPlacement(app) : new LocalPlacement(app)));
  return placement;
}
