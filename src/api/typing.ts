// Typing notifications: POST /typing.
import { sendTyping } from '../actions/typing.ts';
import { choice, int, intList, str } from '../http/params.ts';
import { userRoute } from './route.ts';

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/typing',
    params: {
      // "private" is the name older clients use for "direct".
      type: choice(['direct', 'private', 'stream', 'channel']).default('direct'),
      op: choice(['start', 'stop']),
      to: intList().optional(),
      stream_id: int().optional(),
      topic: str().optional(),
    },
    async handler({ app, realm, user, params }) {
      await sendTyping(app, realm, user, { type: params.type, op: params.op, to: params.to, streamId: params.stream_id, topic: params.topic });
      return {};
    },
  }),
];
