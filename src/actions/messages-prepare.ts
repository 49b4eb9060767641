// A message made ready to store: its addressee resolved to a channel or to users, its content
// normalized and rendered, its recipients listed; a person's message passes the send checks
// (messages-send-checks.ts) on the way, a message the server posts itself does not.
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RenderResult } from '../markdown/types.ts';
import { cachedChannel, subscriberIds } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { findUserByEmail } from '../queries/users.ts';
import { renderWithRealm } from '../queries/render-context.ts';
import { rawQuery } from './transaction.ts';
import { normalizeContent, normalizeTopic } from './messages-content.ts';
import { checkCanCreateTopic, checkChannelSend, checkDirectMessagePermission, checkTopicsPolicy, checkWildcardMentions } from './messages-send-checks.ts';

export type Addressee = { kind: 'channel'; channel: number | string; topic: string | undefined } | { kind: 'direct'; users: number[] | string[] };

/** Everything needed to store and deliver one message, after every check passed. */
export interface PreparedMessage {
  sender: User;
  channel: Channel | null;
  memberKey: string | null;
  topic: string;
  content: string;
  rendered: RenderResult;
  recipients: readonly number[];
  topicParticipants: Set<number>;
}

/**
 * The distinct senders of channel $1's topic $2 (any case), by a skip scan of the (channel,
 * upper(topic), sender) index (partial on `"senderId" IS NOT NULL`, stated here): one descent per
 * sender, however long the topic. DISTINCT read every message of the topic.
 */
export const TOPIC_SENDERS = `WITH RECURSIVE senders(id) AS (
    (SELECT "senderId" FROM "Message" WHERE "channelId" = $1 AND upper(topic) = upper($2) AND "senderId" IS NOT NULL ORDER BY "senderId" LIMIT 1)
    UNION ALL
    SELECT (SELECT "senderId" FROM "Message" WHERE "channelId" = $1 AND upper(topic) = upper($2) AND "senderId" > senders.id ORDER BY "senderId" LIMIT 1)
      FROM senders WHERE senders.id IS NOT NULL)
  SELECT id FROM senders WHERE id IS NOT NULL`;

async function topicParticipants(app: App, channelId: number, topic: string): Promise<Set<number>> {
  const rows = await rawQuery<{ id: number }>(app, TOPIC_SENDERS, channelId, topic);
  return new Set(rows.map((r) => r.id));
}

/** Participants of a channel topic, read only when the content mentions @**topic**. */
export async function participantsIfNeeded(app: App, rendered: RenderResult, channelId: number | null, topic: string): Promise<Set<number>> {
  return rendered.topicWildcardMention && channelId !== null ? topicParticipants(app, channelId, topic) : new Set();
}

async function prepareChannelMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  to: Extract<Addressee, { kind: 'channel' }>,
  rawContent: string,
  by: Poster,
  noPreviews: boolean,
): Promise<PreparedMessage> {
  if (to.topic === undefined) throw badRequest('Missing topic');
  const topic = normalizeTopic(to.topic);
  const content = normalizeContent(rawContent);
  const channel = await resolveChannel(app, realm, to.channel);
  if (by === 'person') {
    await checkChannelSend(app, realm, sender, channel);
    await checkCanCreateTopic(app, realm, sender, channel, topic);
    checkTopicsPolicy(realm, channel, topic);
  }
  const rendered = await renderWithRealm(app, realm, content, { sender, noPreviews });
  const subscribers = await subscriberIds(app, channel.id);
  const participants = await participantsIfNeeded(app, rendered, channel.id, topic);
  if (by === 'person') await checkWildcardMentions(app, realm, sender, rendered, subscribers.length, participants);
  participants.add(sender.id);
  const recipients = subscribers.includes(sender.id) ? subscribers : [...subscribers, sender.id];
  return { sender, channel, memberKey: null, topic, content, rendered, recipients, topicParticipants: participants };
}

async function prepareDirectMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  to: Extract<Addressee, { kind: 'direct' }>,
  rawContent: string,
  by: Poster,
  noPreviews: boolean,
): Promise<PreparedMessage> {
  const content = normalizeContent(rawContent);
  const users = await resolveRecipients(app, realm, sender, to.users);
  const ids = [...new Set([sender.id, ...users.map((u) => u.id)])].sort((a, b) => a - b);
  const memberKey = ids.join(',');
  if (by === 'person') await checkDirectMessagePermission(app, realm, sender, users, memberKey);
  const rendered = await renderWithRealm(app, realm, content, { sender, noPreviews });
  return { sender, channel: null, memberKey, topic: '', content, rendered, recipients: ids, topicParticipants: new Set() };
}

/**
 * Who posts: a person's message (or their bot's) passes the send checks; the server's own (system
 * bots, an outgoing webhook's reply) goes where the server puts it, as Zulip's internal_send_* do.
 */
type Poster = 'person' | 'server';

function prepare(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string, by: Poster, noPreviews: boolean): Promise<PreparedMessage> {
  return to.kind === 'channel'
    ? prepareChannelMessage(app, realm, sender, to, content, by, noPreviews)
    : prepareDirectMessage(app, realm, sender, to, content, by, noPreviews);
}

/**
 * A person's message, checked. The checks run here, before the write and outside its transaction,
 * and are not repeated inside it: a plain channel message is written by a statement that is its
 * own transaction, shared with other channels' batches (messages-store.ts), and holding the checks
 * in an interactive transaction would cost every send two more round trips and its group commit.
 * A change racing the send (a role, a subscription) is seen by the next message, as in Zulip,
 * whose checks also precede the send's transaction.
 */
export function prepareMessage(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string, noPreviews = false): Promise<PreparedMessage> {
  return prepare(app, realm, sender, to, content, 'person', noPreviews);
}

/** A message the server posts itself, without the checks a person's message passes. */
export function prepareInternalMessage(app: App, realm: RealmInfo, sender: User, to: Addressee, content: string): Promise<PreparedMessage> {
  return prepare(app, realm, sender, to, content, 'server', false);
}

async function resolveChannel(app: App, realm: RealmInfo, ref: number | string): Promise<Channel> {
  const channel = await cachedChannel(app, realm, ref);
  if (channel) return channel;
  if (typeof ref === 'number') throw new ApiError(`Channel with ID '${ref}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: ref });
  const name = ref.trim();
  throw new ApiError(`Channel '${name}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream: name });
}

async function resolveRecipients(app: App, realm: RealmInfo, sender: User, refs: number[] | string[]): Promise<User[]> {
  if (refs.length === 0) throw badRequest('Message must have recipients');
  const users: User[] = [];
  for (const ref of refs) {
    const user =
      typeof ref === 'number' ? await app.prisma.user.findFirst({ where: { id: ref, realmId: realm.id } }) : await findUserByEmail(app, realm, ref, sender);
    if (!user) throw badRequest(typeof ref === 'number' ? `Invalid user ID ${ref}` : `Invalid email '${ref}'`);
    if (!user.isActive) throw badRequest(`'${typeof ref === 'number' ? user.deliveryEmail : ref}' is no longer using Zulip.`);
    users.push(user);
  }
  return users;
}
