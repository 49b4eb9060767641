// Custom emoji of an organization as GET /realm/emoji, POST /register and `realm_emoji` events
// show them (Zulip's EmojiInfo), and where their images lie.
import { readFile } from 'node:fs/promises';
import type { App } from '../app.ts';
import type { Prisma, RealmEmoji } from '../db/generated/client.ts';
import { uploadFilePath } from './uploads.ts';
import { realmCache } from './realm-cache.ts';

export interface EmojiInfo {
  id: string;
  name: string;
  source_url: string;
  deactivated: boolean;
  author_id: number | null;
  /** Only animated emoji have a still image; none is made here. */
  still_url: null;
}

/** The image's URL, relative to the organization's, as Zulip's local upload storage names it. */
export const emojiSourceUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;

export function emojiInfo(e: RealmEmoji): EmojiInfo {
  return {
    id: String(e.id),
    name: e.name,
    source_url: emojiSourceUrl(e.realmId, e.fileName),
    deactivated: e.deactivated,
    author_id: e.authorId,
    still_url: null,
  };
}

type Reader = Pick<Prisma.TransactionClient, 'realmEmoji'>;

/** Every custom emoji of the realm, deactivated ones included, by id. */
export async function realmEmojiDict(db: Reader, realmId: number): Promise<Record<string, EmojiInfo>> {
  const rows = await db.realmEmoji.findMany({ where: { realmId }, orderBy: { id: 'asc' } });
  return Object.fromEntries(rows.map((e) => [String(e.id), emojiInfo(e)]));
}

/**
 * Every custom emoji row of the realm by name, each name's oldest first, cached: the renderer
 * looks names up for every message with a `:name:` in it. Emoji actions forget it after they commit.
 */
const emojiByName = realmCache(async (app, realmId) => {
  const byName = new Map<string, RealmEmoji[]>();
  for (const e of await app.db.prisma.realmEmoji.findMany({ where: { realmId }, orderBy: { id: 'asc' } }))
    byName.set(e.name, [...(byName.get(e.name) ?? []), e]);
  return byName;
});

export const realmEmojiByName = (app: App, realmId: number): Promise<ReadonlyMap<string, RealmEmoji[]>> => emojiByName.get(app, realmId);

export function forgetRealmEmoji(app: App, realmId: number): void {
  emojiByName.forget(app, realmId);
}

export function activeEmojiByName(db: Reader, realmId: number, name: string): Promise<RealmEmoji | null> {
  return db.realmEmoji.findFirst({ where: { realmId, name, deactivated: false } });
}

/** Where an emoji image lies under the uploads directory. */
export function emojiImagePath(app: App, realmId: number, fileName: string): string {
  return uploadFilePath(app, `${realmId}/emoji/images/${fileName}`);
}

/** The stored image, or null when there is none by that name. */
export async function readEmojiImage(app: App, realmId: number, fileName: string): Promise<Buffer | null> {
  // Names are ours (hex and an extension); anything else never names a stored image.
  if (!/^[\w-]+\.\w+$/.test(fileName)) return null;
  try {
    return await readFile(emojiImagePath(app, realmId, fileName));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
