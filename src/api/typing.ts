// Typing notifications: POST /typing, POST /messages/{id}/typing (editing a message).
import { z } from 'zod';
import { sendEditTyping, sendTyping } from '../actions/typing.ts';
import { choice, int, intList, str } from '../http/params.ts';
import { messageIdOf } from './messages.ts';
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
      // The legacy name of `topic`, which Zulip still takes.
      subject: str().optional(),
    },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await sendTyping(app, realm, user, {
        type: params.type,
        op: params.op,
        to: params.to,
        streamId: params.stream_id,
        topic: (params.topic ?? params.subject)?.trim(),
      });
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/messages/:message_id/typing',
    params: { op: choice(['start', 'stop']) },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await sendEditTyping(app, realm, user, messageIdOf(path.message_id), params.op);
      return {};
    },
  }),
];
