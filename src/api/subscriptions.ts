// Subscriptions: GET/POST/DELETE /users/me/subscriptions, POST /users/me/subscriptions/properties,
// GET /users/{user_id}/subscriptions/{stream_id}.
import { z } from 'zod';
import { subscribe, unsubscribe, updateSubscriptionProperties } from '../actions/subscriptions.ts';
import { bool, json } from '../http/params.ts';
import { userRoute } from './route.ts';
import { accessibleChannel, isSubscribed } from '../queries/channels.ts';
import { userSubscriptions } from '../queries/subscriptions.ts';
import { userById } from '../queries/users.ts';
import { newChannelOptions, newChannelParams, pathId } from './channels.ts';

const principals = json(z.union([z.array(z.string()), z.array(z.number().int())])).optional();

const subscribeParams = {
  subscriptions: json(z.array(z.object({ name: z.string(), description: z.string().optional(), color: z.string().optional() }))),
  principals,
  authorization_errors_fatal: bool().default(true),
  ...newChannelParams,
};

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/users/me/subscriptions',
    params: { include_subscribers: json(z.union([z.boolean(), z.literal('partial')])).default(false) },
    async handler({ app, realm, user, params }) {
      // We always send complete lists, which "partial" allows.
      return { subscriptions: await userSubscriptions(app, realm, user, params.include_subscribers !== false) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/subscriptions',
    params: subscribeParams,
    async handler({ app, realm, user, params: p }) {
      return subscribe(app, realm, user, {
        subscriptions: p.subscriptions,
        principals: p.principals,
        authorizationErrorsFatal: p.authorization_errors_fatal,
        newChannels: newChannelOptions(p),
      });
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/users/me/subscriptions',
    params: { subscriptions: json(z.array(z.string())), principals },
    async handler({ app, realm, user, params }) {
      return unsubscribe(app, realm, user, params.subscriptions, params.principals);
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/subscriptions/properties',
    params: {
      subscription_data: json(z.array(z.object({ stream_id: z.number().int(), property: z.string(), value: z.union([z.boolean(), z.string()]) }))),
    },
    async handler({ app, realm, user, params }) {
      await updateSubscriptionProperties(app, realm, user, params.subscription_data);
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user_id/subscriptions/:stream_id',
    params: {},
    async handler({ app, realm, user, path }) {
      const target = await userById(app, realm, pathId(path.user_id, 'No such user'));
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { active: true });
      return { is_subscribed: await isSubscribed(app, target.id, channel.id) };
    },
  }),
];
