// Incoming webhooks (Zulip's /api/v1/external/<integration>): a service posts its own payload,
// an integration turns it into a topic and a message, and the account whose key the URL carries
// (an incoming-webhook bot, as a rule) sends it to the channel and topic the URL names, or as a
// direct message to the bot's owner when the URL names no channel. A channel that does not exist
// is told to the bot's owner instead, and the service gets success, so it does not retry.
import type { App } from '../app.ts';
import { sendMessage } from '../actions/messages.ts';
import type { Addressee } from '../actions/messages-prepare.ts';
import type { User } from '../db/generated/client.ts';
import { ApiError, badRequest, realmDeactivated, userDeactivated } from '../errors.ts';
import type { Integration, WebhookDirectory, WebhookMessage } from './integration.ts';
import type { RealmInfo } from '../queries/realms.ts';

/** The organization's members as integrations look them up; names only, of active accounts. */
export function webhookDirectory(app: App, realm: RealmInfo): WebhookDirectory {
  return {
    async nameByEmail(email) {
      const user = await app.prisma.user.findFirst({
        where: { realmId: realm.id, isActive: true, deliveryEmail: { equals: email, mode: 'insensitive' } },
        orderBy: { id: 'asc' },
        select: { fullName: true },
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

/** Zulip's check_send_webhook_message: to `stream` (a name or an id) and the URL's topic, else to the bot's owner. */
export async function sendWebhookMessage(
  app: App,
  realm: RealmInfo,
  sender: User,
  integration: Integration,
  where: { stream?: string; topic?: string },
  message: WebhookMessage,
): Promise<void> {
  const to: Addressee =
    where.stream === undefined
      ? { kind: 'direct', users: [sender.botOwnerId ?? sender.id] }
      : { kind: 'channel', channel: /^\d+$/.test(where.stream) ? Number(where.stream) : where.stream, topic: where.topic ?? message.topic };
  try {
    await sendMessage(app, realm, sender, to, message.content, {
      client: `Zulip${integration.client}Webhook`,
      readBySender: true,
      noPreviews: message.noPreviews,
    });
  } catch (error) {
    // sendMessage has told the bot's owner; the service gets success, so that it does not retry.
    if (!(error instanceof ApiError && error.code === 'STREAM_DOES_NOT_EXIST')) throw error;
  }
}
