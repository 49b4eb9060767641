// The links at the foot of notification emails (Zulip's /accounts/unsubscribe/<type>/<token>):
// opening one turns that kind of email off for its user, without logging in; the token is signed
// (src/mail/email-parts.ts), so nobody can make one for another user. POST does the same for mail
// readers' one-click unsubscribe (RFC 8058).
import { updateSettings } from '../actions/settings.ts';
import { publicRoute } from '../api/route.ts';
import type { App } from '../app.ts';
import { RawSuccess, type RawResponse } from '../http/route.ts';
import { UNSUBSCRIBE_SETTINGS, unsubscribingUser, type UnsubscribeType } from '../mail/email-parts.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { html, page } from './html.ts';

const WHAT: Record<UnsubscribeType, string> = { missed_messages: 'missed-message emails', digest: 'digest emails' };

async function unsubscribe(app: App, realm: RealmInfo, type: string, token: string): Promise<RawResponse> {
  const userId = Object.hasOwn(UNSUBSCRIBE_SETTINGS, type) ? unsubscribingUser(app, type as UnsubscribeType, token) : null;
  const user = userId === null ? null : await app.prisma.user.findUnique({ where: { id: userId } });
  if (!user || user.realmId !== realm.id || !user.isActive) {
    return page(404, 'This link is not valid', html`<p>Check that you copied the whole link from the email.</p>`);
  }
  const kind = type as UnsubscribeType;
  await updateSettings(app, realm, user, { settings: { [UNSUBSCRIBE_SETTINGS[kind]]: false } });
  const url = app.realms.url(realm);
  return page(
    200,
    'Unsubscribed',
    html`<p>You will no longer get ${WHAT[kind]} from ${realm.name} at <strong>${user.deliveryEmail}</strong>.</p>
<p class="muted">To get them again, turn them back on in your notification settings at <a href="${url}/#settings/notifications">${url}</a>.</p>`,
  );
}

const htmlPage = new RawSuccess(200, 'text/html', 'An HTML page');

export const routes = (['GET', 'POST'] as const).map((method) =>
  publicRoute({
    method,
    path: '/accounts/unsubscribe/:type/:token',
    params: {},
    response: htmlPage,
    handler: ({ app, realm, path }) => unsubscribe(app, realm, path.type!, path.token!),
  }),
);
