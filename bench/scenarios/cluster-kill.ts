// cluster --kill: failures under load (issue 27). On a NATS server of the bench's own (so it can be
// restarted without disturbing anyone else's), two runs on a fresh cluster each: `node`, one node
// SIGKILLed halfway through the sending; `nats`, NATS killed halfway and started again on the same
// port and storage a second later. Every node holds long-polls and WebSockets; senders post as user
// k through node k mod N. A client whose node is gone carries on through a surviving node with the
// same queue_id and last_event_id, as a balancer would move it; a sender does the same. At the end
// each client's events are checked against the messages the server acknowledged: lost (acknowledged,
// never received), duplicated (one message twice under different event ids), out of order (a lower
// message id after a higher one, or a gap in the event ids) and re-registered (BAD_EVENT_QUEUE_ID).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { scratchServer } from '../../src/db/scratch.ts';
import { evenShares, spread } from '../lib/concurrency.ts';
import { HttpConnection } from '../lib/http-client.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult, FailoverFigures } from '../lib/results.ts';
import { freePort } from '../lib/self-server.ts';
import { killOnExit, onEarlyStop } from '../lib/server-process.ts';
import { CHANNEL, type ZulipTarget } from '../lib/zulip-target.ts';
import { basicAuth, FORM_HEADERS, formEncode, type Queue } from '../lib/zulip-api.ts';
import { userCount, withCluster, type ClusterTarget } from './targets.ts';

const NATS_SERVER = '/usr/sbin/nats-server';
/** How long NATS stays down in the `nats` run. */
const NATS_DOWN_MS = 1000;
/** Pause before a client or sender tries again after a failed request. */
const RETRY_MS = 100;

type Failure = 'node' | 'nats';

export async function clusterKillScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const databases = await scratchServer(process.env.DATABASE_URL || undefined);
  const nats = await PrivateNats.start();
  const forget = onEarlyStop(async () => {
    await databases.close();
    await nats.stop(true);
  });
  const results: CaseResult[] = [];
  try {
    for (const nodes of opts.nodes) {
      if (nodes < 2) throw new Error('--kill needs clusters of 2 nodes or more');
      for (const failure of ['node', 'nats'] as const) {
        results.push(await withCluster(databases, nats.url, nodes, (cluster) => failUnderLoad(cluster, opts, failure, nats)));
      }
    }
  } finally {
    forget();
    await databases.close();
    await nats.stop(true);
  }
  return results;
}

/** What one client saw of its queue. */
class QueueLog {
  last: number;
  readonly messages = new Set<number>();
  private lastMessage = -1;
  duplicated = 0;
  outOfOrder = 0;
  reregistered = false;
  /** When each message arrived (performance.now()). */
  readonly arrivals = new Map<number, number>();

  constructor(
    readonly queue: Queue,
    public node: number,
  ) {
    this.last = queue.lastEventId;
  }

  /** Records one response's or frame's events; returns the highest event id (or -1). */
  record(events: { id?: unknown; type?: unknown; message?: { id?: unknown } }[]): number {
    const at = performance.now();
    for (const event of events) {
      if (event.type === 'heartbeat' || typeof event.id !== 'number') continue;
      // A repeated id (a queue rebuilt from a checkpoint) is dropped, as the clients do.
      if (event.id <= this.last) continue;
      if (event.id !== this.last + 1) this.outOfOrder++;
      this.last = event.id;
      const id = Number(event.message?.id);
      if (this.messages.has(id)) this.duplicated++;
      else if (id < this.lastMessage) this.outOfOrder++;
      this.messages.add(id);
      this.lastMessage = Math.max(this.lastMessage, id);
      this.arrivals.set(id, at);
    }
    return this.last;
  }
}

async function failUnderLoad({ nodes }: ClusterTarget, opts: BenchOptions, failure: Failure, nats: PrivateNats): Promise<CaseResult> {
  const n = nodes.length;
  const victim = n - 1;
  const dead = new Set<number>();
  let failedAt: number | undefined;
  let stopping = false;
  const first = nodes[0]!;
  const senderUsers = await first.ensureUsers(opts.senders);
  const [count] = opts.counts as [number];
  const usersByNode = spread(await first.ensureUsers(Math.max(n, userCount(opts, count))), n);
  const shares = evenShares(count, n);
  const logs: { log: QueueLog; transport: 'longpoll' | 'ws' }[] = [];
  for (const transport of ['longpoll', 'ws'] as const)
    for (const [i, node] of nodes.entries())
      for (const q of await node.registerQueues(usersByNode[i]!, shares[i]!)) logs.push({ log: new QueueLog(q, i), transport });
  // A client or sender of the dead node moves to a survivor, the clients dealt over them in turn.
  let dealt = 0;
  const survivor = (i: number) => {
    if (!dead.has(i)) return i;
    const alive = nodes.map((_, k) => k).filter((k) => !dead.has(k));
    return alive[dealt++ % alive.length]!;
  };

  const acknowledged: number[] = [];
  let failedSends = 0;
  /** Messages whose sending began after the failure. */
  const sentAfter: number[] = [];
  const sendUntil = performance.now() + opts.durationS * 1000;
  const senders = senderUsers.map(async (user, k) => {
    let node = k % n;
    let conn: HttpConnection | undefined;
    for (let seq = 0; performance.now() < sendUntil; seq++) {
      try {
        conn ??= await HttpConnection.open(nodes[node]!.endpoint);
        const sentAfterFailure = failedAt !== undefined;
        const body = formEncode({ type: 'stream', to: CHANNEL, topic: 'kill', content: `kill ${k}-${seq}` });
        const res = await conn.request('POST', '/api/v1/messages', { ...FORM_HEADERS, Authorization: basicAuth(user) }, body);
        if (res.status === 200) {
          const id = Number(JSON.parse(res.body).id);
          acknowledged.push(id);
          if (sentAfterFailure) sentAfter.push(id);
        } else failedSends++;
      } catch {
        failedSends++;
        conn?.close();
        conn = undefined;
        node = survivor(node);
        await sleep(RETRY_MS);
      }
    }
    conn?.close();
  });

  const sockets = new Set<WebSocket>();
  const clients = logs.map(({ log, transport }) => (transport === 'longpoll' ? longPoll(nodes, log) : socket(nodes, log)));

  async function longPoll(targets: ZulipTarget[], log: QueueLog): Promise<void> {
    let conn: HttpConnection | undefined;
    const headers = { Authorization: basicAuth(log.queue.user) };
    while (!stopping && !log.reregistered) {
      try {
        conn ??= await HttpConnection.open(targets[log.node]!.endpoint);
        const res = await conn.request('GET', `/api/v1/events?${formEncode({ queue_id: log.queue.queueId, last_event_id: log.last })}`, headers, '', 0);
        const body = JSON.parse(res.body) as { events?: []; code?: string };
        if (res.status === 200) log.record(body.events ?? []);
        else if (body.code === 'BAD_EVENT_QUEUE_ID') log.reregistered = true;
        else await sleep(RETRY_MS);
      } catch {
        conn?.close();
        conn = undefined;
        if (stopping) return;
        log.node = survivor(log.node);
        await sleep(RETRY_MS);
      }
    }
    conn?.close();
  }

  async function socket(targets: ZulipTarget[], log: QueueLog): Promise<void> {
    while (!stopping && !log.reregistered) {
      const base = targets[log.node]!.handle.url.replace(/^http/, 'ws').replace(/\/+$/, '');
      const ws = new WebSocket(`${base}/api/v1/events/socket?${formEncode({ queue_id: log.queue.queueId, last_event_id: log.last })}`, {
        headers: { Authorization: basicAuth(log.queue.user) },
        perMessageDeflate: false,
      });
      sockets.add(ws);
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { id?: unknown };
        if ('id' in frame) ws.send(JSON.stringify({ last_event_id: log.record([frame]) }));
      });
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        // A refused upgrade (503 while the queue is taken over, or its end): no close follows.
        ws.once('unexpected-response', (req, res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => {
            if (text.includes('BAD_EVENT_QUEUE_ID')) log.reregistered = true;
            req.destroy();
            resolve();
          });
        });
        ws.on('error', () => resolve());
      });
      sockets.delete(ws);
      if (stopping) return;
      // A refused or broken socket: its node may be gone; the client tries a survivor.
      log.node = survivor(log.node);
      await sleep(RETRY_MS);
    }
  }

  await sleep((opts.durationS * 1000) / 2);
  failedAt = performance.now();
  if (failure === 'node') {
    dead.add(victim);
    process.kill(nodes[victim]!.handle.pid!, 'SIGKILL');
  } else {
    await nats.stop();
    await sleep(NATS_DOWN_MS);
    await nats.start();
  }
  await Promise.all(senders);
  // Every client has every acknowledged message, or the wave timeout passed.
  const expected = [...acknowledged];
  const settleBy = performance.now() + opts.waveTimeoutS * 1000;
  const settled = (log: QueueLog) => log.reregistered || expected.every((id) => log.messages.has(id));
  while (performance.now() < settleBy && !logs.every(({ log }) => settled(log))) await sleep(200);
  stopping = true;
  for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.terminate();
  // Long-polls end with their server's answer (no events): the nodes stop next and close them.
  void Promise.all(clients);

  const all = logs.map(({ log }) => log);
  const movedLogs = failure === 'node' ? all.filter((log) => log.queue.queueId.startsWith(`node${victim + 1}:`)) : [];
  // How long the clients the failure hit waited: the killed node's, or with NATS every one.
  const watched = failure === 'node' ? movedLogs : all;
  const figures: FailoverFigures = {
    failure,
    acknowledged: expected.length,
    failedSends,
    lost: all.reduce((sum, log) => sum + (log.reregistered ? 0 : expected.filter((id) => !log.messages.has(id)).length), 0),
    duplicated: all.reduce((sum, log) => sum + log.duplicated, 0),
    outOfOrder: all.reduce((sum, log) => sum + log.outOfOrder, 0),
    reregistered: all.filter((log) => log.reregistered).length,
    acknowledgedAfter: sentAfter.length,
    movedClients: movedLogs.length,
    // Each hit client's first message among those sent after the failure.
    resumedWithinMs: Math.max(0, ...watched.map((log) => Math.min(...sentAfter.map((id) => log.arrivals.get(id) ?? Number.POSITIVE_INFINITY)) - failedAt)),
  };
  const delivered = all.reduce((sum, log) => sum + log.messages.size, 0);
  return {
    kind: 'failover',
    target: 'server',
    count,
    nodes: n,
    expected: expected.length * all.length,
    delivered,
    errors: figures.lost + figures.duplicated + figures.outOfOrder + figures.reregistered,
    errorSamples: [],
    failover: figures,
    seconds: opts.durationS,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A nats-server with JetStream on a free port and a storage directory of its own. */
class PrivateNats {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  static async start(): Promise<PrivateNats> {
    const nats = new PrivateNats(await freePort(), await mkdtemp(join(tmpdir(), 'bench-nats-')));
    await nats.start();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    killOnExit(this.child);
    for (const deadline = Date.now() + 10_000; !(await listening(this.port)); await sleep(50))
      if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${this.port}`);
  }

  /** Kills it (as a crash would); `removeStorage` at the end. */
  async stop(removeStorage = false): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
    if (removeStorage) await rm(this.storeDir, { recursive: true, force: true });
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
