// The measured runs shared by the Zulip scenarios and the baseline: fan-out in waves over long-poll
// or WebSocket, send throughput, and memory per idle item.
import { HttpConnection, type Endpoint } from './http-client.ts';
import { mapLimit, sleep, waitFor } from './concurrency.ts';
import { DeliveryTracker, ErrorLog } from './deliveries.ts';
import { LongPollFleet, type LongPollSpec } from './longpoll-fleet.ts';
import { WsFleet, type WsSpec } from './ws-fleet.ts';
import { ProcSampler, ProcessSetCpu, SelfCpu, descendants, rssMB } from './proc-sampler.ts';
import { Progress } from './progress.ts';
import { percentiles } from './stats.ts';
import type { CaseKind, CaseResult, Target } from './results.ts';
import { callgrindCounting, scaledTimeout, type MemorySnapshot } from './server-process.ts';

/** The server under test as the load generator sees it. */
export interface ServerHandle {
  target: Target;
  url: string;
  /** Set when the server runs on this machine: CPU and RSS come from /proc. */
  pid?: number;
  /** Set when the bench started the server: heap after GC via the memory probe. */
  memory?: () => Promise<MemorySnapshot>;
  /** A cluster the bench started: each node's process, and its database's backends as they are now. */
  cluster?: { nodePids: number[]; databaseBackends: () => Promise<number[]> };
}

type ServerUsage = Pick<CaseResult, 'serverCpuPercent' | 'serverRssPeakMB' | 'dbPssPeakMB' | 'nodeCpuPercent' | 'dbCpuPercent'>;

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Starts sampling what the server uses on this machine (its process and embedded PostgreSQL, or
 * each node of a cluster and its database's backends); the function returned ends the window.
 */
export async function sampleServer(server: ServerHandle): Promise<() => Promise<ServerUsage>> {
  if (server.cluster) {
    const database = new ProcessSetCpu(server.cluster.databaseBackends);
    await database.start();
    const nodes = server.cluster.nodePids.map((pid) => new ProcSampler(pid));
    for (const node of nodes) node.start();
    return async () => {
      const used = nodes.map((node) => node.stop());
      const nodeCpuPercent = used.map((u) => u.cpuPercent);
      return { serverCpuPercent: sum(nodeCpuPercent), serverRssPeakMB: sum(used.map((u) => u.rssPeakMB)), nodeCpuPercent, dbCpuPercent: await database.stop() };
    };
  }
  if (server.pid === undefined) return async () => ({});
  const sampler = new ProcSampler(server.pid);
  const pid = server.pid;
  // The server's children: its embedded PostgreSQL's processes (none for a server given by --pid).
  const database = new ProcessSetCpu(async () => descendants(pid));
  await database.start();
  sampler.start();
  return async () => {
    const used = sampler.stop();
    return { serverCpuPercent: used.cpuPercent, serverRssPeakMB: used.rssPeakMB, dbPssPeakMB: used.childrenPssPeakMB, dbCpuPercent: await database.stop() };
  };
}

export interface Publisher {
  publish(content: string): Promise<void>;
  /** Long-polls parked on the server (the baseline has no queues, so it must only publish when all are). */
  parked?: () => Promise<number>;
}

export interface FanoutOptions {
  messages: number;
  waveTimeoutMs: number;
}

const WARMUP_SEQ = 0;
let caseCounter = 0;
const RUN_ID = Math.random().toString(36).slice(2, 8);

function newTracker(): DeliveryTracker {
  return new DeliveryTracker(`bench:${RUN_ID}:${++caseCounter}:`);
}

export async function longPollFanout(
  server: ServerHandle,
  endpoint: Endpoint,
  specs: LongPollSpec[],
  publisher: Publisher,
  opts: FanoutOptions,
): Promise<CaseResult> {
  const tracker = newTracker();
  const fleet = new LongPollFleet(endpoint, tracker);
  const label = `${server.target} longpoll ${specs.length}`;
  try {
    await fleet.connect(specs, label);
    fleet.start();
    const ready = async () => fleet.inFlight === fleet.alive && (!publisher.parked || (await publisher.parked()) >= fleet.alive);
    return await fanoutWaves('longpoll', server, specs.length, tracker, publisher, ready, fleet.errors, opts, label);
  } finally {
    fleet.close();
  }
}

export async function wsFanout(server: ServerHandle, specs: WsSpec[], publisher: Publisher, opts: FanoutOptions): Promise<CaseResult> {
  const tracker = newTracker();
  const fleet = new WsFleet(tracker);
  const label = `${server.target} ws ${specs.length}`;
  try {
    await fleet.connect(specs, label);
    return await fanoutWaves('ws', server, specs.length, tracker, publisher, async () => true, fleet.errors, opts, label);
  } finally {
    fleet.close();
  }
}

/**
 * One message per wave: publish, wait until all `count` clients have it (or the wave times out),
 * let the clients settle, repeat. Events/s = events delivered / summed publish→last-delivery time.
 */
async function fanoutWaves(
  kind: CaseKind,
  server: ServerHandle,
  count: number,
  tracker: DeliveryTracker,
  publisher: Publisher,
  ready: () => Promise<boolean>,
  clientErrors: ErrorLog,
  opts: FanoutOptions,
  label: string,
): Promise<CaseResult> {
  const errors = new ErrorLog();
  if (!(await waitFor(ready, opts.waveTimeoutMs, 5))) errors.add('clients not all parked before the first message');
  // One unmeasured message first: the first wave pays for JIT warm-up on both sides.
  tracker.markPublished(WARMUP_SEQ);
  await publisher.publish(tracker.content(WARMUP_SEQ));
  await waitFor(() => tracker.deliveredCount(WARMUP_SEQ) >= count, opts.waveTimeoutMs, 1);
  tracker.latenciesMs.length = 0;
  callgrindCounting(server.pid, true);
  const endSampling = await sampleServer(server);
  const loaderCpu = new SelfCpu();
  const startedAt = performance.now();
  const progress = new Progress(`${label}: publish`, opts.messages);
  let delivered = 0;
  let waveMs = 0;
  for (let seq = WARMUP_SEQ + 1; seq <= opts.messages; seq++) {
    if (!(await waitFor(ready, opts.waveTimeoutMs, 1))) errors.add(`message ${seq}: clients not all parked`);
    tracker.markPublished(seq);
    try {
      await publisher.publish(tracker.content(seq));
    } catch (err) {
      errors.add(err);
      progress.tick();
      continue;
    }
    await waitFor(() => tracker.deliveredCount(seq) >= count, opts.waveTimeoutMs, 1);
    const got = tracker.deliveredCount(seq);
    if (got < count) errors.add(`message ${seq}: ${count - got} of ${count} deliveries missing after ${opts.waveTimeoutMs} ms`);
    delivered += Math.min(got, count);
    waveMs += tracker.waveMs(seq);
    progress.tick();
  }
  progress.finish();
  callgrindCounting(server.pid, false);
  const usage = await endSampling();
  const expected = opts.messages * count;
  return {
    kind,
    target: server.target,
    count,
    latencyMs: percentiles(tracker.latenciesMs),
    throughput: waveMs > 0 ? delivered / (waveMs / 1000) : 0,
    expected,
    delivered,
    errors: errors.count + clientErrors.count,
    errorSamples: [...errors.samples, ...clientErrors.samples],
    ...usage,
    loaderCpuPercent: loaderCpu.percent(),
    seconds: (performance.now() - startedAt) / 1000,
  };
}

export interface SenderSpec {
  headers: Record<string, string>;
  /**
   * The request carrying `content` as number `seq` of the run (which may pick its channel);
   * `own` counts this sender's requests, for senders that alternate (add, then remove).
   */
  request: (content: string, seq: number, own: number) => { method: 'GET' | 'POST' | 'DELETE'; path: string; body: string };
  /** The server this sender posts to, when not the one measured (a node of a cluster). */
  endpoint?: Endpoint;
}

export interface SendOptions {
  maxMessages: number;
  durationMs: number;
}

/**
 * K senders, each on its own keep-alive connection, posting back to back until the time or count
 * runs out. `kind` names what the requests do (send: messages; react, flags; read: the history
 * scenario's reads).
 */
export async function sendThroughput(
  server: ServerHandle,
  endpoint: Endpoint,
  senders: SenderSpec[],
  opts: SendOptions,
  kind: CaseKind = 'send',
): Promise<CaseResult> {
  const conns = await mapLimit(senders, 50, (spec) => HttpConnection.open(spec.endpoint ?? endpoint));
  const errors = new ErrorLog();
  const latencies: number[] = [];
  let started = 0;
  let accepted = 0;
  const label = `${server.target} ${kind} ${senders.length}`;
  const progress = new Progress(`${label}: post`, opts.maxMessages);
  const endSampling = await sampleServer(server);
  const loaderCpu = new SelfCpu();
  const startedAt = performance.now();
  const endAt = startedAt + opts.durationMs;
  try {
    await Promise.all(
      senders.map(async (spec, i) => {
        const conn = conns[i]!;
        for (let own = 0; started < opts.maxMessages && performance.now() < endAt; own++) {
          const seq = started++;
          const t0 = performance.now();
          try {
            const { method, path, body } = spec.request(`bench:${RUN_ID}:send:${seq}`, seq, own);
            const res = await conn.request(method, path, spec.headers, body);
            if (res.status === 200) {
              accepted++;
              latencies.push(performance.now() - t0);
            } else {
              errors.add(`HTTP ${res.status} ${res.body.slice(0, 200)}`);
            }
          } catch (err) {
            errors.add(err);
          }
          progress.tick();
        }
      }),
    );
  } finally {
    for (const conn of conns) conn.close();
  }
  const seconds = (performance.now() - startedAt) / 1000;
  progress.finish();
  const usage = await endSampling();
  return {
    kind,
    target: server.target,
    count: senders.length,
    latencyMs: percentiles(latencies),
    throughput: accepted / seconds,
    expected: started,
    delivered: accepted,
    errors: errors.count,
    errorSamples: errors.samples,
    ...usage,
    loaderCpuPercent: loaderCpu.percent(),
    seconds,
  };
}

export interface MixedClients {
  longPolls: LongPollSpec[];
  sockets: WsSpec[];
  /** One per publishing connection; message n goes through whichever is free when it is due. */
  publishers: SenderSpec[];
}

export interface MixedOptions {
  rate: number;
  durationMs: number;
  /** How long to wait for the last deliveries after the last publish. */
  drainMs: number;
  /** Every client must get every message (a server with queues); the baseline drops what finds a poll unparked. */
  expectAll: boolean;
}

/**
 * Parked long-polls and WebSockets receiving messages published at a steady rate (open loop: each
 * message is due at start + n / rate, whatever the earlier ones took). Latency is per delivery,
 * from the start of its publish request.
 */
export async function mixedLoad(server: ServerHandle, endpoint: Endpoint, clients: MixedClients, opts: MixedOptions): Promise<CaseResult> {
  const tracker = newTracker();
  const polls = new LongPollFleet(endpoint, tracker);
  const sockets = new WsFleet(tracker);
  const conns = await mapLimit(clients.publishers, 50, (spec) => HttpConnection.open(spec.endpoint ?? endpoint));
  const errors = new ErrorLog();
  const count = clients.longPolls.length + clients.sockets.length;
  const total = Math.round((opts.rate * opts.durationMs) / 1000);
  const label = `${server.target} mixed`;
  try {
    await polls.connect(clients.longPolls, `${label} long-polls`);
    await sockets.connect(clients.sockets, `${label} websockets`);
    polls.start();
    if (!(await waitFor(() => polls.inFlight === polls.alive, 30_000, 10))) errors.add('long-polls not all parked before the first message');
    const endSampling = await sampleServer(server);
    const loaderCpu = new SelfCpu();
    const progress = new Progress(`${label}: publish`, total);
    const startedAt = performance.now();
    let next = 0;
    await Promise.all(
      conns.map(async (conn, i) => {
        const spec = clients.publishers[i]!;
        for (let seq = next++, own = 0; seq < total; seq = next++, own++) {
          const wait = startedAt + (seq * 1000) / opts.rate - performance.now();
          if (wait > 0) await sleep(wait);
          tracker.markPublished(seq);
          try {
            const { method, path, body } = spec.request(tracker.content(seq), seq, own);
            const res = await conn.request(method, path, spec.headers, body);
            if (res.status !== 200) errors.add(`publish: HTTP ${res.status} ${res.body.slice(0, 200)}`);
          } catch (err) {
            errors.add(err);
          }
          progress.tick();
        }
      }),
    );
    progress.finish();
    const allIn = () => Array.from({ length: total }, (_, seq) => tracker.deliveredCount(seq)).every((n) => n >= count);
    await waitFor(allIn, opts.drainMs, 20);
    const usage = await endSampling();
    let delivered = 0;
    let incomplete = 0;
    for (let seq = 0; seq < total; seq++) {
      delivered += Math.min(tracker.deliveredCount(seq), count);
      if (tracker.deliveredCount(seq) < count) incomplete++;
    }
    if (opts.expectAll && incomplete > 0) errors.add(`${incomplete} of ${total} messages did not reach every client within ${opts.drainMs} ms`);
    const seconds = (performance.now() - startedAt) / 1000;
    return {
      kind: 'mixed',
      target: server.target,
      count,
      latencyMs: percentiles(tracker.latenciesMs),
      throughput: delivered / seconds,
      expected: total * count,
      delivered,
      errors: errors.count + polls.errors.count + sockets.errors.count,
      errorSamples: [...errors.samples, ...polls.errors.samples, ...sockets.errors.samples],
      ...usage,
      loaderCpuPercent: loaderCpu.percent(),
      seconds,
    };
  } finally {
    polls.close();
    sockets.close();
    for (const conn of conns) conn.close();
  }
}

export interface MemoryPoint {
  rssMB: number;
  heapMB?: number;
}

/** Server memory now: after a full GC when the bench started the server, else RSS from /proc. */
export async function memoryPoint(server: ServerHandle): Promise<MemoryPoint> {
  if (server.memory) {
    const m = await server.memory();
    return { rssMB: m.rss / 2 ** 20, heapMB: m.heapUsed / 2 ** 20 };
  }
  if (server.pid) return { rssMB: rssMB(server.pid) };
  throw new Error('idle needs the server on this machine: use --self, or --pid with --url');
}

/** Memory the server holds per idle item, from snapshots before and after adding `count` items. */
export function idleResult(
  kind: CaseKind,
  server: ServerHandle,
  count: number,
  before: MemoryPoint,
  after: MemoryPoint,
  errors: ErrorLog,
  startedAt: number,
): CaseResult {
  const perItemKB = (a: number, b: number) => ((a - b) * 1024) / count;
  return {
    kind,
    target: server.target,
    count,
    perItemKB: {
      rss: perItemKB(after.rssMB, before.rssMB),
      heap: after.heapMB !== undefined && before.heapMB !== undefined ? perItemKB(after.heapMB, before.heapMB) : undefined,
    },
    serverRssPeakMB: after.rssMB,
    errors: errors.count,
    errorSamples: errors.samples,
    seconds: (performance.now() - startedAt) / 1000,
  };
}

/**
 * Memory of `count` idle connections opened by `open`. They stay open until `release` is called:
 * closing them first would let the next measurement reuse the memory they freed.
 */
export async function idleConnections(
  kind: CaseKind,
  server: ServerHandle,
  count: number,
  open: () => Promise<{ errors: ErrorLog; release: () => void }>,
): Promise<{ result: CaseResult; release: () => void }> {
  const startedAt = performance.now();
  const before = await memoryPoint(server);
  const { errors, release } = await open();
  try {
    return { result: idleResult(kind, server, count, before, await memoryPoint(server), errors, startedAt), release };
  } catch (err) {
    release();
    throw err;
  }
}

const SETTLE_MS = 1000;

/**
 * Opens idle long-polls (parked, never answered). Memory is only meaningful once the server holds
 * every poll: ask it when it can tell (`parked`), otherwise give it a moment after the last write.
 */
export async function openIdleLongPolls(endpoint: Endpoint, specs: LongPollSpec[], label: string, parked?: () => Promise<number>) {
  const fleet = new LongPollFleet(endpoint, newTracker());
  await fleet.connect(specs, label);
  fleet.start();
  const allParked = parked
    ? await waitFor(async () => (await parked()) >= specs.length, scaledTimeout(30_000), 50)
    : (await waitFor(() => fleet.inFlight === specs.length, scaledTimeout(30_000), 50)) && (await sleep(SETTLE_MS), true);
  if (!allParked) fleet.errors.add('not all long-polls parked within 30 s');
  return { errors: fleet.errors, release: () => fleet.close() };
}

export async function openIdleWebSockets(specs: WsSpec[], label: string) {
  const fleet = new WsFleet(newTracker());
  await fleet.connect(specs, label);
  return { errors: fleet.errors, release: () => fleet.close() };
}
