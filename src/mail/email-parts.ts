// What the notification emails (missed messages, digests) share: links that work outside the
// web client, the unsubscribe link of each kind of email, and the footer.
import type { App } from '../app.ts';
import { directMessageSlug } from '../markdown/link-syntax.ts';
import { encodeStream, hashUtilEncode } from '../markdown/links.ts';
import { html, type Html } from '../pages/html.ts';
import type { RealmInfo } from '../queries/realms.ts';

/** Zulip's unsubscribe types this server sends, and the setting each turns off. */
export const UNSUBSCRIBE_SETTINGS = { missed_messages: 'enable_offline_email_notifications', digest: 'enable_digest_emails' } as const;
export type UnsubscribeType = keyof typeof UNSUBSCRIBE_SETTINGS;

/** A link that turns one kind of email off for the user, without logging in (Zulip's /accounts/unsubscribe/<type>/<token>). */
export function unsubscribeUrl(app: App, realm: RealmInfo, userId: number, type: UnsubscribeType): string {
  return `${app.realms.url(realm)}/accounts/unsubscribe/${type}/${app.tokens.sign(`unsubscribe:${type}:${userId}`)}`;
}

/** The user a token from unsubscribeUrl names, or null when it is not one for this type. */
export function unsubscribingUser(app: App, type: UnsubscribeType, token: string): number | null {
  const match = /^unsubscribe:([a-z_]+):(\d+)$/.exec(app.tokens.verify(token) ?? '');
  return match && match[1] === type ? Number(match[2]) : null;
}

/** Rendered message HTML with the server's relative links (/user_uploads, #narrow, emoji) made absolute for a mail reader. */
export function absoluteLinks(realmUrl: string, rendered: string): string {
  return rendered.replace(/\b(href|src)="(\/(?!\/)|#)/g, (_, attr: string, start: string) => `${attr}="${realmUrl}${start === '#' ? '/#' : '/'}`);
}

export function channelNarrowUrl(realmUrl: string, channelId: number, channelName: string, topic?: string): string {
  const base = `${realmUrl}/#narrow/channel/${encodeStream(channelId, channelName)}`;
  return topic === undefined ? base : `${base}/topic/${hashUtilEncode(topic)}`;
}

export const directNarrowUrl = (realmUrl: string, memberIds: readonly number[]) => `${realmUrl}/#narrow/dm/${directMessageSlug(memberIds)}`;

/** Headers that let mail readers offer their own unsubscribe button (RFC 2369, one-click RFC 8058). */
export const unsubscribeHeaders = (url: string) => ({ 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });

/** The end of every notification email: why it came and how to stop it. */
export function footer(realm: RealmInfo, realmUrl: string, why: string, unsubscribe: string): { html: Html; text: string } {
  return {
    html: html`<hr><p style="color:#666;font-size:12px">${why} You can change this in your notification settings at <a href="${realmUrl}/#settings/notifications">${realm.name}</a>, or <a href="${unsubscribe}">unsubscribe</a> from these emails.</p>`,
    text: `--\n${why} Change this in your notification settings at ${realmUrl}/#settings/notifications, or unsubscribe from these emails:\n${unsubscribe}`,
  };
}
