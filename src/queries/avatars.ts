// Uploaded avatars on disk (Zulip's local avatar storage): each upload is three files under the
// uploads directory, `<realm id>/avatars/<key>.original`, `<key>.png` (100x100) and
// `<key>-medium.png` (500x500); only the two PNGs are served, at /user_avatars/<realm id>/<file>.
// And which user an /avatar/{email_or_id} address names (Zulip's views/users.py avatar).
import { readFile } from 'node:fs/promises';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import type { RealmInfo } from './realms.ts';
import { uploadFilePath } from './uploads.ts';
import { apiEmail } from './users.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';

export type AvatarVariant = 'original' | 'default' | 'medium';

const SUFFIX: Record<AvatarVariant, string> = { original: '.original', default: '.png', medium: '-medium.png' };

/** Where one file of an uploaded avatar lies. */
export function avatarFilePath(app: App, realmId: number, key: string, variant: AvatarVariant): string {
  return uploadFilePath(app, `${realmId}/avatars/${key}${SUFFIX[variant]}`);
}

/** Keys are 40 hex digits (randomAvatarKey); anything else never names a stored image. */
const SERVED_FILE = /^([0-9a-f]{40})(-medium)?\.png$/;

/** A served avatar image by its file name, or null when there is none. */
export async function readAvatarImage(app: App, realmId: number, fileName: string): Promise<Buffer | null> {
  const match = SERVED_FILE.exec(fileName);
  if (!match) return null;
  try {
    return await readFile(avatarFilePath(app, realmId, match[1]!, match[2] ? 'medium' : 'default'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * The user an /avatar address names in this organization: a number is a user id; anything else is
 * matched against the address clients know the user by (the dummy `user{id}@...` one when the
 * real one is hidden), as Zulip's get_user does. Null for nobody.
 */
export async function avatarOwner(app: App, realm: RealmInfo, emailOrId: string): Promise<User | null> {
  const byId = (text: string) => {
    const id = Number(text);
    // Ids are PostgreSQL integers; a larger number names nobody.
    return Number.isInteger(id) && Math.abs(id) <= 2 ** 31 - 1 ? app.prisma.user.findFirst({ where: { id, realmId: realm.id } }) : null;
  };
  if (/^[+-]?\d+$/.test(emailOrId)) return byId(emailOrId);
  // `user5@...` may be a dummy address or someone's real one.
  const dummy = /^user(\d+)@/i.exec(emailOrId);
  const candidates = [
    dummy ? await byId(dummy[1]!) : null,
    await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(emailOrId) } }),
  ];
  return candidates.find((u) => u && apiEmail(app, realm, u).toLowerCase() === emailOrId.toLowerCase()) ?? null;
}
