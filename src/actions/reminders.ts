// Message reminders (spec 4.15, Zulip's zerver/actions/reminders.py and zerver/lib/reminders.py):
// POST and DELETE /reminders. A reminder is a scheduled direct message to oneself that the
// Notification Bot sends, quoting the message it is about; the scheduler sends it
// (actions/scheduled-delivery.ts) with the quote taken afresh when the message is still readable.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { MAX_MESSAGE_LENGTH, MAX_REMINDER_NOTE_LENGTH } from '../domain/channel-settings.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/realm-settings.ts';
import { badRequest, notFound } from '../errors.ts';
import { encodeStream, hashUtilEncode } from '../markdown/links.ts';
import { accessMessage, memberIds, type FullMessage } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { DeliveryType, formatReminder } from '../queries/scheduled-messages.ts';
import { silentMention, truncate } from './messages-content.ts';
import { prepareMessage } from './messages-prepare.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { EventBody } from '../events/schemas.ts';

export const reminderNotFound = () => notFound('Reminder does not exist');

const mentionList = new Intl.ListFormat('en', { style: 'long', type: 'conjunction' });

/** Zulip's normalize_note_text: trailing whitespace and leading newlines go, then the length is checked. */
function normalizeNote(note: string): string {
  const body = note.trimEnd().replace(/^\n+/, '');
  if ([...body].length > MAX_REMINDER_NOTE_LENGTH) throw badRequest(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  return body;
}

/** Zulip's get_unused_fence: a backtick fence longer than any fence inside `content`. */
function unusedFence(content: string): string {
  let length = 3;
  for (const match of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, match[1]!.length + 1);
  return '`'.repeat(length);
}

/** What a poll or todo widget message is called in the reminder, instead of quoting its source. */
function widgetName(content: string): string | null {
  if (content.startsWith('/poll')) return 'a poll';
  if (content.startsWith('/todo')) return 'a todo list';
  return null;
}

/** The line before the quote: who said it, with a link to the message, and where. */
async function attribution(app: App, realm: RealmInfo, user: User, m: FullMessage, widget: string | null): Promise<string> {
  const sender = silentMention(m.sender);
  const realmUrl = app.realms.url(realm);
  if (m.channel) {
    const narrow = `#narrow/channel/${encodeStream(m.channel.id, m.channel.name)}/topic/${hashUtilEncode(m.topic)}`;
    const url = `${realmUrl}/${narrow}/near/${m.id}`;
    const where = `[#${m.channel.name} > ${m.topic || EMPTY_TOPIC_DISPLAY_NAME}](${narrow}/with/${m.id})`;
    return widget ? `${sender} [sent](${url}) ${widget} in ${where}.` : `${sender} [said](${url}) in ${where}:`;
  }
  const members = memberIds(m.directGroup!.memberKey);
  const url = `${realmUrl}/#narrow/dm/${members.join(',')}/near/${m.id}`;
  if (members.length === 1 && members[0] === user.id) {
    return widget ? `You [sent](${url}) yourself ${widget}.` : `You [sent](${url}) a note to yourself:`;
  }
  const recipientIds = members.length > 1 ? members.filter((id) => id !== m.senderId) : [m.senderId];
  const recipients = await app.prisma.user.findMany({ where: { id: { in: recipientIds } }, orderBy: { id: 'asc' } });
  const to = mentionList.format(recipients.map(silentMention));
  return widget ? `${sender} [sent](${url}) ${widget} to ${to}.` : `${sender} [said](${url}) to ${to}:`;
}

/** Zulip's get_reminder_formatted_content: the Notification Bot's words, the note, and the message quoted to fit the length limit. */
export async function reminderContent(app: App, realm: RealmInfo, user: User, m: FullMessage, rawNote: string): Promise<string> {
  const note = rawNote ? normalizeNote(rawNote) : '';
  const what = m.channel ? 'the following message' : 'the following direct message';
  const widget = widgetName(m.content);
  const head = `You requested a reminder for ${what}.${note ? ` Note:\n > ${note}` : ''}\n\n${await attribution(app, realm, user, m, widget)}`;
  if (widget) return head;
  const fence = unusedFence(m.content);
  const quote = (body: string) => `${fence}quote\n${body}\n${fence}`;
  const room = MAX_MESSAGE_LENGTH - [...`${head}\n${quote('')}`].length;
  return `${head}\n${quote(truncate(m.content, room, '\n[message truncated]'))}`;
}

function announce(realm: RealmInfo, user: User, event: EventBody<'reminders'>): void {
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'reminders', ...event } });
}

/** POST /reminders: the message must be one the user can read; returns the reminder's id. */
export async function createReminder(app: App, realm: RealmInfo, user: User, messageId: number, deliverAt: Date, note: string): Promise<number> {
  const { message } = await accessMessage(app, realm, user, messageId);
  const content = await reminderContent(app, realm, user, message, note);
  // Checked as a note to self from the user, though the Notification Bot will send it.
  const p = await prepareMessage(app, realm, user, { kind: 'direct', users: [user.id] }, content);
  return atomic(app, async () => {
    const row = await app.prisma.scheduledMessage.create({
      data: {
        realmId: realm.id,
        senderId: user.id,
        deliveryType: DeliveryType.REMIND,
        directTo: [user.id],
        content: p.content,
        renderedContent: p.rendered.html,
        sendingClient: 'Internal',
        readBySender: false,
        scheduledTimestamp: deliverAt,
        reminderTargetMessageId: message.id,
        reminderNote: note,
      },
    });
    announce(realm, user, { op: 'add', reminders: [formatReminder(row)] });
    onCommit(() => cacheChanged(app, { cache: 'schedule', at: row.scheduledTimestamp.getTime() }));
    return row.id;
  });
}

/** DELETE /reminders/{id}: only one's own reminder, delivered or not (as Zulip's access_reminder). */
export async function deleteReminder(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  await atomic(app, async () => {
    const { count } = await app.prisma.scheduledMessage.deleteMany({ where: { id, senderId: user.id, deliveryType: DeliveryType.REMIND } });
    if (count === 0) throw reminderNotFound();
    announce(realm, user, { op: 'remove', reminder_id: id });
  });
}
