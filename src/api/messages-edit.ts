// Changing messages: PATCH /messages/{id} (edit, move, resolve) and DELETE /messages/{id}.
import { z } from 'zod';
import { deleteMessage } from '../actions/messages-delete.ts';
import { updateMessage, type PropagateMode } from '../actions/messages-edit.ts';
import { Field, bool, int, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { messageIdOf } from './messages.ts';
import { attachment } from '../events/schemas.ts';

const propagateMode = new Field<PropagateMode>('string', z.enum(['change_one', 'change_later', 'change_all']), true).default('change_one');

export const routes = [
  userRoute({
    method: 'PATCH',
    path: '/api/v1/messages/:message_id',
    params: {
      topic: str().optional(),
      subject: str().optional(),
      propagate_mode: propagateMode,
      send_notification_to_old_thread: bool().default(false),
      send_notification_to_new_thread: bool().default(true),
      content: str().optional(),
      prev_content_sha256: str().optional(),
      stream_id: int().optional(),
    },
    response: z.object({ detached_uploads: z.array(attachment).describe('Your uploads no message links to any more') }),
    async handler({ app, realm, user, params: p, path }) {
      return updateMessage(app, realm, user, messageIdOf(path.message_id), {
        topic: p.topic ?? p.subject,
        propagateMode: p.propagate_mode,
        notifyOldThread: p.send_notification_to_old_thread,
        notifyNewThread: p.send_notification_to_new_thread,
        content: p.content,
        prevContentSha256: p.prev_content_sha256,
        streamId: p.stream_id,
      });
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/messages/:message_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteMessage(app, realm, user, messageIdOf(path.message_id));
      return {};
    },
  }),
];
