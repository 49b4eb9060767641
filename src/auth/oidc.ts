// OpenID Connect single sign-on (Zulip's GenericOpenIdConnectBackend, with any number of
// providers) through openid-client: the authorization code flow with PKCE, state and nonce; the
// ID token's signature, issuer, audience, expiry and nonce are checked by the library. What the
// start of a login must remember (state, nonce, PKCE verifier, the app's one-time pad, where to go
// next) travels in a short-lived cookie signed with the deployment's key, so any node of a cluster
// can finish it and no other browser can.
import * as client from 'openid-client';
import type { OidcProvider } from '../config.ts';
import type { TokenSigner } from './signed-tokens.ts';
import { LoginRefusal } from '../errors.ts';

export const FLOW_COOKIE = 'oidc_flow';
/** How long a started login may take at the provider. */
const FLOW_SECONDS = 600;

/** What the start of a login hands to its end, inside the signed cookie. */
export interface OidcFlow {
  provider: string;
  state: string;
  nonce: string;
  verifier: string;
  mobileOtp?: string;
  desktopOtp?: string;
  next: string;
  expiresAt: number;
}

/** What the provider vouched for. */
export interface OidcIdentity {
  email: string;
  fullName: string;
}

const configurations = new Map<string, Promise<client.Configuration>>();

/** The provider's discovered configuration, read once (and again after a failure). */
function configuration(provider: OidcProvider): Promise<client.Configuration> {
  let found = configurations.get(provider.name);
  if (!found) {
    // The ID token's signature is checked against the provider's published keys even though it
    // comes straight from the token endpoint (where OpenID Connect lets TLS stand in for it). An
    // http:// issuer is the operator's explicit choice (a provider on the same host or network).
    const execute = [client.enableNonRepudiationChecks, ...(new URL(provider.issuer).protocol === 'http:' ? [client.allowInsecureRequests] : [])];
    found = client.discovery(new URL(provider.issuer), provider.client_id, provider.secret, undefined, { execute });
    found.catch(() => configurations.delete(provider.name));
    configurations.set(provider.name, found);
  }
  return found;
}

/** The provider's authorization URL for a new login, and the flow cookie's value. */
export async function startOidcLogin(
  provider: OidcProvider,
  signer: TokenSigner,
  redirectUri: string,
  flow: Pick<OidcFlow, 'mobileOtp' | 'desktopOtp' | 'next'>,
): Promise<{ url: string; cookie: string }> {
  const config = await configuration(provider);
  const started: OidcFlow = {
    ...flow,
    provider: provider.name,
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    expiresAt: Date.now() + FLOW_SECONDS * 1000,
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state: started.state,
    nonce: started.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(started.verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, cookie: signer.sign(JSON.stringify(started)) };
}

export const flowCookie = (value: string, secure: boolean) =>
  `${FLOW_COOKIE}=${value}; Path=/; Max-Age=${FLOW_SECONDS}; SameSite=Lax; HttpOnly${secure ? '; Secure' : ''}`;
export const expiredFlowCookie = (secure: boolean) => `${FLOW_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax; HttpOnly${secure ? '; Secure' : ''}`;

/** The login this browser started with this provider, or null (no cookie, forged, expired, another provider's). */
export function startedFlow(signer: TokenSigner, cookie: string | undefined, provider: string): OidcFlow | null {
  const payload = cookie ? signer.verify(cookie) : null;
  if (!payload) return null;
  const flow = JSON.parse(payload) as OidcFlow;
  return flow.provider === provider && flow.expiresAt > Date.now() ? flow : null;
}

const REFUSED = 'The identity provider’s answer could not be verified.';

/**
 * The identity the provider's answer at `callbackUrl` proves: the code is exchanged (once: the
 * provider refuses a replayed code), the ID token checked, and the address taken only with
 * `email_verified` true, from the ID token or else from the UserInfo endpoint.
 */
export async function finishOidcLogin(provider: OidcProvider, flow: OidcFlow, callbackUrl: URL): Promise<OidcIdentity> {
  const config = await configuration(provider);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
  } catch (err) {
    if (err instanceof client.AuthorizationResponseError) throw new LoginRefusal(`The identity provider refused the login (${err.error}).`);
    if (err instanceof client.ResponseBodyError) throw new LoginRefusal(`The identity provider refused the login (${err.error}).`);
    if (err instanceof client.ClientError || err instanceof TypeError) throw new LoginRefusal(REFUSED);
    throw err;
  }
  let claims: Record<string, unknown> = tokens.claims() ?? {};
  if (typeof claims.email !== 'string') {
    try {
      claims = { ...(await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))), ...claims };
    } catch (err) {
      if (err instanceof client.ClientError || err instanceof client.ResponseBodyError) throw new LoginRefusal(REFUSED);
      throw err;
    }
  }
  if (typeof claims.email !== 'string' || !claims.email) throw new LoginRefusal('The identity provider did not give an email address.');
  if (claims.email_verified !== true) throw new LoginRefusal(`The identity provider does not vouch for the address ${claims.email}.`);
  const parts = [claims.given_name, claims.family_name].filter((p) => typeof p === 'string' && p);
  const fullName = typeof claims.name === 'string' && claims.name ? claims.name : parts.join(' ');
  return { email: claims.email, fullName };
}

/** The providers as server_settings lists them (Zulip's external_authentication_methods entries). */
export function oidcMethods(providers: readonly OidcProvider[]) {
  return providers.map((p) => ({
    name: `oidc:${p.name}`,
    display_name: p.display_name,
    display_icon: p.display_icon,
    login_url: `/accounts/login/social/oidc/${p.name}`,
    signup_url: `/accounts/register/social/oidc/${p.name}`,
  }));
}
