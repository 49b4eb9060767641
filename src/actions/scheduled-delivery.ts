// Sending what fell due (Zulip's try_deliver_one_scheduled_message): one row at a time, claimed
// with FOR UPDATE SKIP LOCKED in the transaction that sends it and marks it delivered, so however
// many processes run this, a row is sent once, and a crash before the commit leaves it to be sent
// at the next start. A channel message is sent in its channel's order, like every message. A
// message that may no longer be sent is marked failed and its sender told by the Notification Bot.
import type { App } from '../app.ts';
import type { ScheduledMessage, User } from '../db/generated/client.ts';
import { ApiError, badRequest } from '../errors.ts';
import { log } from '../log.ts';
import { accessMessage } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { DeliveryType, formatScheduledMessage, nextDueTime } from '../queries/scheduled-messages.ts';
import { inChannelOrder, notifyUser, writeMessage } from './messages.ts';
import { prepareMessage, type Addressee } from './messages-prepare.ts';
import { reminderContent } from './reminders.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';

/** How late a scheduled message may still go out (Zulip's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES); reminders have no limit. */
const LATE_CUTOFF_MS = 10 * 60_000;

interface Due {
  id: number;
  channelId: number | null;
}

/** The soonest row due at $1 (seconds) that no other process is sending now, from the partial index of rows still to send. */
export const NEXT_DUE = `SELECT id, "channelId" FROM "ScheduledMessage"
  WHERE NOT delivered AND NOT failed AND "scheduledTimestamp" <= to_timestamp($1::double precision) AT TIME ZONE 'UTC'
  ORDER BY "scheduledTimestamp", id LIMIT 1 FOR UPDATE SKIP LOCKED`;

async function nextDue(app: App): Promise<Due | undefined> {
  const [row] = await app.prisma.$queryRawUnsafe<Due[]>(NEXT_DUE, Date.now() / 1000);
  return row;
}

/**
 * Sends everything due now, one row after another, and returns when the next row falls due (the
 * scheduler's work). Stops early when the scheduler is stopping: what is left is sent at the next start.
 */
export async function deliverDueMessages(app: App): Promise<Date | null> {
  for (let due = await nextDue(app); due && !app.scheduler.stopping; due = await nextDue(app)) {
    try {
      await inChannelOrder(app, due.channelId, () => atomic(app, () => claimAndSend(app, due!)));
    } catch (err) {
      log.error('scheduled message failed unexpectedly', { id: due.id, error: err instanceof Error ? err.stack : String(err) });
      await recordFailure(app, due.id, 'Internal server error');
    }
  }
  return nextDueTime(app);
}

/** Locks the row if it is still to be sent, still in the channel whose order we run in, and due. */
async function claim(app: App, due: Due): Promise<ScheduledMessage | undefined> {
  const [row] = await app.prisma.$queryRaw<ScheduledMessage[]>`
    SELECT * FROM "ScheduledMessage" WHERE id = ${due.id} AND NOT delivered AND NOT failed FOR UPDATE SKIP LOCKED`;
  if (!row || row.channelId !== due.channelId || row.scheduledTimestamp.getTime() > Date.now()) return undefined;
  return row;
}

/** The organization, also one another process created since this one loaded them. */
async function realmOf(app: App, realmId: number): Promise<RealmInfo | undefined> {
  return app.realms.byId(realmId) ?? (await app.realms.reload(realmId));
}

/** Inside the channel's order and a transaction: sends one row, or records why it could not be sent. */
async function claimAndSend(app: App, due: Due): Promise<void> {
  const row = await claim(app, due);
  if (!row) return;
  const realm = await realmOf(app, row.realmId);
  const sender = await app.prisma.user.findUniqueOrThrow({ where: { id: row.senderId } });
  // Nobody to tell when the account or the organization is gone (Zulip sends no notice then).
  if (!realm || realm.deactivated) return void (await markFailed(app, row, 'This organization has been deactivated'));
  if (!sender.isActive) return void (await markFailed(app, row, 'Account is deactivated'));
  const reminder = row.deliveryType === DeliveryType.REMIND;
  let messageId: number;
  try {
    messageId = reminder ? await sendReminder(app, realm, sender, row) : await sendScheduled(app, realm, sender, row);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const failed = await markFailed(app, row, err.message);
    // A failed reminder is only marked: Zulip tells of reminders by sending them.
    if (!reminder) await tellSender(app, realm, sender, failed);
    return;
  }
  await app.prisma.scheduledMessage.update({ where: { id: row.id }, data: { delivered: true, deliveredMessageId: messageId } });
  const event: ChatEvent = reminder
    ? { type: 'reminders', op: 'remove', reminder_id: row.id }
    : { type: 'scheduled_messages', op: 'remove', scheduled_message_id: row.id };
  sendOnCommit({ realmId: row.realmId, userIds: [sender.id], event });
}

/** Checked again as if sent now (permissions may have changed), then sent as its sender. */
async function sendScheduled(app: App, realm: RealmInfo, sender: User, row: ScheduledMessage): Promise<number> {
  if (Date.now() > row.scheduledTimestamp.getTime() + LATE_CUTOFF_MS) throw badRequest('Message could not be sent at the scheduled time.');
  const to: Addressee = row.channelId === null ? { kind: 'direct', users: row.directTo } : { kind: 'channel', channel: row.channelId, topic: row.topic };
  const prepared = await prepareMessage(app, realm, sender, to, row.content);
  return writeMessage(app, realm, prepared, { client: row.sendingClient, readBySender: row.readBySender });
}

/** The reminder quotes the message as it is now, or as it was when scheduled if the user can no longer read it. */
async function sendReminder(app: App, realm: RealmInfo, user: User, row: ScheduledMessage): Promise<number> {
  let content = row.content;
  try {
    const { message } = await accessMessage(app, realm, user, row.reminderTargetMessageId!);
    content = await reminderContent(app, realm, user, message, row.reminderNote ?? '');
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
  return notifyUser(app, realm, user, content);
}

function markFailed(app: App, row: ScheduledMessage, failureMessage: string): Promise<ScheduledMessage> {
  return app.prisma.scheduledMessage.update({ where: { id: row.id }, data: { failed: true, failureMessage } });
}

/** Python's datetime.isoformat() of a whole-second UTC time, as Zulip's <time:...> syntax takes it. */
const isoSeconds = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, '+00:00');

/** The sender's client shows the message as failed, and the Notification Bot says why (Zulip's wording). */
async function tellSender(app: App, realm: RealmInfo, sender: User, row: ScheduledMessage): Promise<void> {
  sendOnCommit({
    realmId: realm.id,
    userIds: [sender.id],
    event: { type: 'scheduled_messages', op: 'update', scheduled_message: formatScheduledMessage(row) },
  });
  const content =
    `The message you scheduled for <time:${isoSeconds(row.scheduledTimestamp)}> was not sent because of the following error:\n\n` +
    `> ${row.failureMessage}\n\n[View scheduled messages](#scheduled)`;
  await notifyUser(app, realm, sender, content);
}

/** After an unexpected error rolled the sending back: the row is marked failed on its own, as Zulip does. */
async function recordFailure(app: App, id: number, failureMessage: string): Promise<void> {
  await atomic(app, async () => {
    const [row] = await app.prisma.$queryRaw<ScheduledMessage[]>`SELECT * FROM "ScheduledMessage" WHERE id = ${id} AND NOT delivered AND NOT failed FOR UPDATE`;
    if (!row) return;
    const failed = await markFailed(app, row, failureMessage);
    const realm = await realmOf(app, row.realmId);
    const sender = await app.prisma.user.findUniqueOrThrow({ where: { id: row.senderId } });
    if (realm && !realm.deactivated && sender.isActive && row.deliveryType === DeliveryType.SEND_LATER) await tellSender(app, realm, sender, failed);
  });
}
