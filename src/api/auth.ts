// POST /fetch_api_key: password login for API clients, with Zulip's failed-login rate limit.
import { z } from 'zod';
import { verifyPassword } from '../auth/passwords.ts';
import { ApiError, rateLimitHit, realmDeactivated, userDeactivated } from '../errors.ts';
import { str } from '../http/params.ts';
import { publicRoute } from './route.ts';
import { apiEmail } from '../queries/users.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';

const authFailed = () => new ApiError('Your username or password is incorrect', 'AUTHENTICATION_FAILED', 401);

export const routes = [
  publicRoute({
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    params: { username: str(), password: str() },
    response: z.object({ api_key: z.string(), email: z.string(), user_id: z.number().int() }),
    async handler({ app, realm, params }) {
      const limiter = app.limits?.loginFailures;
      const key = `${realm.id}:${params.username.toLowerCase()}`;
      const state = limiter?.isExhausted(key);
      if (state && !state.allowed) {
        throw rateLimitHit(state.retryAfter);
      }
      const user = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(params.username) } });
      if (!user || user.isBot || !(await verifyPassword(params.password, user.passwordHash))) {
        limiter?.hit(key);
        throw authFailed();
      }
      if (!user.isActive) throw userDeactivated();
      if (realm.deactivated) throw realmDeactivated();
      return { api_key: user.apiKey, email: apiEmail(app, realm, user), user_id: user.id };
    },
  }),
];
