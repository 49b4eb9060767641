// Single sign-on through OpenID Connect providers (src/auth/oidc.ts): the start URLs Zulip's
// buttons lead to (/accounts/login/social/oidc/<name>, and /accounts/register/social/oidc/<name>
// to sign up), which send the browser to the provider, and the callback the provider sends it
// back to (/complete/oidc/<name>). A refused answer gets a page saying so, and changes nothing.
import { registerExternalUser } from '../actions/registration.ts';
import { publicRoute } from '../api/route.ts';
import type { App } from '../app.ts';
import { checkAppFlow } from '../auth/app-flows.ts';
import { methodEnabled } from '../auth/methods.ts';
import { expiredFlowCookie, finishOidcLogin, FLOW_COOKIE, flowCookie, startedFlow, startOidcLogin } from '../auth/oidc.ts';
import { parseCookies } from '../auth/web-sessions.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { ApiError, LoginRefusal } from '../errors.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { errorText, type Log } from '../log.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { html, page } from './html.ts';
import { finishLogin, flowParams, isSecure, safeNext } from './login.ts';

export const redirect = new RawSuccess(302, 'text/html', 'A redirect');
/** The callback's answer: on to the app (or the mobile app), or the desktop flow's page. */
export const pageOrRedirect = new RawSuccess(200, 'text/html', "The desktop flow's page", true);

export function refused(message: string, cookies: string[] = []): RawResponse {
  return page(
    400,
    'Login failed',
    html`<p role="alert" class="error">${message}</p>
<p><a href="/login/">Back to the login page</a></p>`,
    {},
    cookies,
  );
}

export const unknownProvider = () =>
  page(404, 'Unknown login method', html`<p>This server has no such single sign-on provider. <a href="/login/">Back to the login page</a></p>`);
export const methodOff = (method: string) =>
  page(403, 'Login method not enabled', html`<p>This organization does not allow logging in with ${method}. <a href="/login/">Back to the login page</a></p>`);

/** The provider sends the browser back to this organization's own address. */
const callbackUrl = (app: App, realm: RealmInfo, name: string) => `${app.realms.url(realm)}/complete/oidc/${name}`;

// Signing up and logging in are one way here: an account is made where auto_signup allows.
const startRoute = (path: string) =>
  publicRoute({
    method: 'GET',
    path,
    params: flowParams,
    response: redirect,
    async handler({ app, realm, path: segments, params, log }) {
      const flow = checkAppFlow(params.mobile_flow_otp, params.desktop_flow_otp);
      const provider = app.config.OIDC_PROVIDERS.find((p) => p.name === segments.name);
      if (!provider) return unknownProvider();
      if (!methodEnabled(app, realm, 'OpenID Connect')) return methodOff('OpenID Connect');
      let started: Awaited<ReturnType<typeof startOidcLogin>>;
      try {
        started = await startOidcLogin(provider, app.tokens, callbackUrl(app, realm, provider.name), { ...flow, next: safeNext(params.next) });
      } catch (err) {
        log.warn('OpenID Connect provider unreachable', { provider: provider.name, error: errorText(err) });
        return page(502, 'Login failed', html`<p role="alert" class="error">${provider.display_name} cannot be reached right now. Try again later.</p>`);
      }
      return new RawResponse(302, { Location: started.url, 'Cache-Control': 'no-store' }, '', [flowCookie(started.cookie, isSecure(app, realm))]);
    },
  });

/** The account of the vouched-for address: the existing one, or a new one where the provider's auto_signup and the organization allow. */
export async function accountFor(app: App, realm: RealmInfo, email: string, fullName: string, autoSignup: boolean, log: Log) {
  const user = await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(email) } });
  if (user) {
    if (user.isBot) throw new LoginRefusal(`${email} cannot log in here.`);
    if (!user.isActive) throw new LoginRefusal(`Your account ${email} has been deactivated. Please contact your organization administrator to reactivate it.`);
    return user;
  }
  if (!autoSignup) throw new LoginRefusal(`${email} does not have an account in ${realm.name}. Ask an administrator for an invitation.`);
  try {
    return await registerExternalUser(app, realm, email, fullName, log);
  } catch (err) {
    if (err instanceof ApiError) throw new LoginRefusal(err.message);
    throw err;
  }
}

export const routes = [
  startRoute('/accounts/login/social/oidc/:name'),
  startRoute('/accounts/register/social/oidc/:name'),
  publicRoute({
    method: 'GET',
    path: '/complete/oidc/:name',
    params: {},
    response: pageOrRedirect,
    cookies: true,
    async handler({ app, realm, path, query, headers, log }) {
      const provider = app.config.OIDC_PROVIDERS.find((p) => p.name === path.name);
      if (!provider) return unknownProvider();
      const secure = isSecure(app, realm);
      // The flow is spent whatever happens: a second answer to it finds nothing.
      const clear = [expiredFlowCookie(secure)];
      const flow = startedFlow(app.tokens, parseCookies(headers.cookie ?? '').get(FLOW_COOKIE), provider.name);
      // Turned off while the login was at the provider: it ends here.
      if (!methodEnabled(app, realm, 'OpenID Connect')) return refused('This organization does not allow logging in with OpenID Connect.', clear);
      if (!flow) return refused('This login was not started in this browser, or took too long. Start again from the login page.', clear);
      if (realm.deactivated) return refused('This organization has been deactivated.', clear);
      try {
        const identity = await finishOidcLogin(provider, flow, new URL(`${callbackUrl(app, realm, provider.name)}?${query}`));
        const user = await accountFor(app, realm, identity.email, identity.fullName, provider.auto_signup, log);
        const done = await finishLogin(app, realm, user, { mobileOtp: flow.mobileOtp, desktopOtp: flow.desktopOtp }, flow.next);
        return new RawResponse(done.status, done.headers, done.body, [...clear, ...done.cookies]);
      } catch (err) {
        if (!(err instanceof LoginRefusal)) throw err;
        log.info('OpenID Connect login refused', { provider: provider.name, reason: err.message });
        return refused(err.message, clear);
      }
    },
  }),
];
