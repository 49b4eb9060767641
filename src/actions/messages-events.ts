// The `message` event of a stored message and a channel's first-message news; rebuilt from the
// database for a node of a cluster that publishes what another node wrote.
import type { App } from '../app.ts';
import type { EventEnvelope } from '../bus/bus.ts';
import { flagList } from '../domain/message-flags.ts';
import { metadataUserIds } from '../queries/channels.ts';
import { compiledLinkifiers } from '../queries/linkifiers.ts';
import { conversationUsers, loadMessages, messageObject, type FullMessage } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import type { MessageToStore, SendOptions } from './messages-store.ts';

/** A channel's first message is news to those who see the channel but get no message event. */
export async function firstMessageNews(app: App, realm: RealmInfo, message: FullMessage, { p, flags }: MessageToStore): Promise<Omit<EventEnvelope, 'xid'>> {
  return {
    realmId: realm.id,
    userIds: (await metadataUserIds(app, realm, p.channel!)).filter((id) => !flags.has(id)),
    event: { type: 'stream', op: 'update', stream_id: p.channel!.id, name: p.channel!.name, property: 'first_message_id', value: message.id },
  };
}

/** Each recipient's flags, one shared object per distinct set (the fan-out serializes each once). */
function perUserFlags(flags: Map<number, number>): Record<number, { flags: string[] }> {
  const byBits = new Map<number, { flags: string[] }>();
  const out: Record<number, { flags: string[] }> = {};
  for (const [userId, bits] of flags) {
    let parts = byBits.get(bits);
    if (!parts) byBits.set(bits, (parts = { flags: flagList(bits) }));
    out[userId] = parts;
  }
  return out;
}

/** The `message` event of a stored message, with each recipient's flags. */
export async function messageEnvelope(
  app: App,
  realm: RealmInfo,
  message: FullMessage,
  { recipients, flags, opts }: { recipients: readonly number[]; flags: Map<number, number>; opts: Pick<SendOptions, 'queueId' | 'localId'> },
): Promise<Omit<EventEnvelope, 'xid'>> {
  return {
    realmId: realm.id,
    userIds: recipients,
    event: { type: 'message', message: messageObject(app, realm, message, await conversationUsers(app, [message]), await compiledLinkifiers(app, realm.id)) },
    perUser: perUserFlags(flags),
    ...(opts.queueId && opts.localId !== undefined ? { perQueue: { [opts.queueId]: { local_message_id: opts.localId } } } : {}),
    publicChannelMessage: message.channel !== null && !message.channel.inviteOnly,
  };
}

/**
 * The `message` events of stored channel messages, rebuilt for a node that publishes them because
 * the node that wrote them died first (src/cluster/outbox.ts): with each recipient's flags as
 * stored now; the sender's local_message_id was never stored, and a channel's first message goes
 * without its first_message_id news.
 */
export async function storedMessageEvents(app: App, ids: number[], xid: number): Promise<EventEnvelope[]> {
  const flags = new Map<number, Map<number, number>>(ids.map((id) => [id, new Map()]));
  for (const r of await app.prisma.userMessage.findMany({ where: { messageId: { in: ids } }, select: { userId: true, messageId: true, flags: true } }))
    flags.get(r.messageId)!.set(r.userId, r.flags);
  const events: EventEnvelope[] = [];
  for (const message of await loadMessages(app, ids)) {
    const realm = app.realms.byId(message.realmId) ?? (await app.realms.reload(message.realmId))!;
    const recipients = flags.get(message.id)!;
    events.push({ ...(await messageEnvelope(app, realm, message, { recipients: [...recipients.keys()], flags: recipients, opts: {} })), xid });
  }
  return events;
}
