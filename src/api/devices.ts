// Devices and mobile push: POST /register_client_device, POST /remove_client_device,
// POST /mobile_push/register (spec 4.4), the legacy token routes and the test notifications.
import { registerDevice, registerPushDevice, removeDevice, TOKEN_KINDS } from '../actions/devices.ts';
import { addLegacyToken, removeLegacyToken, sendLegacyTestNotification, sendTestNotification, type LegacyTokenKind } from '../actions/push-tokens.ts';
import { invalidArgument } from '../errors.ts';
import { choice, int, str } from '../http/params.ts';
import { z } from 'zod';
import { userRoute } from './route.ts';

const UINT32_MAX = 2 ** 32 - 1;

/** Zulip's uint32_validator, in its words. */
function checkPushKeyId(value: number | undefined): number | undefined {
  if (value !== undefined && (value < 0 || value > UINT32_MAX)) {
    throw invalidArgument('Invalid push_key_id: Value error, Not a valid unsigned 32-bit integer', 'push_key_id');
  }
  return value;
}

/** Zulip's ApnsAppId: a bundle id. */
const appId = str(z.string().regex(/^[.a-zA-Z0-9-]+$/, 'Invalid app ID'));

const legacyTokenRoutes = (path: string, kind: LegacyTokenKind) => [
  userRoute({
    method: 'POST',
    path,
    params: kind === 'apns' ? { token: str(), appid: appId } : { token: str() },
    response: z.object({}),
    async handler({ app, user, params }) {
      await addLegacyToken(app, user, kind, params.token, 'appid' in params ? (params.appid as string) : null);
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path,
    params: { token: str() },
    response: z.object({}),
    async handler({ app, user, params }) {
      await removeLegacyToken(app, user, kind, params.token);
      return {};
    },
  }),
];

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/register_client_device',
    params: {},
    response: z.object({ device_id: z.number().int() }),
    async handler({ app, realm, user }) {
      return { device_id: await registerDevice(app, realm, user) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/remove_client_device',
    params: { device_id: int() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await removeDevice(app, realm, user, params.device_id);
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/mobile_push/register',
    params: {
      device_id: int(),
      token_kind: choice(TOKEN_KINDS).optional(),
      push_key: str().optional(),
      push_key_id: int().optional(),
      bouncer_public_key: str().optional(),
      encrypted_push_registration: str().optional(),
      token_id: str().optional(),
    },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await registerPushDevice(app, realm, user, {
        deviceId: params.device_id,
        tokenKind: params.token_kind,
        pushKey: params.push_key,
        pushKeyId: checkPushKeyId(params.push_key_id),
        bouncerPublicKey: params.bouncer_public_key,
        encryptedPushRegistration: params.encrypted_push_registration,
        tokenId: params.token_id,
      });
      return {};
    },
  }),
  ...legacyTokenRoutes('/api/v1/users/me/apns_device_token', 'apns'),
  ...legacyTokenRoutes('/api/v1/users/me/android_gcm_reg_id', 'fcm'),
  userRoute({
    method: 'POST',
    path: '/api/v1/mobile_push/test_notification',
    params: { token: str().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await sendLegacyTestNotification(app, realm, user, params.token);
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/mobile_push/e2ee/test_notification',
    params: { device_id: int().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await sendTestNotification(app, realm, user, params.device_id);
      return {};
    },
  }),
];
