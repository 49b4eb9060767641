// /integrations/: the incoming-webhook integrations this server has and the URL to give each
// service, filled in with this organization's address (Zulip has no API route for the list
// besides register's realm_incoming_webhook_bots; its own /integrations/ pages are this, as docs).
// Public, as Zulip's are: it names no bot and no key.
import { publicRoute } from '../api/route.ts';
import { RawSuccess } from '../http/route.ts';
import { INTEGRATION_LIST } from '../webhooks/integrations/index.ts';
import { html, page, type Html } from './html.ts';

/** The setup sentence, its `quoted` parts as code. */
const withCode = (text: string): Html[] => text.split('`').map((part, i) => (i % 2 ? html`<code>${part}</code>` : html`${part}`));

const htmlPage = new RawSuccess(200, 'text/html', 'An HTML page');

export const routes = [
  publicRoute({
    method: 'GET',
    path: '/integrations/',
    params: {},
    response: htmlPage,
    handler({ app, realm }) {
      const base = `${app.realms.url(realm)}/api/v1/external`;
      const items = INTEGRATION_LIST.map((i) => {
        const names = [i.name, ...(i.aliases ?? [])];
        const urls = names.map((name) => html`<dd><code>${base}/${name}?api_key=BOT_API_KEY&amp;stream=CHANNEL</code></dd>`);
        const events = i.allEventTypes ? html`<dd class="muted">Events: ${i.allEventTypes.join(', ')}</dd>` : html``;
        return html`<dt id="${i.name}">${i.displayName}</dt>${urls}<dd>${withCode(i.setup)}</dd>${events}`;
      });
      return page(
        200,
        'Integrations',
        html`<p>A service posts to a channel through an incoming-webhook bot: create one in
<em>Settings → Bots</em> (type "Incoming webhook"), then give the service the URL below with the bot's API key and the
channel's name or id. <code>&amp;topic=</code> fixes the topic; without <code>stream</code>, messages go to the bot's
owner. <code>only_events</code> and <code>exclude_events</code> (JSON lists of patterns) pick the events.</p>
<dl>${items}</dl>`,
      );
    },
  }),
];
