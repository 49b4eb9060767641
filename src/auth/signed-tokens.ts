// Tokens this server hands out and later accepts without a login (temporary upload URLs, video
// call join links): the payload, readable, and an HMAC of it. The key is stored in the database
// (db/server-secrets.ts), so a token works on every node of a cluster and across restarts.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class TokenSigner {
  constructor(private readonly key: Buffer) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }

  sign(payload: string): string {
    return `${Buffer.from(payload).toString('base64url')}.${this.mac(payload).toString('base64url')}`;
  }

  /** The payload of a token signed with this key, or null for anything else. */
  verify(token: string): string | null {
    const [payloadPart, signature, extra] = token.split('.');
    if (!payloadPart || !signature || extra !== undefined) return null;
    const payload = Buffer.from(payloadPart, 'base64url').toString();
    const given = Buffer.from(signature, 'base64url');
    const expected = this.mac(payload);
    return given.length === expected.length && timingSafeEqual(given, expected) ? payload : null;
  }
}
