// Tokens this server hands out and later accepts without a login (temporary upload URLs, video
// call join links): the payload, readable, and an HMAC of it. The key is per process, so a token
// works on the server that issued it, until it restarts.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const key = randomBytes(32);
const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();

export function signToken(payload: string): string {
  return `${Buffer.from(payload).toString('base64url')}.${mac(payload).toString('base64url')}`;
}

/** The payload of a token this process signed, or null for anything else. */
export function verifyToken(token: string): string | null {
  const [payloadPart, signature, extra] = token.split('.');
  if (!payloadPart || !signature || extra !== undefined) return null;
  const payload = Buffer.from(payloadPart, 'base64url').toString();
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(payload);
  return given.length === expected.length && timingSafeEqual(given, expected) ? payload : null;
}
