// POST /api/v1/external/{integration}: incoming webhooks (src/webhooks/incoming.ts), authenticated
// by the `api_key` in the URL or by Basic credentials, as Zulip's webhook_view.
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { str } from '../http/params.ts';
import { INTEGRATIONS } from '../webhooks/integrations/index.ts';
import { sendWebhookMessage, webhookSender } from '../webhooks/incoming.ts';
import { optionalUserRoute } from './route.ts';

export const routes = [
  optionalUserRoute({
    method: 'POST',
    path: '/api/v1/external/:integration',
    rawBody: true,
    params: { api_key: str().optional(), stream: str().optional(), topic: str().optional() },
    response: z.object({ ok: z.boolean().optional() }),
    async handler({ app, realm, user, params, path, body, headers }) {
      const integration = INTEGRATIONS.get(path.integration ?? '');
      if (!integration) throw new ApiError('Not Found', 'BAD_REQUEST', 404);
      const sender = user ?? (await webhookSender(app, realm, params.api_key));
      const all = headers.all ?? {};
      const contentType = (all['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const message = integration.message({ body, contentType, headers: all });
      if (message) await sendWebhookMessage(app, realm, sender, integration, { stream: params.stream, topic: params.topic }, message);
      return integration.answer ?? {};
    },
  }),
];
