// POST /fetch_api_key: password (or LDAP) login for API clients, with Zulip's failed-login rate limit; and
// POST /jwt/fetch_api_key: login with a JSON web token the organization's identity service signed.
import { z } from 'zod';
import { verifyPassword } from '../auth/passwords.ts';
import { jwtIdentity } from '../auth/jwt.ts';
import { ApiError, rateLimitHit, realmDeactivated, userDeactivated } from '../errors.ts';
import { bool, str } from '../http/params.ts';
import { publicRoute } from './route.ts';
import { apiEmail, formatUser } from '../queries/users.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import type { RealmInfo } from '../queries/realms.ts';
import type { Log } from '../log.ts';
import { ldapLogin, LdapRefusal } from '../actions/ldap-accounts.ts';
import { methodEnabled, passwordAuthDisabled } from '../auth/methods.ts';

export const authFailed = () => new ApiError('Your username or password is incorrect', 'AUTHENTICATION_FAILED', 401);

/**
 * The credential check of every password login (POST /fetch_api_key, the web login form): the
 * user, or Zulip's error (rate limit of failed logins per username, wrong credentials,
 * deactivated account or organization). With LDAP, the directory is asked first, then the
 * organization's own passwords, as Zulip's backends are tried in turn; each only if the
 * organization has it on.
 */
export async function checkPasswordLogin(app: App, realm: RealmInfo, username: string, password: string, log: Log): Promise<User> {
  const limiter = app.limits?.loginFailures;
  const key = `${realm.id}:${username.toLowerCase()}`;
  const state = limiter?.isExhausted(key);
  if (state && !state.allowed) {
    throw rateLimitHit(state.retryAfter);
  }
  const [byLdap, byEmail] = [methodEnabled(app, realm, 'LDAP'), methodEnabled(app, realm, 'Email')];
  if (!byLdap && !byEmail) throw passwordAuthDisabled();
  try {
    const user =
      (byLdap ? await ldapLogin(app, realm, app.ldap!, username, password, log) : null) ?? (byEmail ? await emailLogin(app, realm, username, password) : null);
    if (user) return user;
  } catch (err) {
    if (!(err instanceof LdapRefusal)) throw err;
    log.info('LDAP login refused', { reason: err.message });
  }
  limiter?.hit(key);
  throw authFailed();
}

/** Zulip's EmailAuthBackend: the account of the address, if the password is its own. */
async function emailLogin(app: App, realm: RealmInfo, email: string, password: string): Promise<User | null> {
  const user = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(email) } });
  if (!user || user.isBot || !(await verifyPassword(password, user.passwordHash))) return null;
  if (!user.isActive) throw userDeactivated();
  if (realm.deactivated) throw realmDeactivated();
  return user;
}

export const routes = [
  publicRoute({
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    params: { username: str(), password: str() },
    response: z.object({ api_key: z.string(), email: z.string(), user_id: z.number().int() }),
    async handler({ app, realm, params, log }) {
      const user = await checkPasswordLogin(app, realm, params.username, params.password, log);
      return { api_key: user.apiKey, email: apiEmail(app, realm, user), user_id: user.id };
    },
  }),
  publicRoute({
    method: 'POST',
    path: '/api/v1/jwt/fetch_api_key',
    params: { token: str().default(''), include_profile: bool().default(false) },
    response: z.object({ api_key: z.string(), email: z.string(), user: z.record(z.string(), z.unknown()).optional() }),
    async handler({ app, realm, params }) {
      const { email } = await jwtIdentity(app.config, realm.subdomain, params.token);
      const user = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(email) } });
      if (!user || user.isBot) throw authFailed();
      if (!user.isActive) throw userDeactivated();
      if (realm.deactivated) throw realmDeactivated();
      return {
        api_key: user.apiKey,
        email: user.deliveryEmail,
        ...(params.include_profile ? { user: formatUser(app, realm, user, user, { clientGravatar: false }) } : {}),
      };
    },
  }),
];
