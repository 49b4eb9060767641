// HTTP Basic credentials to a user, for the router and the WebSocket gateway alike. Wrong
// credentials count against the client address's budget (the per-IP rate limit), and an address
// that has spent it is refused before its credentials are checked: a key guesser gets 429, and
// cannot tell a right guess from a wrong one until the window has passed.
import { parseBasicAuth } from '../auth/api-keys.ts';
import { ApiError, unauthorized } from '../errors.ts';
import { refusal, type RateLimiter } from './rate-limit.ts';
import type { Gate } from './route.ts';

export function authenticateBasic<S, U extends { id: number }>(
  gate: Gate<S, U>,
  scope: S,
  header: string,
  ip: string,
  ipLimit: RateLimiter | null,
): U | Promise<U> {
  const basic = parseBasicAuth(header);
  if (basic === null) throw new ApiError('This endpoint requires HTTP basic authentication.', 'BAD_REQUEST', 400);
  const budget = ipLimit?.isExhausted(ip);
  if (budget && !budget.allowed) throw refusal(budget);
  const counted = (err: unknown): never => {
    if (err instanceof ApiError && err.status === 401) ipLimit?.hit(ip);
    throw err;
  };
  try {
    if (basic === 'malformed') throw unauthorized('Invalid authorization header for basic auth');
    // A user already known is checked at once: no promise for the most frequent requests.
    const user = gate.authenticate(scope, basic.username, basic.password);
    return user instanceof Promise ? user.catch(counted) : user;
  } catch (err) {
    return counted(err);
  }
}
