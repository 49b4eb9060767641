// The push relay for the tests (src/push/dev-relay.ts) on a free loopback port, recording every
// request it gets; the tests open the payloads with the keys of the devices they registered.
import { createHash, randomBytes } from 'node:crypto';
import * as assert from 'uvu/assert';
import { openNotification as open } from '../../src/push/crypto.ts';
import { DevRelay, type NotifyBody, type PushRequest, type Registration, type RelayRequest } from '../../src/push/dev-relay.ts';
import type { Test } from 'uvu';
import type { RunningServer } from '../../src/server.ts';
import { startTestServer, type TestUser } from './server.ts';

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
    device_id: deviceId,
    token_kind: kind,
    push_key: d.pushKey.toString('base64'),
    push_key_id: d.pushKeyId,
    bouncer_public_key: 'bouncer-public-key',
    encrypted_push_registration: Buffer.from(`sealed ${d.token}`).toString('base64'),
    token_id: d.tokenId,
  };
}

/** The notification as the phone holding `pushKey` reads it; fails when the key does not open it. */
export function openNotification(pushKey: Buffer, encrypted: string): Record<string, unknown> {
  const payload = open(pushKey, encrypted);
  if (payload === null) throw new Error('the notification does not open with this key');
  return payload as Record<string, unknown>;
}

export class TestRelay {
  readonly registrations: Registration[] = [];
  readonly notifications: NotifyBody[] = [];
  readonly legacyTests: Record<string, unknown>[] = [];
  private readonly relay = new DevRelay((r) => this.record(r));

  get url(): string {
    return this.relay.url;
  }

  /** Set: registrations are refused with this error code. */
  set refuseWith(code: string | null) {
    this.relay.refuseWith = code;
  }

  /** Every push request received so far, for the relay's device ids given. */
  requestsFor(relayDeviceId: number): PushRequest[] {
    return this.notifications.flatMap((n) => n.push_requests).filter((r) => r.device_id === relayDeviceId);
  }

  start(): Promise<void> {
    return this.relay.start();
  }

  /** Down: the port refuses connections until start() again. */
  stop(): Promise<void> {
    return this.relay.stop();
  }

  private record(r: RelayRequest): void {
    if (r.request === 'register') this.registrations.push(r.body);
    else if (r.request === 'notify') this.notifications.push(r.body);
    else this.legacyTests.push(r.body);
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

/** A test relay and a server that pushes to it, started before the suite and stopped after it. */
export function relayAndServer(suite: Test): { relay: TestRelay; readonly server: RunningServer } {
  const relay = new TestRelay();
  let server: RunningServer | undefined;
  suite.before(async () => {
    await relay.start();
    server = await startTestServer({ PUSH_RELAY_URL: relay.url });
  });
  suite.after(async () => {
    await server?.stop();
    await relay.stop();
  });
  return {
    relay,
    get server() {
      return server!;
    },
  };
}
