// POST /api/v1/external/{integration}: incoming webhooks (src/webhooks/incoming.ts), authenticated
// by the `api_key` in the URL or by Basic credentials, as Zulip's webhook_view.
import { RE2JS } from 're2js';
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { json, str } from '../http/params.ts';
import { INTEGRATIONS } from '../webhooks/integrations/index.ts';
import { sendWebhookMessage, webhookSender } from '../webhooks/incoming.ts';
import { optionalUserRoute } from './route.ts';

/**
 * Zulip's event filter: shell-style patterns (`*`, `?`) the event type must match, or must not;
 * the URL's patterns run in RE2, in time linear in the event's name.
 */
function wanted(event: string | undefined, only: string[] | undefined, exclude: string[] | undefined): boolean {
  if (event === undefined) return true;
  const matches = (pattern: string) =>
    RE2JS.compile(pattern.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : RE2JS.quote(c))).join(''), RE2JS.DOTALL).matches(event);
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
      branches: str().optional(),
    },
    response: z.object({ ok: z.boolean().optional() }),
    async handler({ app, realm, user, params, path, query, body, headers }) {
      const integration = INTEGRATIONS.get(path.integration ?? '');
      if (!integration) throw new ApiError('Not Found', 'BAD_REQUEST', 404);
      const sender = user ?? (await webhookSender(app, realm, params.api_key));
      const all = headers.all ?? {};
      const contentType = (all['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const message = integration.message({ body, contentType, headers: all }, new URLSearchParams(query));
      if (message && wanted(message.event, params.only_events, params.exclude_events)) await sendWebhookMessage(app, realm, sender, integration, { stream: params.stream, topic: params.topic }, message);
      return integration.answer ?? {};
    },
  }),
];
