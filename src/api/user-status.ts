// User status: POST /users/me/status, POST /users/{id}/status (administrators), GET /users/{id}/status.
import { z } from 'zod';
import { accessUserForAdmin } from '../actions/user-admin.ts';
import { MAX_STATUS_TEXT_LENGTH, updateUserStatus } from '../actions/user-status.ts';
import { badRequest } from '../errors.ts';
import { bool, pathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { accessUser } from '../queries/user-access.ts';
import { userStatus as readUserStatus } from '../queries/user-status.ts';

const statusFields = {
  status_text: str(z.string().max(MAX_STATUS_TEXT_LENGTH)).optional(),
  emoji_name: str().optional(),
  emoji_code: str().optional(),
  reaction_type: str().optional(),
};
const userId = (path: Record<string, string>) => pathId(path.user_id, () => badRequest('No such user'));
const statusRequest = (p: { status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string }) => ({
  statusText: p.status_text,
  emojiName: p.emoji_name,
  emojiCode: p.emoji_code,
  reactionType: p.reaction_type,
});

/** The parts of a status that are set; `away` (deprecated) is presence sharing turned off. */
export const userStatus = z
  .object({
    away: z.literal(true).optional(),
    status_text: z.string().optional(),
    emoji_name: z.string().optional(),
    emoji_code: z.string().optional(),
    reaction_type: z.string().optional(),
  })
  .meta({ id: 'UserStatus' });

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/status',
    params: { ...statusFields, away: bool().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await updateUserStatus(app, realm, user, { ...statusRequest(params), away: params.away });
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/:user_id/status',
    params: statusFields,
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const target = await accessUserForAdmin(app, realm, user, userId(path), { allowDeactivated: false, allowBots: false });
      await updateUserStatus(app, realm, target, statusRequest(params));
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user_id/status',
    params: {},
    response: z.object({ status: userStatus }),
    async handler({ app, realm, user, path }) {
      return { status: await readUserStatus(app, await accessUser(app, realm, user, userId(path))) };
    },
  }),
];
