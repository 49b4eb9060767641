// Message reminders (Zulip's /reminders): "Remind me about this" on a message schedules a direct
// message to oneself that Notification Bot sends at the time chosen, quoting the message; `#reminders`
// lists those waiting. The list comes with register and is kept by `reminders` events.
import type { Api } from './api.ts';

export interface Reminder {
  reminder_id: number;
  content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
  reminder_target_message_id: number;
}

/** The times offered, as Zulip's reminder popover does; "custom" takes a date and time typed in. */
export const REMINDER_TIMES = {
  '20m': 'In 20 minutes',
  '1h': 'In 1 hour',
  '3h': 'In 3 hours',
  tomorrow: 'Tomorrow at 9:00',
  custom: 'Custom time',
} as const;

export type ReminderTime = keyof typeof REMINDER_TIMES;

/** When a preset falls, counted from `now`; null for "custom". */
export function reminderTime(choice: ReminderTime, now: Date): Date | null {
  const minutes = { '20m': 20, '1h': 60, '3h': 180 } as const;
  if (choice in minutes) return new Date(now.getTime() + minutes[choice as keyof typeof minutes] * 60_000);
  if (choice !== 'tomorrow') return null;
  const day = new Date(now);
  day.setDate(day.getDate() + 1);
  day.setHours(9, 0, 0, 0);
  return day;
}

export async function createReminder(api: Api, messageId: number, at: Date, note: string): Promise<void> {
  await api.post('/reminders', { message_id: messageId, scheduled_delivery_timestamp: Math.floor(at.getTime() / 1000), note });
}

export async function deleteReminder(api: Api, id: number): Promise<void> {
  await api.delete(`/reminders/${id}`);
}
