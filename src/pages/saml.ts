// Single sign-on through SAML identity providers (src/auth/saml.ts), at Zulip's URLs: the start
// URLs of the login buttons (/accounts/login/social/saml/<idp>, and /accounts/register/social/saml/<idp>
// to sign up) send the browser to the IdP with an AuthnRequest; the IdP posts its Response to the
// organization's assertion consumer service (/complete/saml/); /saml/metadata.xml describes this
// service provider to the IdP. A refused answer gets a page saying so, and changes nothing.
import { publicRoute } from '../api/route.ts';
import { checkAppFlow } from '../auth/app-flows.ts';
import { methodEnabled } from '../auth/methods.ts';
import { finishSamlLogin, idpsFor, spMetadata, startSamlLogin } from '../auth/saml.ts';
import { LoginRefusal } from '../errors.ts';
import { str } from '../http/params.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { finishLogin, flowParams, safeNext } from './login.ts';
import { accountFor, methodOff, pageOrRedirect, redirect, refused, unknownProvider } from './sso.ts';

// Signing up and logging in are one way here: an account is made where auto_signup allows.
const startRoute = (path: string) =>
  publicRoute({
    method: 'GET',
    path,
    params: flowParams,
    response: redirect,
    async handler({ app, realm, path: segments, params }) {
      const flow = checkAppFlow(params.mobile_flow_otp, params.desktop_flow_otp);
      const idp = idpsFor(app, realm).find((i) => i.name === segments.name);
      if (!idp) return unknownProvider();
      if (!methodEnabled(app, realm, 'SAML')) return methodOff('SAML');
      const location = await startSamlLogin(app, realm, idp, { ...flow, next: safeNext(params.next) });
      return new RawResponse(302, { Location: location, 'Cache-Control': 'no-store' }, '');
    },
  });

export const routes = [
  startRoute('/accounts/login/social/saml/:name'),
  startRoute('/accounts/register/social/saml/:name'),
  publicRoute({
    method: 'POST',
    path: '/complete/saml/',
    params: { SAMLResponse: str().optional(), RelayState: str().optional() },
    response: pageOrRedirect,
    async handler({ app, realm, params, log }) {
      if (!params.SAMLResponse || !params.RelayState)
        return refused('This address takes an identity provider’s answer to a login started from the login page.');
      if (!methodEnabled(app, realm, 'SAML')) return refused('This organization does not allow logging in with SAML.');
      if (realm.deactivated) return refused('This organization has been deactivated.');
      try {
        const { identity, flow } = await finishSamlLogin(app, realm, params.SAMLResponse, params.RelayState, (reason) =>
          log.info('SAML answer not verified', { reason }),
        );
        const user = await accountFor(app, realm, identity.email, identity.fullName, flow.idp.auto_signup, log);
        return await finishLogin(app, realm, user, flow, flow.next);
      } catch (err) {
        if (!(err instanceof LoginRefusal)) throw err;
        log.info('SAML login refused', { reason: err.message });
        return refused(err.message);
      }
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/saml/metadata.xml',
    params: {},
    response: new RawSuccess(200, 'application/xml', 'The SAML service provider metadata'),
    async handler({ app, realm }) {
      if (!app.config.SAML_IDPS.length) return unknownProvider();
      return new RawResponse(200, { 'Content-Type': 'application/xml; charset=utf-8' }, spMetadata(app, realm));
    },
  }),
];
