// Logged-in devices and their E2EE push registrations (Zulip's actions/devices.py,
// actions/push_notifications.py and views/push_notifications.py register_push_device): a device
// is made by POST /register_client_device; POST /mobile_push/register gives it a push key and an
// FCM/APNs token, whose registration the push relay completes later (the `register` work of the
// push outbox, src/push/worker.ts). Each change is announced to the user's clients as a `device`
// event; the push key never leaves the database.
import type { App } from '../app.ts';
import { requireHuman } from '../auth/policy.ts';
import type { Device, User } from '../db/generated/client.ts';
import { ApiError, badRequest } from '../errors.ts';
import { decodeBase64, encodeTokenId, parsePushKey, tokenIdOf } from '../push/crypto.ts';
import { lockDevice, lockedDevice } from '../queries/devices.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { enqueuePush } from './push-outbox.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { EventOf } from '../events/schemas.ts';

export const TOKEN_KINDS = ['fcm', 'apns'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** What an update tells of a device besides its id. */
type DeviceChange = Omit<EventOf<'device', 'update'>, 'type' | 'op' | 'device_id'>;

function sendDeviceEvent(realm: RealmInfo, user: User, op: 'add' | 'remove' | 'update', deviceId: number, fields: DeviceChange = {}): void {
  const event: EventOf<'device'> = op === 'update' ? { type: 'device', op, device_id: deviceId, ...fields } : { type: 'device', op, device_id: deviceId };
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event });
}

/** POST /register_client_device. */
export async function registerDevice(app: App, realm: RealmInfo, user: User): Promise<number> {
  return atomic(app, async () => {
    const device = await app.prisma.device.create({ data: { userId: user.id } });
    sendDeviceEvent(realm, user, 'add', device.id);
    return device.id;
  });
}

/** POST /remove_client_device. */
export async function removeDevice(app: App, realm: RealmInfo, user: User, deviceId: number): Promise<void> {
  await atomic(app, async () => {
    await lockedDevice(app, user.id, deviceId);
    await app.prisma.device.delete({ where: { id: deviceId } });
    sendDeviceEvent(realm, user, 'remove', deviceId);
  });
}

export const pushServiceNotConfigured = () => new ApiError('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED', 400);

export interface PushRegistrationRequest {
  deviceId: number;
  pushKey?: string;
  pushKeyId?: number;
  tokenKind?: TokenKind;
  tokenId?: string;
  bouncerPublicKey?: string;
  encryptedPushRegistration?: string;
}

type TokenFields = Required<Pick<PushRegistrationRequest, 'tokenKind' | 'tokenId' | 'bouncerPublicKey' | 'encryptedPushRegistration'>>;

function checkPushKey(text: string): Buffer {
  const key = parsePushKey(text);
  if (!key) throw badRequest('Invalid `push_key`');
  return key;
}

function checkTokenId(text: string): bigint {
  const bytes = decodeBase64(text);
  if (!bytes) throw badRequest('`token_id` is not Base64 encoded');
  // Zulip keeps the 8 bytes in a 64-bit column; anything else is no token id.
  if (bytes.length !== 8) throw badRequest('Invalid `token_id`');
  return bytes.readBigInt64BE();
}

const sameKey = (device: Device, key: Buffer, keyId: number) =>
  device.pushKeyId === BigInt(keyId) && device.pushKey !== null && key.equals(Buffer.from(device.pushKey));

/**
 * POST /mobile_push/register: both the push key fields and the token fields register the device;
 * the key fields alone rotate its key, the token fields alone its token. A new token goes to the
 * relay in the background; until it answers, the device's token is pending.
 */
export async function registerPushDevice(app: App, realm: RealmInfo, user: User, req: PushRegistrationRequest): Promise<void> {
  requireHuman(user);
  if (!app.config.PUSH_RELAY_URL) throw pushServiceNotConfigured();
  await atomic(app, async () => {
    const device = await lockedDevice(app, user.id, req.deviceId);
    const keyFields = req.pushKey !== undefined && req.pushKeyId !== undefined ? { pushKey: req.pushKey, pushKeyId: req.pushKeyId } : null;
    const { tokenKind, tokenId, bouncerPublicKey, encryptedPushRegistration } = req;
    const tokenFields: TokenFields | null =
      tokenKind !== undefined && tokenId !== undefined && bouncerPublicKey !== undefined && encryptedPushRegistration !== undefined
        ? { tokenKind, tokenId, bouncerPublicKey, encryptedPushRegistration }
        : null;
    if (!keyFields && !tokenFields) throw badRequest('Missing parameters: must provide either all push key fields, all token fields, or both.');
    if (keyFields && !tokenFields) {
      if (device.pushKeyId === null) throw badRequest('No push registration exists to rotate key for.');
      await rotatePushKey(app, realm, user, device, checkPushKey(keyFields.pushKey), keyFields.pushKeyId);
      return;
    }
    // One registration at a time goes to the relay, so their answers cannot cross.
    if (device.pushRegistrationErrorCode === null && device.pendingPushTokenId !== null) throw badRequest('A registration for the device already in progress.');
    const token = tokenFields!;
    const tokenIdValue = checkTokenId(token.tokenId);
    if (!keyFields) {
      if (device.pushKeyId === null) throw badRequest('No push registration exists to rotate token for.');
      if (device.pushRegistrationErrorCode === null && device.pushTokenId === tokenIdValue) return;
      await rotateToken(app, realm, user, device, tokenIdValue, token.tokenId);
    } else {
      const key = checkPushKey(keyFields.pushKey);
      const unchanged =
        device.pushRegistrationErrorCode === null &&
        sameKey(device, key, keyFields.pushKeyId) &&
        device.pushTokenId === tokenIdValue &&
        device.pushTokenKind === token.tokenKind;
      if (unchanged) return;
      const now = new Date();
      await app.prisma.device.update({
        where: { id: device.id },
        data: {
          pushKey: new Uint8Array(key),
          pushKeyId: keyFields.pushKeyId,
          pendingPushTokenId: tokenIdValue,
          pushTokenKind: token.tokenKind,
          pushTokenLastUpdated: now,
          pushRegistrationErrorCode: null,
        },
      });
      sendDeviceEvent(realm, user, 'update', device.id, {
        push_key_id: keyFields.pushKeyId,
        pending_push_token_id: token.tokenId,
        push_token_last_updated_timestamp: seconds(now),
        push_registration_error_code: null,
      });
    }
    await enqueuePush(app, {
      kind: 'register',
      realmId: realm.id,
      userId: user.id,
      data: {
        device_id: device.id,
        token_id: token.tokenId,
        token_kind: token.tokenKind,
        bouncer_public_key: token.bouncerPublicKey,
        encrypted_push_registration: token.encryptedPushRegistration,
      },
    });
  });
}

async function rotatePushKey(app: App, realm: RealmInfo, user: User, device: Device, key: Buffer, keyId: number): Promise<void> {
  if (sameKey(device, key, keyId)) return;
  await app.prisma.device.update({ where: { id: device.id }, data: { pushKey: new Uint8Array(key), pushKeyId: keyId } });
  sendDeviceEvent(realm, user, 'update', device.id, { push_key_id: keyId });
}

async function rotateToken(app: App, realm: RealmInfo, user: User, device: Device, tokenId: bigint, tokenIdText: string): Promise<void> {
  const now = new Date();
  await app.prisma.device.update({
    where: { id: device.id },
    data: { pendingPushTokenId: tokenId, pushTokenLastUpdated: now, pushRegistrationErrorCode: null },
  });
  sendDeviceEvent(realm, user, 'update', device.id, {
    pending_push_token_id: tokenIdText,
    push_token_last_updated_timestamp: seconds(now),
    push_registration_error_code: null,
  });
}

/**
 * The relay registered the device's pending token (the `register` work of the push outbox): it
 * becomes the device's token, and the user's legacy registrations of the same token go, since the
 * device now gets encrypted notifications instead. Stale answers (the device was removed, or its
 * pending token changed) change nothing.
 */
export async function completePushRegistration(
  app: App,
  realm: RealmInfo,
  userId: number,
  deviceId: number,
  tokenIdText: string,
  relayDeviceId: number,
): Promise<void> {
  await atomic(app, async () => {
    const device = await currentRegistration(app, userId, deviceId, tokenIdText);
    if (!device) return;
    await app.prisma.device.update({ where: { id: deviceId }, data: { pushTokenId: device.pendingPushTokenId, pendingPushTokenId: null, relayDeviceId } });
    const legacy = await app.prisma.pushDeviceToken.findMany({ where: { userId }, select: { id: true, token: true } });
    const matching = legacy.filter((t) => tokenIdOf(t.token) === device.pendingPushTokenId).map((t) => t.id);
    if (matching.length) await app.prisma.pushDeviceToken.deleteMany({ where: { id: { in: matching } } });
    sendOnCommit({
      realmId: realm.id,
      userIds: [userId],
      event: { type: 'device', op: 'update', device_id: deviceId, push_token_id: tokenIdText, pending_push_token_id: null },
    });
  });
}

/**
 * The relay refused the registration for good (its error code, as Zulip stores it:
 * INVALID_BOUNCER_PUBLIC_KEY, BAD_REQUEST for an unreadable registration, REQUEST_EXPIRED when it
 * never got through in time); the client may register again.
 */
export async function failPushRegistration(app: App, realm: RealmInfo, userId: number, deviceId: number, tokenIdText: string, code: string): Promise<void> {
  await atomic(app, async () => {
    const device = await currentRegistration(app, userId, deviceId, tokenIdText);
    if (!device) return;
    await app.prisma.device.update({ where: { id: deviceId }, data: { pushRegistrationErrorCode: code } });
    sendOnCommit({ realmId: realm.id, userIds: [userId], event: { type: 'device', op: 'update', device_id: deviceId, push_registration_error_code: code } });
  });
}

/** The device, locked, if this token is still the one waiting for the relay. */
async function currentRegistration(app: App, userId: number, deviceId: number, tokenIdText: string): Promise<Device | null> {
  const device = await lockDevice(app, userId, deviceId);
  const pending = device?.pendingPushTokenId ?? null;
  return device && pending !== null && encodeTokenId(pending) === tokenIdText && device.pushRegistrationErrorCode === null ? device : null;
}
