// Message reminders: GET/POST /reminders, DELETE /reminders/{id} (spec 4.15).
import { z } from 'zod';
import { createReminder, deleteReminder, reminderNotFound } from '../actions/reminders.ts';
import { deliveryTime } from '../actions/scheduled-messages.ts';
import { int, pathId, str } from '../http/params.ts';
import { listReminders } from '../queries/scheduled-messages.ts';
import { userRoute } from './route.ts';
import { reminder } from '../events/schemas.ts';

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/reminders',
    params: {},
    response: z.object({ reminders: z.array(reminder) }),
    async handler({ app, user }) {
      return { reminders: await listReminders(app, user.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/reminders',
    params: { message_id: int(), scheduled_delivery_timestamp: int(), note: str().optional() },
    response: z.object({ reminder_id: z.number().int() }),
    async handler({ app, realm, user, params }) {
      const deliverAt = deliveryTime(params.scheduled_delivery_timestamp);
      return { reminder_id: await createReminder(app, realm, user, params.message_id, deliverAt, params.note ?? '') };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/reminders/:reminder_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteReminder(app, realm, user, pathId(path.reminder_id, reminderNotFound));
      return {};
    },
  }),
];
