// Incoming webhooks (Zulip's /api/v1/external/<integration>): a service posts its own payload,
// an integration turns it into a topic and a message, and the account whose key the URL carries
// (an incoming-webhook bot, as a rule) sends it to the channel and topic the URL names, or as a
// direct message to the bot's owner when the URL names no channel.
import type { App } from '../app.ts';
import { sendMessage, type Addressee } from '../actions/messages.ts';
import type { User } from '../db/generated/client.ts';
import { ApiError, badRequest, realmDeactivated, userDeactivated } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';

export interface WebhookRequest {
  body: Buffer;
  /** The media type, without parameters, lower case. */
  contentType: string;
  /** Every request header, names in lower case. */
  headers: Record<string, string>;
}

export interface Integration {
  /** Its URL segment: /api/v1/external/<name>. */
  name: string;
  displayName: string;
  /** The client its messages are sent with: Zulip<client>Webhook. */
  client: string;
  /** The message a request makes, or null when it makes none. */
  message(request: WebhookRequest): { topic: string; content: string } | null;
  /** What the service expects back besides Zulip's success envelope. */
  answer?: Record<string, unknown>;
}

/** A JSON object payload, or Zulip's answer to anything else. */
export function parsePayload(body: Buffer): Record<string, unknown> {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('Malformed JSON');
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw badRequest('Malformed JSON');
  return payload as Record<string, unknown>;
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
  message: { topic: string; content: string },
): Promise<void> {
  const to: Addressee =
    where.stream === undefined
      ? { kind: 'direct', users: [sender.botOwnerId ?? sender.id] }
      : { kind: 'channel', channel: /^\d+$/.test(where.stream) ? Number(where.stream) : where.stream, topic: where.topic ?? message.topic };
  await sendMessage(app, realm, sender, to, message.content, { client: `Zulip${integration.client}Webhook`, readBySender: true });
}
