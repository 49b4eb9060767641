// Scheduled messages: GET/POST /scheduled_messages, PATCH/DELETE /scheduled_messages/{id} (spec 4.2).
import { z } from 'zod';
import {
  deleteScheduledMessage,
  deliveryTime,
  editScheduledMessage,
  scheduleMessage,
  scheduledMessageNotFound,
  type MessageKind,
} from '../actions/scheduled-messages.ts';
import { badRequest } from '../errors.ts';
import { bool, choice, int, json, pathId, str } from '../http/params.ts';
import { listScheduledMessages } from '../queries/scheduled-messages.ts';
import { clientName } from './messages.ts';
import { userRoute } from './route.ts';
import { scheduledMessage } from '../events/schemas.ts';

const messageType = () => choice(['direct', 'channel', 'stream', 'private']);
/** A channel id, or a list of user ids; which one the type needs is the action's check. */
const recipients = () => json(z.union([z.number().int(), z.array(z.number().int())]));
/** "channel" and "direct" are the modern names of Zulip's stored "stream" and "private". */
const kindOf = (type: string): MessageKind => (type === 'stream' || type === 'channel' ? 'stream' : 'private');

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/scheduled_messages',
    params: {},
    response: z.object({ scheduled_messages: z.array(scheduledMessage) }),
    async handler({ app, user }) {
      return { scheduled_messages: await listScheduledMessages(app, user.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/scheduled_messages',
    params: {
      content: str(),
      read_by_sender: bool().optional(),
      to: recipients(),
      type: messageType(),
      scheduled_delivery_timestamp: int(),
      topic: str().optional(),
      subject: str().optional(),
    },
    response: z.object({ scheduled_message_id: z.number().int() }),
    async handler({ app, realm, user, params, headers }) {
      const deliverAt = deliveryTime(params.scheduled_delivery_timestamp);
      const id = await scheduleMessage(app, realm, user, {
        type: kindOf(params.type),
        to: params.to,
        topic: params.topic ?? params.subject,
        content: params.content,
        deliverAt,
        readBySender: params.read_by_sender,
        client: clientName(headers.userAgent),
      });
      return { scheduled_message_id: id };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/scheduled_messages/:scheduled_message_id',
    params: {
      content: str().optional(),
      type: messageType().optional(),
      scheduled_delivery_timestamp: int().optional(),
      to: recipients().optional(),
      topic: str().optional(),
      subject: str().optional(),
    },
    response: z.object({}),
    async handler({ app, realm, user, params, path, headers }) {
      const id = pathId(path.scheduled_message_id, scheduledMessageNotFound);
      const topic = params.topic ?? params.subject;
      const { type, to, content, scheduled_delivery_timestamp: timestamp } = params;
      // Zulip's view checks, before it looks the message up.
      if (type === undefined && to === undefined && topic === undefined && content === undefined && timestamp === undefined)
        throw badRequest('Nothing to change');
      if (type !== undefined && to === undefined) throw badRequest('Recipient required when updating type of scheduled message.');
      const kind = type === undefined ? undefined : kindOf(type);
      if (kind === 'stream' && topic === undefined) throw badRequest('Topic required when updating scheduled message type to channel.');
      const deliverAt = timestamp === undefined ? undefined : deliveryTime(timestamp);
      await editScheduledMessage(app, realm, user, id, { type: kind, to, topic, content, deliverAt, client: clientName(headers.userAgent) });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/scheduled_messages/:scheduled_message_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteScheduledMessage(app, realm, user, pathId(path.scheduled_message_id, scheduledMessageNotFound));
      return {};
    },
  }),
];
