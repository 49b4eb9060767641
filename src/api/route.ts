// This server's side of the router's Gate: a request's scope is the organization at its Host (with
// the scheme a trusted proxy reports) and the server's services; Basic credentials name a user of
// that organization, and so does a browser's session cookie. Every API module builds its routes
// with the constructors below.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { invalidSubdomain, notLoggedIn, realmDeactivated } from '../errors.ts';
import { sessionUser } from '../auth/web-sessions.ts';
import { routeBuilders, type Gate, type Route as HttpRoute } from '../http/route.ts';
import type { RealmInfo } from '../queries/realms.ts';

export interface Scope {
  app: App;
  realm: RealmInfo;
}

export type Route = HttpRoute<Scope, User>;

export const { userRoute, optionalUserRoute, publicRoute } = routeBuilders<Scope, User>();

export function apiGate(app: App): Gate<Scope, User> {
  return {
    scope({ host, scheme }) {
      // EXTERNAL_URL fixes the scheme; without it, a trusted proxy's word decides.
      const realm = app.realms.forHost(host, app.config.EXTERNAL_URL ? null : scheme);
      if (!realm) throw invalidSubdomain();
      return { app, realm };
    },
    authenticate: (scope, username, apiKey) => app.auth.authenticate(scope.realm, username, apiKey),
    async authenticateSession({ realm }, sessionId) {
      const user = await sessionUser(app.prisma, realm.id, sessionId);
      if (!user) throw notLoggedIn();
      if (realm.deactivated) throw realmDeactivated();
      return user;
    },
  };
}
