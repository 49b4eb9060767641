// "Remind me about this": when (a preset or a date and time typed in) and an optional note, then
// POST /reminders; the reminder then shows under `#reminders` from its event.
import { useState } from 'preact/hooks';
import type { ChatClient } from '../client.ts';
import { formatFullDate } from '../format.ts';
import { REMINDER_TIMES, type ReminderTime, createReminder, reminderTime } from '../reminders.ts';
import { ErrorLine, useAction } from './Action.tsx';

interface Props {
  client: ChatClient;
  messageId: number;
  /** Called with when the reminder was set for, or null when given up. */
  onDone: (at: Date | null) => void;
}

export function ReminderForm({ client, messageId, onDone }: Props) {
  const [choice, setChoice] = useState<ReminderTime>('1h');
  const [custom, setCustom] = useState('');
  const [note, setNote] = useState('');
  const [error, run] = useAction();
  const id = (name: string) => `reminder-${name}-${messageId}`;
  async function submit(e: Event) {
    e.preventDefault();
    // A datetime-local value without a zone is the browser's local time, as Date reads it.
    const at = reminderTime(choice, new Date()) ?? new Date(custom);
    if (await run(() => createReminder(client.api, messageId, at, note))) onDone(at);
  }
  return (
    <form class="reminder-form" aria-label="Remind me about this" onSubmit={submit}>
      <label for={id('time')}>Remind me</label>
      <select id={id('time')} value={choice} onChange={(e) => setChoice(e.currentTarget.value as ReminderTime)}>
        {(Object.keys(REMINDER_TIMES) as ReminderTime[]).map((t) => (
          <option key={t} value={t}>
            {REMINDER_TIMES[t]}
          </option>
        ))}
      </select>
      {choice === 'custom' && (
        <>
          <label for={id('at')}>Date and time</label>
          <input id={id('at')} type="datetime-local" required value={custom} onInput={(e) => setCustom(e.currentTarget.value)} />
        </>
      )}
      <label for={id('note')}>Note (optional)</label>
      <textarea id={id('note')} rows={2} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit" class="button button-small">
          Schedule reminder
        </button>
        <button type="button" class="button button-small button-secondary" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** What shows once a reminder is set. */
export const reminderNotice = (at: Date, twentyFourHour: boolean) => `Reminder set for ${formatFullDate(at.getTime() / 1000, twentyFourHour)}.`;
