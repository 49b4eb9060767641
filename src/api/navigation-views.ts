// Navigation views: GET/POST /navigation_views, PATCH/DELETE /navigation_views/{fragment}. The fragment
// is the rest of the path, as Zulip's `path` converter takes it: clients send its slashes unencoded.
import { z } from 'zod';
import { addNavigationView, removeNavigationView, updateNavigationView } from '../actions/navigation-views.ts';
import { bool, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { navigationViews } from '../queries/navigation-views.ts';
import { navigationView } from '../events/schemas.ts';

const nonBlank = () => str(z.string().trim().min(1));

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/navigation_views',
    params: {},
    response: z.object({ navigation_views: z.array(navigationView) }),
    async handler({ app, user }) {
      return { navigation_views: await navigationViews(app, user.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/navigation_views',
    params: { fragment: nonBlank(), is_pinned: bool(), name: nonBlank().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await addNavigationView(app, realm, user, params.fragment, params.is_pinned, params.name);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/navigation_views/*',
    params: { is_pinned: bool().optional(), name: nonBlank().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await updateNavigationView(app, realm, user, path['*']!.trim(), { isPinned: params.is_pinned, name: params.name });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/navigation_views/*',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await removeNavigationView(app, realm, user, path['*']!.trim());
      return {};
    },
  }),
];
