// Muted users: POST and DELETE /users/me/muted_users/{muted_user_id}.
import { z } from 'zod';
import { muteUser, unmuteUser } from '../actions/muted-users.ts';
import { badRequest } from '../errors.ts';
import { pathId } from '../http/params.ts';
import { userRoute } from './route.ts';

const path = '/api/v1/users/me/muted_users/:muted_user_id';
const mutedUserId = (p: Record<string, string>) => pathId(p.muted_user_id, () => badRequest('No such user'));

export const routes = [
  userRoute({
    method: 'POST',
    path,
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path: p }) {
      await muteUser(app, realm, user, mutedUserId(p));
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path,
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path: p }) {
      await unmuteUser(app, realm, user, mutedUserId(p));
      return {};
    },
  }),
];
