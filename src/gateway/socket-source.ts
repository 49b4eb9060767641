// What a client's WebSocket reads (the gateway, gateway/socket.ts, accepts the connection): a
// queue of this node (LocalSource), or in a cluster a queue another node holds and feeds over
// NATS (socket-bridge.ts). Both write frames the same way and end with the same codes.
import type uWS from 'uWebSockets.js';
import { QueueError, type Consumer, type EventQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import { badQueueId, badRequest } from '../errors.ts';
import type { Log } from '../log.ts';
import { acknowledge } from './long-poll.ts';

/** Why the server closes a socket: codes in the range RFC 6455 leaves to applications, and its "service restart". */
export const CLOSE_REASONS = {
  REPLACED: { code: 4001, reason: 'another client took over this queue' },
  QUEUE_DELETED: { code: 4004, reason: 'queue deleted' },
  SLOW_CONSUMER: { code: 4008, reason: 'slow consumer: send buffer limit exceeded' },
  SERVER_RESTART: { code: 1012, reason: 'server restarting' },
  TOO_BIG: { code: 1009, reason: 'message too big' },
} as const;

/** What a client's socket reads: a queue of this node, or one another node holds (socket-bridge.ts). */
export interface SocketSource {
  /** The queue's owner, when known here (for the access log and metrics). */
  readonly userId: number | undefined;
  /** The client is connected: events start flowing to `ws`. */
  open(ws: uWS.WebSocket<SocketData>): void;
  /** The client acknowledged everything up to `lastEventId`; `refuse` tells it why that made no sense; `log` is the socket's. */
  acknowledge(lastEventId: number, refuse: (msg: string) => void, log: Log): void;
  /** The client went away (or never finished connecting). */
  closed(): void;
}

export interface SocketData {
  source: SocketSource;
  /** The log of the request that opened the socket: the lines its frames cause carry that request's id. */
  log: Log;
}

export type CloseReason = 'replaced' | 'deleted' | 'shutdown';

/** The close code and message that tell the client why its socket ended. */
export function closeFor(reason: CloseReason): [code: number, message: string] {
  const { code, reason: message } =
    reason === 'replaced' ? CLOSE_REASONS.REPLACED : reason === 'deleted' ? CLOSE_REASONS.QUEUE_DELETED : CLOSE_REASONS.SERVER_RESTART;
  return [code, message];
}

/**
 * Writes frames to a client's socket in one corked batch. A client that reads slower than we
 * write would make us buffer without end: it is dropped (false), and its queue keeps every
 * unacknowledged event for the reconnect.
 */
export function writeFrames(ws: uWS.WebSocket<SocketData>, maxBuffered: number, write: (send: (json: string) => void) => void): boolean {
  ws.cork(() => write((json) => ws.send(json, false)));
  if (ws.getBufferedAmount() <= maxBuffered) return true;
  ws.end(CLOSE_REASONS.SLOW_CONSUMER.code, CLOSE_REASONS.SLOW_CONSUMER.reason);
  return false;
}

class SocketConsumer implements Consumer {
  readonly kind = 'socket';
  private closed = false;
  /** Highest event id written to this socket. */
  private sentUpTo: number;

  constructor(
    private readonly ws: uWS.WebSocket<SocketData>,
    private readonly maxBuffered: () => number,
    resumeAfter: number,
  ) {
    this.sentUpTo = resumeAfter;
  }

  flush(queue: EventQueue): boolean {
    if (this.closed) return false;
    const written = writeFrames(this.ws, this.maxBuffered(), (send) =>
      queue.forEachAfter(this.sentUpTo, (id, json) => {
        send(json);
        this.sentUpTo = id;
      }),
    );
    if (!written) this.closed = true;
    return false;
  }

  heartbeat(_queue: EventQueue, json: string): boolean {
    if (!this.closed && !writeFrames(this.ws, this.maxBuffered(), (send) => send(json))) this.closed = true;
    return false;
  }

  close(_queue: EventQueue, reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.end(...closeFor(reason));
  }

  markClosed(): void {
    this.closed = true;
  }
}

/** A socket reading a queue of this node. */
export class LocalSource implements SocketSource {
  private consumer: SocketConsumer | null = null;

  constructor(
    private readonly app: App,
    private readonly queue: EventQueue,
    private readonly resumeAfter: number,
  ) {}

  get userId(): number {
    return this.queue.userId;
  }

  open(ws: uWS.WebSocket<SocketData>): void {
    if (this.queue.ended) return ws.end(CLOSE_REASONS.QUEUE_DELETED.code, CLOSE_REASONS.QUEUE_DELETED.reason);
    this.consumer = new SocketConsumer(ws, () => this.app.config.WS_MAX_BUFFERED_BYTES, this.resumeAfter);
    this.app.queues.attach(this.queue, this.consumer);
  }

  acknowledge(lastEventId: number, refuse: (msg: string) => void): void {
    try {
      this.queue.prune(lastEventId);
    } catch (err) {
      if (!(err instanceof QueueError)) throw err;
      refuse(err.message);
    }
  }

  closed(): void {
    if (!this.consumer) return;
    this.consumer.markClosed();
    this.app.queues.detach(this.queue, this.consumer);
  }
}

/**
 * The queue of this node a socket reads, and after which event it resumes: after `last_event_id`
 * (acknowledging up to it), or after what was acknowledged. `userId`: the authenticated owner, if
 * any (the queue id alone, a 122-bit secret, also proves ownership).
 */
export function openQueue(app: App, queueId: string, userId: number | undefined, lastEventId: string | null): { queue: EventQueue; resumeAfter: number } {
  const candidate = app.queues.peek(queueId);
  const queue = candidate && (userId === undefined || candidate.userId === userId) ? candidate : undefined;
  if (!queue) throw badQueueId(queueId);
  if (lastEventId === null) return { queue, resumeAfter: queue.newestPrunedId };
  const after = Number(lastEventId);
  if (!Number.isInteger(after)) throw badRequest('last_event_id is not an integer');
  acknowledge(queue, after);
  return { queue, resumeAfter: after };
}
