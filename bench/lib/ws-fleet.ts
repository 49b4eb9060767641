// N WebSocket clients: record every event frame and ack it ({"last_event_id": N}, as the gateway
// expects; the baseline ignores acks, so both servers read the same traffic).
import WebSocket from 'ws';
import { mapLimit } from './concurrency.ts';
import { type DeliveryTracker, ErrorLog, eventsOf } from './deliveries.ts';
import { Progress } from './progress.ts';
import { scaledTimeout } from './server-process.ts';

export interface WsSpec {
  url: string;
  headers: Record<string, string>;
}

const CONNECT_CONCURRENCY = 200;
const CONNECT_TIMEOUT_MS = 15_000;

export class WsFleet {
  readonly errors = new ErrorLog();
  private sockets: WebSocket[] = [];
  private closed = false;

  constructor(private readonly tracker: DeliveryTracker) {}

  get open(): number {
    return this.sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length;
  }

  async connect(specs: WsSpec[], label: string): Promise<void> {
    const progress = new Progress(`${label}: connect`, specs.length);
    this.sockets = await mapLimit(
      specs,
      CONNECT_CONCURRENCY,
      (spec) => this.openOne(spec),
      () => progress.tick(),
    );
    progress.finish();
  }

  close(): void {
    this.closed = true;
    for (const ws of this.sockets) ws.terminate();
    this.sockets = [];
  }

  private openOne(spec: WsSpec): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(spec.url, { headers: spec.headers, perMessageDeflate: false, handshakeTimeout: scaledTimeout(CONNECT_TIMEOUT_MS) });
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        reject(new Error(`WebSocket upgrade refused: HTTP ${res.statusCode} ${spec.url}`));
        ws.terminate();
      });
      ws.on('error', (err) => {
        reject(err);
        if (!this.closed) this.errors.add(err);
      });
      ws.on('close', (code) => {
        if (!this.closed && code !== 1000) this.errors.add(`WebSocket closed by server: code ${code}`);
      });
      ws.on('message', (data, isBinary) => {
        const at = performance.now();
        if (isBinary) return;
        try {
          const maxId = this.tracker.record(eventsOf(JSON.parse(data.toString())), at);
          if (maxId >= 0) ws.send(JSON.stringify({ last_event_id: maxId }));
        } catch (err) {
          this.errors.add(err);
        }
      });
    });
  }
}
