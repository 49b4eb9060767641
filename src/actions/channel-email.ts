// GET /streams/{id}/email_address (Zulip's get_stream_email_address): a channel's address at the
// email gateway, made of the channel's name and a token kept per channel, requester and sender.
import { randomBytes } from 'node:crypto';
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { accessibleChannel } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { accessBot } from './api-keys.ts';
import { emailGatewayBot } from './messages.ts';

/** Django's slugify: ASCII-folded, lowercase, runs of spaces and dashes as one dash. */
function slugify(value: string): string {
  const ascii = value.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  return ascii
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}

/**
 * Zulip's encode_email_address: "name.token.show-sender" in the gateway's pattern. A name that
 * does not survive ASCII folding whole is left out ("channel.token..."); no gateway, no address.
 */
function encodeEmailAddress(pattern: string, channelName: string, token: string): string {
  if (pattern === '') return '';
  const name = channelName.replace(/[^\p{L}\p{N}_]+/gu, '-');
  const slug = slugify(name);
  const local = `${slug.length === name.length ? slug : 'channel'}.${token}.show-sender`;
  return pattern.replace('%s', local);
}

async function emailToken(app: App, realm: RealmInfo, channel: Channel, creator: User, sender: User): Promise<string> {
  const row = await app.prisma.channelEmailAddress.upsert({
    where: { channelId_creatorId_senderId: { channelId: channel.id, creatorId: creator.id, senderId: sender.id } },
    create: { realmId: realm.id, channelId: channel.id, creatorId: creator.id, senderId: sender.id, emailToken: randomBytes(16).toString('hex') },
    // An update that changes nothing, rather than none, makes Prisma write one INSERT … ON CONFLICT:
    // with none it reads first and inserts after, and requests at once race to the unique key.
    update: { realmId: realm.id },
  });
  return row.emailToken;
}

/** Emails to the address are posted as the Email Gateway bot, the requester, or a bot they administer. */
export async function channelEmailAddress(app: App, realm: RealmInfo, user: User, channelId: number, senderId: number | undefined): Promise<string> {
  const { channel } = await accessibleChannel(app, realm, user, channelId, { content: true });
  const gateway = await emailGatewayBot(app, realm);
  const sender = senderId === undefined || senderId === gateway.id ? gateway : senderId === user.id ? user : await accessBot(app, realm, user, senderId);
  return encodeEmailAddress(app.config.EMAIL_GATEWAY_PATTERN, channel.name, await emailToken(app, realm, channel, user, sender));
}
