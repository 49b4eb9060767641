// Presence: POST /users/me/presence (report one's own status, read everyone's), GET /realm/presence
// and GET /users/{user_id_or_email}/presence (spec 4.20).
import { z } from 'zod';
import { updatePresence, type PresenceStatus } from '../actions/presence.ts';
import { badRequest } from '../errors.ts';
import { bool, json, pathInt, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { realmPresence, slimRealmPresenceJson, userPresence } from '../queries/presence.ts';
import { jsonFields } from '../http/route.ts';

const STATUSES = new Set<string>(['active', 'idle'] satisfies PresenceStatus[]);

const modernPresence = z.object({ active_timestamp: z.number().int(), idle_timestamp: z.number().int() }).meta({ id: 'Presence' });
const presenceStatus = z.enum(['active', 'idle']);
const legacyPresence = z
  .object({
    website: z.object({ client: z.literal('website'), status: presenceStatus, timestamp: z.number().int(), pushable: z.literal(false) }),
    aggregated: z.object({ client: z.literal('website'), status: presenceStatus, timestamp: z.number().int() }),
  })
  .meta({ id: 'LegacyPresence' });
/** The realm's presence: by user id (slim, the modern form) or by API email (legacy). */
export const presences = z.record(z.string(), z.union([modernPresence, legacyPresence]));

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/presence',
    params: {
      status: str(),
      ping_only: bool().default(false),
      // Zulip keeps usage statistics from it; there are none here.
      new_user_input: bool().default(false),
      slim_presence: bool().default(false),
      last_update_id: json(z.number().int()).optional(),
      history_limit_days: json(z.number().int()).optional(),
    },
    response: z
      .object({ presences: presences.optional(), server_timestamp: z.number().optional(), presence_last_update_id: z.number().int().optional() })
      .describe('Empty with ping_only'),
    async handler({ app, realm, user, params: p }) {
      if (user.isBot) throw badRequest('This endpoint does not accept bot requests.');
      if (!STATUSES.has(p.status)) throw badRequest(`Invalid status: ${p.status}`);
      await updatePresence(app, realm, user, p.status as PresenceStatus);
      if (p.ping_only) return {};
      const query = { lastUpdateId: p.last_update_id, historyLimitDays: p.history_limit_days };
      // Sending last_update_id is how a client says it speaks the modern form.
      if (p.slim_presence || p.last_update_id !== undefined) {
        const { presences, presence_last_update_id } = await slimRealmPresenceJson(app, realm, query);
        return jsonFields({ presences, server_timestamp: Date.now() / 1000, presence_last_update_id });
      }
      const { presences, presence_last_update_id } = await realmPresence(app, realm, { ...query, slim: false });
      return { presences, server_timestamp: Date.now() / 1000, presence_last_update_id };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/realm/presence',
    params: {},
    response: z.object({ presences, server_timestamp: z.number() }),
    async handler({ app, realm }) {
      const { presences } = await realmPresence(app, realm, { slim: false });
      return { presences, server_timestamp: Date.now() / 1000 };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user_id_or_email/presence',
    params: { slim_presence: bool().default(false) },
    response: z.object({
      presence: z.union([
        modernPresence,
        z.object({
          website: z.object({ status: presenceStatus, timestamp: z.number().int() }),
          aggregated: z.object({ status: z.enum(['active', 'idle', 'offline']), timestamp: z.number().int() }),
        }),
      ]),
    }),
    async handler({ app, realm, user, path, params }) {
      return {
        presence: await userPresence(
          app,
          realm,
          user,
          /^\d+$/.test(path.user_id_or_email!) ? pathInt(path.user_id_or_email) : path.user_id_or_email!,
          params.slim_presence,
        ),
      };
    },
  }),
];
