// What /metrics reports, in Prometheus' text format (prom-client): requests by route and status
// and their latency, event queues and their readers, events delivered, messages sent, the
// database pool and query time, and the process (event-loop lag, RSS, CPU, heap, GC: prom-client's
// default metrics). Everything that moves on a hot path is a plain number read at scrape time.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { QueueRegistry } from '../../actors/registry.ts';
import type { Database } from '../db/client.ts';

/** Request latency buckets in seconds, up to a long-poll's 45-55 s wait. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The requests of one route (and method) as plain numbers. prom-client's labelled children hash
 * their labels and allocate on every call (measured: 0.44 µs per request for one counter
 * increment and one histogram observation, against 0.02 µs here); these are read only when
 * /metrics is scraped.
 */
export class RouteCell {
  readonly byStatus = new Map<number, number>();
  /** Requests per latency bucket (the last: beyond every bound); not cumulative. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
  seconds = 0;
  count = 0;

  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  record(status: number, seconds: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    this.buckets[i]!++;
    this.seconds += seconds;
    this.count++;
  }
}

type Sample = { value: number; labels: Record<string, string | number>; metricName?: string };

/**
 * A metric prom-client's registry prints from samples we hand it: its own metric classes cannot
 * be filled from counts kept elsewhere (a histogram only grows by observe()).
 */
function sampledMetric(name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[]): Metric {
  const metric = { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }) };
  return metric as unknown as Metric;
}

const REQUESTS = 'chat_http_requests_total';
const LATENCY = 'chat_http_request_duration_seconds';

// One per process: what it measures (memory, CPU, event loop, GC) belongs to the process, however
// many servers a test run starts in it.
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface MetricSources {
  queues: QueueRegistry;
  db: Database;
}

export class ServerMetrics {
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly registry = new Registry();
  private readonly cells = new Map<string, RouteCell>();
  private sources: MetricSources | null = null;
  readonly messagesSent: Counter<'kind'>;
  readonly queryDuration: Histogram;
  readonly transactions: Counter;

  constructor() {
    // Now, not at the first scrape: the CPU counters count from their creation.
    processMetrics();
    const registers = [this.registry];
    const sources = () => this.sources;
    this.registry.registerMetric(
      sampledMetric(REQUESTS, 'HTTP requests answered, by route pattern and status (499: the client left first).', 'counter', () => this.requestSamples()),
    );
    this.registry.registerMetric(
      sampledMetric(LATENCY, 'Time from a request to its answer, by route pattern (GET /events includes the wait for events).', 'histogram', () =>
        this.latencySamples(),
      ),
    );
    this.messagesSent = new Counter({ name: 'chat_messages_sent_total', help: 'Messages sent, by kind (channel or direct).', labelNames: ['kind'], registers });
    for (const kind of ['channel', 'direct']) this.messagesSent.inc({ kind }, 0);
    this.queryDuration = new Histogram({
      name: 'chat_db_query_duration_seconds',
      help: 'Duration of the SQL statements the server runs (through Prisma, and the hot raw ones sent past it).',
      buckets: QUERY_BUCKETS,
      registers,
    });
    this.transactions = new Counter({
      name: 'chat_db_transactions_total',
      help: 'Transactions the server opened through Prisma (each one more statement, its BEGIN, than the query-time metric counts).',
      registers,
    });
    const read = (name: string, help: string, value: (s: MetricSources) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const s = sources();
          this.set(s ? value(s) : 0);
        },
      });
    read('chat_event_queues', 'Event queues alive (registered and not expired).', (s) => s.queues.size);
    new Gauge({
      name: 'chat_event_queue_readers',
      help: 'Readers attached to event queues now: parked long-polls (GET /events) and WebSockets.',
      labelNames: ['kind'],
      registers,
      collect() {
        const readers = sources()?.queues.readers() ?? { polls: 0, sockets: 0 };
        this.set({ kind: 'parked_poll' }, readers.polls);
        this.set({ kind: 'websocket' }, readers.sockets);
      },
    });
    read('chat_db_pool_connections', 'Open connections of the database pool.', (s) => s.db.poolStats().total);
    read('chat_db_pool_idle_connections', 'Idle connections of the database pool.', (s) => s.db.poolStats().idle);
    read('chat_db_pool_waiting', 'Queries and transactions waiting for a connection of the database pool.', (s) => s.db.poolStats().waiting);
    read('chat_db_pool_max_connections', 'The most connections the database pool opens.', (s) => s.db.poolStats().max);
    new Counter({
      name: 'chat_events_delivered_total',
      help: 'Events delivered to event queues, once per queue that got them.',
      registers,
      collect() {
        this.reset();
        this.inc(sources()?.queues.delivered ?? 0);
      },
    });
  }

  /** The live objects the gauges read at each scrape. */
  watch(sources: MetricSources): void {
    this.sources = sources;
  }

  /** The cell of one route and method; made once, at start. */
  route(method: string, route: string): RouteCell {
    const key = `${method} ${route}`;
    let cell = this.cells.get(key);
    if (!cell) {
      cell = new RouteCell(method, route);
      this.cells.set(key, cell);
    }
    return cell;
  }

  /** The exposition: the process's metrics, then the server's. */
  async text(): Promise<string> {
    return (await processMetrics().metrics()) + (await this.registry.metrics());
  }

  private requestSamples(): Sample[] {
    const samples: Sample[] = [];
    for (const cell of this.cells.values()) {
      for (const [status, value] of cell.byStatus) samples.push({ value, labels: { method: cell.method, route: cell.route, status } });
    }
    return samples;
  }

  private latencySamples(): Sample[] {
    const samples: Sample[] = [];
    for (const cell of this.cells.values()) {
      if (cell.count === 0) continue;
      const labels = { method: cell.method, route: cell.route };
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += cell.buckets[i]!;
        samples.push({ metricName: `${LATENCY}_bucket`, value: cumulative, labels: { ...labels, le } });
      });
      samples.push({ metricName: `${LATENCY}_bucket`, value: cell.count, labels: { ...labels, le: '+Inf' } });
      samples.push({ metricName: `${LATENCY}_sum`, value: cell.seconds, labels });
      samples.push({ metricName: `${LATENCY}_count`, value: cell.count, labels });
    }
    return samples;
  }
}
