// Keep-alive connections shared by many simulated people: a person's occasional request (presence,
// a narrow, a message) takes whichever connection is free, so 10,000 people need tens of
// connections for their requests, not 10,000. Only what a person holds open (a parked long-poll,
// a WebSocket) has a connection of its own.
import { HttpConnection, type Endpoint, type HttpResult } from './http-client.ts';

interface Waiting {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  queuedAt: number;
  resolve: (r: PooledResult) => void;
  reject: (e: Error) => void;
}

export interface PooledResult extends HttpResult {
  /** From writing the request to the end of its answer: the server's time (and the network's). */
  ms: number;
  /** How long the request waited for a free connection here: the load generator's own delay. */
  waitedMs: number;
}

export class HttpPool {
  private readonly idle: HttpConnection[] = [];
  private readonly waiting: Waiting[] = [];
  private head = 0;
  /** Longest wait for a connection so far (reset by takeMaxWait). */
  private maxWaitMs = 0;

  static async open(endpoint: Endpoint, size: number): Promise<HttpPool> {
    const pool = new HttpPool();
    for (let i = 0; i < size; i++) pool.idle.push(await HttpConnection.open(endpoint));
    return pool;
  }

  request(method: string, path: string, headers: Record<string, string>, body = ''): Promise<PooledResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ method, path, headers, body, queuedAt: performance.now(), resolve, reject });
      this.next();
    });
  }

  /** The longest wait for a connection since the last call. */
  takeMaxWait(): number {
    const max = this.maxWaitMs;
    this.maxWaitMs = 0;
    return max;
  }

  close(): void {
    for (const conn of this.idle) conn.close();
    this.idle.length = 0;
  }

  private next(): void {
    while (this.idle.length > 0 && this.head < this.waiting.length) {
      const job = this.waiting[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting.splice(0, this.head);
        this.head = 0;
      }
      const conn = this.idle.pop()!;
      const startedAt = performance.now();
      const waitedMs = startedAt - job.queuedAt;
      if (waitedMs > this.maxWaitMs) this.maxWaitMs = waitedMs;
      conn
        .request(job.method, job.path, job.headers, job.body)
        .then(
          (res) => job.resolve({ ...res, ms: performance.now() - startedAt, waitedMs }),
          (err: Error) => job.reject(err),
        )
        .finally(() => {
          this.idle.push(conn);
          this.next();
        });
    }
  }
}
