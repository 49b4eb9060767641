// A Zulip-API server (started by the bench or given by --url) seen through the bench's interfaces.
import { randomBytes } from 'node:crypto';
import { parseEndpoint, type Endpoint } from './http-client.ts';
import { evenShares, mapLimit, spread } from './concurrency.ts';
import { Progress } from './progress.ts';
import { FORM_HEADERS, ZulipClient, basicAuth, formEncode, type Credentials, type Queue } from './zulip-api.ts';
import type { LongPollSpec } from './longpoll-fleet.ts';
import type { WsSpec } from './ws-fleet.ts';
import type { Publisher, SenderSpec, ServerHandle } from './measure.ts';

export const CHANNEL = 'bench';
const TOPIC = 'bench';
// Enough to keep a server busy; more only lengthens each request, and on a loaded machine a
// request that waits 10 s has its connection closed under it.
const SETUP_CONCURRENCY = 6;

export class ZulipTarget {
  readonly endpoint: Endpoint;
  readonly publisher: Publisher;
  private users: Credentials[] = [];

  private constructor(
    readonly handle: ServerHandle,
    private readonly admin: Credentials,
    private readonly adminClient: ZulipClient,
  ) {
    this.endpoint = parseEndpoint(handle.url);
    this.publisher = { publish: async (content) => void (await adminClient.sendToChannel(CHANNEL, TOPIC, content)) };
  }

  static async connect(handle: ServerHandle, admin: Credentials): Promise<ZulipTarget> {
    const client = await ZulipClient.open(parseEndpoint(handle.url), admin);
    await client.subscribe(CHANNEL); // creates the channel if needed
    return new ZulipTarget(handle, admin, client);
  }

  /**
   * At least `n` users subscribed to the bench channel (or to `channelsOf(index)`, the index
   * counting the given account as 0). One user means the given account only; more are created
   * through the API (POST /users, then fetch_api_key), which needs an admin.
   */
  async ensureUsers(n: number, channelsOf: (index: number) => string[] = () => [CHANNEL]): Promise<Credentials[]> {
    if (this.users.length === 0) this.users.push(this.admin);
    const missing = n - this.users.length;
    if (missing <= 0) return this.users.slice(0, n);
    const runTag = randomBytes(4).toString('hex');
    const password = randomBytes(12).toString('hex');
    const indexes = Array.from({ length: missing }, (_, i) => i + this.users.length);
    // One connection carries one request at a time: each worker gets its own admin and anonymous one.
    const chunks = spread(indexes, SETUP_CONCURRENCY).filter((c) => c.length);
    const progress = new Progress('server: create users', missing);
    try {
      const created = await mapLimit(chunks, SETUP_CONCURRENCY, (chunk) =>
        this.asUser(this.admin, async (admin) => {
          const users: [number, Credentials][] = [];
          for (const i of chunk) {
            const email = `bench-${runTag}-${i}@bench.example.com`;
            await admin.createUser(email, password, `Bench user ${i}`);
            // A connection of its own: one kept between users sat idle long enough, on a busy
            // server, for the server to close it as the next request went out (ECONNRESET).
            const user = { email, apiKey: await this.asUser(undefined, (anonymous) => anonymous.fetchApiKey(email, password)) };
            await this.asUser(user, (client) => client.subscribe(channelsOf(i)));
            users.push([i, user]);
            progress.tick();
          }
          return users;
        }),
      );
      // In index order: the workers took the indexes round robin.
      this.users.push(
        ...created
          .flat()
          .sort((a, b) => a[0] - b[0])
          .map(([, user]) => user),
      );
    } finally {
      progress.finish();
    }
    return this.users.slice(0, n);
  }

  /**
   * The channels messages go to round robin: the bench channel alone, or `bench-0`..`bench-N-1`,
   * each followed by every given user (subscribed by the admin, through `principals`).
   */
  async ensureChannels(users: Credentials[], n: number): Promise<string[]> {
    if (n === 1) return [CHANNEL];
    const names = Array.from({ length: n }, (_, i) => `${CHANNEL}-${i}`);
    await this.asUser(this.admin, async (admin) => {
      for (const name of names)
        await admin.subscribe(
          name,
          users.map((u) => u.email),
        );
    });
    return names;
  }

  /** `count` event queues spread evenly over `users`, each user's registered on one connection. */
  async registerQueues(users: Credentials[], count: number): Promise<Queue[]> {
    const shares = evenShares(count, users.length);
    const perUser = users.map((user, i) => ({ user, n: shares[i]! }));
    const progress = new Progress('server: register queues', count);
    try {
      const lists = await mapLimit(
        perUser.filter((u) => u.n > 0),
        SETUP_CONCURRENCY,
        ({ user, n }) =>
          this.asUser(user, async (client) => {
            const queues: Queue[] = [];
            for (let i = 0; i < n; i++) {
              queues.push(await client.register());
              progress.tick();
            }
            return queues;
          }),
      );
      return lists.flat();
    } finally {
      progress.finish();
    }
  }

  /** Frees queues so they do not keep receiving (and costing) during later cases. */
  async deleteQueues(queues: Queue[]): Promise<void> {
    const byUser = new Map<Credentials, Queue[]>();
    for (const q of queues) {
      const list = byUser.get(q.user);
      if (list) list.push(q);
      else byUser.set(q.user, [q]);
    }
    await mapLimit([...byUser], SETUP_CONCURRENCY, ([user, list]) =>
      this.asUser(user, async (client) => {
        // Best effort: a queue the server already expired is gone anyway.
        for (const q of list) await client.deleteQueue(q.queueId).catch(() => undefined);
      }),
    );
  }

  private async asUser<R>(user: Credentials | undefined, fn: (client: ZulipClient) => Promise<R>): Promise<R> {
    const client = await ZulipClient.open(this.endpoint, user);
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  longPolls(queues: Queue[]): LongPollSpec[] {
    return queues.map((q) => ({
      path: (lastEventId: number) => `/api/v1/events?${formEncode({ queue_id: q.queueId, last_event_id: lastEventId })}`,
      headers: { Authorization: basicAuth(q.user) },
      lastEventId: q.lastEventId,
      endpoint: this.endpoint,
    }));
  }

  webSockets(queues: Queue[]): WsSpec[] {
    const base = this.handle.url.replace(/^http/, 'ws').replace(/\/+$/, '');
    return queues.map((q) => ({
      url: `${base}/api/v1/events/socket?${formEncode({ queue_id: q.queueId })}`,
      headers: { Authorization: basicAuth(q.user) },
    }));
  }

  /** K senders as the given users in turn; message n goes to channel n mod the channels' count. */
  senders(users: Credentials[], k: number, channels: string[] = [CHANNEL]): SenderSpec[] {
    return Array.from({ length: k }, (_, i) => ({
      headers: { ...FORM_HEADERS, Authorization: basicAuth(users[i % users.length]!) },
      request: (content: string, seq: number) => ({
        method: 'POST' as const,
        path: '/api/v1/messages',
        body: formEncode({ type: 'stream', to: channels[seq % channels.length]!, topic: TOPIC, content }),
      }),
      endpoint: this.endpoint,
    }));
  }

  /** `n` messages posted to the bench channel by the admin, for the bench to react to or flag. */
  async postMessages(n: number): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await this.adminClient.sendToChannel(CHANNEL, TOPIC, `bench target ${i}`));
    return ids;
  }

  /**
   * K reactors as the given users in turn: each adds an emoji to a message, then takes it back,
   * then moves on to the next message, so reactors with the same user never collide and every
   * message collects votes for the same emoji from several users at once.
   */
  reactors(users: Credentials[], k: number, messageIds: number[]): SenderSpec[] {
    if (k > users.length) throw new Error('react needs a user per reactor: --users at least --senders');
    return Array.from({ length: k }, (_, i) => ({
      headers: { ...FORM_HEADERS, Authorization: basicAuth(users[i]!) },
      request: (_content: string, _seq: number, own: number) => ({
        method: own % 2 === 0 ? ('POST' as const) : ('DELETE' as const),
        path: `/api/v1/messages/${messageIds[(i + Math.floor(own / 2)) % messageIds.length]!}/reactions`,
        body: formEncode({ emoji_name: 'tada' }),
      }),
      endpoint: this.endpoint,
    }));
  }

  /**
   * K connections of one user changing its read flags, as a client marking messages read as they
   * arrive (and, every other request, unread again): each marks a message read, then unread, then
   * moves on to the next message.
   */
  flaggers(user: Credentials, k: number, messageIds: number[]): SenderSpec[] {
    return Array.from({ length: k }, (_, i) => ({
      headers: { ...FORM_HEADERS, Authorization: basicAuth(user) },
      request: (_content: string, _seq: number, own: number) => ({
        method: 'POST' as const,
        path: '/api/v1/messages/flags',
        body: formEncode({ messages: [messageIds[(i + Math.floor(own / 2)) % messageIds.length]!], op: own % 2 === 0 ? 'add' : 'remove', flag: 'read' }),
      }),
      endpoint: this.endpoint,
    }));
  }

  close(): void {
    this.adminClient.close();
  }
}
