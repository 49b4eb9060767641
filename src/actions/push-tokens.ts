// Legacy push registrations and test notifications (Zulip's views/push_notifications.py):
// POST/DELETE /users/me/apns_device_token and /users/me/android_gcm_reg_id keep a user's
// unencrypted FCM/APNs tokens, superseded by E2EE devices (actions/devices.ts), which remove the
// matching legacy token once registered; POST /mobile_push/test_notification and
// /mobile_push/e2ee/test_notification queue a test notification for the push worker.
import type { App } from '../app.ts';
import { requireHuman } from '../auth/policy.ts';
import type { User } from '../db/generated/client.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { enqueuePush } from './push-outbox.ts';
import { atomic } from './transaction.ts';

/** Zulip's PushDeviceToken kinds. */
export const TOKEN_KIND = { apns: 1, fcm: 2 } as const;
export type LegacyTokenKind = keyof typeof TOKEN_KIND;

const MAX_TOKEN_LENGTH = 4096;

/** Zulip's validate_token: APNs tokens are hex. */
function checkToken(token: string, kind: LegacyTokenKind): void {
  if (token === '' || token.length > MAX_TOKEN_LENGTH) throw badRequest('Empty or invalid length token');
  if (kind === 'apns' && !/^\s*(?:[0-9a-fA-F]{2}\s*)*$/.test(token)) throw badRequest('Invalid APNS token');
}

/** POST /users/me/apns_device_token and /users/me/android_gcm_reg_id: a second registration refreshes the first. */
export async function addLegacyToken(app: App, user: User, kind: LegacyTokenKind, token: string, iosAppId: string | null): Promise<void> {
  requireHuman(user);
  checkToken(token, kind);
  const key = { userId_kind_token: { userId: user.id, kind: TOKEN_KIND[kind], token } };
  await app.prisma.pushDeviceToken.upsert({
    where: key,
    create: { userId: user.id, kind: TOKEN_KIND[kind], token, iosAppId },
    update: { iosAppId, lastUpdated: new Date() },
  });
}

const deviceNotRecognized = () => new ApiError('Device not recognized', 'INVALID_PUSH_DEVICE_TOKEN', 400);

/** DELETE of the same routes. */
export async function removeLegacyToken(app: App, user: User, kind: LegacyTokenKind, token: string): Promise<void> {
  requireHuman(user);
  checkToken(token, kind);
  const { count } = await app.prisma.pushDeviceToken.deleteMany({ where: { userId: user.id, kind: TOKEN_KIND[kind], token } });
  if (count === 0) throw deviceNotRecognized();
}

/** POST /mobile_push/test_notification: to the legacy token named, or to all of the user's. */
export async function sendLegacyTestNotification(app: App, realm: RealmInfo, user: User, token: string | undefined): Promise<void> {
  requireHuman(user);
  const tokens = await app.prisma.pushDeviceToken.findMany({ where: { userId: user.id, ...(token === undefined ? {} : { token }) }, orderBy: { id: 'asc' } });
  if (token !== undefined && tokens.length === 0) throw deviceNotRecognized();
  await atomic(app, () =>
    enqueuePush(
      app,
      ...tokens.map((t) => ({ kind: 'legacy_test' as const, realmId: realm.id, userId: user.id, data: { token: t.token, token_kind: t.kind } })),
    ),
  );
}

/** POST /mobile_push/e2ee/test_notification: to the device named, or to every device that can get notifications. */
export async function sendTestNotification(app: App, realm: RealmInfo, user: User, deviceId: number | undefined): Promise<void> {
  requireHuman(user);
  const devices = await app.prisma.device.count({
    where: { userId: user.id, pushTokenId: { not: null }, ...(deviceId === undefined ? {} : { id: deviceId }) },
  });
  if (devices === 0) throw new ApiError('No active registered push device', 'NO_ACTIVE_PUSH_DEVICE', 400);
  await atomic(app, () => enqueuePush(app, { kind: 'test', realmId: realm.id, userId: user.id, data: { device_id: deviceId ?? null } }));
}
