// A WebSocket that reaches a node other than its queue's: this node keeps the client's socket and
// the owner feeds it over NATS. The owner attaches a consumer to the queue that sends each flush
// as one message (`socketId\nevent\nevent...`, in parts when big) to this node, which writes the
// events to the socket; acknowledgments go back as requests. Either end that loses NATS, or
// hears the other end has left, ends its side: the client reconnects with its last event id and
// resumes on its queue with nothing missing (or, if the queue's node is gone, re-registers).
import { randomUUID } from 'node:crypto';
import type uWS from 'uWebSockets.js';
import { QueueError, type Consumer, type EventQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import { ApiError } from '../errors.ts';
import { closeFor, CLOSE_REASONS, openQueue, writeFrames, type CloseReason, type SocketData, type SocketSource } from './socket-source.ts';
import type { ClusterNode } from '../cluster/node.ts';
import { ConnectionLost, NodeGone } from '../cluster/node-errors.ts';
import { errorReply, fromReply, queueUnreachable, type Reply } from './queue-proxy.ts';
import type { Log } from '../log.ts';

/** A flush is sent in parts of at most this many characters (NATS's default largest message is 1 MB). */
const PART_CHARS = 256 * 1024;
const CALL_TIMEOUT_MS = 10_000;

interface AttachCall {
  queueId: string;
  userId: number | null;
  lastEventId: string | null;
  /** The node that holds the client's socket, and its id for the socket. */
  via: string;
  socketId: string;
}

interface AckCall {
  queueId: string;
  lastEventId: number;
}

/** The client's side: a socket on this node reading a queue of `owner`. */
class BridgedSocket implements SocketSource {
  ws: uWS.WebSocket<SocketData> | null = null;
  /** Events that came before the client's socket was open. */
  pending: string[] = [];
  /** The part of a flush received so far. */
  partial = '';
  /** How the socket must end, when told before it was open. */
  endWith: [number, string] | null = null;
  done = false;
  /** The owner took the socket; until then its answer to the attach decides what becomes of it. */
  attached = false;

  constructor(
    private readonly bridge: SocketBridge,
    readonly id: string,
    readonly owner: string,
    readonly queueId: string,
    /** The authenticated user, if the client gave credentials (else the queue id alone proves ownership). */
    readonly userId: number | undefined,
  ) {}

  open(ws: uWS.WebSocket<SocketData>): void {
    this.ws = ws;
    if (this.endWith) return this.end(...this.endWith);
    this.write(this.pending);
    this.pending = [];
  }

  write(events: string[]): void {
    if (this.done) return;
    if (!this.ws) {
      this.pending.push(...events);
      return;
    }
    if (!writeFrames(this.ws, this.bridge.maxBuffered, (send) => events.forEach(send))) this.finish();
  }

  acknowledge(lastEventId: number, refuse: (msg: string) => void, log: Log): void {
    this.bridge.acknowledge(this, lastEventId).then(
      (msg) => msg !== null && !this.done && refuse(msg),
      // Not taken: the events stay in the queue, and the client acknowledges again later.
      (err: unknown) => log.warn('an acknowledgment did not reach its queue', { owner: this.owner, error: String(err) }),
    );
  }

  /** Ends the client's socket (at once, or as soon as it is open). */
  end(code: number, message: string): void {
    if (this.done) return;
    if (!this.ws) {
      this.endWith = [code, message];
      return;
    }
    this.done = true;
    this.bridge.forget(this);
    this.ws.end(code, message);
  }

  closed(): void {
    if (!this.done) this.finish();
  }

  /** The client's side is over: the owner stops feeding it. */
  private finish(): void {
    this.done = true;
    this.bridge.detach(this);
  }
}

/** The owner's side: feeds a queue's events to a socket on node `via`. */
class RemoteConsumer implements Consumer {
  readonly kind = 'socket';

  constructor(
    private readonly cluster: ClusterNode,
    readonly via: string,
    readonly socketId: string,
    private sentUpTo: number,
    private readonly ended: () => void,
  ) {}

  flush(queue: EventQueue): boolean {
    let text = '';
    queue.forEachAfter(this.sentUpTo, (id, json) => {
      text += text ? `\n${json}` : json;
      this.sentUpTo = id;
    });
    this.send(text);
    return false;
  }

  heartbeat(_queue: EventQueue, json: string): boolean {
    this.send(json);
    return false;
  }

  /** Frames (one a line) to the client's node, in parts NATS takes. */
  private send(text: string): void {
    for (let at = 0; at < text.length; at += PART_CHARS) {
      const more = at + PART_CHARS < text.length;
      this.cluster.send(this.via, 'socket-events', `${this.socketId}${more ? '+' : ''}\n${text.slice(at, at + PART_CHARS)}`);
    }
  }

  close(_queue: EventQueue, reason: CloseReason): void {
    this.ended();
    this.cluster.send(this.via, 'socket-close', JSON.stringify({ socketId: this.socketId, reason }));
  }
}

export class SocketBridge {
  private readonly cluster: ClusterNode;
  /** This node's client sockets reading other nodes' queues, by socket id. */
  private readonly links = new Map<string, BridgedSocket>();
  /** This node's queues read through other nodes' sockets, by socket id. */
  private readonly feeds = new Map<string, { queue: EventQueue; consumer: RemoteConsumer }>();
  /** Sockets ended while NATS was away, whose owners are told once it is back. */
  private owed: BridgedSocket[] = [];

  constructor(
    private readonly app: App,
    /** A takeover of the queue under way on this node (queue-takeover.ts), which an attach waits for. */
    private readonly pending: (queueId: string) => Promise<unknown> | undefined,
  ) {
    const cluster = (this.cluster = app.cluster!);
    cluster.serve('socket-attach', (data) => this.attach(data as AttachCall));
    cluster.serve('socket-ack', (data) => this.acknowledged(data as AckCall));
    cluster.on('socket-detach', (socketId) => this.detached(socketId));
    cluster.on('socket-events', (text) => this.received(text));
    cluster.on('socket-close', (text) => {
      const { socketId, reason } = JSON.parse(text) as { socketId: string; reason: CloseReason };
      this.links.get(socketId)?.end(...closeFor(reason));
    });
    // A node that departed may only have been slow to say it is alive: the sockets between it and
    // this node end as for a restart, and each client reconnects with its last event id; its
    // queue, if its node is really gone, is refused then (BAD_EVENT_QUEUE_ID) and it registers again.
    cluster.onDeparture((node) => {
      for (const link of this.links.values())
        if (link.owner === node && link.attached) {
          this.cluster.send(node, 'socket-detach', link.id);
          link.end(CLOSE_REASONS.SERVER_RESTART.code, "the event queue's server is not heard from; reconnect");
        }
      for (const { queue, consumer } of [...this.feeds.values()])
        if (consumer.via === node) {
          this.app.queues.detach(queue, consumer);
          consumer.close(queue, 'shutdown');
        }
    });
    cluster.onConnection((state) => {
      // Messages either way may have been lost: every bridged socket starts over from what its
      // client acknowledged. The owner tells the sockets' nodes once it can reach them again.
      if (state === 'disconnected') {
        this.owed.push(...this.links.values());
        for (const link of this.links.values()) link.end(CLOSE_REASONS.SERVER_RESTART.code, 'connection to the event queue lost; reconnect');
        return;
      }
      for (const link of this.owed.splice(0)) this.cluster.send(link.owner, 'socket-detach', link.id);
      const feeds = [...this.feeds.values()];
      this.feeds.clear();
      for (const { queue, consumer } of feeds) {
        this.app.queues.detach(queue, consumer);
        consumer.close(queue, 'shutdown');
      }
    });
  }

  get maxBuffered(): number {
    return this.app.config.WS_MAX_BUFFERED_BYTES;
  }

  /** Attaches a new client socket of this node to `owner`'s queue; throws what the owner refuses. */
  async connect(owner: string, queueId: string, userId: number | undefined, lastEventId: string | null): Promise<BridgedSocket> {
    const link = new BridgedSocket(this, randomUUID(), owner, queueId, userId);
    this.links.set(link.id, link);
    const call: AttachCall = { queueId, userId: userId ?? null, lastEventId, via: this.cluster.id, socketId: link.id };
    try {
      // A client reconnecting while this node is cut off from NATS is attached as soon as it is back.
      const deadline = Date.now() + CALL_TIMEOUT_MS;
      for (;;) {
        try {
          fromReply(await this.cluster.call<Reply>(owner, 'socket-attach', call, Math.max(1, deadline - Date.now())));
          link.attached = true;
          break;
        } catch (err) {
          if (!(err instanceof ConnectionLost && (await this.cluster.whenConnected(deadline - Date.now())) && Date.now() < deadline)) throw err;
        }
      }
    } catch (err) {
      this.links.delete(link.id);
      // The placement takes the queue over.
      if (err instanceof NodeGone || err instanceof ApiError) throw err;
      throw queueUnreachable();
    }
    return link;
  }

  /** Null when the owner took the acknowledgment, else why it refused it. */
  async acknowledge(link: BridgedSocket, lastEventId: number): Promise<string | null> {
    const reply = await this.cluster.call<Reply>(link.owner, 'socket-ack', { queueId: link.queueId, lastEventId } satisfies AckCall, CALL_TIMEOUT_MS);
    return reply.error?.msg ?? null;
  }

  forget(link: BridgedSocket): void {
    this.links.delete(link.id);
  }

  detach(link: BridgedSocket): void {
    this.links.delete(link.id);
    this.cluster.send(link.owner, 'socket-detach', link.id);
  }

  private received(text: string): void {
    const newline = text.indexOf('\n');
    const head = text.slice(0, newline);
    const more = head.endsWith('+');
    const link = this.links.get(more ? head.slice(0, -1) : head);
    if (!link) return;
    link.partial += text.slice(newline + 1);
    if (more) return;
    const events = link.partial.split('\n');
    link.partial = '';
    link.write(events);
  }

  private async attach(call: AttachCall): Promise<Reply> {
    let opened: { queue: EventQueue; resumeAfter: number };
    try {
      await this.pending(call.queueId);
      opened = openQueue(this.app, call.queueId, call.userId ?? undefined, call.lastEventId);
    } catch (err) {
      return errorReply(err);
    }
    const consumer = new RemoteConsumer(this.cluster, call.via, call.socketId, opened.resumeAfter, () => this.feeds.delete(call.socketId));
    this.feeds.set(call.socketId, { queue: opened.queue, consumer });
    this.app.queues.attach(opened.queue, consumer);
    return {};
  }

  private acknowledged(call: AckCall): Reply {
    const queue = this.app.queues.peek(call.queueId);
    if (!queue) return {};
    try {
      queue.prune(call.lastEventId);
    } catch (err) {
      if (!(err instanceof QueueError)) throw err;
      return { error: { msg: err.message, code: 'BAD_REQUEST', status: 400, extra: {} } };
    }
    return {};
  }

  private detached(socketId: string): void {
    const feed = this.feeds.get(socketId);
    if (!feed) return;
    this.feeds.delete(socketId);
    this.app.queues.detach(feed.queue, feed.consumer);
  }
}
