// JSON web tokens an organization's own identity service signs (Zulip's JWT_AUTH_KEYS): checked
// with the organization's key and only the algorithms it allows, expiry and not-before included.
import { errors, importSPKI, jwtVerify, type JWTPayload } from 'jose';

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
