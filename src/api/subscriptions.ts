// Subscriptions: GET/POST/PATCH/DELETE /users/me/subscriptions, POST /users/me/subscriptions/properties,
// PATCH /users/me/subscriptions/{stream_id}, GET /users/{user_id}/subscriptions/{stream_id},
// GET /users/{user_id}/channels.
import { z } from 'zod';
import { subscribe, unsubscribe, updateSubscriptionProperties, updateSubscriptions } from '../actions/subscriptions.ts';
import { bool, json, pathId, str } from '../http/params.ts';
import { routeNotFound } from '../errors.ts';
import { userRoute } from './route.ts';
import { accessibleChannel, isSubscribed } from '../queries/channels.ts';
import { userChannelIds, userSubscriptions } from '../queries/subscriptions.ts';
import { userById } from '../queries/users.ts';
import { newChannelOptions, newChannelParams, pathId as channelPathId } from './channels.ts';
import { subscription } from '../events/schemas.ts';

const principals = json(z.union([z.array(z.string()), z.array(z.number().int())])).optional();

const newSubscription = z.object({ name: z.string(), description: z.string().optional(), color: z.string().optional() });

/** Zulip reads ids in subscription_data leniently: "1" is channel 1. */
const channelId = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);

const subscribeParams = {
  subscriptions: json(z.array(newSubscription)),
  principals,
  authorization_errors_fatal: bool().default(true),
  ...newChannelParams,
};

/** A subscription as GET /users/me/subscriptions and register list it. */
export const apiSubscription = subscription.extend({ subscribers: z.array(z.number().int()).optional().describe('With include_subscribers') });
const byUser = z.record(z.string(), z.array(z.string())).describe('Channel names by user id');
const subscribed = z.object({
  subscribed: byUser,
  already_subscribed: byUser,
  unauthorized: z.array(z.string()).optional().describe('Without authorization_errors_fatal'),
});
const unsubscribed = z.object({ removed: z.array(z.string()), not_removed: z.array(z.string()) });

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/users/me/subscriptions',
    params: { include_subscribers: json(z.union([z.boolean(), z.literal('partial')])).default(false) },
    response: z.object({ subscriptions: z.array(apiSubscription) }),
    async handler({ app, realm, user, params }) {
      // We always send complete lists, which "partial" allows.
      return { subscriptions: await userSubscriptions(app, realm, user, params.include_subscribers !== false) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/subscriptions',
    params: subscribeParams,
    response: subscribed,
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
    response: unsubscribed,
    async handler({ app, realm, user, params }) {
      return unsubscribe(app, realm, user, params.subscriptions, params.principals);
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/users/me/subscriptions',
    params: { add: json(z.array(newSubscription)).default([]), delete: json(z.array(z.string())).default([]) },
    response: subscribed.extend(unsubscribed.shape),
    async handler({ app, realm, user, params }) {
      return updateSubscriptions(app, realm, user, params.add, params.delete);
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/subscriptions/properties',
    params: {
      subscription_data: json(z.array(z.object({ stream_id: channelId, property: z.string(), value: z.union([z.boolean(), z.string()]) }))),
    },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await updateSubscriptionProperties(app, realm, user, params.subscription_data);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    // Zulip's pattern takes digits only, so named routes beside it (properties, muted_topics) stay theirs.
    path: '/api/v1/users/me/subscriptions/:stream_id',
    params: { property: str(), value: str() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const streamId = pathId(path.stream_id, routeNotFound);
      // A JSON boolean, else the string as sent (Zulip's Json[bool] | str, left to right).
      const value = params.value === 'true' ? true : params.value === 'false' ? false : params.value;
      await updateSubscriptionProperties(app, realm, user, [{ stream_id: streamId, property: params.property, value }]);
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user_id/channels',
    params: {},
    response: z.object({ subscribed_channel_ids: z.array(z.number().int()) }),
    async handler({ app, realm, user, path }) {
      const target = await userById(app, realm, pathId(path.user_id, routeNotFound));
      return { subscribed_channel_ids: await userChannelIds(app, realm, user, target) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/:user_id/subscriptions/:stream_id',
    params: {},
    response: z.object({ is_subscribed: z.boolean() }),
    async handler({ app, realm, user, path }) {
      const target = await userById(app, realm, channelPathId(path.user_id, 'No such user'));
      const { channel } = await accessibleChannel(app, realm, user, channelPathId(path.stream_id), { active: true });
      return { is_subscribed: await isSubscribed(app, target.id, channel.id) };
    },
  }),
];
