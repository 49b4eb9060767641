// POST /api/v1/external/{integration}: incoming webhooks (src/webhooks/incoming.ts), authenticated
// by the `api_key` in the URL or by Basic credentials, as Zulip's webhook_view.
import { RE2JS } from 're2js';
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { refusal } from '../http/rate-limit.ts';
import { apiEmail } from '../queries/users.ts';
import { malformedPayload, type WebhookMessage, type WebhookRequest } from '../webhooks/integration.ts';
import { json, str } from '../http/params.ts';
import { INTEGRATIONS } from '../webhooks/integrations/index.ts';
import { sendWebhookMessage, webhookDirectory, webhookSender } from '../webhooks/incoming.ts';
import { optionalUserRoute } from './route.ts';

/**
 * Zulip's event filter: shell-style patterns (`*`, `?`) the event type must match, or must not;
 * the URL's patterns run in RE2, in time linear in the event's name.
 */
function wanted(event: string | undefined, only: string[] | undefined, exclude: string[] | undefined): boolean {
  if (event === undefined) return true;
  const matches = (pattern: string) =>
    RE2JS.compile(
      pattern
        .split('')
        .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : RE2JS.quote(c)))
        .join(''),
      RE2JS.DOTALL,
    ).matches(event);
  return !(only && !only.some(matches)) && !(exclude && exclude.some(matches));
}

export const routes = [
  optionalUserRoute({
    method: 'POST',
    path: '/api/v1/external/:integration',
    rawBody: true,
    params: {
      api_key: str().optional(),
      stream: str().optional(),
      topic: str().optional(),
      only_events: json(z.array(z.string())).optional(),
      exclude_events: json(z.array(z.string())).optional(),
      // The integrations' own settings, read by them from the query (integration.message).
      branches: str().optional(),
      use_merge_request_title: str().optional(),
      name: str().optional(),
      desc: str().optional(),
      eu_region: str().optional(),
    },
    response: z.object({ ok: z.boolean().optional(), full_name: z.string().optional(), email: z.string().optional(), id: z.number().optional() }),
    async handler({ app, realm, user, params, path, query, body, headers }) {
      const integration = INTEGRATIONS.get(path.integration ?? '');
      if (!integration) throw new ApiError('Not Found', 'BAD_REQUEST', 404);
      const sender = user ?? (await webhookSender(app, realm, params.api_key));
      // A key in the URL spends its account's budget too, as Zulip limits webhooks per user.
      const decision = user ? undefined : app.limits?.user.hit(`u${sender.id}`);
      if (decision && !decision.allowed) throw refusal(decision);
      const all = headers.all ?? {};
      const contentType = (all['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const request: WebhookRequest = { body, contentType, headers: all };
      let made: WebhookMessage | WebhookMessage[] | null;
      try {
        made = await integration.message(request, new URLSearchParams(query), webhookDirectory(app, realm));
      } catch (error) {
        // A payload without a field the integration reads (Zulip's WildValue answers the same).
        if (error instanceof TypeError) throw malformedPayload();
        throw error;
      }
      for (const message of [made ?? []].flat()) {
        if (wanted(message.event, params.only_events, params.exclude_events))
          await sendWebhookMessage(app, realm, sender, integration, { stream: params.stream, topic: params.topic }, message);
      }
      const { answer } = integration;
      return typeof answer === 'function' ? answer(request, { id: sender.id, fullName: sender.fullName, email: apiEmail(app, realm, sender) }) : (answer ?? {});
    },
  }),
];
