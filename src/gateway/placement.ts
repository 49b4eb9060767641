// Where an event queue lives and how a request for it reaches it: one interface for the API
// (POST /register, GET and DELETE /events) and the WebSocket gateway, with the single process's
// version (every queue is here) and the cluster's (a queue lives on the node that made it, and a
// request that reaches another node is passed to the owner over NATS, and a queue whose node is
// gone is taken over: queue-takeover.ts). Whatever decides owners later (a user's shard) replaces
// `owner` and the relaying behind it; the callers stay as they are. docs/cluster.md, "Queues".
import type { QueueOptions } from '../../actors/queue-options.ts';
import type { EventQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import { currentSnapshot } from '../db/commits.ts';
import { badQueueId } from '../errors.ts';
import type { ANSWER_PENDING, HandlerOutcome, JsonFields } from '../http/route.ts';
import { NodeGone } from '../cluster/node-errors.ts';
import { log as nodeLog, type Log } from '../log.ts';
import { acknowledge, pollQueue, type PollRequest } from './long-poll.ts';
import { proxyDelete, proxyPoll, serveQueues, type DeleteCall, type PollCall } from './queue-proxy.ts';
import { QueueTakeover } from './queue-takeover.ts';
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
    const queue = holder ? app.queues.create(holder.userId, holder.realmId, options) : null;
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

/** How many times a request follows a queue from a dead node to the next before giving up. */
const MAX_MOVES = 3;

/**
 * A node of a cluster: a queue lives on the node that made it, whose NODE_ID starts the queue's
 * id (`node:uuid`), or on the node that took it over when that one died (queue-takeover.ts);
 * requests for another node's queue go there over NATS (queue-proxy.ts, socket-bridge.ts), and
 * this node answers the others' requests for its own.
 */
class NatsPlacement extends LocalPlacement {
  private readonly bridge: SocketBridge;
  private readonly takeover: QueueTakeover;
  private readonly here: string;

  constructor(app: App) {
    super(app);
    this.here = app.cluster!.id;
    this.takeover = new QueueTakeover(app);
    this.bridge = new SocketBridge(app, (queueId) => this.takeover.pending(queueId));
    serveQueues(app, {
      poll: (call) => (app.queues.has(call.queueId) ? this.pollHere(call) : this.pollElsewhere(call, undefined, nodeLog, true)),
      delete: (call) => (app.queues.has(call.queueId) ? super.delete(call) : this.deleteElsewhere(call, true)),
    });
  }

  override owner(queueId: string): string | null {
    if (this.app.queues.has(queueId) || this.takeover.pending(queueId)) return null;
    const moved = this.takeover.movedTo(queueId);
    if (moved !== undefined) return moved;
    const colon = queueId.indexOf(':');
    if (colon <= 0) return null;
    const node = queueId.slice(0, colon);
    return node === this.here ? null : node;
  }

  override create(userId: number, realmId: number, options: QueueOptions): EventQueue {
    const queue = super.create(userId, realmId, options);
    const descriptors = this.app.queueDescriptors!;
    void descriptors.recordStateless(queue, descriptors.position());
    return queue;
  }

  override poll(call: PollCall, parked: Parked, log: Log): HandlerOutcome {
    return this.app.queues.has(call.queueId) ? this.pollHere(call, parked) : this.pollElsewhere(call, parked.onAbort, log, false);
  }

  private pollElsewhere(call: PollCall, onAbort: Parked['onAbort'], log: Log, passedOn: boolean): Promise<JsonFields> {
    return this.elsewhere(
      call.queueId,
      call.userId,
      passedOn,
      (node) => proxyPoll(this.app, node, call, log),
      () => this.pollHere(call, { onAbort }),
    );
  }

  override async delete(call: DeleteCall): Promise<void> {
    return this.app.queues.has(call.queueId) ? super.delete(call) : this.deleteElsewhere(call, false);
  }

  private deleteElsewhere(call: DeleteCall, passedOn: boolean): Promise<void> {
    return this.elsewhere(
      call.queueId,
      call.userId,
      passedOn,
      (node) => proxyDelete(this.app, node, call),
      () => super.delete(call),
    );
  }

  override async openSocket(queueId: string, userId: number | undefined, lastEventId: string | null): Promise<SocketSource> {
    if (this.app.queues.has(queueId)) return super.openSocket(queueId, userId, lastEventId);
    return this.elsewhere<SocketSource>(
      queueId,
      userId,
      false,
      (node) => this.bridge.connect(node, queueId, userId, lastEventId),
      () => super.openSocket(queueId, userId, lastEventId),
    );
  }

  /**
   * A request for a queue not here: `remote` on its owner; when the owner is gone, the queue is
   * taken over (or found on the node that did), and the request goes there, or to `here`.
   * `passedOn`: another node sent the request here.
   */
  private async elsewhere<T>(
    queueId: string,
    userId: number | undefined,
    passedOn: boolean,
    remote: (node: string) => Promise<T>,
    here: () => T | Promise<T>,
  ): Promise<T> {
    let owner = await this.locate(queueId, userId, passedOn);
    for (let moves = 0; owner !== null; moves++) {
      try {
        return await remote(owner);
      } catch (err) {
        if (!(err instanceof NodeGone)) throw err;
        if (moves === MAX_MOVES) throw badQueueId(queueId);
        owner = await this.takeover.takeOver(queueId, userId, owner);
      }
    }
    return here();
  }

  /**
   * The owner of a queue not here (null: this node, or none). A request another node passed on
   * goes only where the row says: the node a row names never passes it further, so two nodes that
   * disagree on a queue's owner cannot pass a request back and forth.
   */
  private async locate(queueId: string, userId: number | undefined, passedOn: boolean): Promise<string | null> {
    const pending = this.takeover.pending(queueId);
    if (pending) return pending;
    const owner = passedOn ? null : this.owner(queueId);
    if (owner !== null) return owner;
    // Its id may name this node, but another took it over while this one was away: the row says which.
    const named = await this.app.queueDescriptors!.ownerOf(queueId, userId);
    return named === this.here ? null : named;
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
