// N long-poll clients, one keep-alive socket each: poll, record the events, poll again.
import { HttpConnection, type Endpoint } from './http-client.ts';
import { mapLimit } from './concurrency.ts';
import { type DeliveryTracker, ErrorLog, eventsOf } from './deliveries.ts';
import { Progress } from './progress.ts';

export interface LongPollSpec {
  /** Request path (after the endpoint's base path) for the poll after `lastEventId`. */
  path: (lastEventId: number) => string;
  headers: Record<string, string>;
  lastEventId: number;
  /** The server this client polls, when not the fleet's (a queue lives on one node of a cluster). */
  endpoint?: Endpoint;
}

interface Client {
  conn: HttpConnection;
  spec: LongPollSpec;
  lastEventId: number;
}

const CONNECT_CONCURRENCY = 200; // stays well under the listen backlog (512 in uWS)

export class LongPollFleet {
  /** Clients with a poll request written and not yet answered. */
  inFlight = 0;
  /** Clients still polling (an error ends a client). */
  alive = 0;
  readonly errors = new ErrorLog();
  private clients: Client[] = [];
  private closed = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly tracker: DeliveryTracker,
  ) {}

  async connect(specs: LongPollSpec[], label: string): Promise<void> {
    const progress = new Progress(`${label}: connect`, specs.length);
    this.clients = await mapLimit(
      specs,
      CONNECT_CONCURRENCY,
      async (spec) => ({
        conn: await HttpConnection.open(spec.endpoint ?? this.endpoint),
        spec,
        lastEventId: spec.lastEventId,
      }),
      () => progress.tick(),
    );
    progress.finish();
  }

  start(): void {
    for (const client of this.clients) void this.pollLoop(client);
  }

  close(): void {
    this.closed = true;
    for (const client of this.clients) client.conn.close();
    this.clients = [];
  }

  private async pollLoop(client: Client): Promise<void> {
    this.alive++;
    try {
      while (!this.closed) {
        this.inFlight++;
        let result;
        try {
          result = await client.conn.request('GET', client.spec.path(client.lastEventId), client.spec.headers, '', 0);
        } finally {
          this.inFlight--;
        }
        const at = performance.now();
        if (result.status !== 200) throw new Error(`poll: HTTP ${result.status} ${result.body.slice(0, 200)}`);
        const maxId = this.tracker.record(eventsOf(JSON.parse(result.body)), at);
        if (maxId > client.lastEventId) client.lastEventId = maxId;
        // Re-poll after this I/O phase: the rest of a fan-out burst is read (and timed) first,
        // instead of each read waiting behind a write syscall.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      if (!this.closed) this.errors.add(err);
    } finally {
      this.alive--;
    }
  }
}
