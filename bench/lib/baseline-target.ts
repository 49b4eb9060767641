// The raw uWS baseline seen through the same interfaces as a Zulip server.
import { HttpConnection, parseEndpoint, type Endpoint } from './http-client.ts';
import type { LongPollSpec } from './longpoll-fleet.ts';
import type { WsSpec } from './ws-fleet.ts';
import type { Publisher, SenderSpec, ServerHandle } from './measure.ts';
import { ServerProcess } from './server-process.ts';

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const publishBody = (content: string) => JSON.stringify({ content });

export class BaselineTarget {
  readonly endpoint: Endpoint;
  readonly handle: ServerHandle;

  private constructor(
    readonly url: string,
    private readonly proc: ServerProcess,
    private readonly control: HttpConnection,
  ) {
    this.endpoint = parseEndpoint(url);
    this.handle = { target: 'baseline', url, pid: proc.pid, memory: () => proc.memory() };
  }

  /** `registerAnswer`: a file whose bytes answer every POST /api/v1/register. */
  static async start(registerAnswer?: string): Promise<BaselineTarget> {
    const proc = ServerProcess.start('baseline', 'bench/baseline/server.ts', registerAnswer ? [registerAnswer] : [], {}, ['--import', 'tsx']);
    try {
      const { port } = await proc.firstJsonLine(30_000);
      const url = `http://127.0.0.1:${Number(port)}`;
      return new BaselineTarget(url, proc, await HttpConnection.open(parseEndpoint(url)));
    } catch (err) {
      await proc.stop();
      throw err;
    }
  }

  longPolls(n: number): LongPollSpec[] {
    return Array.from({ length: n }, () => ({ path: () => '/poll', headers: {}, lastEventId: -1 }));
  }

  webSockets(n: number): WsSpec[] {
    const url = `${this.url.replace(/^http/, 'ws')}/ws`;
    return Array.from({ length: n }, () => ({ url, headers: {} }));
  }

  senders(k: number): SenderSpec[] {
    return Array.from({ length: k }, () => ({
      headers: JSON_HEADERS,
      request: (content: string) => ({ method: 'POST' as const, path: '/publish', body: publishBody(content) }),
    }));
  }

  readonly publisher: Publisher = {
    publish: async (content) => {
      const res = await this.control.request('POST', '/publish', JSON_HEADERS, publishBody(content));
      if (res.status !== 200) throw new Error(`baseline publish: HTTP ${res.status}`);
    },
    parked: async () => Number((await this.control.request('GET', '/parked', {})).body),
  };

  async stop(): Promise<void> {
    this.control.close();
    await this.proc.stop();
  }
}
