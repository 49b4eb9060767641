// Bots: GET and POST /bots, PATCH and DELETE /bots/{bot_id}, and their API keys
// (GET /bots/{bot_id}/api_key, POST /bots/{bot_id}/api_key/regenerate), as Zulip's clients use them.
import { z } from 'zod';
import { accessBot, regenerateApiKey } from '../actions/api-keys.ts';
import { createBot, deactivateBotById, notForGuests, ownBots, updateBot } from '../actions/bots.ts';
import { BOT_TYPES, INTERFACES } from '../domain/bots.ts';
import { ROLES } from '../domain/roles.ts';
import { isValidUrl } from '../domain/url-validation.ts';
import { badRequest } from '../errors.ts';
import { bool, int, json, pathId, str } from '../http/params.ts';
import { MULTIPART_OVERHEAD_BYTES } from './uploads.ts';
import { userRoute } from './route.ts';
import { avatarUrl, botDicts } from '../queries/users.ts';

const botId = (path: Record<string, string>) => pathId(path.bot_id, () => badRequest('No such bot'));
const url = (name: string) => json(z.string().refine(isValidUrl, `${name} is not a URL`));
const configData = json(z.record(z.string(), z.string()));
const defaults = {
  default_sending_stream: str().optional(),
  default_events_register_stream: str().optional(),
  default_all_public_streams: bool().optional(),
};
const defaultsAnswer = {
  default_sending_stream: z.string().nullable(),
  default_events_register_stream: z.string().nullable(),
  default_all_public_streams: z.boolean(),
};
const uploadLimit = (config: { MAX_UPLOAD_BYTES: number }) => config.MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES;

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/bots',
    params: {},
    response: z.object({
      bots: z.array(z.object({ username: z.string(), full_name: z.string(), api_key: z.string(), avatar_url: z.string(), ...defaultsAnswer })),
    }),
    async handler({ app, realm, user }) {
      return { bots: await ownBots(app, realm, user) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/bots',
    params: {
      full_name: str(),
      short_name: str(),
      bot_type: int().default(BOT_TYPES.GENERIC),
      payload_url: url('payload_url').default(''),
      service_name: str().optional(),
      config_data: configData.default({}),
      interface_type: int().default(INTERFACES.GENERIC),
      ...defaults,
    },
    response: z.object({ user_id: z.number().int(), api_key: z.string(), avatar_url: z.string(), ...defaultsAnswer }),
    maxBody: uploadLimit,
    uploads: true,
    async handler({ app, realm, user, params, files }) {
      const bot = await createBot(
        app,
        realm,
        user,
        {
          fullName: params.full_name,
          shortName: params.short_name,
          botType: params.bot_type,
          payloadUrl: params.payload_url,
          interfaceType: params.interface_type,
          serviceName: params.service_name,
          configData: params.config_data,
          defaultSendingStream: params.default_sending_stream,
          defaultEventsRegisterStream: params.default_events_register_stream,
          defaultAllPublicStreams: params.default_all_public_streams,
        },
        files,
      );
      const [d] = await botDicts(app, realm, [bot]);
      return {
        user_id: bot.id,
        api_key: bot.apiKey,
        avatar_url: avatarUrl(bot),
        default_sending_stream: d!.default_sending_stream as string | null,
        default_events_register_stream: d!.default_events_register_stream as string | null,
        default_all_public_streams: d!.default_all_public_streams as boolean,
      };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/bots/:bot_id',
    params: {
      full_name: str().optional(),
      role: json(
        z
          .number()
          .int()
          .refine((r) => ROLES.includes(r), 'Invalid role'),
      ).optional(),
      bot_owner_id: int().optional(),
      config_data: configData.optional(),
      service_payload_url: url('service_payload_url').optional(),
      service_interface: int().default(INTERFACES.GENERIC),
      ...defaults,
    },
    response: z.object({
      full_name: z.string(),
      avatar_url: z.string(),
      service_interface: z.number().int(),
      service_payload_url: z.string().nullable(),
      config_data: z.record(z.string(), z.string()).nullable(),
      bot_owner: z.string().optional(),
      ...defaultsAnswer,
    }),
    maxBody: uploadLimit,
    uploads: true,
    async handler({ app, realm, user, params, path, files }) {
      return (await updateBot(
        app,
        realm,
        user,
        botId(path),
        {
          fullName: params.full_name,
          role: params.role,
          botOwnerId: params.bot_owner_id,
          configData: params.config_data,
          servicePayloadUrl: params.service_payload_url,
          serviceInterface: params.service_interface,
          defaultSendingStream: params.default_sending_stream,
          defaultEventsRegisterStream: params.default_events_register_stream,
          defaultAllPublicStreams: params.default_all_public_streams,
        },
        files,
      )) as never;
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/bots/:bot_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deactivateBotById(app, realm, user, botId(path));
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/bots/:bot_id/api_key',
    params: {},
    response: z.object({ api_key: z.string() }),
    async handler({ app, realm, user, path }) {
      notForGuests(user);
      return { api_key: (await accessBot(app, realm, user, botId(path))).apiKey };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/bots/:bot_id/api_key/regenerate',
    params: {},
    response: z.object({ api_key: z.string() }),
    async handler({ app, realm, user, path }) {
      const bot = await accessBot(app, realm, user, botId(path));
      return { api_key: await regenerateApiKey(app, realm, bot) };
    },
  }),
];
