// JWT web login (Zulip's remote_user_jwt, POST /accounts/login/jwt/): the organization's identity
// service has the browser post a JSON web token its JWT_AUTH_KEYS key signed, naming the user by its
// `email` claim; the login then ends as every other (a browser session, or the apps' flows with
// `mobile_flow_otp` and `desktop_flow_otp`). The token is the proof, so no CSRF token is asked, as
// in Zulip. Someone without an account gets one where the organization lets anyone of that
// address join (no invitation required, an allowed domain), or one invited.
import { publicRoute } from '../api/route.ts';
import { checkAppFlow } from '../auth/app-flows.ts';
import { jwtIdentity } from '../auth/jwt.ts';
import { LoginRefusal } from '../errors.ts';
import { str } from '../http/params.ts';
import { type RawResponse, RawSuccess } from '../http/route.ts';
import { finishLogin } from './login.ts';
import { accountFor, refused } from './sso.ts';

const pageOrRedirect = new RawSuccess(200, 'text/html', "The desktop flow's page, or a redirect", true);

export const routes = [
  publicRoute({
    method: 'POST',
    path: '/accounts/login/jwt/',
    params: { token: str().default(''), next: str().optional(), mobile_flow_otp: str().optional(), desktop_flow_otp: str().optional() },
    response: pageOrRedirect,
    async handler({ app, realm, params, log }): Promise<RawResponse> {
      const flow = checkAppFlow(params.mobile_flow_otp, params.desktop_flow_otp);
      const identity = await jwtIdentity(app.config, realm.subdomain, params.token);
      if (realm.deactivated) return refused('This organization has been deactivated.');
      try {
        const user = await accountFor(app, realm, identity.email, identity.name, true, log);
        return await finishLogin(app, realm, user, flow, params.next);
      } catch (err) {
        if (!(err instanceof LoginRefusal)) throw err;
        log.info('JWT login refused', { reason: err.message });
        return refused(err.message);
      }
    },
  }),
];
