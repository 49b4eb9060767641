// Users: GET /users, /users/me, /users/{id|email}, POST /users; administration: PATCH and DELETE
// /users/{id}, POST /users/{id}/reactivate; DELETE /users/me; a new API key for oneself (bots' are in api/bots.ts).
import { z } from 'zod';
import { regenerateApiKey } from '../actions/api-keys.ts';
import { deactivateOwnUser, deactivateUser, reactivateUser, updateUser } from '../actions/user-admin.ts';
import { createUser } from '../actions/users.ts';
import { ROLES } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { bool, json, pathId, pathInt, str } from '../http/params.ts';
import { profileValue } from './profile-fields.ts';
import { userRoute } from './route.ts';
import { accessibleUserIds, canAccessUser } from '../queries/user-access.ts';
import { formatUser, maxMessageId, profileData, userByEmail, userById } from '../queries/users.ts';
import { role } from '../events/schemas.ts';

const profileDataSchema = z.array(z.object({ id: z.number().int(), value: profileValue.nullable() }));
/** Administration addresses users by id only. */
const userId = (path: Record<string, string>) => pathId(path.user, () => badRequest('No such user'));

const int = z.number().int();
/** A user as GET /users and register show them (an inaccessible one as an "Unknown user" placeholder, without bot_type). */
export const apiUser = z
  .object({
    user_id: int,
    delivery_email: z.string().nullable().describe('Null when the viewer may not see the real address'),
    email: z.string().describe('The address clients name the user by (a dummy one when the real one is hidden)'),
    full_name: z.string(),
    date_joined: z.string(),
    is_active: z.boolean(),
    is_owner: z.boolean(),
    is_admin: z.boolean(),
    is_guest: z.boolean(),
    is_bot: z.boolean(),
    bot_type: int.nullable().optional(),
    bot_owner_id: int.nullable().optional().describe('Bots only'),
    is_system_bot: z.literal(true).optional().describe('Notification Bot, Welcome Bot and Email Gateway only'),
    role,
    timezone: z.string(),
    avatar_url: z.string().nullable().describe('Null when the client computes the Gravatar itself (client_gravatar)'),
    avatar_version: int,
    is_imported_stub: z.boolean(),
    profile_data: z
      .record(z.string(), z.object({ value: z.string(), rendered_value: z.string().optional() }))
      .optional()
      .describe('By field id; humans, when asked for'),
  })
  .meta({ id: 'User' });

const listParams = { client_gravatar: bool().default(true), include_custom_profile_fields: bool().default(false) };

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/api_key/regenerate',
    params: {},
    response: z.object({ api_key: z.string() }),
    async handler({ app, realm, user }) {
      return { api_key: await regenerateApiKey(app, realm, user) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users',
    params: listParams,
    response: z.object({ members: z.array(apiUser) }),
    async handler({ app, realm, user, params }) {
      // A guest limited by can_access_all_users_group gets only the users they can access (Zulip: no placeholders here).
      const accessible = await accessibleUserIds(app, realm, user);
      const all = await app.prisma.user.findMany({ where: { realmId: realm.id, isSystemBot: false }, orderBy: { id: 'asc' } });
      const users = accessible ? all.filter((u) => accessible.has(u.id)) : all;
      const profiles = params.include_custom_profile_fields
        ? await profileData(
            app,
            users.map((u) => u.id),
          )
        : undefined;
      return {
        members: users.map((u) => formatUser(app, realm, u, user, { clientGravatar: params.client_gravatar, profileData: profiles?.get(u.id) })),
      };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/me',
    params: {},
    response: apiUser.omit({ bot_type: true, bot_owner_id: true }).extend({ max_message_id: int }),
    async handler({ app, realm, user }) {
      const formatted = formatUser(app, realm, user, user, { clientGravatar: false, profileData: (await profileData(app, [user.id])).get(user.id) });
      const { bot_type: _bt, bot_owner_id: _bo, ...own } = formatted;
      return { ...own, max_message_id: await maxMessageId(app, user.id) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/users/me',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user }) {
      await deactivateOwnUser(app, realm, user);
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user',
    params: listParams,
    response: z.object({ user: apiUser }),
    async handler({ app, realm, user, params, path }) {
      const target = /^\d+$/.test(path.user!) ? await userById(app, realm, pathInt(path.user)) : await userByEmail(app, realm, path.user!, user);
      if (!(await canAccessUser(app, realm, user, target))) throw badRequest('Insufficient permission');
      const profiles = params.include_custom_profile_fields ? await profileData(app, [target.id]) : undefined;
      return { user: formatUser(app, realm, target, user, { clientGravatar: params.client_gravatar, profileData: profiles?.get(target.id) }) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users',
    params: { email: str(), password: str(), full_name: str(z.string()) },
    response: z.object({ user_id: int }),
    async handler({ app, realm, user, params }) {
      const created = await createUser(app, realm, { email: params.email, password: params.password, fullName: params.full_name }, user);
      return { user_id: created.id };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/users/:user',
    params: {
      full_name: str().optional(),
      role: json(
        z
          .number()
          .int()
          .refine((r) => ROLES.includes(r), 'Invalid role'),
      ).optional(),
      profile_data: json(profileDataSchema).optional(),
    },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await updateUser(app, realm, user, userId(path), { fullName: params.full_name, role: params.role, profileData: params.profile_data });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/users/:user',
    // The notification email the comment is for is not sent by this server.
    params: { deactivation_notification_comment: str(z.string().max(2000)).optional() },
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deactivateUser(app, realm, user, userId(path));
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/:user/reactivate',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await reactivateUser(app, realm, user, userId(path));
      return {};
    },
  }),
];
