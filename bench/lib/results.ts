import type { Percentiles } from './stats.ts';

export type Target = 'server' | 'baseline';

/** What one measured case exercises; a server case and a baseline case of the same kind and count are compared. */
export type CaseKind =
  | 'longpoll'
  | 'ws'
  | 'send'
  | 'react'
  | 'flags'
  | 'mixed'
  | 'idle-queue'
  | 'idle-longpoll'
  | 'idle-ws'
  | 'render'
  | 'read'
  | 'capacity'
  | 'failover';

export interface CaseResult {
  kind: CaseKind;
  target: Target;
  /** Clients, queues, sockets or senders. */
  count: number;
  /** Channels the messages went to, when more than one (send). */
  channels?: number;
  /** Nodes of the cluster measured (cluster scenario). */
  nodes?: number;
  /** The request measured and the messages of history behind it (history scenario). */
  request?: string;
  history?: number;
  latencyMs?: Percentiles;
  /** Events delivered per second (fan-out), or requests accepted per second (send, react, flags). */
  throughput?: number;
  /** Events or messages expected, and how many arrived. */
  expected?: number;
  delivered?: number;
  errors: number;
  errorSamples: string[];
  /** Server process during the measured window (absent when the server is not on this machine). */
  serverCpuPercent?: number;
  serverRssPeakMB?: number;
  /** The server's own PostgreSQL (its child processes), peak PSS, apart from the server's RSS. */
  dbPssPeakMB?: number;
  /** A cluster: CPU of each node (serverCpuPercent is their sum, serverRssPeakMB the sum of their peaks). */
  nodeCpuPercent?: number[];
  /** A cluster: CPU of the PostgreSQL backends serving its database; one server: of its own PostgreSQL (its child processes). */
  dbCpuPercent?: number;
  /** Load generator's own CPU: near 100 % means the figures are the client's limit, not the server's. */
  loaderCpuPercent?: number;
  /** Idle cases: memory added per idle item. */
  perItemKB?: { rss: number; heap?: number };
  /** The capacity scenario's step: people held and where their time went. */
  capacity?: CapacityFigures;
  /** cluster --kill: what the clients saw of a failure under load. */
  failover?: FailoverFigures;
  seconds: number;
}

/** A node killed or NATS restarted under load: each count but the first three and the last two must be 0. */
export interface FailoverFigures {
  failure: 'node' | 'nats';
  /** Messages the server acknowledged (every client must get each once). */
  acknowledged: number;
  /** Of those, sent after the failure. */
  acknowledgedAfter: number;
  /** Sends that failed or got no answer (their node died, or NATS was away too long). */
  failedSends: number;
  /** Clients whose queue was on the killed node. */
  movedClients: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  reregistered: number;
  /** Longest wait from the failure to a hit client's first message sent after it (the killed node's clients; with NATS, all). */
  resumedWithinMs: number;
}

/** One request kind of the capacity scenario in one window: latency of what succeeded, and failures. */
export interface RequestFigures {
  kind: string;
  count: number;
  errors: number;
  p50?: number;
  p99?: number;
  /** Summed latency: where the people's waiting went. */
  totalMs: number;
}

export interface CapacityFigures {
  people: number;
  webSockets: number;
  accounts: number;
  healthy: boolean;
  /** What broke the health threshold (empty when healthy). */
  broken: string[];
  requests: RequestFigures[];
  deliveries?: Percentiles;
  requestsPerS: number;
  deliveriesPerS: number;
  /** Typing, reaction, flag and presence events received per second. */
  otherEventsPerS: number;
  /** Longest wait of a request for a free pooled connection: the load generator's own delay. */
  maxPoolWaitMs: number;
  /** Server CPU, percent of one core, per 1,000 people. */
  serverCpuPer1000People?: number;
  /** Server memory added per person since no one was there (RSS; heap after GC when the bench started the server). */
  memoryPerPersonKB: { rss?: number; heap?: number };
  /** Joining this step's new people (register and connect), apart from the steady state. */
  join: { seconds: number; requests: RequestFigures[]; errors: number; errorSamples: string[] };
}

export function caseLabel(r: Pick<CaseResult, 'kind' | 'count' | 'channels' | 'nodes' | 'request' | 'history'>): string {
  if (r.history !== undefined) return `${r.request ?? r.kind} @${r.history.toLocaleString('en')}`;
  if (r.request !== undefined) return r.request;
  const channels = r.channels !== undefined && r.channels > 1 ? ` ${r.channels}ch` : '';
  return `${r.kind} ${r.count}${channels}${r.nodes ? ` @${r.nodes}n` : ''}`;
}

export interface Ratio {
  label: string;
  throughput?: number;
  p50?: number;
  p99?: number;
  rssPerItem?: number;
}

const div = (x?: number, y?: number) => (x !== undefined && y !== undefined && y > 0 ? x / y : undefined);

/** server / baseline for every server case that has a baseline case of the same kind, count and request. */
export function ratios(results: CaseResult[]): Ratio[] {
  const out: Ratio[] = [];
  for (const s of results.filter((r) => r.target === 'server')) {
    const b = results.find((r) => r.target === 'baseline' && r.kind === s.kind && r.count === s.count && r.request === s.request);
    if (!b) continue;
    out.push({
      label: caseLabel(s),
      throughput: div(s.throughput, b.throughput),
      p50: div(s.latencyMs?.p50, b.latencyMs?.p50),
      p99: div(s.latencyMs?.p99, b.latencyMs?.p99),
      rssPerItem: div(s.perItemKB?.rss, b.perItemKB?.rss),
    });
  }
  return out;
}

/** cluster / one node: every case on several nodes against the same case on one. */
export function scaling(results: CaseResult[]): Ratio[] {
  const out: Ratio[] = [];
  for (const s of results.filter((r) => r.target === 'server' && (r.nodes ?? 1) > 1)) {
    const one = results.find((r) => r.target === 'server' && r.nodes === 1 && r.kind === s.kind && r.count === s.count && r.channels === s.channels);
    if (!one) continue;
    out.push({
      label: caseLabel(s),
      throughput: div(s.throughput, one.throughput),
      p50: div(s.latencyMs?.p50, one.latencyMs?.p50),
      p99: div(s.latencyMs?.p99, one.latencyMs?.p99),
    });
  }
  return out;
}

/** history: every request on a larger history against the same request on the smallest one. */
export function historyScaling(results: CaseResult[]): Ratio[] {
  const sizes = results.map((r) => r.history).filter((h): h is number => h !== undefined);
  const smallest = Math.min(...sizes);
  const out: Ratio[] = [];
  for (const s of results.filter((r) => r.history !== undefined && r.history > smallest)) {
    const base = results.find((r) => r.history === smallest && r.request === s.request);
    if (!base) continue;
    out.push({
      label: caseLabel(s),
      throughput: div(s.throughput, base.throughput),
      p50: div(s.latencyMs?.p50, base.latencyMs?.p50),
      p99: div(s.latencyMs?.p99, base.latencyMs?.p99),
    });
  }
  return out;
}
