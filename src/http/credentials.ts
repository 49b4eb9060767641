// HTTP Basic credentials to a user, for the router and the WebSocket gateway alike. Wrong
// credentials count against the client address's budget (the per-IP rate limit); once an address
// has spent it, its wrong credentials get 429 instead of 401. Right credentials always pass: as in
// Zulip, which never refuses a valid API key for failures of others, one bad client behind a NAT
// or proxy does not lock out everyone else there (an API key is 190 random bits: no guessing to slow).
import { parseBasicAuth } from '../auth/api-keys.ts';
import { ApiError, unauthorized } from '../errors.ts';
import { refusal, type RateLimiter } from './rate-limit.ts';
import type { Gate } from './route.ts';

type ParsedBasic = ReturnType<typeof parseBasicAuth>;

// A client sends the same Authorization header with every request (a long-poll re-parks after
// each event), so its decoding is kept per header string; the constant-time key compare and the
// user's checks still run on every request. Emptied when full, so odd headers cannot grow it.
const parsedHeaders = new Map<string, ParsedBasic>();
const PARSED_HEADERS_MAX = 100_000;

function parseBasicCached(header: string): ParsedBasic {
  let parsed = parsedHeaders.get(header);
  if (parsed === undefined) {
    parsed = parseBasicAuth(header);
    if (parsedHeaders.size >= PARSED_HEADERS_MAX) parsedHeaders.clear();
    parsedHeaders.set(header, parsed);
  }
  return parsed;
}

export function authenticateBasic<S, U extends { id: number }>(
  gate: Gate<S, U>,
  scope: S,
  header: string,
  /** The client's address, asked only when the credentials are wrong. */
  ip: () => string,
  ipLimit: RateLimiter | null,
): U | Promise<U> {
  const basic = parseBasicCached(header);
  if (basic === null) throw new ApiError('This endpoint requires HTTP basic authentication.', 'BAD_REQUEST', 400);
  try {
    if (basic === 'malformed') throw unauthorized('Invalid authorization header for basic auth');
    // A user already known is checked at once: no promise (nor closure) for the most frequent requests.
    const user = gate.authenticate(scope, basic.username, basic.password);
    return user instanceof Promise ? user.catch((err: unknown) => countFailure(err, ip, ipLimit)) : user;
  } catch (err) {
    return countFailure(err, ip, ipLimit);
  }
}

/** Wrong credentials spend the address's budget; once it is spent they get 429 instead of 401. */
function countFailure(err: unknown, ip: () => string, ipLimit: RateLimiter | null): never {
  if (err instanceof ApiError && err.status === 401 && ipLimit) {
    const budget = ipLimit.hit(ip());
    if (!budget.allowed) throw refusal(budget);
  }
  throw err;
}
