// Scheduled messages and reminders as the API shows them (GET /scheduled_messages, GET
// /reminders, the register snapshot and the events that keep it current), and the next time the
// scheduler has work.
import type { App } from '../app.ts';
import type { ScheduledMessage } from '../db/generated/client.ts';
import type { z } from 'zod';
import { reminder, type scheduledMessage } from '../events/schemas.ts';

/** Zulip's ScheduledMessage.delivery_type. */
export const DeliveryType = { SEND_LATER: 1, REMIND: 2 } as const;

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function formatScheduledMessage(s: ScheduledMessage): z.infer<typeof scheduledMessage> {
  const common = {
    scheduled_message_id: s.id,
    content: s.content,
    rendered_content: s.renderedContent,
    scheduled_delivery_timestamp: seconds(s.scheduledTimestamp),
    failed: s.failed,
  };
  return s.channelId === null ? { ...common, type: 'private', to: s.directTo } : { ...common, type: 'stream', to: s.channelId, topic: s.topic };
}

export function formatReminder(s: ScheduledMessage): z.infer<typeof reminder> {
  return {
    reminder_id: s.id,
    type: 'private',
    to: s.directTo,
    content: s.content,
    rendered_content: s.renderedContent,
    scheduled_delivery_timestamp: seconds(s.scheduledTimestamp),
    failed: s.failed,
    reminder_target_message_id: reminder.shape.reminder_target_message_id.parse(s.reminderTargetMessageId),
  };
}

/**
 * The user's undelivered rows of one kind ($2), failed ones included, soonest first, from the
 * partial index of undelivered rows: `NOT delivered` is written out, as the index's predicate must
 * be (a parameter for it, as Prisma's model API sends, cannot match it).
 */
export const UNDELIVERED = `SELECT * FROM "ScheduledMessage" WHERE "senderId" = $1 AND "deliveryType" = $2 AND NOT delivered ORDER BY "scheduledTimestamp", id`;

function undelivered(app: App, userId: number, deliveryType: number): Promise<ScheduledMessage[]> {
  return app.prisma.$queryRawUnsafe<ScheduledMessage[]>(UNDELIVERED, userId, deliveryType);
}

export async function listScheduledMessages(app: App, userId: number): Promise<z.infer<typeof scheduledMessage>[]> {
  return (await undelivered(app, userId, DeliveryType.SEND_LATER)).map(formatScheduledMessage);
}

export async function listReminders(app: App, userId: number): Promise<z.infer<typeof reminder>[]> {
  return (await undelivered(app, userId, DeliveryType.REMIND)).map(formatReminder);
}

/** The soonest row still to be sent, from the partial index of those (its predicate written out). */
export const NEXT_DUE_TIME = `SELECT "scheduledTimestamp" FROM "ScheduledMessage" WHERE NOT delivered AND NOT failed ORDER BY "scheduledTimestamp", id LIMIT 1`;

/** When the soonest row still to be sent falls due, if any. */
export async function nextDueTime(app: App): Promise<Date | null> {
  const [next] = await app.prisma.$queryRawUnsafe<{ scheduledTimestamp: Date }[]>(NEXT_DUE_TIME);
  return next?.scheduledTimestamp ?? null;
}
