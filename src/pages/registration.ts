// The pages an invitation link opens (Zulip's /join/<key>/ and /accounts/do_confirm/<key>, then
// /accounts/register/, which ends logged in, in the web client): plain forms posted back here.
// Every parameter is an optional string, so a bad request gets a page saying what is wrong, never
// the API's JSON.
import { register, requestSignup, UnusableLink } from '../actions/registration.ts';
import { MAX_NAME_LENGTH } from '../actions/users.ts';
import type { App } from '../app.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/passwords.ts';
import { ApiError } from '../errors.ts';
import { str } from '../http/params.ts';
import { type RawResponse, RawSuccess } from '../http/route.ts';
import { publicRoute } from '../api/route.ts';
import { invitationByKey, type LinkState, multiuseByKey } from '../queries/invites.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { html, type Html, page } from './html.ts';
import { finishLogin } from './login.ts';

/** Keys are 24 characters of base32: anything else is not worth a query. */
const KEY_RE = /^[a-z2-7]{24}$/;

function unusable(app: App, realm: RealmInfo, state: Exclude<LinkState, 'usable'>): RawResponse {
  const url = app.realms.url(realm);
  switch (state) {
    case 'invalid':
      return page(404, 'This link is not valid', html`<p>Check that you copied the whole link, or ask for a new invitation to ${realm.name}.</p>`);
    case 'expired':
      return page(410, 'This invitation has expired', html`<p>Ask the person who invited you to ${realm.name} for a new invitation.</p>`);
    case 'revoked':
      return page(
        410,
        'This invitation was revoked',
        html`<p>It can no longer be used to join ${realm.name}. Ask an administrator if you think this is a mistake.</p>`,
      );
    case 'used':
      return page(410, 'This invitation has already been used', html`<p>If you created your account with it, log in at <a href="${url}">${url}</a>.</p>`);
  }
}

const errorLine = (error: string | null): Html | string => (error ? html`<p class="error" role="alert">${error}</p>` : '');

function registrationForm(realm: RealmInfo, o: { key: string; email: string; invitedBy: string | null; fullName: string; error: string | null }): RawResponse {
  const intro = o.invitedBy
    ? html`<p class="muted">${o.invitedBy} invited you to ${realm.name}.</p>`
    : html`<p class="muted">Create your account in ${realm.name}.</p>`;
  return page(
    o.error ? 400 : 200,
    `Join ${realm.name}`,
    html`${intro}
${errorLine(o.error)}
<form method="post" action="/accounts/register/">
<input type="hidden" name="key" value="${o.key}">
<p>Email<br><strong>${o.email}</strong></p>
<label for="full_name">Full name</label>
<input id="full_name" name="full_name" value="${o.fullName}" required maxlength="${MAX_NAME_LENGTH}" autocomplete="name">
<label for="password">Password</label>
<input id="password" name="password" type="password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password">
<button>Create account</button>
</form>`,
  );
}

function joinForm(realm: RealmInfo, key: string, email: string, error: string | null): RawResponse {
  return page(
    error ? 400 : 200,
    `Join ${realm.name}`,
    html`<p class="muted">Enter your email address. We will send you a link to finish creating your account.</p>
${errorLine(error)}
<form method="post" action="/join/${key}/">
<label for="email">Email</label>
<input id="email" name="email" type="email" value="${email}" required maxlength="254" autocomplete="email">
<button>Continue</button>
</form>`,
  );
}

/** A refusal the visitor can act on, as a page (`form` again, with the message); anything else stays the router's 500. */
function refusal(app: App, realm: RealmInfo, err: unknown, form: (message: string) => RawResponse | Promise<RawResponse>): RawResponse | Promise<RawResponse> {
  if (err instanceof UnusableLink) return unusable(app, realm, err.state);
  if (err instanceof ApiError) return form(err.message);
  throw err;
}

async function invitationForm(app: App, realm: RealmInfo, key: string, fullName: string, error: string | null): Promise<RawResponse> {
  if (!KEY_RE.test(key)) return unusable(app, realm, 'invalid');
  const { state, invitation } = await invitationByKey(app, realm, key);
  if (state !== 'usable') return unusable(app, realm, state);
  const referrer = invitation!.referredById === null ? null : await app.prisma.user.findUnique({ where: { id: invitation!.referredById } });
  return registrationForm(realm, { key, email: invitation!.email, invitedBy: referrer?.fullName ?? null, fullName, error });
}

/** What each page answers when it is not an error page (those keep their 4xx status). */
const htmlPage = new RawSuccess(200, 'text/html', 'An HTML page');
const intoTheApp = new RawSuccess(302, 'text/html', 'The new account logged in (session and CSRF cookies), sent to the web client');

export const routes = [
  publicRoute({
    method: 'GET',
    path: '/accounts/do_confirm/:key',
    params: {},
    response: htmlPage,
    handler: ({ app, realm, path }) => invitationForm(app, realm, path.key!, '', null),
  }),
  publicRoute({
    method: 'POST',
    path: '/accounts/register/',
    params: { key: str().optional(), full_name: str().optional(), password: str().optional() },
    response: intoTheApp,
    async handler({ app, realm, params, log }) {
      const key = params.key ?? '';
      const fullName = params.full_name ?? '';
      if (!KEY_RE.test(key)) return unusable(app, realm, 'invalid');
      try {
        const user = await register(app, realm, { key, fullName, password: params.password ?? '' }, log);
        // Logged in at once, as the login form would (Zulip's registration ends in the app too).
        return finishLogin(app, realm, user, {}, '/');
      } catch (err) {
        return refusal(app, realm, err, (message) => invitationForm(app, realm, key, fullName, message));
      }
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/join/:key/',
    params: {},
    response: htmlPage,
    async handler({ app, realm, path }) {
      const key = path.key!;
      if (!KEY_RE.test(key)) return unusable(app, realm, 'invalid');
      const { state } = await multiuseByKey(app, realm, key);
      return state === 'usable' ? joinForm(realm, key, '', null) : unusable(app, realm, state);
    },
  }),
  publicRoute({
    method: 'POST',
    path: '/join/:key/',
    params: { email: str().optional() },
    response: htmlPage,
    async handler({ app, realm, path, params, ip, log }) {
      const key = path.key!;
      const email = params.email ?? '';
      if (!KEY_RE.test(key)) return unusable(app, realm, 'invalid');
      // The form mails any address it is given: a visitor gets a few a day, as in Zulip.
      const limiter = app.limits?.sendsEmail;
      const exhausted = limiter?.isExhausted(ip);
      if (exhausted && !exhausted.allowed) {
        return page(429, 'Too many requests', html`<p>Too many sign-up emails were asked for from your network. Try again later.</p>`, {
          'Retry-After': String(Math.ceil(exhausted.retryAfter)),
        });
      }
      try {
        const sent = await requestSignup(app, realm, key, email, log);
        limiter?.hit(ip);
        return page(
          200,
          'Check your email',
          html`<p>We sent a link to <strong>${sent}</strong>. Open it within a day to finish creating your account in ${realm.name}.</p>`,
        );
      } catch (err) {
        return refusal(app, realm, err, (message) => joinForm(realm, key, email, message));
      }
    },
  }),
];
