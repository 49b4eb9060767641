// What an incoming-webhook integration is (src/webhooks/integrations/): how it turns a service's
// request into a message. Kept apart from the sending (incoming.ts), so that register can list the
// integrations without reaching the actions.
import { badRequest } from '../errors.ts';

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

/** How register's realm_incoming_webhook_bots describes it (none filters events or takes options yet). */
export const integrationDict = (i: Integration) => ({ name: i.name, display_name: i.displayName, all_event_types: null, config_options: [] });

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
