// The email part of Zulip's Notifications tab: which messages are emailed to a user who is away,
// after what delay (messages of a conversation are batched over it), whether the content is
// in the email and the organization's name in its subject, and the other emails (digest, new
// logins). Each box shows the server's value: changes come back as user_settings events.
import type { ChatClient } from '../../client.ts';
import { updateSettings, type EmailNotificationSettings } from '../../settings.ts';
import type { AppState } from '../../state.ts';
import { Outcome, useSave } from './SaveOutcome.tsx';

type Flag = { [K in keyof EmailNotificationSettings]: EmailNotificationSettings[K] extends boolean ? K : never }[keyof EmailNotificationSettings];

const MESSAGE_EMAILS: [Flag, string][] = [
  ['enable_offline_email_notifications', 'Direct messages, mentions and alert words'],
  ['enable_followed_topic_email_notifications', 'Messages in topics I follow'],
  ['enable_stream_email_notifications', 'All messages in channels (unless set otherwise per channel)'],
  ['wildcard_mentions_notify', 'Mentions of everyone (@all, @everyone, @channel, @topic) count as mentions of me'],
  ['enable_followed_topic_wildcard_mentions_notify', 'Mentions of everyone in topics I follow count as mentions of me'],
];

const MINUTE = 60;
/** The delays Zulip's settings offer. */
const BATCHING_PERIODS: [number, string][] = [
  [2 * MINUTE, '2 minutes'],
  [5 * MINUTE, '5 minutes'],
  [10 * MINUTE, '10 minutes'],
  [30 * MINUTE, '30 minutes'],
  [60 * MINUTE, '1 hour'],
  [6 * 60 * MINUTE, '6 hours'],
  [24 * 60 * MINUTE, '1 day'],
  [7 * 24 * 60 * MINUTE, '1 week'],
];

const REALM_NAME_IN_SUBJECT: [number, string][] = [
  [1, 'Automatic'],
  [2, 'Always'],
  [3, 'Never'],
];

const OTHER_EMAILS: [Flag, string][] = [
  ['enable_digest_emails', "Send digest emails when I'm away"],
  ['enable_login_emails', 'Send an email when my account logs in from somewhere new'],
];

export function EmailNotifications({ client, state }: { client: ChatClient; state: AppState }) {
  const [outcome, save] = useSave();
  const settings = state.settings;
  const change = (changes: Partial<EmailNotificationSettings>) => save(() => updateSettings(client.api, changes));
  const box = ([key, label]: [Flag, string]) => (
    <label key={key}>
      <input type="checkbox" checked={settings[key]} onChange={(e) => change({ [key]: e.currentTarget.checked })} /> {label}
    </label>
  );
  const period = settings.email_notifications_batching_period_seconds;
  return (
    <div class="channel-form">
      <fieldset>
        <legend>Email me about messages I missed</legend>
        {MESSAGE_EMAILS.map(box)}
      </fieldset>
      <label for="settings-email-delay">Delay before sending message notification emails</label>
      <select
        id="settings-email-delay"
        value={String(period)}
        onChange={(e) => change({ email_notifications_batching_period_seconds: Number(e.currentTarget.value) })}
      >
        {!BATCHING_PERIODS.some(([seconds]) => seconds === period) && <option value={String(period)}>{Math.round(period / MINUTE)} minutes</option>}
        {BATCHING_PERIODS.map(([seconds, label]) => (
          <option key={seconds} value={String(seconds)}>
            {label}
          </option>
        ))}
      </select>
      {box(['message_content_in_email_notifications', 'Include the message content in message notification emails'])}
      <label for="settings-email-realm-name">Include the organization name in the subject of message notification emails</label>
      <select
        id="settings-email-realm-name"
        value={String(settings.realm_name_in_email_notifications_policy)}
        onChange={(e) => change({ realm_name_in_email_notifications_policy: Number(e.currentTarget.value) })}
      >
        {REALM_NAME_IN_SUBJECT.map(([value, label]) => (
          <option key={value} value={String(value)}>
            {label}
          </option>
        ))}
      </select>
      <fieldset>
        <legend>Other emails</legend>
        {OTHER_EMAILS.map(box)}
      </fieldset>
      <Outcome outcome={outcome} />
    </div>
  );
}
