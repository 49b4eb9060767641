// JSON web tokens an organization's own identity service signs (Zulip's JWT_AUTH_KEYS): checked
// with the organization's key and only the algorithms it allows, expiry and not-before included.
import { errors, importSPKI, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../config.ts';
import { badRequest } from '../errors.ts';

export interface JwtKey {
  key: string;
  algorithms: string[];
}

/** The token's claims, or null when it is not one this key signed (bad signature, expired, malformed). */
export async function verifyJwt(jwt: JwtKey, token: string): Promise<JWTPayload | null> {
  try {
    const verify = async (algorithm: string) => {
      const key = algorithm.startsWith('HS') ? new TextEncoder().encode(jwt.key) : await importSPKI(jwt.key, algorithm);
      return (await jwtVerify(token, key, { algorithms: [algorithm] })).payload;
    };
    // A PEM key is imported for one algorithm, so each allowed one is tried on the token's own.
    const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { alg?: unknown };
    if (typeof header.alg !== 'string' || !jwt.algorithms.includes(header.alg)) return null;
    return await verify(header.alg);
  } catch (err) {
    if (err instanceof errors.JOSEError || err instanceof SyntaxError || err instanceof TypeError) return null;
    throw err;
  }
}

/**
 * Zulip's get_email_and_realm_from_jwt_authentication_request: the address the organization's
 * token names (its `email` claim) and the name it gives, or Zulip's error.
 */
export async function jwtIdentity(config: Config, subdomain: string, token: string): Promise<{ email: string; name: string }> {
  const jwt = config.JWT_AUTH_KEYS[subdomain];
  if (!jwt) throw badRequest('JWT authentication is not enabled for this organization');
  if (!token) throw badRequest('No JSON web token passed in request');
  const claims = await verifyJwt(jwt, token);
  if (!claims) throw badRequest('Bad JSON web token');
  if (typeof claims.email !== 'string') throw badRequest('No email specified in JSON web token claims');
  return { email: claims.email, name: typeof claims.name === 'string' ? claims.name : '' };
}
