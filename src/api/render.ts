// POST /messages/render: a message's HTML as it would be sent, without sending it.
import { z } from 'zod';
import { MAX_MESSAGE_LENGTH } from '../domain/channel-settings.ts';
import { str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { renderWithRealm } from '../queries/render-context.ts';

// Zulip's limit counts code points (Python's len), not UTF-16 units.
const content = z.string().refine((s) => [...s].length <= MAX_MESSAGE_LENGTH, `content is too long (limit: ${MAX_MESSAGE_LENGTH} characters)`);

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/messages/render',
    params: { content: str(content) },
    response: z.object({ rendered: z.string() }),
    async handler({ app, realm, user, params }) {
      return { rendered: (await renderWithRealm(app, realm, params.content, { sender: user })).html };
    },
  }),
];
