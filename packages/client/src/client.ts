// One client's event connection: registers a queue (POST /register), reads it with an EventStream,
// and when the server no longer has it registers again and says so with a "reset" carrying the
// new snapshot, from which the client rebuilds its state. Events come to callbacks, to an async
// iterator, or both.
import { ApiError, basicCall, type Call, type Credentials, type Params } from './api.ts';
import { EventStream, type Connection, type CreateSocket, type NewsOf, type ServerEvent, type StreamEvent } from './stream.ts';

/** What POST /register answers: the state the client starts from, and its queue. */
export interface Snapshot {
  queue_id: string;
  last_event_id: number;
  // biome-ignore lint/suspicious/noExplicitAny: what is in it depends on the register options
  [key: string]: any;
}

/** What the iterator yields: events to apply, or a new snapshot that replaces all state (the queue was lost). */
export type Update<E extends StreamEvent = ServerEvent> = { type: 'events'; events: NewsOf<E>[] } | { type: 'reset'; snapshot: Snapshot };

/** `E`: the events' type, for a client that has the server's (the package declares none: ServerEvent). */
export interface ClientOptions<E extends StreamEvent = ServerEvent> {
  /** How to call the API: give `server` and `credentials`, or a `call` of your own (a browser's session). */
  call?: Call;
  server?: string;
  credentials?: Credentials;
  /** POST /register's parameters (event_types, fetch_event_types, client_capabilities, ...). */
  register?: Params;
  /**
   * The WebSocket gateway's address; by default made from `server` (`ws(s)://HOST/api/v1/events/socket`).
   * null: long-poll only.
   */
  socketUrl?: string | null;
  /** Makes a WebSocket; by default the global WebSocket (browsers, Node 22), without one the client long-polls. */
  createSocket?: CreateSocket;
  /**
   * How many updates an async iterator may hold unread before the client stops taking events
   * (default 1,000); it reads on, from where it stopped, once every iterator is down to half.
   */
  iteratorHighWater?: number;
  /** How long after an event its acknowledgement is sent (default 1 s; acknowledgements are batched). */
  ackDelayMs?: number;
  onEvents?: (events: NewsOf<E>[]) => void;
  /** The queue was lost and a new one registered: rebuild the state from this snapshot. */
  onReset?: (snapshot: Snapshot) => void;
  onConnection?: (state: Connection) => void;
  /** Registering again failed for good (401: the credentials no longer work); the client has stopped. */
  onFatal?: (error: ApiError) => void;
}

const MAX_REGISTER_BACKOFF_MS = 30_000;
const ITERATOR_HIGH_WATER = 1000;

function defaultSocketUrl(options: Pick<ClientOptions, 'server' | 'createSocket'>): string | null {
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (!options.server || (!options.createSocket && !global)) return null;
  const url = new URL('api/v1/events/socket', options.server.endsWith('/') ? options.server : `${options.server}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

function defaultCreateSocket(url: string) {
  const Socket = (globalThis as { WebSocket?: new (url: string) => ReturnType<CreateSocket> }).WebSocket;
  if (!Socket) throw new Error('no WebSocket implementation: pass createSocket');
  return new Socket(url);
}

/** Registers a queue and starts reading it; resolves once the first snapshot is in `client.snapshot`. */
export async function connect<E extends StreamEvent = ServerEvent>(options: ClientOptions<E>): Promise<EventClient<E>> {
  const client = new EventClient<E>(options);
  await client.start();
  return client;
}

export class EventClient<E extends StreamEvent = ServerEvent> {
  /** The latest register answer (replaced at each reset). */
  snapshot!: Snapshot;
  connection: Connection = 'connecting';
  private stream: EventStream<E> | null = null;
  private stopped = false;
  private readonly call: Call;
  private readonly socketUrl: string | null;
  private readonly consumers = new Set<Consumer<E>>();
  private readonly highWater: number;
  private paused = false;

  constructor(private readonly options: ClientOptions<E>) {
    if (options.call) this.call = options.call;
    else if (options.server && options.credentials) this.call = basicCall({ server: options.server, credentials: options.credentials });
    else throw new Error('pass call, or server and credentials');
    this.socketUrl = options.socketUrl !== undefined ? options.socketUrl : defaultSocketUrl(options);
    this.highWater = Math.max(1, options.iteratorHighWater ?? ITERATOR_HIGH_WATER);
  }

  /** The queue being read. */
  get queueId(): string {
    return this.snapshot.queue_id;
  }

  /** Registers (errors are thrown, nothing is retried) and starts reading the queue. */
  async start(): Promise<Snapshot> {
    const snapshot = (await this.call('POST', '/register', this.options.register ?? {})) as Snapshot;
    if (!this.stopped) this.listen(snapshot);
    return snapshot;
  }

  /** Drops the connection and opens a new one at once, resuming where it was. */
  reconnect(): void {
    this.stream?.reconnect();
  }

  /** Stops reading; the queue is deleted on the server unless `keepQueue`. */
  async close({ keepQueue = false } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stream?.stop();
    this.stream = null;
    for (const consumer of this.consumers) consumer.end();
    if (!keepQueue && this.snapshot) await this.call('DELETE', '/events', { queue_id: this.snapshot.queue_id }).catch(() => undefined);
  }

  /** Every update from now on, until close(). */
  [Symbol.asyncIterator](): AsyncIterableIterator<Update<E>> {
    const consumer = new Consumer<E>(
      () => {
        this.consumers.delete(consumer);
        this.flowControl();
      },
      () => this.flowControl(),
    );
    this.consumers.add(consumer);
    return consumer;
  }

  /** The most updates any async iterator holds unread. */
  get iteratorBacklog(): number {
    return Math.max(0, ...[...this.consumers].map((c) => c.pending));
  }

  /** An iterator read slower than events come: stop taking them while one holds too many, so its buffer stays bounded. */
  private flowControl(): void {
    const most = this.iteratorBacklog;
    if (!this.paused && most >= this.highWater) {
      this.paused = true;
      this.stream?.pause();
    } else if (this.paused && most <= this.highWater / 2) {
      this.paused = false;
      this.stream?.resume();
    }
  }

  private listen(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    const stream = new EventStream<E>(
      { call: this.call, socketUrl: this.socketUrl, createSocket: this.options.createSocket ?? defaultCreateSocket, ackDelayMs: this.options.ackDelayMs },
      snapshot.queue_id,
      snapshot.last_event_id,
      {
        events: (events) => {
          this.options.onEvents?.(events);
          this.publish({ type: 'events', events });
        },
        queueLost: () => void this.reregister(),
        connection: (state) => this.setConnection(state),
      },
    );
    this.stream = stream;
    if (this.paused) stream.pause();
    stream.start();
  }

  private setConnection(state: Connection): void {
    this.connection = state;
    this.options.onConnection?.(state);
  }

  private publish(update: Update<E>): void {
    for (const consumer of this.consumers) consumer.push(update);
    this.flowControl();
  }

  /** The queue is gone (the server forgot it, or it expired while the computer slept): register again. */
  private async reregister(): Promise<void> {
    this.stream?.stop();
    this.stream = null;
    this.setConnection('connecting');
    for (let attempt = 0; !this.stopped; attempt++) {
      let snapshot: Snapshot;
      try {
        snapshot = (await this.call('POST', '/register', this.options.register ?? {})) as Snapshot;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) {
          void this.close({ keepQueue: true });
          this.options.onFatal?.(err);
          return;
        }
        const retryAfter = err instanceof ApiError && err.retryAfter ? err.retryAfter * 1000 : 0;
        await new Promise((r) => setTimeout(r, Math.max(retryAfter, Math.min(MAX_REGISTER_BACKOFF_MS, 1000 * 2 ** attempt))));
        continue;
      }
      if (this.stopped) return void this.call('DELETE', '/events', { queue_id: snapshot.queue_id }).catch(() => undefined);
      this.listen(snapshot);
      this.options.onReset?.(snapshot);
      this.publish({ type: 'reset', snapshot });
      return;
    }
  }
}

/** One async iterator's buffer of updates not yet taken. */
class Consumer<E extends StreamEvent> implements AsyncIterableIterator<Update<E>> {
  private readonly buffer: Update<E>[] = [];
  private waiting: ((result: IteratorResult<Update<E>>) => void) | null = null;
  private ended = false;

  constructor(
    private readonly detach: () => void,
    private readonly taken: () => void,
  ) {}

  /** Updates received and not yet taken. */
  get pending(): number {
    return this.buffer.length;
  }

  push(update: Update<E>): void {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: update, done: false });
    } else this.buffer.push(update);
  }

  end(): void {
    this.ended = true;
    this.detach();
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
  }

  next(): Promise<IteratorResult<Update<E>>> {
    const update = this.buffer.shift();
    if (update) {
      this.taken();
      return Promise.resolve({ value: update, done: false });
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** A `break` out of for-await ends this iterator only. */
  return(): Promise<IteratorResult<Update<E>>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Update<E>> {
    return this;
  }
}
