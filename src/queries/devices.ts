// A user's logged-in devices as register and the `device` events show them (Zulip's get_devices):
// keyed by device id, with the push registration's public parts. The push key itself never leaves.
import type { App } from '../app.ts';
import type { Device } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import { encodeTokenId } from '../push/crypto.ts';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
const tokenId = (id: bigint | null) => (id === null ? null : encodeTokenId(id));

export function formatDevice(d: Device): Record<string, unknown> {
  return {
    push_key_id: d.pushKeyId === null ? null : Number(d.pushKeyId),
    push_token_id: tokenId(d.pushTokenId),
    pending_push_token_id: tokenId(d.pendingPushTokenId),
    push_token_last_updated_timestamp: d.pushTokenLastUpdated && seconds(d.pushTokenLastUpdated),
    push_registration_error_code: d.pushRegistrationErrorCode,
  };
}

export async function userDevices(app: App, userId: number): Promise<Record<string, Record<string, unknown>>> {
  const rows = await app.prisma.device.findMany({ where: { userId }, orderBy: { id: 'asc' } });
  return Object.fromEntries(rows.map((d) => [String(d.id), formatDevice(d)]));
}

/** The user's device, read FOR UPDATE inside the caller's transaction; null when they have none of that id. */
export async function lockDevice(app: App, userId: number, deviceId: number): Promise<Device | null> {
  const locked = await app.prisma.$queryRaw<{ id: number }[]>`SELECT id FROM "Device" WHERE id = ${deviceId} AND "userId" = ${userId} FOR UPDATE`;
  return locked.length === 0 ? null : app.prisma.device.findUniqueOrThrow({ where: { id: deviceId } });
}

/** lockDevice for a request naming the device (Zulip's check_device_id). */
export async function lockedDevice(app: App, userId: number, deviceId: number): Promise<Device> {
  const device = await lockDevice(app, userId, deviceId);
  if (!device) throw badRequest('Invalid `device_id`');
  return device;
}
