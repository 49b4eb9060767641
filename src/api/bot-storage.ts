// Bot storage: GET/PUT/DELETE /bot_storage (Zulip's zerver/views/storage.py).
import { z } from 'zod';
import { putBotStorage, removeBotStorage } from '../actions/bot-storage.ts';
import { json } from '../http/params.ts';
import { userRoute } from './route.ts';
import { botStorage } from '../queries/bot-storage.ts';

const keys = json(z.array(z.string())).default([]);

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/bot_storage',
    params: { keys },
    response: z.object({ storage: z.record(z.string(), z.string()) }),
    async handler({ app, user, params }) {
      return { storage: await botStorage(app, user.id, params.keys) };
    },
  }),
  userRoute({
    method: 'PUT',
    path: '/api/v1/bot_storage',
    params: { storage: json(z.record(z.string(), z.string())) },
    response: z.object({}),
    async handler({ app, user, params }) {
      await putBotStorage(app, user, Object.entries(params.storage));
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/bot_storage',
    params: { keys },
    response: z.object({}),
    async handler({ app, user, params }) {
      await removeBotStorage(app, user, params.keys);
      return {};
    },
  }),
];
