// The few Zulip REST calls the bench needs, as the Zulip API documents them: form-encoded
// parameters (non-string values JSON-encoded), HTTP Basic auth with email:api_key.
import { HttpConnection, type Endpoint } from './http-client.ts';

export interface Credentials {
  email: string;
  apiKey: string;
}

export function basicAuth(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.email}:${c.apiKey}`).toString('base64')}`;
}

export function formEncode(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  return form.toString();
}

export const FORM_HEADERS = { 'Content-Type': 'application/x-www-form-urlencoded' };

export interface Queue {
  user: Credentials;
  queueId: string;
  lastEventId: number;
}

/** One keep-alive connection acting as one user (or anonymous, for fetch_api_key). */
export class ZulipClient {
  private constructor(
    private readonly conn: HttpConnection,
    private readonly user: Credentials | undefined,
  ) {}

  static async open(endpoint: Endpoint, user?: Credentials): Promise<ZulipClient> {
    return new ZulipClient(await HttpConnection.open(endpoint), user);
  }

  async call(method: 'GET' | 'POST' | 'DELETE', path: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = this.user ? { Authorization: basicAuth(this.user) } : {};
    const form = formEncode(params);
    const res =
      method === 'GET'
        ? await this.conn.request(method, form ? `${path}?${form}` : path, headers)
        : await this.conn.request(method, path, { ...headers, ...FORM_HEADERS }, form);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      throw new Error(`${method} ${path}: HTTP ${res.status}, not JSON: ${res.body.slice(0, 200)}`);
    }
    if (res.status !== 200 || body.result !== 'success') {
      throw new Error(`${method} ${path}: HTTP ${res.status} ${String(body.code ?? '')} ${String(body.msg ?? '')}`);
    }
    return body;
  }

  async register(): Promise<Queue> {
    // Only message events, raw content: the bench reads its token back out of each message.
    const body = await this.call('POST', '/api/v1/register', { event_types: ['message'], apply_markdown: false });
    return { user: this.user!, queueId: String(body.queue_id), lastEventId: Number(body.last_event_id) };
  }

  /** Subscribes this user, or (an administrator) the `principals` given by email; creates the channels if needed. */
  async subscribe(channels: string | string[], principals?: string[]): Promise<void> {
    const subscriptions = (typeof channels === 'string' ? [channels] : channels).map((name) => ({ name }));
    await this.call('POST', '/api/v1/users/me/subscriptions', { subscriptions, ...(principals ? { principals } : {}) });
  }

  /** Returns the new message's id. */
  async sendToChannel(channel: string, topic: string, content: string): Promise<number> {
    return Number((await this.call('POST', '/api/v1/messages', { type: 'stream', to: channel, topic, content })).id);
  }

  /** Needs an account allowed to create users (an administrator). */
  async createUser(email: string, password: string, fullName: string): Promise<void> {
    await this.call('POST', '/api/v1/users', { email, password, full_name: fullName });
  }

  async fetchApiKey(email: string, password: string): Promise<string> {
    const body = await this.call('POST', '/api/v1/fetch_api_key', { username: email, password });
    return String(body.api_key);
  }

  async deleteQueue(queueId: string): Promise<void> {
    await this.call('DELETE', '/api/v1/events', { queue_id: queueId });
  }

  close(): void {
    this.conn.close();
  }
}
