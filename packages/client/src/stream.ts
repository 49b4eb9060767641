// Reads one event queue (made by POST /register) for as long as it lives: over the WebSocket
// gateway, pushed as events happen, or by long-polling GET /events when a socket cannot get
// through. After a dropped connection it resumes from the last event it received, so nothing is
// missed and nothing comes twice (the gateway's protocol: docs/client.md). A queue the server no
// longer has is reported to the owner, which registers again.
import { ApiError, type Call } from './api.ts';

/** What every event of a queue has: the stream reads these two fields only. */
export interface StreamEvent {
  id: number;
  type: string;
}

/**
 * An event of no declared shape, the default where a client names no event type of its own: the
 * package imports nothing of the server, so a client that has the server's types (the web client's
 * DeliveredEvent) passes them as the type parameter of EventClient and EventStream.
 */
export interface ServerEvent extends StreamEvent {
  // biome-ignore lint/suspicious/noExplicitAny: each type has its own fields (the server's AsyncAPI document lists them), read as the client needs
  [key: string]: any;
}

/** How events arrive now: `connecting` (after a drop, before the next try), `offline` (the last try failed). */
export type Connection = 'connecting' | 'socket' | 'polling' | 'offline';

/**
 * What the stream needs of a WebSocket: the browser's, Node 22's global one, or the `ws` package's
 * (which can send headers, such as Authorization, on the upgrade).
 */
export interface SocketLike {
  readonly readyState: number;
  // Handlers typed to take `never`, so that every implementation's own event types fit.
  onopen: ((event: never) => void) | null;
  onmessage: ((event: never) => void) | null;
  onclose: ((event: never) => void) | null;
  onerror: ((event: never) => void) | null;
  send(data: string): void;
  close(code?: number): void;
}

export type CreateSocket = (url: string) => SocketLike;

/** The events handed on: all but the queue's heartbeats. */
export type NewsOf<E extends StreamEvent> = Exclude<E, { type: 'heartbeat' }>;

export interface StreamHandlers<E extends StreamEvent = ServerEvent> {
  events(events: NewsOf<E>[]): void;
  /** The queue is gone (expired, deleted, or taken over): register again. */
  queueLost(): void;
  connection(state: Connection): void;
}

export interface StreamOptions {
  call: Call;
  /** The gateway's address (`wss://HOST/api/v1/events/socket`), or null to long-poll only. */
  socketUrl: string | null;
  createSocket: CreateSocket;
  /** How long after an event its acknowledgement is sent (acknowledgements are batched). */
  ackDelayMs?: number;
}

const OPEN = 1;
/** Close codes of the gateway that mean the queue cannot be read any more. */
const QUEUE_GONE = new Set([4001, 4004]);
/** While long-polling, how long before the socket is tried again. */
const SOCKET_RETRY_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;
const ACK_DELAY_MS = 1000;
/** Heartbeats come every 45-55 s; a socket silent for longer than this is dead. */
const SILENCE_LIMIT_MS = 90_000;

export class EventStream<E extends StreamEvent = ServerEvent> {
  private socket: SocketLike | null = null;
  private poll: AbortController | null = null;
  private stopped = false;
  private paused = false;
  private failures = 0;
  private lastSocketAttempt = 0;
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private ackTimer: ReturnType<typeof setTimeout> | null = null;
  private silenceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly options: StreamOptions,
    readonly queueId: string,
    private lastEventId: number,
    private readonly handlers: StreamHandlers<E>,
  ) {}

  /** The id of the last event received: where a new connection resumes. */
  get resumeFrom(): number {
    return this.lastEventId;
  }

  start(): void {
    if (!this.paused) this.openSocket();
  }

  stop(): void {
    this.stopped = true;
    this.disconnect();
  }

  /**
   * Stops taking events (its reader is behind) without losing any: the connection is dropped, and
   * the server keeps what comes meanwhile in the queue until resume() reads on from the last event.
   */
  pause(): void {
    if (this.stopped || this.paused) return;
    this.paused = true;
    this.disconnect();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.reconnect();
  }

  /** Drops the connection and opens a new one at once, resuming (after a network change, say). */
  reconnect(): void {
    if (this.stopped || this.paused) return;
    this.disconnect();
    this.failures = 0;
    this.openSocket();
  }

  /** Ends the connection and every pending retry; the stream's position stays. */
  private disconnect(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.dropSocket();
    this.poll?.abort();
  }

  private later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) fn();
    }, ms);
    this.timers.add(timer);
  }

  /** Waits longer after each failure in a row (with jitter, so clients of a restarted server spread out). */
  private retry(fn: () => void, atLeastSeconds: number | null = null): void {
    const backoff = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.failures) * (0.5 + Math.random() / 2);
    this.failures++;
    this.later(fn, Math.max(backoff, (atLeastSeconds ?? 0) * 1000));
  }

  private receive(events: E[]): void {
    const fresh = events.filter((e) => e.id > this.lastEventId);
    if (fresh.length === 0) return;
    this.lastEventId = fresh[fresh.length - 1]!.id;
    const news = fresh.filter((e): e is NewsOf<E> => e.type !== 'heartbeat');
    if (news.length) this.handlers.events(news);
  }

  private openSocket(): void {
    const { socketUrl, createSocket } = this.options;
    if (socketUrl === null) return void this.pollEvents(true);
    this.lastSocketAttempt = Date.now();
    const query = new URLSearchParams({ queue_id: this.queueId, last_event_id: String(this.lastEventId) });
    let socket: SocketLike;
    try {
      socket = createSocket(`${socketUrl}?${query}`);
    } catch {
      this.pollEvents(true);
      return;
    }
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      opened = true;
      this.failures = 0;
      this.handlers.connection('socket');
      this.watchSilence();
    };
    socket.onmessage = (message: { data: unknown }) => {
      if (this.socket !== socket) return;
      this.watchSilence();
      let event: E & { result?: string };
      try {
        event = JSON.parse(String(message.data));
      } catch {
        return;
      }
      // The answer to a malformed acknowledgement: nothing to deliver.
      if (event.result === 'error') return;
      this.receive([event]);
      this.scheduleAck();
    };
    // Errors are followed by a close, which decides what comes next.
    socket.onerror = () => undefined;
    socket.onclose = (close: { code: number }) => {
      if (this.socket !== socket) return;
      this.dropSocket();
      if (QUEUE_GONE.has(close.code)) return this.handlers.queueLost();
      this.handlers.connection(opened ? 'connecting' : 'offline');
      // A socket that was open dropped: reconnect and resume. One that never opened cannot get
      // through (a proxy, a firewall, or the queue is gone): long-polling tells which.
      if (opened) this.retry(() => this.openSocket());
      else this.pollEvents(true);
    };
  }

  /** Forgets the current socket (its late callbacks are ignored) and closes it. */
  private dropSocket(): void {
    const socket = this.socket;
    this.socket = null;
    for (const timer of [this.ackTimer, this.silenceTimer]) if (timer) clearTimeout(timer);
    this.ackTimer = this.silenceTimer = null;
    if (socket && socket.readyState <= OPEN) socket.close(1000);
  }

  private watchSilence(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => {
      this.dropSocket();
      this.handlers.connection('connecting');
      this.openSocket();
    }, SILENCE_LIMIT_MS);
  }

  private scheduleAck(): void {
    if (this.ackTimer) return;
    const send = () => {
      this.ackTimer = null;
      if (this.socket?.readyState === OPEN) this.socket.send(JSON.stringify({ last_event_id: this.lastEventId }));
    };
    const delay = this.options.ackDelayMs ?? ACK_DELAY_MS;
    if (delay <= 0) send();
    else this.ackTimer = setTimeout(send, delay);
  }

  /** One GET /events (the first of a fallback without waiting, to learn at once whether it works). */
  private async pollEvents(first = false): Promise<void> {
    const controller = new AbortController();
    this.poll = controller;
    let events: E[];
    try {
      const params = { queue_id: this.queueId, last_event_id: this.lastEventId, dont_block: first };
      ({ events } = (await this.options.call('GET', '/events', params, controller.signal)) as { events: E[] });
    } catch (err) {
      // Stopped, or dropped by reconnect(), which has started another connection.
      if (this.stopped || controller.signal.aborted) return;
      if (err instanceof ApiError && err.code === 'BAD_EVENT_QUEUE_ID') return this.handlers.queueLost();
      this.handlers.connection('offline');
      this.retry(() => this.openSocket(), err instanceof ApiError ? err.retryAfter : null);
      return;
    } finally {
      if (this.poll === controller) this.poll = null;
    }
    if (this.stopped || controller.signal.aborted) return;
    this.failures = 0;
    this.handlers.connection('polling');
    this.receive(events);
    if (this.paused) return;
    if (this.options.socketUrl !== null && Date.now() - this.lastSocketAttempt > SOCKET_RETRY_MS) this.openSocket();
    else void this.pollEvents();
  }
}
