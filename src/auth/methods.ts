// Which ways in an organization allows (Zulip's realm authentication methods): of the methods
// this server offers (email and password always; LDAP, SAML and OpenID Connect when configured), each
// is on unless the organization's owners switched it off (PATCH /realm authentication_methods).
// Every login path asks here; API keys already given out keep working, as in Zulip.
import type { Config } from '../config.ts';
import type { User } from '../db/generated/client.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import type { LdapDirectory } from './ldap.ts';
import { oidcMethods } from './oidc.ts';
import { idpsFor, samlMethods } from './saml.ts';

/** The server's login services these checks read (App has them). */
interface LoginServices {
  config: Pick<Config, 'OIDC_PROVIDERS' | 'SAML_IDPS'>;
  ldap: LdapDirectory | null;
}

/** Zulip's AUTH_BACKEND_NAME_MAP names of the methods this server has. */
export type AuthMethod = 'Email' | 'LDAP' | 'SAML' | 'OpenID Connect';

/** The methods this server offers, in Zulip's order (single sign-on by its sort_order: SAML first). */
export function serverMethods(app: LoginServices): AuthMethod[] {
  return [
    'Email',
    ...(app.ldap ? ['LDAP' as const] : []),
    ...(app.config.SAML_IDPS.length ? ['SAML' as const] : []),
    ...(app.config.OIDC_PROVIDERS.length ? ['OpenID Connect' as const] : []),
  ];
}

/** Zulip's authentication_methods_dict: each method the server offers, and whether the organization has it on. */
export function realmMethods(app: LoginServices, realm: RealmInfo): Record<string, boolean> {
  return Object.fromEntries(serverMethods(app).map((m) => [m, realm.settings.authentication_methods[m] ?? true]));
}

export const methodEnabled = (app: LoginServices, realm: RealmInfo, method: AuthMethod): boolean => realmMethods(app, realm)[method] === true;

/** The single sign-on buttons of the organization's login page, as server_settings' external_authentication_methods lists them (SAML's first, as Zulip sorts them). */
export function externalMethods(app: LoginServices, realm: RealmInfo) {
  const methods = realmMethods(app, realm);
  return [...(methods.SAML ? samlMethods(app, realm) : []), ...(methods['OpenID Connect'] ? oidcMethods(app.config.OIDC_PROVIDERS) : [])];
}

/** As register's realm_authentication_methods and the update_dict event carry it (Zulip 9.0 on). */
export function methodsForClients(methods: Record<string, boolean>): Record<string, { enabled: boolean; available: boolean }> {
  return Object.fromEntries(Object.entries(methods).map(([name, enabled]) => [name, { enabled, available: true }]));
}

/** Zulip's PasswordAuthDisabledError. */
export const passwordAuthDisabled = () => new ApiError('Password authentication is disabled in this organization', 'PASSWORD_AUTH_DISABLED', 401);

/**
 * The organization's methods after PATCH /realm's `authentication_methods`, checked as Zulip's
 * update_realm (known names, one at least on) and so that the owner making the change can still
 * log in by one of them: by password if they have one, by LDAP if the directory has them, by
 * SAML (an IdP serving the organization) or OpenID Connect (whose providers may vouch for anyone).
 */
export async function checkMethodsChange(app: LoginServices, realm: RealmInfo, actor: User, sent: Record<string, boolean>): Promise<Record<string, boolean>> {
  const current = realmMethods(app, realm);
  for (const name of Object.keys(sent)) {
    if (!(name in current)) {
      const valid = Object.keys(current)
        .sort()
        .map((m) => `'${m}'`)
        .join(', ');
      throw badRequest(`Invalid authentication method: ${name}. Valid methods are: [${valid}]`);
    }
  }
  if (!Object.values(sent).includes(true)) throw badRequest('At least one authentication method must be enabled.');
  const after = { ...current, ...sent };
  const letsIn = async (method: string) => {
    if (method === 'Email') return actor.passwordHash !== null;
    if (method === 'LDAP') return (await app.ldap!.findUser(actor.deliveryEmail).catch(() => null)) !== null;
    // No IdP serves this organization when all are limited to others.
    if (method === 'SAML') return idpsFor(app, realm).length > 0;
    return true;
  };
  for (const [method, enabled] of Object.entries(after)) if (enabled && (await letsIn(method))) return after;
  throw badRequest('You cannot turn off every authentication method you can log in with.');
}
