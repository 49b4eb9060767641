// Incoming webhooks (Zulip's /api/v1/external/<integration>): a service posts its own payload,
// an integration turns it into a topic and a message, and the account whose key the URL carries
// (an incoming-webhook bot, as a rule) sends it to the channel and topic the URL names, or as a
// direct message to the bot's owner when the URL names no channel. A channel that does not exist
// is told to the bot's owner instead, and the service gets success, so it does not retry.
import type { App } from '../app.ts';
import { notifyUser, sendMessage, type Addressee } from '../actions/messages.ts';
import type { User } from '../db/generated/client.ts';
import { ApiError, badRequest, realmDeactivated, userDeactivated } from '../errors.ts';
import type { Integration, WebhookDirectory } from './integration.ts';
import type { RealmInfo } from '../queries/realms.ts';

/** The organization's members as integrations look them up; names only, of active accounts. */
export function webhookDirectory(app: App, realm: RealmInfo): WebhookDirectory {
  return {
    async nameByEmail(email) {
      const user = await app.prisma.user.findFirst({
        where: { realmId: realm.id, isActive: true, deliveryEmail: { equals: email, mode: 'insensitive' } }, orderBy: { id: 'asc' }, select: { fullName: true },
      });
      return user?.fullName ?? null;
    },
    async nameByGuess(username) {
      // A prefix compared as text, not a LIKE pattern: a name with % or _ matches only itself.
      const rows = await app.prisma.$queryRaw<{ fullName: string }[]>`
        SELECT "fullName" FROM "User"
        WHERE "realmId" = ${realm.id} AND "isActive"
          AND (lower("fullName") = lower(${username}) OR left(lower("deliveryEmail"), char_length(${username})) = lower(${username}))
        ORDER BY id LIMIT 1`;
      return rows[0]?.fullName ?? null;
    },
  };
}

/** Zulip's InvalidAPIKeyError. */
const invalidApiKey = () => new ApiError('Invalid API key', 'INVALID_API_KEY', 401);

/** The account of the `api_key` in the URL (services cannot send Basic credentials everywhere). */
export async function webhookSender(app: App, realm: RealmInfo, apiKey: string | undefined): Promise<User> {
  if (apiKey === undefined) throw badRequest("Missing 'api_key' argument");
  const user = await app.prisma.user.findUnique({ where: { apiKey } });
  if (!user || user.realmId !== realm.id) throw invalidApiKey();
  if (!user.isActive) throw userDeactivated();
  if (realm.deactivated) throw realmDeactivated();
  return user;
}

/** How long a bot's owner hears nothing more of its posts to missing channels (Zulip's BOT_OWNER_STREAM_ALERT_WAITPERIOD). */
const OWNER_NOTICE_WAIT_MS = 5 * 60_000;

/**
 * Zulip's send_pm_if_empty_stream for a channel that does not exist: Notification Bot tells the
 * bot's owner, at most once in five minutes (claimed in one UPDATE, so concurrent requests and
 * nodes send it once).
 */
async function tellOwnerOfMissingChannel(app: App, realm: RealmInfo, bot: User, channel: string): Promise<void> {
  if (!bot.isBot || bot.botOwnerId === null) return;
  const since = new Date(Date.now() - OWNER_NOTICE_WAIT_MS);
  const claimed = await app.prisma.user.updateMany({
    where: { id: bot.id, OR: [{ lastReminder: null }, { lastReminder: { lt: since } }] },
    data: { lastReminder: new Date() },
  });
  if (claimed.count === 0) return;
  const who = `\`${bot.deliveryEmail}\``;
  const content = /^\d+$/.test(channel)
    ? `Your bot ${who} tried to send a message to channel ID ${channel}, but there is no channel with that ID.`
    : `Your bot ${who} tried to send a message to channel #**${channel}**, but that channel does not exist. Click [here](#channels/new) to create it.`;
  const owner = await app.prisma.user.findUnique({ where: { id: bot.botOwnerId } });
  if (owner?.isActive) await notifyUser(app, realm, owner, content);
}

/** Zulip's check_send_webhook_message: to `stream` (a name or an id) and the URL's topic, else to the bot's owner. */
export async function sendWebhookMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  integration: Integration,
  where: { stream?: string; topic?: string },
  message: { topic: string; content: string },
): Promise<void> {
  const to: Addressee =
    where.stream === undefined
      ? { kind: 'direct', users: [sender.botOwnerId ?? sender.id] }
      : { kind: 'channel', channel: /^\d+$/.test(where.stream) ? Number(where.stream) : where.stream, topic: where.topic ?? message.topic };
  try {
    await sendMessage(app, realm, sender, to, message.content, { client: `Zulip${integration.client}Webhook`, readBySender: true });
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'STREAM_DOES_NOT_EXIST' && where.stream !== undefined)) throw error;
    await tellOwnerOfMissingChannel(app, realm, sender, where.stream.trim());
  }
}
