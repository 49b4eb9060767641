// The push worker: drains the push outbox (prisma PushOutbox, written by actions in the
// transactions that cause the work) to the push relay at PUSH_RELAY_URL. It runs under a
// DeliveryScheduler (src/scheduler.ts): woken after a commit that queued work, when a retry falls
// due, and every POLL_MS for work another process queued or left behind; stopped at server close
// after the batch in progress.
//
// Rows are claimed as src/db/outbox.ts does for every such queue: a lease longer than the relay's
// timeout, so several processes drain one database without sending a row twice at once.
// A relay that is down or failing (network error, 5xx) costs nothing: the rows wait with growing
// backoff and go when it answers again; a row older than GIVE_UP_MS is dropped (a day-old
// notification helps nobody; a registration then fails with REQUEST_EXPIRED, as in Zulip).
// Relay requests: POST /push/e2ee/register and /push/e2ee/notify, /push/test_notification for
// legacy tokens (docs/api.md, "Push notifications"). Keys and tokens are never logged.
import type { App } from '../app.ts';
import { completePushRegistration, failPushRegistration, type TokenKind } from '../actions/devices.ts';
import type { Device } from '../db/generated/client.ts';
import { errorText, log } from '../log.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { realmUuid } from '../queries/register.ts';
import { encryptNotification } from './crypto.ts';
import { legacyBasePayload, messagePayload, removalPayload, testPayload, type Payload } from './payloads.ts';
import { pushRecipients } from './recipients.ts';
import { backoff, claimDue, nextLook, removeDone, retryLater } from '../db/outbox.ts';
import { FLAG_BITS, PUSH_NOTIFIED } from '../domain/message-flags.ts';

const BATCH = 100;
/** Longer than a relay request may take, so a live worker never loses its claim. */
const LEASE_MS = 60_000;
const RELAY_TIMEOUT_MS = 10_000;
const POLL_MS = 10_000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 10 * 60_000;
const GIVE_UP_MS = 24 * 3600_000;

interface OutboxRow {
  id: number;
  kind: string;
  realmId: number;
  userId: number | null;
  messageId: number | null;
  data: Record<string, unknown>;
  attempts: number;
  createdAt: Date;
}

/** What became of a row: sent (or nothing left to send), or to be tried again later. */
type Outcome = 'done' | 'retry';

interface RelayAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The relay could not be reached, or failed: worth trying again later. */
class RelayUnavailable extends Error {}

async function postToRelay(app: App, path: string, body: unknown): Promise<RelayAnswer> {
  let response: Response;
  try {
    response = await fetch(`${app.config.PUSH_RELAY_URL}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(RELAY_TIMEOUT_MS),
    });
  } catch (err) {
    throw new RelayUnavailable(errorText(err));
  }
  const text = await response.text().catch(() => '');
  if (response.status >= 500 || response.status === 429) throw new RelayUnavailable(`status ${response.status}`);
  let parsed: unknown = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // A body that is not JSON says nothing more than its status.
  }
  return { status: response.status, body: parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {} };
}

const retryDelay = (attempts: number) => backoff(attempts, FIRST_RETRY_MS, MAX_RETRY_MS);

const claim = (app: App) => claimDue<OutboxRow>(app, 'PushOutbox', 'id, kind, "realmId", "userId", "messageId", data, attempts, "createdAt"', BATCH, LEASE_MS);

/** Sends what is due; resolves to when to look again. */
export async function drainPushOutbox(app: App): Promise<Date | null> {
  for (;;) {
    if (app.pushes.stopping) return null;
    const rows = await claim(app);
    if (rows.length === 0) break;
    let unavailable = false;
    for (const [i, row] of rows.entries()) {
      if (app.pushes.stopping) {
        await retryLater(
          app,
          'PushOutbox',
          rows.slice(i).map((r) => r.id),
          0,
        );
        return null;
      }
      if (unavailable) {
        // The relay just failed: the rest of the batch waits too, without a request each.
        await retryLater(app, 'PushOutbox', [row.id], retryDelay(row.attempts));
        continue;
      }
      let outcome: Outcome | 'failed';
      try {
        outcome = await handle(app, row);
      } catch (err) {
        // A fault of this row (a bug, the database) must not hold up the others.
        log.error('push work failed; retrying later', { id: row.id, kind: row.kind, error: err instanceof Error ? err.stack : String(err) });
        outcome = 'failed';
      }
      if (outcome === 'done') await removeDone(app, 'PushOutbox', [row.id]);
      else {
        unavailable ||= outcome === 'retry';
        await retryLater(app, 'PushOutbox', [row.id], retryDelay(row.attempts));
      }
    }
    if (unavailable) break;
  }
  return nextLook(app, 'PushOutbox', POLL_MS);
}

async function handle(app: App, row: OutboxRow): Promise<Outcome> {
  const realm = app.realms.byId(row.realmId);
  if (!realm) return 'done';
  const expired = Date.now() - row.createdAt.getTime() > GIVE_UP_MS;
  try {
    if (expired) {
      log.warn('push work given up after a day of failures', { id: row.id, kind: row.kind });
      if (row.kind === 'register') await failRegistration(app, realm, row, 'REQUEST_EXPIRED');
      return 'done';
    }
    switch (row.kind) {
      case 'message':
        return await sendMessageNotifications(app, realm, row.messageId!);
      case 'remove':
        return await sendToDevices(app, realm, row.userId!, null, removalPayload(app, realm, row.userId!, row.data.message_ids as number[]), 'remove');
      case 'test':
        return await sendToDevices(app, realm, row.userId!, (row.data.device_id as number | null) ?? null, testPayload(app, realm, row.userId!), 'test');
      case 'legacy_test':
        return await sendLegacyTest(app, realm, row);
      case 'register':
        return await registerWithRelay(app, realm, row);
      default:
        log.error('unknown push work dropped', { id: row.id, kind: row.kind });
        return 'done';
    }
  } catch (err) {
    if (!(err instanceof RelayUnavailable)) throw err;
    log.warn('push relay unavailable; retrying later', { id: row.id, kind: row.kind, attempts: row.attempts, error: err.message });
    return 'retry';
  }
}

/** Devices that can receive notifications: a key, and a token the relay registered. */
function activeDevices(app: App, userIds: number[], deviceId: number | null = null): Promise<Device[]> {
  return app.prisma.device.findMany({
    where: {
      userId: { in: userIds },
      relayDeviceId: { not: null },
      pushKey: { not: null },
      pushKeyId: { not: null },
      ...(deviceId === null ? {} : { id: deviceId }),
    },
    orderBy: { id: 'asc' },
  });
}

type Purpose = 'message' | 'remove' | 'test';

/** One notification for one device, in the relay's request format (Zulip's push_requests). */
function pushRequest(device: Device, payload: Payload, purpose: Purpose): Record<string, unknown> {
  const sealed = { push_key_id: Number(device.pushKeyId), encrypted_data: encryptNotification(device.pushKey!, payload) };
  const background = purpose === 'remove';
  if ((device.pushTokenKind as TokenKind) === 'apns') {
    return {
      device_id: Number(device.relayDeviceId),
      http_headers: background ? { apns_priority: 5, apns_push_type: 'background' } : { apns_priority: 10, apns_push_type: 'alert' },
      payload: { ...sealed, aps: background ? { 'content-available': 1 } : { 'mutable-content': 1, alert: { title: 'New notification' } } },
    };
  }
  return { device_id: Number(device.relayDeviceId), fcm_priority: background ? 'normal' : 'high', payload: sealed };
}

async function notify(app: App, realm: RealmInfo, requests: Record<string, unknown>[]): Promise<Outcome> {
  if (requests.length === 0) return 'done';
  const answer = await postToRelay(app, '/push/e2ee/notify', { realm_uuid: realmUuid(realm), push_requests: requests });
  // A refusal will not change on a retry: the notification is dropped, and said so.
  if (answer.status >= 400) log.warn('push relay refused notifications', { status: answer.status, code: answer.body.code, count: requests.length });
  return 'done';
}

async function sendToDevices(app: App, realm: RealmInfo, userId: number, deviceId: number | null, payload: Payload, purpose: Purpose): Promise<Outcome> {
  const devices = await activeDevices(app, [userId], deviceId);
  return notify(
    app,
    realm,
    devices.map((d) => pushRequest(d, payload, purpose)),
  );
}

/**
 * A new message: its recipients who should hear of it get a notification on each of their
 * devices, and the message is marked as shown there (to withdraw it when read or deleted). A
 * recipient who read it meanwhile is skipped, also when this runs again after a relay failure.
 */
async function sendMessageNotifications(app: App, realm: RealmInfo, messageId: number): Promise<Outcome> {
  const message = await app.prisma.message.findUnique({
    where: { id: messageId },
    include: { sender: true, channel: { select: { name: true } }, directGroup: { select: { memberKey: true } } },
  });
  if (!message) return 'done';
  const recipients = await pushRecipients(app, realm, message);
  if (recipients.length === 0) return 'done';
  const marked = await app.prisma.$queryRawUnsafe<{ userId: number }[]>(
    `UPDATE "UserMessage" SET flags = flags | ${PUSH_NOTIFIED} WHERE "messageId" = $1 AND "userId" = ANY($2::int[]) AND (flags & ${FLAG_BITS.read}) = 0 RETURNING "userId"`,
    messageId,
    recipients.map((r) => r.user.id),
  );
  const unread = new Set(marked.map((r) => r.userId));
  const devices = await activeDevices(app, [...unread]);
  const notified = {
    message,
    sender: message.sender,
    channelName: message.channel?.name ?? null,
    directMembers: message.directGroup ? message.directGroup.memberKey.split(',').map(Number) : null,
  };
  const requests = recipients
    .filter((r) => unread.has(r.user.id))
    .flatMap((r) => {
      const payload = messagePayload(app, realm, r.user.id, notified, r.group);
      return devices.filter((d) => d.userId === r.user.id).map((d) => pushRequest(d, payload, 'message'));
    });
  return notify(app, realm, requests);
}

async function sendLegacyTest(app: App, realm: RealmInfo, row: OutboxRow): Promise<Outcome> {
  const answer = await postToRelay(app, '/push/test_notification', {
    realm_uuid: realmUuid(realm),
    user_id: row.userId,
    token: row.data.token,
    token_kind: row.data.token_kind,
    base_payload: legacyBasePayload(app, realm, row.userId!),
  });
  if (answer.status >= 400) log.warn('push relay refused a test notification', { status: answer.status, code: answer.body.code });
  return 'done';
}

async function failRegistration(app: App, realm: RealmInfo, row: OutboxRow, code: string): Promise<void> {
  if (code === 'REQUEST_EXPIRED') log.error('push registration request expired', { device_id: row.data.device_id });
  await failPushRegistration(app, realm, row.userId!, row.data.device_id as number, row.data.token_id as string, code);
}

/** Hands a device's token registration (encrypted for the relay) to the relay. */
async function registerWithRelay(app: App, realm: RealmInfo, row: OutboxRow): Promise<Outcome> {
  const { device_id: deviceId, token_id: tokenId, token_kind, bouncer_public_key, encrypted_push_registration } = row.data;
  const answer = await postToRelay(app, '/push/e2ee/register', {
    realm_uuid: realmUuid(realm),
    token_id: tokenId,
    token_kind,
    bouncer_public_key,
    encrypted_push_registration,
  });
  const relayDeviceId = answer.body.device_id;
  if (answer.status < 300 && typeof relayDeviceId === 'number') {
    await completePushRegistration(app, realm, row.userId!, deviceId as number, tokenId as string, relayDeviceId);
  } else {
    await failRegistration(app, realm, row, typeof answer.body.code === 'string' ? answer.body.code : 'BAD_REQUEST');
  }
  return 'done';
}
