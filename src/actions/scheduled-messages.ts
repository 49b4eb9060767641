// Scheduled messages (spec 4.2, Zulip's zerver/actions/scheduled_messages.py): POST, PATCH and
// DELETE /scheduled_messages. A message is checked as POST /messages checks it (the same
// prepareMessage) when it is scheduled and again when it is sent; the scheduler
// (actions/scheduled-delivery.ts) hears of every new or moved delivery time after the commit.
import type { App } from '../app.ts';
import type { Prisma, ScheduledMessage, User } from '../db/generated/client.ts';
import { badRequest, notFound } from '../errors.ts';
import { DeliveryType, formatScheduledMessage } from '../queries/scheduled-messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { defaultReadBySender } from './messages.ts';
import { prepareMessage, type Addressee, type PreparedMessage } from './messages-prepare.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { EventBody } from '../events/schemas.ts';

export type MessageKind = 'stream' | 'private';
/** `to` as the API takes it: a channel id, or a list of user ids. */
export type ScheduledTo = number | number[];

export interface ScheduleRequest {
  type: MessageKind;
  to: ScheduledTo;
  topic: string | undefined;
  content: string;
  deliverAt: Date;
  readBySender: boolean | undefined;
  client: string;
}

export interface ScheduleEdit {
  type?: MessageKind;
  to?: ScheduledTo;
  topic?: string;
  content?: string;
  deliverAt?: Date;
  client: string;
}

export const scheduledMessageNotFound = () => notFound('Scheduled message does not exist');

/** Zulip's DeliveryTimeNotInFutureError, also its answer to editing a failed message without a new time. */
export const deliveryTimeNotInFuture = () => badRequest('Scheduled delivery time must be in the future.');

/** A delivery time from the API's UNIX seconds; it must be later than now. */
export function deliveryTime(timestamp: number): Date {
  const at = new Date(timestamp * 1000);
  if (Number.isNaN(at.getTime())) throw badRequest('Invalid scheduled_delivery_timestamp');
  if (at.getTime() <= Date.now()) throw deliveryTimeNotInFuture();
  return at;
}

/** Zulip's extract_stream_id / extract_direct_message_recipient_ids for the message's type. */
function addressee(type: MessageKind, to: ScheduledTo, topic: string | undefined): Addressee {
  if (type === 'stream') {
    if (Array.isArray(to)) throw badRequest('Invalid data type for channel ID');
    return { kind: 'channel', channel: to, topic };
  }
  if (!Array.isArray(to)) throw badRequest('Invalid data type for recipients');
  return { kind: 'direct', users: [...new Set(to)] };
}

/** Where a checked message goes, as the row stores it: a channel and topic, or the DM's other members (the sender alone for a note to self). */
function storedAddressee(p: PreparedMessage): Pick<ScheduledMessage, 'channelId' | 'topic' | 'directTo'> {
  if (p.channel) return { channelId: p.channel.id, topic: p.topic, directTo: [] };
  const others = p.recipients.filter((id) => id !== p.sender.id);
  return { channelId: null, topic: '', directTo: others.length ? others : [p.sender.id] };
}

function announce(realm: RealmInfo, user: User, event: EventBody<'scheduled_messages'>): void {
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'scheduled_messages', ...event } });
}

/** After the commit: the scheduler plans for the new delivery time. */
function wakeScheduler(app: App, at: Date): void {
  onCommit(() => cacheChanged(app, { cache: 'schedule', at: at.getTime() }));
}

/** POST /scheduled_messages: checked as a message sent now would be; returns the new id. */
export async function scheduleMessage(app: App, realm: RealmInfo, user: User, req: ScheduleRequest): Promise<number> {
  const p = await prepareMessage(app, realm, user, addressee(req.type, req.to, req.topic), req.content);
  const where = storedAddressee(p);
  const toSelf = p.channel === null && where.directTo.length === 1 && where.directTo[0] === user.id;
  return atomic(app, async () => {
    const row = await app.prisma.scheduledMessage.create({
      data: {
        realmId: realm.id,
        senderId: user.id,
        deliveryType: DeliveryType.SEND_LATER,
        ...where,
        content: p.content,
        renderedContent: p.rendered.html,
        sendingClient: req.client,
        readBySender: req.readBySender ?? (defaultReadBySender(req.client) && !toSelf),
        scheduledTimestamp: req.deliverAt,
      },
    });
    announce(realm, user, { op: 'add', scheduled_messages: [formatScheduledMessage(row)] });
    wakeScheduler(app, row.scheduledTimestamp);
    return row.id;
  });
}

/**
 * Inside a transaction: the user's own row of that kind, locked until the commit, so a change
 * waits for a delivery in progress and then sees it (Zulip's access_scheduled_message(lock_message=True)).
 */
export async function lockOwnRow(app: App, user: User, id: number, deliveryType: number, notFoundError: () => Error): Promise<ScheduledMessage> {
  const [row] = await app.prisma.$queryRaw<ScheduledMessage[]>`
    SELECT * FROM "ScheduledMessage" WHERE id = ${id} AND "senderId" = ${user.id} AND "deliveryType" = ${deliveryType} FOR UPDATE`;
  if (!row) throw notFoundError();
  return row;
}

/** PATCH /scheduled_messages/{id} (Zulip's edit_scheduled_message). */
export async function editScheduledMessage(app: App, realm: RealmInfo, user: User, id: number, edit: ScheduleEdit): Promise<void> {
  await atomic(app, async () => {
    const current = await lockOwnRow(app, user, id, DeliveryType.SEND_LATER, scheduledMessageNotFound);
    if (current.delivered) throw badRequest('Scheduled message was already sent');
    if (current.failed && !edit.deliverAt) throw deliveryTimeNotInFuture();
    // An edit clears a failure: the message is tried again at its (new) time.
    const data: Prisma.ScheduledMessageUpdateInput = { sendingClient: edit.client, failed: false, failureMessage: null };
    if (edit.type !== undefined || edit.to !== undefined || edit.topic !== undefined || edit.content !== undefined) {
      const type = edit.type ?? (current.channelId === null ? 'private' : 'stream');
      const to = edit.to ?? current.channelId ?? current.directTo;
      const p = await prepareMessage(app, realm, user, addressee(type, to, edit.topic ?? current.topic), edit.content ?? current.content);
      Object.assign(data, storedAddressee(p), { content: p.content, renderedContent: p.rendered.html });
    }
    if (edit.deliverAt) data.scheduledTimestamp = edit.deliverAt;
    const row = await app.prisma.scheduledMessage.update({ where: { id }, data });
    announce(realm, user, { op: 'update', scheduled_message: formatScheduledMessage(row) });
    wakeScheduler(app, row.scheduledTimestamp);
  });
}

/** DELETE /scheduled_messages/{id}: cancels it (a delivered one's row goes too, as in Zulip). */
export async function deleteScheduledMessage(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  await atomic(app, async () => {
    const { count } = await app.prisma.scheduledMessage.deleteMany({ where: { id, senderId: user.id, deliveryType: DeliveryType.SEND_LATER } });
    if (count === 0) throw scheduledMessageNotFound();
    announce(realm, user, { op: 'remove', scheduled_message_id: id });
  });
}
