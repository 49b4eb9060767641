// A push relay for development and tests, speaking the relay API the server posts to
// (PUSH_RELAY_URL; docs/api.md, "Push notifications"): it takes token registrations, handing out its
// own device ids, and notification requests, forwards nothing, and reports every request to its
// listener. It can open the sealed payloads only with device keys it is given: the real relay
// never has them (only the phone does). It can go down (its port closed) and come back on the
// same port.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openNotification, parsePushKey } from './crypto.ts';

export interface Registration {
  realm_uuid: string;
  token_id: string;
  token_kind: string;
  bouncer_public_key: string;
  encrypted_push_registration: string;
}

export interface PushRequest {
  device_id: number;
  fcm_priority?: string;
  http_headers?: Record<string, unknown>;
  payload: { push_key_id: number; encrypted_data: string; aps?: Record<string, unknown> };
}

export interface NotifyBody {
  realm_uuid: string;
  push_requests: PushRequest[];
}

/** A request the relay answered, with its body as received. */
export type RelayRequest =
  | { request: 'register'; body: Registration; device_id: number | null; refused: string | null }
  | { request: 'notify'; body: NotifyBody }
  | { request: 'test_notification'; body: Record<string, unknown> };

/** Device keys by push_key_id, as the phone registered them (prefix byte and key). */
export type DeviceKeys = ReadonlyMap<number, Buffer>;

export class DevRelay {
  /** Set: registrations are refused with this error code. */
  refuseWith: string | null = null;
  private nextDeviceId = 1000;
  private server: http.Server | null = null;
  private port: number;

  constructor(
    private readonly onRequest: (r: RelayRequest) => void,
    private readonly host = '127.0.0.1',
    port = 0,
  ) {
    this.port = port;
  }

  get url(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  /** Listens on the port given (any free one for 0), or on the one it had before it stopped. */
  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Down: the port refuses connections until start() again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, json: Record<string, unknown>) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(json));
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return answer(400, { result: 'error', msg: 'Malformed JSON', code: 'BAD_REQUEST' });
      }
      if (req.method === 'POST' && req.url === '/push/e2ee/register') {
        const refused = this.refuseWith;
        const deviceId = refused ? null : this.nextDeviceId++;
        this.onRequest({ request: 'register', body, device_id: deviceId, refused });
        if (refused) return answer(400, { result: 'error', msg: 'Refused', code: refused });
        return answer(200, { result: 'success', msg: '', device_id: deviceId });
      }
      if (req.method === 'POST' && req.url === '/push/e2ee/notify') {
        this.onRequest({ request: 'notify', body });
        return answer(200, { result: 'success', msg: '' });
      }
      if (req.method === 'POST' && req.url === '/push/test_notification') {
        this.onRequest({ request: 'test_notification', body });
        return answer(200, { result: 'success', msg: '' });
      }
      answer(404, { result: 'error', msg: 'Not Found', code: 'NOT_FOUND' });
    });
  }
}

/**
 * A keys file: a JSON object mapping each push_key_id to its push_key in standard Base64, as the
 * phone sent them to POST /mobile_push/register. Throws with the reason when it is not one.
 */
export function readDeviceKeys(file: string): DeviceKeys {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file}: not a JSON object of push_key_id to push_key`);
  const keys = new Map<number, Buffer>();
  for (const [id, text] of Object.entries(parsed)) {
    const keyId = Number(id);
    if (!/^\d+$/.test(id) || keyId > 0xffffffff) throw new Error(`${file}: '${id}' is not a push_key_id (an unsigned 32-bit integer)`);
    const key = typeof text === 'string' ? parsePushKey(text) : null;
    if (!key) throw new Error(`${file}: the push_key of ${id} is not a secretbox key (Base64 of 0x31 and 32 bytes)`);
    keys.set(keyId, key);
  }
  return keys;
}

/**
 * The request as one JSON object for a log line: the body, the relay's answer for a registration,
 * and each notification's payload opened when its key is known (`decrypted`), or why not (`error`).
 */
export function describeRequest(r: RelayRequest, keys: DeviceKeys): Record<string, unknown> {
  if (r.request === 'register') return { request: r.request, ...r.body, ...(r.refused ? { refused: r.refused } : { device_id: r.device_id }) };
  if (r.request === 'test_notification') return { request: r.request, ...r.body };
  const requests = Array.isArray(r.body.push_requests) ? r.body.push_requests : [];
  return {
    request: r.request,
    ...r.body,
    push_requests: requests.map((p) => {
      const keyId = p?.payload?.push_key_id;
      const key = keys.get(keyId);
      if (!key) return { ...p, error: `no key for push_key_id ${keyId}` };
      let decrypted: unknown;
      try {
        decrypted = typeof p.payload.encrypted_data === 'string' ? openNotification(key, p.payload.encrypted_data) : null;
      } catch {
        return { ...p, error: 'the payload opens to something that is not JSON' };
      }
      return decrypted === null ? { ...p, error: `the key of push_key_id ${keyId} does not open it` } : { ...p, decrypted };
    }),
  };
}
