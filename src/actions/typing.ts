// Typing notifications: nothing is stored; the check decides who may send one and the event goes
// to the people who would receive the message being typed.
import type { App } from '../app.ts';
import { isInGroupSetting } from '../auth/permissions.ts';
import type { User } from '../db/generated/client.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, userSettingsSchema } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import { accessibleChannel, channelPermission, subscriberIds } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail } from '../queries/users.ts';
import { uniqueIds } from './channels.ts';
import { sendUnstored } from './transaction.ts';

export interface TypingRequest {
  type: 'direct' | 'private' | 'stream' | 'channel';
  op: 'start' | 'stop';
  to?: number[];
  streamId?: number;
  topic?: string;
}

/** POST /typing. */
export async function sendTyping(app: App, realm: RealmInfo, sender: User, req: TypingRequest): Promise<void> {
  const settings = userSettingsSchema.parse(sender.settings ?? {});
  const base = { type: 'typing', op: req.op, sender: { user_id: sender.id, email: apiEmail(app, realm, sender) } };
  if (req.type === 'stream' || req.type === 'channel') {
    if (req.streamId === undefined) throw badRequest("Missing 'stream_id' argument");
    if (req.topic === undefined) throw badRequest('Missing topic');
    if (!settings.send_stream_typing_notifications) throw badRequest('User has disabled typing notifications for channel messages');
    const { channel } = await accessibleChannel(app, realm, sender, req.streamId, { content: true, active: true });
    if (!isInGroupSetting(sender, channelPermission(realm, channel, 'can_send_message_group'), await app.realms.groups(realm.id), realm)) {
      throw badRequest('You do not have permission to post in this channel.');
    }
    // The empty topic's display names mean the empty topic.
    const topic = req.topic === EMPTY_TOPIC_DISPLAY_NAME || req.topic === '(no topic)' ? '' : req.topic;
    const recipients = (await subscriberIds(app, channel.id)).filter((id) => id !== sender.id);
    sendUnstored(app, { realmId: realm.id, userIds: uniqueIds(recipients), event: { ...base, message_type: 'stream', stream_id: channel.id, topic } });
    return;
  }
  if (req.to === undefined) throw badRequest("Missing 'to' argument");
  if (req.to.length === 0) throw badRequest("Empty 'to' list");
  if (!settings.send_private_typing_notifications) throw badRequest('User has disabled typing notifications for direct messages');
  const ids = req.to.includes(sender.id) ? [...new Set(req.to)] : [...new Set(req.to), sender.id];
  const users = await app.prisma.user.findMany({ where: { realmId: realm.id, id: { in: ids } } });
  const missing = ids.find((id) => !users.some((u) => u.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  const ordered = ids.map((id) => users.find((u) => u.id === id)!);
  const recipients = ordered.map((u) => ({ user_id: u.id, email: apiEmail(app, realm, u) }));
  sendUnstored(app, { realmId: realm.id, userIds: uniqueIds(ordered.filter((u) => u.isActive).map((u) => u.id)), event: { ...base, message_type: 'direct', recipients } });
}
