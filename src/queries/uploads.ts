// Uploaded files: who may download one (Zulip's validate_attachment_request), where it lies on
// disk, and the short-lived unauthenticated URLs of GET /api/v1/user_uploads/... .
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { App } from '../app.ts';
import type { Attachment, Channel, User } from '../db/generated/client.ts';
import { readsChannelHistory, timestamp } from './messages.ts';
import type { RealmInfo } from './realms.ts';
import type { z } from 'zod';
import type { attachment } from '../events/schemas.ts';

/** An attachment as the API shows it (FL443 create_time in seconds, FL472 message_ids). */
export function attachmentDict(a: Attachment, messageIds: number[]): z.infer<typeof attachment> {
  return { id: a.id, name: a.fileName, path_id: a.pathId, size: a.size, create_time: timestamp(a.createTime), message_ids: messageIds };
}

/** The organization's total upload size, as every attachment event and GET /attachments report it. */
export async function uploadSpaceUsed(app: App, realmId: number): Promise<number> {
  const used = await app.prisma.attachment.aggregate({ where: { realmId }, _sum: { size: true } });
  return used._sum.size ?? 0;
}

/** GET /attachments: the user's own uploads, with the messages that link to each. */
export async function userAttachments(app: App, userId: number): Promise<Record<string, unknown>[]> {
  const rows = await app.prisma.attachment.findMany({
    where: { ownerId: userId },
    orderBy: { id: 'asc' },
    include: { messages: { select: { messageId: true }, orderBy: { messageId: 'asc' } } },
  });
  return rows.map((a) =>
    attachmentDict(
      a,
      a.messages.map((m) => m.messageId),
    ),
  );
}

export async function attachmentByPath(app: App, realm: RealmInfo, pathId: string): Promise<Attachment | null> {
  return app.prisma.attachment.findFirst({ where: { realmId: realm.id, pathId } });
}

/** Where a file lies under the uploads directory; path ids are ours, but never leave the directory. */
export function uploadFilePath(app: App, pathId: string): string {
  const root = path.resolve(app.config.uploadsDir);
  const file = path.resolve(root, pathId);
  if (!file.startsWith(root + path.sep)) throw new Error(`path id outside the uploads directory: ${pathId}`);
  return file;
}

/**
 * The owner may download a file, and so may whoever can read a message linking to it: its
 * recipients, and readers of the channel's shared history. Without an account, only files in
 * web-public channels, where the organization allows spectators.
 */
export async function canDownload(app: App, realm: RealmInfo, user: User | null, a: Attachment): Promise<boolean> {
  if (user?.id === a.ownerId) return true;
  const refs = await app.prisma.message.findMany({ where: { attachments: { some: { attachmentId: a.id } } }, select: { id: true, channel: true } });
  const channels = new Map<number, Channel>();
  for (const m of refs) if (m.channel) channels.set(m.channel.id, m.channel);
  if (!user) return realm.settings.enable_spectator_access && [...channels.values()].some((c) => c.isWebPublic && !c.inviteOnly);
  if (await app.prisma.userMessage.findFirst({ where: { userId: user.id, messageId: { in: refs.map((m) => m.id) } }, select: { messageId: true } }))
    return true;
  for (const channel of channels.values()) if (await readsChannelHistory(app, realm, user, channel)) return true;
  return false;
}

/** How long a temporary URL works (Zulip's SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS). */
const TEMPORARY_URL_SECONDS = 60;

/** A URL that serves the file without authentication for a minute. */
export function temporaryUrl(app: App, pathId: string, now = Date.now()): string {
  const token = app.tokens.sign(`${pathId}\n${Math.floor(now / 1000) + TEMPORARY_URL_SECONDS}`);
  return `/user_uploads/temporary/${token}/${encodeURIComponent(pathId.split('/').at(-1)!)}`;
}

/** The path id a temporary URL's token grants, or null when it is forged or expired. */
export function pathIdOfToken(app: App, token: string, now = Date.now()): string | null {
  const payload = app.tokens.verify(token);
  if (payload === null) return null;
  const [pathId, expires] = payload.split('\n');
  return pathId && Number(expires) * 1000 >= now ? pathId : null;
}

/** The stored bytes, or null when the file is gone from disk. */
export async function readUpload(app: App, a: Attachment): Promise<Buffer | null> {
  try {
    return await readFile(uploadFilePath(app, a.pathId));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
