// Simulated people of a team chat, each a real Zulip API client: it registers an event queue,
// holds a long-poll or a WebSocket on it, pings its presence every minute, and between idle
// pauses does one action picked by weight (open a narrow and read it, mark what came in read,
// send a message after typing, react, reconnect). Everything a person waits for runs on one
// timer wheel, and their requests share one pool of keep-alive connections (see http-pool.ts).
import WebSocket from 'ws';
import { ApiError, connect, type Call, type Connection, type EventClient, type ServerEvent } from '../../packages/client/src/index.ts';
import { HttpConnection, type Endpoint, type HttpResult } from './http-client.ts';
import type { HttpPool } from './http-pool.ts';
import type { TimerWheel } from './timer-wheel.ts';
import { ErrorLog, type BenchEvent } from './deliveries.ts';
import { FORM_HEADERS, basicAuth, formEncode, type Credentials } from './zulip-api.ts';

export const ACTIONS = ['narrow', 'read', 'send', 'react', 'reconnect'] as const;
export type Action = (typeof ACTIONS)[number];
export type Mix = Record<Action, number>;

/**
 * Weights from Mattermost's load-test user model (mattermost-load-test-ng, the simulative
 * controller's action frequencies), grouped into the Zulip calls that do the same:
 * narrow = switch channel, scroll, open a DM, view thread, global threads, permalink (10.68);
 * read = unread check, thread read (1.32); send = create post (1); react = add reaction (0.13);
 * reconnect = WebSocket reconnect (0.144). Its rare actions (search, edit, custom status, ...:
 * about 2 % of actions together) are left out.
 */
export const DEFAULT_MIX: Mix = { narrow: 10.68, read: 1.32, send: 1, react: 0.13, reconnect: 0.144 };

/** Mattermost's defaults too: at least 1 s and on average 20 s between a person's actions. */
export const MIN_THINK_MS = 1000;
export const PRESENCE_EVERY_MS = 60_000;
/** How long a person types before the message goes (Zulip clients send typing start, then stop with the message). */
const TYPING_MS = 3000;
const REMEMBERED_MESSAGES = 20;
const EMOJI = ['tada', 'thumbs_up', 'heart', 'smile', 'rocket', 'eyes', 'fire', 'check', 'star', 'clap'];
const TOPICS = 5;

/** Every request kind a person makes, as the report names them. */
export const REQUEST_KINDS = ['register', 'connect', 'presence', 'messages', 'flags', 'typing', 'send', 'react'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface Channel {
  name: string;
  id: number;
}

/** Latencies and errors of one measuring window, per request kind and for deliveries. */
export class Window {
  readonly requests = new Map<RequestKind, number[]>(REQUEST_KINDS.map((k) => [k, []]));
  readonly deliveries: number[] = [];
  /** Events of other types (typing, reactions, flags, presence) received. */
  otherEvents = 0;
  readonly errors = new ErrorLog();
  readonly errorsByKind = new Map<string, number>();
  maxPoolWaitMs = 0;

  request(kind: RequestKind, ms: number): void {
    this.requests.get(kind)!.push(ms);
  }

  error(kind: string, what: unknown): void {
    this.errors.add(`${kind}: ${what instanceof Error ? what.message : String(what)}`);
    this.errorsByKind.set(kind, (this.errorsByKind.get(kind) ?? 0) + 1);
  }
}

export interface CrowdOptions {
  endpoint: Endpoint;
  pool: HttpPool;
  wheel: TimerWheel;
  mix: Mix;
  thinkMs: number;
  /** Share of people on a WebSocket rather than a long-poll (0 for a server without the gateway, such as Zulip). */
  wsShare: number;
  runToken: string;
}

class Person {
  presenceId = -1;
  /** The person's event connection: the client package, as any JavaScript client would use it. */
  client: EventClient | undefined;
  /** The long-poll's own keep-alive connection (long-polling people). */
  conn: HttpConnection | undefined;
  /** When the connection being opened was asked for: its time to live is the 'connect' request. */
  connectingSince: number | undefined;
  /** Message ids seen and not yet marked read; the latest ones, to react to. */
  unread: number[] = [];
  recent: number[] = [];
  reacted = new Set<number>();
  constructor(
    readonly index: number,
    readonly account: Credentials,
    readonly auth: string,
    readonly device: number,
    readonly channels: Channel[],
    readonly webSocket: boolean,
  ) {}
}

/** The people of a run: join() adds one; all stop at close(). */
export class Crowd {
  window = new Window();
  private readonly people: Person[] = [];
  private readonly publishedAt: number[] = [];
  private readonly pattern: RegExp;
  private readonly weights: [Action, number][];
  private readonly totalWeight: number;
  private closed = false;
  private sent = 0;

  constructor(private readonly o: CrowdOptions) {
    this.pattern = new RegExp(`${o.runToken}(\\d+)`);
    this.weights = ACTIONS.map((a) => [a, o.mix[a]] as [Action, number]).filter(([, w]) => w > 0);
    this.totalWeight = this.weights.reduce((s, [, w]) => s + w, 0);
  }

  get size(): number {
    return this.people.length;
  }

  get webSockets(): number {
    return this.people.filter((p) => p.webSocket).length;
  }

  /** Starts a new window; returns the one that ends. */
  nextWindow(): Window {
    const ended = this.window;
    ended.maxPoolWaitMs = this.o.pool.takeMaxWait();
    this.window = new Window();
    return ended;
  }

  /** Registers a person's queue and opens its long-poll or WebSocket; then its timers start. */
  async join(account: Credentials, device: number, channels: Channel[]): Promise<void> {
    const index = this.people.length;
    const webSocket = (index * 0.618034) % 1 < this.o.wsShare; // an even spread of the share over join order
    const person = new Person(index, account, basicAuth(account), device, channels, webSocket);
    this.people.push(person);
    await this.register(person);
    // Spread over the first minute, so people who joined together do not ping together.
    this.o.wheel.schedule(Math.random() * PRESENCE_EVERY_MS, () => this.presence(person));
    this.o.wheel.schedule(this.thinkTime(), () => this.act(person));
  }

  close(): void {
    this.closed = true;
    for (const p of this.people) void p.client?.close({ keepQueue: true });
  }

  private thinkTime(): number {
    // Exponential pauses (a Poisson process of actions) with a floor, averaging thinkMs.
    return MIN_THINK_MS - Math.log(1 - Math.random()) * Math.max(0, this.o.thinkMs - MIN_THINK_MS);
  }

  private async call(
    kind: RequestKind,
    person: Person,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const form = formEncode(params);
    const headers = method === 'GET' ? { Authorization: person.auth } : { Authorization: person.auth, ...FORM_HEADERS };
    try {
      const res = await this.o.pool.request(method, method === 'GET' ? `${path}?${form}` : path, headers, method === 'GET' ? '' : form);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      if (res.status !== 200 || body.result !== 'success') {
        this.window.error(kind, `HTTP ${res.status} ${String(body.code ?? '')} ${String(body.msg ?? '')}`);
        return undefined;
      }
      this.window.request(kind, res.ms);
      return body;
    } catch (err) {
      if (!this.closed) this.window.error(kind, err);
      return undefined;
    }
  }

  /**
   * Registers the person's queue and reads it with the client package: a WebSocket for socket
   * people (a refused socket falls back to long-polling, which counts as an error here), a
   * long-poll on the person's own keep-alive connection for the others.
   */
  private async register(person: Person): Promise<void> {
    const base = `${this.o.endpoint.tls ? 'wss' : 'ws'}://${this.o.endpoint.hostHeader}${this.o.endpoint.basePath}`;
    person.client = await connect({
      call: this.callFor(person),
      register: {
        event_types: ['message', 'reaction', 'typing', 'update_message_flags', 'presence'],
        slim_presence: true,
        client_gravatar: true,
      },
      socketUrl: person.webSocket ? `${base}/api/v1/events/socket` : null,
      createSocket: (url) => new WebSocket(url, { headers: { Authorization: person.auth }, perMessageDeflate: false }),
      onEvents: (events) => this.received(person, events, performance.now()),
      onConnection: (state) => this.connection(person, state),
      onReset: () => this.window.error('events', 'the queue was lost: registered again'),
      onFatal: (err) => this.window.error('events', err),
    });
    person.presenceId = Number(person.client.snapshot.presence_last_update_id ?? -1);
  }

  private connection(person: Person, state: Connection): void {
    if (this.closed) return;
    if (state === 'offline') this.window.error('events', 'connection lost');
    else if (state === 'polling' && person.webSocket) this.window.error('events', 'WebSocket refused: long-polling instead');
    if ((state === 'socket' || state === 'polling') && person.connectingSince !== undefined) {
      this.window.request('connect', performance.now() - person.connectingSince);
      person.connectingSince = undefined;
    }
  }

  /** The client package's requests: GET /events on the person's own connection, the rest through the shared pool. */
  private callFor(person: Person): Call {
    return async (method, path, params, signal) => {
      let res: HttpResult;
      if (method === 'GET' && path === '/events') {
        // Aborted by the client (a reconnect, or close): the poll's connection goes with it, and
        // the next poll opens a new one.
        const abort = () => {
          person.conn?.close();
          person.conn = undefined;
        };
        signal?.addEventListener('abort', abort, { once: true });
        try {
          person.conn ??= await HttpConnection.open(this.o.endpoint);
          res = await person.conn.request('GET', `/api/v1/events?${formEncode(params)}`, { Authorization: person.auth }, '', 0);
        } catch (err) {
          throw new ApiError(err instanceof Error ? err.message : String(err), 'NETWORK', 0);
        } finally {
          signal?.removeEventListener('abort', abort);
        }
      } else {
        const body = await this.call(path === '/register' ? 'register' : 'connect', person, method, `/api/v1${path}`, params);
        if (!body) throw new ApiError('the request failed', 'BENCH', 0);
        // Registered: the client opens its connection now.
        if (path === '/register') person.connectingSince = performance.now();
        return body;
      }
      const body = JSON.parse(res.body) as Record<string, unknown>;
      if (res.status !== 200 || body.result !== 'success') throw new ApiError(String(body.msg ?? ''), String(body.code ?? ''), res.status);
      return body;
    };
  }

  /** Records what arrived. */
  private received(person: Person, events: (ServerEvent & BenchEvent)[], at: number): void {
    for (const event of events) {
      if (event.type !== 'message') {
        if (event.type !== 'heartbeat') this.window.otherEvents++;
        continue;
      }
      const message = event.message as { id?: unknown; content?: unknown };
      if (typeof message.id === 'number') {
        remember(person.unread, message.id, 50);
        remember(person.recent, message.id, REMEMBERED_MESSAGES);
      }
      const match = typeof message.content === 'string' ? this.pattern.exec(message.content) : null;
      const sentAt = match ? this.publishedAt[Number(match[1])] : undefined;
      if (sentAt !== undefined) this.window.deliveries.push(at - sentAt);
    }
  }

  private presence(person: Person): void {
    if (this.closed) return;
    void this.call('presence', person, 'POST', '/api/v1/users/me/presence', { status: 'active', slim_presence: true, last_update_id: person.presenceId }).then(
      (body) => {
        if (body && typeof body.presence_last_update_id === 'number') person.presenceId = body.presence_last_update_id;
      },
    );
    this.o.wheel.schedule(PRESENCE_EVERY_MS, () => this.presence(person));
  }

  private pick(): Action {
    let r = Math.random() * this.totalWeight;
    for (const [action, weight] of this.weights) {
      if ((r -= weight) < 0) return action;
    }
    return this.weights[this.weights.length - 1]![0];
  }

  private act(person: Person): void {
    if (this.closed) return;
    const done = () => this.o.wheel.schedule(this.thinkTime(), () => this.act(person));
    const action = this.pick();
    const run =
      action === 'narrow'
        ? this.narrow(person)
        : action === 'read'
          ? this.markRead(person, person.unread.splice(0))
          : action === 'send'
            ? this.send(person)
            : action === 'react'
              ? this.react(person)
              : this.reconnect(person);
    void run.finally(done);
  }

  /** Opens one of the person's channels at its newest messages, and marks what it shows read. */
  private async narrow(person: Person): Promise<void> {
    const channel = person.channels[Math.floor(Math.random() * person.channels.length)]!;
    const body = await this.call('messages', person, 'GET', '/api/v1/messages', {
      anchor: 'newest',
      num_before: 20,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: channel.name }],
    });
    const messages = (body?.messages ?? []) as { id: number; flags?: string[] }[];
    await this.markRead(
      person,
      messages.filter((m) => !m.flags?.includes('read')).map((m) => m.id),
    );
  }

  private async markRead(person: Person, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.call('flags', person, 'POST', '/api/v1/messages/flags', { messages: ids, op: 'add', flag: 'read' });
  }

  /** Types for a few seconds, then sends to one of its channels (the typing stop goes with it, as clients do). */
  private async send(person: Person): Promise<void> {
    const channel = person.channels[Math.floor(Math.random() * person.channels.length)]!;
    const topic = `topic ${Math.floor(Math.random() * TOPICS)}`;
    const typing = { type: 'stream', stream_id: channel.id, topic };
    await this.call('typing', person, 'POST', '/api/v1/typing', { ...typing, op: 'start' });
    await new Promise((resolve) => this.o.wheel.schedule(TYPING_MS, () => resolve(undefined)));
    if (this.closed) return;
    const seq = this.sent++;
    this.publishedAt[seq] = performance.now();
    await Promise.all([
      this.call('send', person, 'POST', '/api/v1/messages', {
        type: 'stream',
        to: channel.name,
        topic,
        content: `${this.o.runToken}${seq} a message from the capacity bench`,
      }),
      this.call('typing', person, 'POST', '/api/v1/typing', { ...typing, op: 'stop' }),
    ]);
  }

  /** Adds an emoji to a message it saw lately; each device of an account has its own emoji, so two never clash. */
  private async react(person: Person): Promise<void> {
    const id = person.recent.find((m) => !person.reacted.has(m));
    if (id === undefined) return;
    person.reacted.add(id);
    if (person.reacted.size > REMEMBERED_MESSAGES * 2) person.reacted.delete(person.reacted.values().next().value!);
    await this.call('react', person, 'POST', `/api/v1/messages/${id}/reactions`, { emoji_name: EMOJI[person.device % EMOJI.length]! });
  }

  /** Drops the connection it holds and opens a new one on the same queue, as after a network change. */
  private async reconnect(person: Person): Promise<void> {
    person.connectingSince = performance.now();
    person.client?.reconnect();
  }
}

function remember(list: number[], id: number, max: number): void {
  list.push(id);
  if (list.length > max) list.shift();
}
