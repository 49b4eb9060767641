// A push relay for the tests, on a free loopback port: it takes token registrations (handing out
// its own device ids), records every notification request, and opens sealed payloads with the
// device keys the test gives it (the real relay cannot: only the phone holds the key). It can go
// down (its port closed) and come back on the same port.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as assert from 'uvu/assert';
import sodium from 'sodium-native';
import type { TestUser } from './server.ts';

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

/** A device as its app holds it: the key it registered, and what it sends to register it. */
export interface TestDevice {
  pushKey: Buffer;
  pushKeyId: number;
  token: string;
  tokenId: string;
}

export function newTestDevice(pushKeyId = randomBytes(4).readUInt32BE()): TestDevice {
  const token = randomBytes(16).toString('hex');
  return {
    pushKey: Buffer.concat([Buffer.from([0x31]), randomBytes(32)]),
    pushKeyId,
    token,
    tokenId: createHash('sha256').update(token).digest().subarray(0, 8).toString('base64'),
  };
}

/** The fields of POST /mobile_push/register for a first registration of `d`. */
export function registrationParams(deviceId: number, d: TestDevice, kind = 'fcm'): Record<string, unknown> {
  return {
    device_id: deviceId, token_kind: kind, push_key: d.pushKey.toString('base64'), push_key_id: d.pushKeyId,
    bouncer_public_key: 'bouncer-public-key', encrypted_push_registration: Buffer.from(`sealed ${d.token}`).toString('base64'), token_id: d.tokenId,
  };
}

/** What the phone does with a notification: opens it with its key (nonce, then the secretbox). */
export function openNotification(pushKey: Buffer, encrypted: string): Record<string, unknown> {
  const bytes = Buffer.from(encrypted, 'base64');
  const nonce = bytes.subarray(0, sodium.crypto_secretbox_NONCEBYTES);
  const sealed = bytes.subarray(sodium.crypto_secretbox_NONCEBYTES);
  const plain = Buffer.alloc(sealed.length - sodium.crypto_secretbox_MACBYTES);
  if (!sodium.crypto_secretbox_open_easy(plain, sealed, nonce, pushKey.subarray(1))) throw new Error('the notification does not open with this key');
  return JSON.parse(plain.toString('utf8'));
}

export class TestRelay {
  readonly registrations: Registration[] = [];
  readonly notifications: { realm_uuid: string; push_requests: PushRequest[] }[] = [];
  readonly legacyTests: Record<string, unknown>[] = [];
  /** Set: registrations are refused with this error code. */
  refuseWith: string | null = null;
  private nextDeviceId = 1000;
  private server: http.Server | null = null;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every push request received so far, for the relay's device ids given. */
  requestsFor(relayDeviceId: number): PushRequest[] {
    return this.notifications.flatMap((n) => n.push_requests).filter((r) => r.device_id === relayDeviceId);
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
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
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const answer = (status: number, json: Record<string, unknown>) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(json));
      if (req.method === 'POST' && req.url === '/push/e2ee/register') {
        this.registrations.push(body);
        if (this.refuseWith) return answer(400, { result: 'error', msg: 'Refused', code: this.refuseWith });
        return answer(200, { result: 'success', msg: '', device_id: this.nextDeviceId++ });
      }
      if (req.method === 'POST' && req.url === '/push/e2ee/notify') {
        this.notifications.push(body);
        return answer(200, { result: 'success', msg: '' });
      }
      if (req.method === 'POST' && req.url === '/push/test_notification') {
        this.legacyTests.push(body);
        return answer(200, { result: 'success', msg: '' });
      }
      answer(404, { result: 'error', msg: 'Not Found', code: 'NOT_FOUND' });
    });
  }
}

/** Polls `check` until it returns something, or fails after `ms`. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, ms = 15_000, what = 'the condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function newDevice(user: TestUser): Promise<number> {
  const r = await user.client.post('/register_client_device');
  assert.is(r.status, 200, r.text);
  return r.body.device_id;
}

/** The user's `devices` as a new register shows them. */
export async function devicesOf(user: TestUser): Promise<Record<string, Record<string, unknown>>> {
  const r = await user.client.post('/register', { fetch_event_types: ['device'] });
  assert.is(r.status, 200, r.text);
  await user.client.delete('/events', { queue_id: r.body.queue_id });
  return r.body.devices;
}

/** Registers `d` on a new device of `user` and waits for the relay's answer to land; returns the device id. */
export async function registered(user: TestUser, d: TestDevice): Promise<number> {
  const id = await newDevice(user);
  const r = await user.client.post('/mobile_push/register', registrationParams(id, d));
  assert.is(r.status, 200, r.text);
  await eventually(async () => ((await devicesOf(user))[id]!.push_token_id === d.tokenId ? true : undefined), 15_000, 'the relay registration');
  return id;
}
