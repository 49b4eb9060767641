// This process as a node of a cluster: its NATS connection, the event bus over it, which other
// nodes are alive, and requests to a named node (the queue proxy uses them). Made at start when
// CLUSTER=nats (or NATS_URL is set); the rest of the server sees only the bus and these calls.
//
// Liveness: every node says it is alive on `chat.<cluster>.alive` each second; a node not heard
// from for DEPARTED_AFTER_MS has departed (a killed process is silent at once; NATS drops its
// subscriptions as soon as its socket closes, so requests to it fail with "no responders").
// While this node itself is cut off from NATS it hears nobody, so it judges nobody; nor does it
// count as silence the time its own event loop was held up (what the others said meanwhile is
// still unread in its socket). A request to a node is refused as gone (NodeGone) only on NATS's
// word: no responders, and the node not heard from; a node that went silent while a request to it
// waited is asked whether NATS still holds it, and if so, it is slow, not gone: the request waits
// on, and a timeout is NodeUnreachable, which the callers answer with "try again".
import { Events, type Msg, type NatsConnection, type Subscription } from 'nats';
import type pg from 'pg';
import { NatsBus } from '../bus/nats.ts';
import { CLUSTER_ID_SECRET, readServerSecret } from '../db/server-secrets.ts';
import { log } from '../log.ts';
import { connectNats } from './connection.ts';
import { ClusterLocks, lockPool } from './locks.ts';
import { EventOutbox } from './outbox.ts';
import { ConnectionLost, NodeGone, NodeUnreachable } from './node-errors.ts';

const HEARTBEAT_MS = 1_000;
const DEPARTED_AFTER_MS = 3_500;
/** How soon a request to a live node that is not listening (yet) is sent again. */
const RETRY_NOT_LISTENING_MS = 200;
/** How long the question "does NATS still hold this silent node?" waits for its answer. */
const PROBE_MS = 1_000;

interface Waiting {
  node: string;
  reject: (err: Error) => void;
}

export class ClusterNode {
  private readonly lastSeen = new Map<string, number>();
  private readonly departureHandlers = new Set<(node: string) => void>();
  private readonly connectionHandlers = new Set<(state: 'disconnected' | 'reconnected') => void>();
  private readonly waiting = new Set<Waiting>();
  private readonly subscriptions: Subscription[] = [];
  private readonly timer: NodeJS.Timeout;
  private connected = true;
  /** When this node last said it is alive: a beat much later than HEARTBEAT_MS after it means its event loop was held up. */
  private lastBeat = Date.now();
  /** Resolved when the connection is back; waited on by whenConnected while it is away. */
  private reconnection: { promise: Promise<void>; resolve: () => void } | null = null;
  private leaving = false;
  /** Until then this node has not heard every live node yet (they say so each HEARTBEAT_MS). */
  private readonly judgesFrom = Date.now() + DEPARTED_AFTER_MS;

  private constructor(
    readonly id: string,
    /** Names the deployment's NATS subjects; shared through the database. */
    readonly clusterId: string,
    readonly nc: NatsConnection,
    readonly bus: NatsBus,
    /** Channel and user writes take turns across the nodes. */
    readonly locks: ClusterLocks,
    /** Events of committed changes wait here until NATS stored them. */
    readonly outbox: EventOutbox,
    private readonly pool: pg.Pool,
  ) {
    this.subscriptions.push(
      nc.subscribe(this.aliveSubject, {
        callback: (_err, msg) => {
          const [node, state] = msg.string().split(' ');
          if (!node || node === this.id) return;
          if (state === 'leaving') this.depart(node, true);
          else this.lastSeen.set(node, Date.now());
        },
      }),
    );
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref();
    this.beat();
    void this.watchConnection();
  }

  static async join(settings: { natsUrl: string; nodeId: string }, clusterId: string, databaseUrl: string): Promise<ClusterNode> {
    const nc = await connectNats(settings.natsUrl, `chat-${settings.nodeId}`);
    try {
      // Two nodes of one name would answer each other's queue requests.
      const taken = await nc.request(`chat.${clusterId}.node.${settings.nodeId}.ping`, '', { timeout: 1_000 }).then(
        () => true,
        () => false,
      );
      if (taken) throw new Error(`another node of this cluster runs as NODE_ID=${settings.nodeId}`);
      const bus = await NatsBus.open({ connection: nc, clusterId, nodeId: settings.nodeId });
      const pool = lockPool(databaseUrl);
      const outbox = new EventOutbox(pool, bus, settings.nodeId);
      const node = new ClusterNode(settings.nodeId, clusterId, nc, bus, new ClusterLocks(pool, bus, outbox), outbox, pool);
      node.serve('ping', () => ({}));
      return node;
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  private get aliveSubject(): string {
    return `chat.${this.clusterId}.alive`;
  }

  private subject(node: string, name: string): string {
    return `chat.${this.clusterId}.node.${node}.${name}`;
  }

  /** The nodes alive now, this one included; null while this node cannot tell (just started, or cut off from NATS). */
  liveNodes(): string[] | null {
    if (!this.connected || Date.now() < this.judgesFrom) return null;
    return [this.id, ...this.lastSeen.keys()];
  }

  onDeparture(handler: (node: string) => void): () => void {
    this.departureHandlers.add(handler);
    return () => this.departureHandlers.delete(handler);
  }

  /**
   * Resolves at once while connected to NATS, else when the connection is back; false when it did
   * not come back within `timeoutMs`.
   */
  async whenConnected(timeoutMs: number): Promise<boolean> {
    if (this.connected || !this.reconnection) return true;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([this.reconnection.promise.then(() => true as const), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Called when this node loses its NATS connection and when it has it back. */
  onConnection(handler: (state: 'disconnected' | 'reconnected') => void): void {
    this.connectionHandlers.add(handler);
  }

  /** Answers requests named `name` sent to this node; what `handler` returns (JSON) is the reply. */
  serve(name: string, handler: (data: unknown) => unknown): void {
    this.subscriptions.push(
      this.nc.subscribe(this.subject(this.id, name), {
        callback: (_err, msg: Msg) => {
          Promise.resolve()
            .then(() => handler(msg.json()))
            .then(
              (reply) => msg.respond(JSON.stringify(reply ?? null)),
              (err: unknown) => {
                log.error('cluster request failed', { name, error: err instanceof Error ? err.stack : String(err) });
                msg.respond(JSON.stringify({ failed: String(err) }));
              },
            );
        },
      }),
    );
  }

  /**
   * Sends a request to `node` and resolves with its reply. Rejects with NodeGone when no such
   * node listens or it departs while we wait, ConnectionLost when this node is or gets cut off
   * from NATS, NodeUnreachable on a timeout or another NATS failure.
   */
  call<T>(node: string, name: string, data: unknown, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Sent while cut off, the request would wait in the client's buffer for its whole timeout.
      if (!this.connected) {
        reject(new ConnectionLost('not connected to NATS'));
        return;
      }
      const deadline = Date.now() + timeoutMs;
      const subject = this.subject(node, name);
      const payload = JSON.stringify(data);
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        this.waiting.delete(waiting);
        outcome();
      };
      const waiting: Waiting = { node, reject: (err) => settle(() => reject(err)) };
      this.waiting.add(waiting);
      const attempt = () => {
        if (settled) return;
        this.nc.request(subject, payload, { timeout: Math.max(1, deadline - Date.now()) }).then(
          (msg) => {
            const reply = msg.json<T & { failed?: string }>();
            if (reply && typeof reply === 'object' && 'failed' in reply) settle(() => reject(new NodeUnreachable(`node ${node} failed: ${reply.failed}`)));
            else settle(() => resolve(reply));
          },
          (err: unknown) => {
            const noResponders = (err as { code?: string }).code === '503';
            // A node still heard from but not listening has not subscribed again yet after NATS came
            // back (or is being killed, and departs within DEPARTED_AFTER_MS): ask again shortly.
            if (noResponders && this.lastSeen.has(node) && this.connected && Date.now() + RETRY_NOT_LISTENING_MS < deadline) {
              setTimeout(attempt, RETRY_NOT_LISTENING_MS).unref();
              return;
            }
            settle(() => reject(noResponders ? new NodeGone(`node ${node} is not in the cluster`) : new NodeUnreachable(`node ${node}: ${String(err)}`)));
          },
        );
      };
      attempt();
    });
  }

  /**
   * A one-way message to `node`. NATS may lose it when a connection breaks; both ends hear of
   * that (onConnection), and callers start over then.
   */
  send(node: string, name: string, text: string): void {
    this.publish(this.subject(node, name), text);
  }

  /** A one-way message to every other node (lost if NATS drops it). */
  broadcast(name: string, text: string): void {
    this.publish(`chat.${this.clusterId}.all.${name}`, `${this.id}\n${text}`);
  }

  /** One-way messages are dropped once the node is leaving (a timer may still fire then): NATS would throw. */
  private publish(subject: string, text: string): void {
    if (this.nc.isClosed() || this.nc.isDraining()) return;
    this.nc.publish(subject, text);
  }

  /** Handles what the other nodes broadcast under `name`. */
  onBroadcast(name: string, handler: (text: string) => void): void {
    this.subscriptions.push(
      this.nc.subscribe(`chat.${this.clusterId}.all.${name}`, {
        callback: (_err, msg) => {
          const text = msg.string();
          const newline = text.indexOf('\n');
          if (text.slice(0, newline) === this.id) return;
          try {
            handler(text.slice(newline + 1));
          } catch (err) {
            log.error('cluster broadcast failed', { name, error: err instanceof Error ? err.stack : String(err) });
          }
        },
      }),
    );
  }

  /** Handles one-way messages named `name` sent to this node. */
  on(name: string, handler: (text: string) => void): void {
    this.subscriptions.push(
      this.nc.subscribe(this.subject(this.id, name), {
        callback: (_err, msg) => {
          try {
            handler(msg.string());
          } catch (err) {
            log.error('cluster message failed', { name, error: err instanceof Error ? err.stack : String(err) });
          }
        },
      }),
    );
  }

  private beat(): void {
    if (this.leaving) return;
    const now = Date.now();
    const late = now - this.lastBeat - HEARTBEAT_MS;
    this.lastBeat = now;
    this.nc.publish(this.aliveSubject, this.id);
    if (!this.connected) return;
    // Held up, this node's timers run before it reads what came meanwhile: the time it was not
    // listening is not the others' silence, and they are judged at the next beat, once it has read.
    if (late > HEARTBEAT_MS) {
      log.warn('this node was held up; the others get the time back', { lateMs: late });
      for (const [node, seen] of this.lastSeen) this.lastSeen.set(node, Math.min(now, seen + late));
      return;
    }
    const cutoff = now - DEPARTED_AFTER_MS;
    for (const [node, seen] of this.lastSeen) if (seen < cutoff) this.depart(node);
  }

  private depart(node: string, said = false): void {
    if (!this.lastSeen.delete(node)) return;
    if (said) log.info('a cluster node left', { node });
    else log.warn('a cluster node is gone (not heard from)', { node });
    const waiting = [...this.waiting].filter((w) => w.node === node);
    const gone = () => {
      for (const w of waiting) w.reject(new NodeGone(`node ${node} left the cluster`));
    };
    // Silent, it may only be slow (a busy machine): its requests wait on unless NATS no longer holds it.
    if (said) gone();
    else if (waiting.length > 0) void this.heldByNats(node).then((held) => held || gone());
    for (const handler of this.departureHandlers) handler(node);
  }

  /**
   * Whether NATS still holds `node`'s subscriptions: it answers a ping, or the ping times out (the
   * node is slow). No responders: its connection is closed (a killed process), or it has not
   * subscribed again since NATS came back.
   */
  private async heldByNats(node: string): Promise<boolean> {
    if (!this.connected) return true;
    try {
      await this.nc.request(this.subject(node, 'ping'), '', { timeout: PROBE_MS });
      return true;
    } catch (err) {
      return (err as { code?: string }).code !== '503';
    }
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === Events.Disconnect) {
        this.connected = false;
        let resolve!: () => void;
        this.reconnection = { promise: new Promise<void>((r) => (resolve = r)), resolve };
        // Answers to requests under way are lost with the connection: their callers hear it now,
        // not when their timeouts run out (a passed-on long-poll waits up to a minute).
        for (const w of this.waiting) w.reject(new ConnectionLost('the NATS connection was lost'));
        for (const handler of this.connectionHandlers) handler('disconnected');
      }
      if (status.type === Events.Reconnect) {
        this.connected = true;
        this.reconnection?.resolve();
        this.reconnection = null;
        // Nobody was heard while we were away: everyone gets a fresh grace period.
        const now = Date.now();
        for (const node of this.lastSeen.keys()) this.lastSeen.set(node, now);
        for (const handler of this.connectionHandlers) handler('reconnected');
      }
    }
  }

  /** Tells the others this node is going, sends what its bus holds, and disconnects. */
  async leave(): Promise<void> {
    this.leaving = true;
    clearInterval(this.timer);
    if (!this.nc.isClosed()) this.nc.publish(this.aliveSubject, `${this.id} leaving`);
    await this.bus.close();
    await this.outbox.close();
    await this.pool.end();
    for (const s of this.subscriptions) s.unsubscribe();
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

/**
 * Removes the event stream of the cluster whose database is at `databaseUrl` (nothing when no
 * node ever joined it), once its nodes are stopped: a deployment taken down, and the tests and the
 * bench, which make a cluster per throwaway database and would otherwise leave NATS a stream, and
 * its files, for each.
 */
export async function removeClusterStream(natsUrl: string, databaseUrl: string): Promise<void> {
  const clusterId = await readServerSecret(databaseUrl, CLUSTER_ID_SECRET);
  if (!clusterId) return;
  const nc = await connectNats(natsUrl, 'chat-stream-removal');
  try {
    const bus = await NatsBus.open({ connection: nc, clusterId, nodeId: 'stream-removal' });
    await bus.destroy();
  } finally {
    await nc.close();
  }
}
