// Code playgrounds: POST /realm/playgrounds, DELETE /realm/playgrounds/{id} (administrators,
// checked in the actions).
import { z } from 'zod';
import { addPlayground, removePlayground } from '../actions/realm-playgrounds.ts';
import { str } from '../http/params.ts';
import { pathId } from './channels.ts';
import { userRoute } from './route.ts';

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/playgrounds',
    params: { name: str(), pygments_language: str(), url_template: str() },
    response: z.object({ id: z.number().int() }),
    async handler({ app, realm, user, params: p }) {
      return { id: await addPlayground(app, realm, user, { name: p.name, pygmentsLanguage: p.pygments_language, urlTemplate: p.url_template }) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/realm/playgrounds/:playground_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await removePlayground(app, realm, user, pathId(path.playground_id, 'Invalid playground'));
      return {};
    },
  }),
];
