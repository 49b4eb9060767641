// The Zulip apps' login flows: the app opens a login page in a browser with a one-time pad it made
// (`mobile_flow_otp`, `desktop_flow_otp`: 64 hex digits), and the login ends by handing the app its
// credentials encrypted with it, so that another app catching the hand-over learns nothing.
// Mobile: the API key XORed with the pad, in a redirect to zulip://login (Zulip's
// otp_encrypt_api_key). Desktop: the pad is an AES-256-GCM key; a one-time login token encrypted
// with it is shown for the app to decrypt and open at /accounts/login/subdomain/<token>.
import { createCipheriv, randomBytes } from 'node:crypto';
import { badRequest } from '../errors.ts';

/** Twice the API key's length: one byte of pad per character of the key. */
const OTP_PATTERN = /^[0-9a-fA-F]{64}$/;
/** Zulip's ExternalAuthResult.LOGIN_KEY_EXPIRATION_SECONDS. */
export const DESKTOP_TOKEN_SECONDS = 15;

export interface AppFlow {
  mobileOtp?: string;
  desktopOtp?: string;
}

/** Zulip's validate_otp_params: a malformed pad is refused before anything else happens. */
export function checkAppFlow(mobileOtp: string | undefined, desktopOtp: string | undefined): AppFlow {
  for (const otp of [mobileOtp, desktopOtp]) if (otp !== undefined && !OTP_PATTERN.test(otp)) throw badRequest('Invalid OTP');
  if (mobileOtp && desktopOtp) throw badRequest("Can't use both mobile_flow_otp and desktop_flow_otp together.");
  return { ...(mobileOtp ? { mobileOtp } : {}), ...(desktopOtp ? { desktopOtp } : {}) };
}

/** Each character of the key (ASCII) XORed with its byte of the pad, in hex. */
export function otpEncryptApiKey(apiKey: string, otp: string): string {
  const pad = Buffer.from(otp, 'hex');
  const key = Buffer.from(apiKey, 'latin1');
  if (key.length * 2 !== otp.length) throw new Error('the pad must be as long as the key');
  return Buffer.from(key.map((byte, i) => byte ^ pad[i]!)).toString('hex');
}

/** Where a mobile login ends: zulip://login with the encrypted key, as Zulip's create_response_for_otp_flow. */
export function mobileFlowLocation(o: { apiKey: string; otp: string; email: string; userId: number; realmUrl: string }): string {
  const query = new URLSearchParams({ otp_encrypted_api_key: otpEncryptApiKey(o.apiKey, o.otp), email: o.email, user_id: String(o.userId), realm: o.realmUrl });
  return `zulip://login?${query}`;
}

/** The desktop app's data: hex of a 12-byte IV, then the token encrypted with AES-256-GCM under the pad, then the tag. */
export function desktopFlowData(token: string, otp: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(otp, 'hex'), iv);
  return Buffer.concat([iv, cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('hex');
}
