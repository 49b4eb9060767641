// Reads one event queue (made by POST /register) for as long as it lives: over the WebSocket
// gateway, pushed as events happen, or by long-polling GET /events when a socket cannot get
// through. After a dropped connection it resumes from the last event it received, so nothing is
// missed and nothing comes twice (docs/api.md, "WebSocket events"). A queue the server no longer has
// is reported, and the client registers again.
import { ApiError, type Api } from './api.ts';

export interface ServerEvent {
  id: number;
  type: string;
  [key: string]: any;
}

export type Connection = 'connecting' | 'socket' | 'polling' | 'offline';

export interface StreamHandlers {
  events(events: ServerEvent[]): void;
  /** The queue is gone (expired, deleted, or taken over): register again. */
  queueLost(): void;
  connection(state: Connection): void;
}

/** Close codes of the gateway that mean the queue cannot be read any more. */
const QUEUE_GONE = new Set([4001, 4004]);
/** While long-polling, how long before the socket is tried again. */
const SOCKET_RETRY_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;
const ACK_DELAY_MS = 1000;
/** Heartbeats come every 45-55 s; a socket silent for longer than this is dead. */
const SILENCE_LIMIT_MS = 90_000;

export class EventStream {
  private socket: WebSocket | null = null;
  private poll: AbortController | null = null;
  private stopped = false;
  private failures = 0;
  private lastSocketAttempt = 0;
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private ackTimer: ReturnType<typeof setTimeout> | null = null;
  private silenceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly api: Api,
    readonly queueId: string,
    private lastEventId: number,
    private readonly handlers: StreamHandlers,
  ) {}

  start(): void {
    this.openSocket();
  }

  stop(): void {
    this.stopped = true;
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

  private receive(events: ServerEvent[]): void {
    const fresh = events.filter((e) => e.id > this.lastEventId);
    if (fresh.length === 0) return;
    this.lastEventId = fresh[fresh.length - 1]!.id;
    const news = fresh.filter((e) => e.type !== 'heartbeat');
    if (news.length) this.handlers.events(news);
  }

  private socketUrl(): string {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const query = new URLSearchParams({ queue_id: this.queueId, last_event_id: String(this.lastEventId) });
    return `${scheme}://${location.host}/api/v1/events/socket?${query}`;
  }

  private openSocket(): void {
    this.lastSocketAttempt = Date.now();
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.socketUrl());
    } catch {
      this.pollEvents(true);
      return;
    }
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.failures = 0;
      this.handlers.connection('socket');
      this.watchSilence();
    };
    socket.onmessage = (message) => {
      this.watchSilence();
      let event: ServerEvent & { result?: string };
      try {
        event = JSON.parse(String(message.data));
      } catch {
        return;
      }
      if (event.result === 'error') {
        console.warn('event socket:', event);
        return;
      }
      this.receive([event]);
      this.scheduleAck();
    };
    socket.onclose = (close) => {
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
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000);
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
    this.ackTimer = setTimeout(() => {
      this.ackTimer = null;
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ last_event_id: this.lastEventId }));
    }, ACK_DELAY_MS);
  }

  /** One GET /events (the first of a fallback without waiting, to learn at once whether it works). */
  private async pollEvents(first = false): Promise<void> {
    const controller = new AbortController();
    this.poll = controller;
    let events: ServerEvent[];
    try {
      const params = { queue_id: this.queueId, last_event_id: this.lastEventId, dont_block: first };
      ({ events } = await this.api.get<{ events: ServerEvent[] }>('/events', params, controller.signal));
    } catch (err) {
      if (this.stopped) return;
      if (err instanceof ApiError && err.code === 'BAD_EVENT_QUEUE_ID') return this.handlers.queueLost();
      this.handlers.connection('offline');
      this.retry(() => this.openSocket(), err instanceof ApiError ? err.retryAfter : null);
      return;
    } finally {
      if (this.poll === controller) this.poll = null;
    }
    if (this.stopped) return;
    this.failures = 0;
    this.handlers.connection('polling');
    this.receive(events);
    if (Date.now() - this.lastSocketAttempt > SOCKET_RETRY_MS) this.openSocket();
    else void this.pollEvents();
  }
}
