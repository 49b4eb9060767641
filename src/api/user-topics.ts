// Personal topic settings: POST /user_topics and the legacy PATCH /users/me/subscriptions/muted_topics.
// The legacy route must be matched before any /users/me/subscriptions/{stream_id}: a literal path
// segment takes precedence over a parameter in the router, and this module is mounted first.
import { z } from 'zod';
import { updateMutedTopic, updateUserTopic } from '../actions/user-topics.ts';
import { MAX_TOPIC_LENGTH } from '../domain/channel-settings.ts';
import { choice, int, json, maxChars, str } from '../http/params.ts';
import { normalizeTopicName } from '../queries/narrow.ts';
import { TopicVisibility } from '../queries/user-topics.ts';
import { userRoute } from './route.ts';

const POLICIES: number[] = Object.values(TopicVisibility);
// The empty topic's display name means the empty topic, as in messages.
const topic = () => str(maxChars(MAX_TOPIC_LENGTH).transform(normalizeTopicName));

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/user_topics',
    params: {
      stream_id: int(),
      topic: topic(),
      visibility_policy: json(
        z
          .number()
          .int()
          .refine((p) => POLICIES.includes(p)),
      ),
    },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await updateUserTopic(app, realm, user, params.stream_id, params.topic, params.visibility_policy);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/users/me/subscriptions/muted_topics',
    params: { stream_id: int().optional(), stream: str().optional(), topic: topic(), op: choice(['add', 'remove']) },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await updateMutedTopic(app, realm, user, { streamId: params.stream_id, stream: params.stream }, params.topic, params.op);
      return {};
    },
  }),
];
