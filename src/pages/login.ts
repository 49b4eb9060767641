// The web login (Zulip's /login/ and /accounts/login/): a server-rendered page whose password form
// posts back here, with a button per single sign-on provider; every way in ends in finishLogin,
// which starts a browser session or, for the apps' flows (mobile_flow_otp, desktop_flow_otp),
// hands the app its credentials encrypted (src/auth/app-flows.ts). Also logging out, and the
// desktop app's one-time token login.
import { checkPasswordLogin } from '../api/auth.ts';
import { publicRoute } from '../api/route.ts';
import type { App } from '../app.ts';
import { type AppFlow, checkAppFlow, DESKTOP_TOKEN_SECONDS, desktopFlowData, mobileFlowLocation } from '../auth/app-flows.ts';
import { API_KEY_PATTERN, generateApiKey } from '../auth/api-keys.ts';
import { externalMethods, realmMethods } from '../auth/methods.ts';
import {
  checkCsrf,
  consumeLoginToken,
  createLoginToken,
  createSession,
  CSRF_COOKIE,
  csrfCookie,
  endSession,
  expiredSessionCookie,
  newSecret,
  parseCookies,
  SESSION_COOKIE,
  sessionCookie,
  sessionUser,
} from '../auth/web-sessions.ts';
import type { User } from '../db/generated/client.ts';
import { ApiError } from '../errors.ts';
import { str } from '../http/params.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { contentSecurityPolicy, html, type Html, page } from './html.ts';

/** The form (again, with what went wrong), or a redirect on success; the desktop flow's page. */
const pageOrRedirect = new RawSuccess(200, 'text/html', 'The login page', true);
const redirect = new RawSuccess(302, 'text/html', 'A redirect');

/** Cookies are Secure when the organization's URL is https (EXTERNAL_URL, or a trusted proxy's X-Forwarded-Proto). */
export const isSecure = (app: App, realm: RealmInfo) => app.realms.url(realm).startsWith('https:');

/** Where to go after logging in: a path on this server (Zulip's get_safe_redirect_to), else the app. */
export function safeNext(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

function redirectTo(location: string, cookies: string[] = []): RawResponse {
  return new RawResponse(302, { Location: location, 'Cache-Control': 'no-store' }, '', cookies);
}

/**
 * The end of every successful login: the mobile app gets zulip://login with its key XORed with
 * its pad; the desktop app a page with a one-time token encrypted to its key; a browser a session
 * (and a fresh CSRF token, as Django rotates it at login) and the page it was going to.
 */
export async function finishLogin(app: App, realm: RealmInfo, user: User, flow: AppFlow, next: string | undefined): Promise<RawResponse> {
  const url = app.realms.url(realm);
  if (flow.mobileOtp) {
    return redirectTo(mobileFlowLocation({ apiKey: user.apiKey, otp: flow.mobileOtp, email: user.deliveryEmail, userId: user.id, realmUrl: url }));
  }
  if (flow.desktopOtp) {
    const token = generateApiKey();
    await createLoginToken(app.prisma, user.id, token, DESKTOP_TOKEN_SECONDS);
    return page(
      200,
      'Finish logging in',
      html`<p>Copy this login token and return to your Zulip app to finish logging in:</p>
<input id="desktop-data" value="${desktopFlowData(token, flow.desktopOtp)}" readonly aria-label="Login token">
<p>You may then close this window.</p>
<p><a href="/login/">Or, continue in your browser.</a></p>`,
    );
  }
  const secure = isSecure(app, realm);
  const session = await createSession(app.prisma, user.id);
  return redirectTo(`${url}${safeNext(next)}`, [sessionCookie(session, secure), csrfCookie(newSecret(), secure)]);
}

interface LoginForm {
  email: string;
  next: string | undefined;
  flow: AppFlow;
  error: string | null;
}

/** The page's form, with the CSRF token of the browser's cookie (set here when it has none). */
function loginPage(app: App, realm: RealmInfo, csrfToken: string | undefined, form: LoginForm, status = 200): RawResponse {
  const token = csrfToken ?? newSecret();
  const carried = new URLSearchParams();
  if (form.next) carried.set('next', form.next);
  if (form.flow.mobileOtp) carried.set('mobile_flow_otp', form.flow.mobileOtp);
  if (form.flow.desktopOtp) carried.set('desktop_flow_otp', form.flow.desktopOtp);
  const query = carried.size ? `?${carried}` : '';
  const hidden = [...carried].map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const methods = realmMethods(app, realm);
  const buttons = externalMethods(app, realm).map((m) => html`<a class="sso" href="${m.login_url}${query}">Log in with ${m.display_name}</a>`);
  const inApp = form.flow.mobileOtp || form.flow.desktopOtp;
  // Directory usernames need not be addresses (Zulip's require_email_format_usernames).
  const usernames = methods.LDAP && !app.ldap!.usernamesAreEmails;
  const passwordForm = html`<form method="post" action="/accounts/login/">
<input type="hidden" name="csrfmiddlewaretoken" value="${token}">
${hidden}
<label for="id_username">${usernames ? 'Username or email' : 'Email'}</label>
<input id="id_username" name="username" type="${usernames ? 'text' : 'email'}" value="${form.email}" required maxlength="254" autocomplete="username" autofocus>
<label for="id_password">Password</label>
<input id="id_password" name="password" type="password" required autocomplete="current-password">
<button>Log in</button>
</form>`;
  const body: Html = html`${form.error ? html`<p class="error" role="alert" id="login-error">${form.error}</p>` : ''}
${methods.Email || methods.LDAP ? passwordForm : ''}
${buttons.length ? html`${methods.Email || methods.LDAP ? html`<p class="or">or</p>` : ''}${buttons}` : ''}
${inApp ? '' : html`<p class="or"><a href="/?login=api-key">Log in with an API key</a></p>`}`;
  // The mobile flow's answer to the form is a redirect to the app's zulip:// address.
  const headers = { 'Content-Security-Policy': contentSecurityPolicy(' zulip:') };
  return page(status, `Log in to ${realm.name}`, body, headers, csrfToken ? [] : [csrfCookie(token, isSecure(app, realm))]);
}

const deactivatedPage = (realm: RealmInfo) => page(400, 'This organization has been deactivated', html`<p>${realm.name} is no longer active.</p>`);

/** The form's answer to a refused login, in the words of Zulip's login page. */
function refusalMessage(err: ApiError, username: string): string {
  switch (err.code) {
    case 'RATE_LIMIT_HIT':
      return `You're making too many attempts to sign in. Try again in ${Math.ceil(Number(err.extra['retry-after']))} seconds or restart your browser.`;
    case 'USER_DEACTIVATED':
      return `Your account ${username} has been deactivated. Please contact your organization administrator to reactivate it.`;
    case 'REALM_DEACTIVATED':
      return 'This organization has been deactivated.';
    case 'PASSWORD_AUTH_DISABLED':
      return 'Password authentication is disabled in this organization.';
    default:
      return 'Please enter a correct email and password. Note that both fields may be case-sensitive.';
  }
}

/** What every login route carries: where to go next, and the apps' pads. */
export const flowParams = {
  next: str().optional(),
  mobile_flow_otp: str().optional(),
  desktop_flow_otp: str().optional(),
};

const loginPageRoute = (path: string) =>
  publicRoute({
    method: 'GET',
    path,
    params: { ...flowParams, email: str().optional() },
    response: pageOrRedirect,
    cookies: true,
    async handler({ app, realm, params, headers }) {
      const flow = checkAppFlow(params.mobile_flow_otp, params.desktop_flow_otp);
      if (realm.deactivated) return deactivatedPage(realm);
      const cookies = parseCookies(headers.cookie ?? '');
      // Already logged in here: on to the app, unless an app is asking for its own credentials.
      const session = cookies.get(SESSION_COOKIE);
      if (session && !flow.mobileOtp && !flow.desktopOtp && (await sessionUser(app.prisma, realm.id, session)))
        return redirectTo(`${app.realms.url(realm)}${safeNext(params.next)}`);
      return loginPage(app, realm, cookies.get(CSRF_COOKIE), { email: params.email ?? '', next: params.next, flow, error: null });
    },
  });

export const routes = [
  loginPageRoute('/login/'),
  loginPageRoute('/accounts/login/'),
  publicRoute({
    method: 'POST',
    path: '/accounts/login/',
    params: { ...flowParams, username: str().optional(), password: str().optional(), csrfmiddlewaretoken: str().optional() },
    response: pageOrRedirect,
    cookies: true,
    async handler({ app, realm, params, headers, log }) {
      const flow = checkAppFlow(params.mobile_flow_otp, params.desktop_flow_otp);
      const cookies = parseCookies(headers.cookie ?? '');
      const form = { email: params.username ?? '', next: params.next, flow };
      try {
        checkCsrf(cookies.get(CSRF_COOKIE), params.csrfmiddlewaretoken);
      } catch {
        // Django's answer is a bare 403; a fresh form lets the visitor simply try again.
        return loginPage(app, realm, undefined, { ...form, error: 'Your login form had expired. Please try again.' }, 403);
      }
      try {
        const user = await checkPasswordLogin(app, realm, params.username ?? '', params.password ?? '', log);
        return await finishLogin(app, realm, user, flow, params.next);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return loginPage(app, realm, cookies.get(CSRF_COOKIE), { ...form, error: refusalMessage(err, form.email) }, err.status === 429 ? 429 : 200);
      }
    },
  }),
  publicRoute({
    method: 'POST',
    path: '/accounts/logout/',
    params: { csrfmiddlewaretoken: str().optional() },
    response: redirect,
    cookies: true,
    async handler({ app, realm, params, headers }) {
      const cookies = parseCookies(headers.cookie ?? '');
      // A form sends the token as a field, the web client's script as the X-CSRFToken header.
      checkCsrf(cookies.get(CSRF_COOKIE), params.csrfmiddlewaretoken ?? headers.csrfToken);
      const session = cookies.get(SESSION_COOKIE);
      if (session) await endSession(app.prisma, session);
      return redirectTo(`${app.realms.url(realm)}/login/`, [expiredSessionCookie(isSecure(app, realm))]);
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/accounts/login/subdomain/:token',
    params: {},
    response: redirect,
    async handler({ app, realm, path }) {
      // The tokens have the API keys' form (Zulip's log_into_subdomain): anything else is not worth a query.
      if (!API_KEY_PATTERN.test(path.token!)) return new RawResponse(400, { 'Content-Type': 'text/plain; charset=utf-8' }, '');
      const userId = await consumeLoginToken(app.prisma, path.token!);
      const user = userId === null ? null : await app.prisma.user.findUnique({ where: { id: userId } });
      if (!user || user.realmId !== realm.id || !user.isActive || realm.deactivated) {
        return page(400, 'This login link is not valid', html`<p>It has expired or was already used. <a href="/login/">Log in again</a>.</p>`);
      }
      return finishLogin(app, realm, user, {}, '/');
    },
  }),
];
