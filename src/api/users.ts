// Users: GET /users, /users/me, /users/{id|email}, POST /users.
import { z } from 'zod';
import { createUser } from '../actions/users.ts';
import { bool, str } from '../http/params.ts';
import { userRoute } from '../http/route.ts';
import { formatUser, maxMessageId, profileData, userByEmail, userById } from '../queries/users.ts';

const listParams = { client_gravatar: bool().default(true), include_custom_profile_fields: bool().default(false) };

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/users',
    params: listParams,
    async handler({ app, realm, user, params }) {
      const users = await app.prisma.user.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } });
      const profiles = params.include_custom_profile_fields ? await profileData(app, users.map((u) => u.id)) : undefined;
      return {
        members: users.map((u) => formatUser(app, realm, u, user, { clientGravatar: params.client_gravatar, profileData: profiles?.get(u.id) })),
      };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/me',
    params: {},
    async handler({ app, realm, user }) {
      const formatted = formatUser(app, realm, user, user, { clientGravatar: false, profileData: (await profileData(app, [user.id])).get(user.id) });
      const { bot_type: _bt, bot_owner_id: _bo, ...own } = formatted;
      return { ...own, max_message_id: await maxMessageId(app, user.id) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user',
    params: listParams,
    async handler({ app, realm, user, params, path }) {
      const target = /^\d+$/.test(path.user!) ? await userById(app, realm, Number(path.user)) : await userByEmail(app, realm, path.user!, user);
      const profiles = params.include_custom_profile_fields ? await profileData(app, [target.id]) : undefined;
      return { user: formatUser(app, realm, target, user, { clientGravatar: params.client_gravatar, profileData: profiles?.get(target.id) }) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users',
    params: { email: str(), password: str(), full_name: str(z.string()) },
    async handler({ app, realm, user, params }) {
      const created = await createUser(app, realm, { email: params.email, password: params.password, fullName: params.full_name }, user);
      return { user_id: created.id };
    },
  }),
];
