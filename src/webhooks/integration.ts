// What an incoming-webhook integration is (src/webhooks/integrations/): how it turns a service's
// request into a message. Kept apart from the sending (incoming.ts), so that register can list the
// integrations without reaching the actions.
import { ApiError, badRequest } from '../errors.ts';

export interface WebhookRequest {
  body: Buffer;
  /** The media type, without parameters, lower case. */
  contentType: string;
  /** Every request header, names in lower case. */
  headers: Record<string, string>;
}

/** A message an integration makes: its topic, text and (when it has types) its event type. */
export interface WebhookMessage {
  topic: string;
  content: string;
  event?: string;
  /** Its links are not previewed (images behind the service's login). */
  noPreviews?: boolean;
}

/** The account a webhook request is made with, as some services want it described back. */
export interface WebhookSender {
  id: number;
  fullName: string;
  email: string;
}

/** What an integration may ask of the organization: people named in a payload (Jira's). */
export interface WebhookDirectory {
  /** The full name of the active member with this (delivery) email, if any. */
  nameByEmail(email: string): Promise<string | null>;
  /** Zulip's guess for a service's user name: an active member of that full name, or whose email starts with it. */
  nameByGuess(username: string): Promise<string | null>;
}

export interface Integration {
  /** Its URL segment: /api/v1/external/<name>. */
  name: string;
  displayName: string;
  /** The client its messages are sent with: Zulip<client>Webhook. */
  client: string;
  /** Its event types, for only_events and exclude_events; none when it has no types. */
  allEventTypes?: string[];
  /** Other names its URL answers to (Forgejo's is Gitea's integration). */
  aliases?: string[];
  /** How to set the service up, one sentence for the integrations page. */
  setup: string;
  /**
   * The messages a request makes (with their event type, when the integration has types), or
   * null when it makes none. `query` is the URL's, for integration settings such as `branches`.
   */
  message(
    request: WebhookRequest,
    query: URLSearchParams,
    directory: WebhookDirectory,
  ): WebhookMessage | WebhookMessage[] | null | Promise<WebhookMessage | null>;
  /** What the service expects back besides Zulip's success envelope. */
  answer?: Record<string, unknown> | ((request: WebhookRequest, sender: WebhookSender) => Record<string, unknown>);
}

/** How register's realm_incoming_webhook_bots describes it (none takes options yet). */
export const integrationDict = (i: Integration) => ({
  name: i.name,
  display_name: i.displayName,
  all_event_types: i.allEventTypes ?? null,
  config_options: [],
});

/** Zulip's UnsupportedWebhookEventTypeError: answered with 200, so that the service does not retry. */
export const unsupportedEvent = (webhookName: string, eventType: string) =>
  new ApiError(`The '${eventType}' event isn't currently supported by the ${webhookName} webhook; ignoring`, 'UNSUPPORTED_WEBHOOK_EVENT_TYPE', 200, {
    webhook_name: webhookName,
    event_type: eventType,
  });

/** Zulip's AnomalousWebhookPayloadError: a payload no known version of the service sends. */
export const anomalousPayload = (webhookName: string) =>
  new ApiError(`Unable to parse request: Did ${webhookName} generate this event?`, 'ANOMALOUS_WEBHOOK_PAYLOAD', 400);

/** Zulip's MissingHTTPEventHeaderError. */
export const missingEventHeader = (header: string) => new ApiError(`Missing the HTTP event header '${header}'`, 'MISSING_HTTP_EVENT_HEADER', 400, { header });

/**
 * An ISO time as a Zulip global time (shown in each reader's zone), to the second and with the
 * offset it was given in (Zulip's datetime_to_global_time).
 */
export function globalTime(iso: string): string {
  const parts = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(iso);
  return parts ? `<time:${parts[1]}${parts[2] === 'Z' ? '+00:00' : parts[2]}>` : `<time:${iso}>`;
}

/** Zulip's answer to a payload without the fields an integration reads. */
export const malformedPayload = () => badRequest('Malformed payload');

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
