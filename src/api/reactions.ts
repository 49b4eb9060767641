// Emoji reactions: POST and DELETE /messages/{id}/reactions (spec 4.11).
import { z } from 'zod';
import { addReaction, removeReaction } from '../actions/reactions.ts';
import { str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { messageIdOf } from './messages.ts';

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/messages/:message_id/reactions',
    params: { emoji_name: str(), emoji_code: str().optional(), reaction_type: str().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params: p, path }) {
      await addReaction(app, realm, user, messageIdOf(path.message_id), { emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/messages/:message_id/reactions',
    params: { emoji_name: str().optional(), emoji_code: str().optional(), reaction_type: str().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params: p, path }) {
      await removeReaction(app, realm, user, messageIdOf(path.message_id), { emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type });
      return {};
    },
  }),
];
