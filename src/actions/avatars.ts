// POST and DELETE /users/me/avatar (Zulip's set_avatar_backend, delete_avatar_backend and
// do_change_avatar_fields): one uploaded image becomes a 100x100 and a 500x500 PNG, cropped to
// the centre, stored under a new random key; the avatar version goes up, and everyone who can
// access the user gets a `realm_user` update (a bot's managers a `realm_bot` one first).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Metadata } from 'sharp';
import { loadSharp } from './load-sharp.ts';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { bareContentType, guessContentType } from '../domain/mime-types.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';
import { ApiError, badRequest } from '../errors.ts';
import { avatarFilePath, type AvatarVariant } from '../queries/avatars.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { avatarChange, avatarUrl, MEDIUM_AVATAR_SIZE } from '../queries/users.ts';
import { botManagerIds } from './api-keys.ts';
import { atomic, lockUser, onCommit, sendOnCommit } from './transaction.ts';
import { sendAboutUser } from './user-access.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import { isAdmin } from '../auth/policy.ts';

/** Zulip's MAX_AVATAR_FILE_SIZE_MIB. */
const MAX_AVATAR_FILE_MIB = 5;
/** Zulip's DEFAULT_AVATAR_SIZE. */
const DEFAULT_AVATAR_SIZE = 100;
/** Zulip's IMAGE_BOMB_TOTAL_PIXELS: larger images are refused before they are decoded. */
const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
/** Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES, as the client labels the file. */
const ACCEPTED_TYPES = new Set(['image/avif', 'image/gif', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp']);
/** What the bytes must really be, whatever the label says (Zulip enables only these libvips loaders). */
const DECODED_FORMATS = new Set(['gif', 'heif', 'jpeg', 'png', 'tiff', 'webp']);

const badImage = (msg: string) => new ApiError(msg, 'BAD_IMAGE', 400);

/** Zulip's avatar_changes_disabled, which binds everyone below administrators. */
function checkAvatarChangesAllowed(realm: RealmInfo, user: User): void {
  if (realm.settings.avatar_changes_disabled && !isAdmin(user)) throw badRequest('Avatar changes are disabled in this organization.');
}

/** The one uploaded file, after Zulip's checks in Zulip's order. */
function checkAvatarFile(realm: RealmInfo, user: User, files: UploadedFile[]): UploadedFile {
  // A file input left empty arrives as a part without a name; Django drops it.
  const chosen = files.filter((f) => f.filename !== '');
  if (chosen.length !== 1) throw badRequest('You must upload exactly one avatar.');
  checkAvatarChangesAllowed(realm, user);
  const file = chosen[0]!;
  if (file.data.length > MAX_AVATAR_FILE_MIB * 1024 * 1024) throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_AVATAR_FILE_MIB} MiB`);
  if (!ACCEPTED_TYPES.has(bareContentType(file.contentType || guessContentType(file.filename) || ''))) throw badImage('Invalid image format');
  return file;
}

/**
 * Zulip's resize_avatar: scales the shorter side to `size` (up, if need be) and crops the middle
 * to a square; a still of the first frame for animations; oriented as its EXIF data says.
 */
async function resizeAvatar(data: Buffer, size: number): Promise<Buffer> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(data).metadata();
  } catch {
    throw badImage('Could not decode image; did you upload an image file?');
  }
  if (!DECODED_FORMATS.has(meta.format)) throw badImage('Could not decode image; did you upload an image file?');
  if ((meta.width ?? 0) * (meta.height ?? 0) * (meta.pages ?? 1) > IMAGE_BOMB_TOTAL_PIXELS) throw badImage('Image size exceeds limit.');
  try {
    return await sharp(data).rotate().resize(size, size, { fit: 'cover', position: 'centre' }).png().toBuffer();
  } catch {
    throw badImage('Image is corrupted or truncated');
  }
}

const VARIANTS: AvatarVariant[] = ['original', 'default', 'medium'];

/** Removes an avatar's files; a file already gone is no error. */
async function removeAvatarFiles(app: App, realmId: number, key: string): Promise<void> {
  await Promise.all(VARIANTS.map((v) => rm(avatarFilePath(app, realmId, key, v), { force: true })));
}

/** The row, with the new avatar fields, written under its lock; the announcement goes with the commit. */
async function changeAvatar(
  app: App,
  realm: RealmInfo,
  user: User,
  change: (before: User) => { avatarSource: string; avatarKey: string | null } | null,
): Promise<{ before: User; after: User }> {
  return atomic(app, async () => {
    await lockUser(app, user.id);
    const before = await app.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    const fields = change(before);
    if (!fields) return { before, after: before };
    const after = await app.prisma.user.update({ where: { id: user.id }, data: { ...fields, avatarVersion: { increment: 1 } } });
    onCommit(() => cacheChanged(app, { cache: 'user', userId: user.id }));
    if (after.isBot) {
      sendOnCommit({
        realmId: realm.id,
        userIds: await botManagerIds(app, realm, after),
        event: { type: 'realm_bot', op: 'update', bot: { user_id: after.id, avatar_url: avatarUrl(after) } },
      });
    }
    await sendAboutUser(app, realm, after, { type: 'realm_user', op: 'update', person: avatarChange(after) });
    return { before, after };
  });
}

/** POST /users/me/avatar; returns the new avatar URL. */
export async function setAvatar(app: App, realm: RealmInfo, user: User, files: UploadedFile[]): Promise<string> {
  return storeAvatar(app, realm, user, checkAvatarFile(realm, user, files).data);
}

/**
 * The directory's picture of a user as their avatar (Zulip's sync_avatar_from_ldap), unless it is
 * already the one they have; what the directory holds is not checked against the upload rules.
 */
export async function setAvatarFromDirectory(app: App, realm: RealmInfo, user: User, data: Buffer): Promise<void> {
  const current =
    user.avatarSource === 'U' && user.avatarKey ? await readFile(avatarFilePath(app, realm.id, user.avatarKey, 'original')).catch(() => null) : null;
  if (current?.equals(data)) return;
  await storeAvatar(app, realm, user, data);
}

async function storeAvatar(app: App, realm: RealmInfo, user: User, data: Buffer): Promise<string> {
  const [small, medium] = await Promise.all([resizeAvatar(data, DEFAULT_AVATAR_SIZE), resizeAvatar(data, MEDIUM_AVATAR_SIZE)]);
  const key = randomBytes(20).toString('hex');
  const target = (v: AvatarVariant) => avatarFilePath(app, realm.id, key, v);
  let changed: { before: User; after: User };
  try {
    await mkdir(path.dirname(target('original')), { recursive: true });
    await Promise.all([writeFile(target('original'), data), writeFile(target('default'), small), writeFile(target('medium'), medium)]);
    changed = await changeAvatar(app, realm, user, () => ({ avatarSource: 'U', avatarKey: key }));
  } catch (err) {
    // No row naming them, no files: nothing would ever clean them up.
    await removeAvatarFiles(app, realm.id, key);
    throw err;
  }
  const { before, after } = changed;
  if (before.avatarKey) await removeAvatarFiles(app, realm.id, before.avatarKey);
  return avatarUrl(after);
}

/** DELETE /users/me/avatar: back to Gravatar (a change only when the avatar was uploaded); returns the URL. */
export async function deleteAvatar(app: App, realm: RealmInfo, user: User): Promise<string> {
  checkAvatarChangesAllowed(realm, user);
  const { before, after } = await changeAvatar(app, realm, user, (row) => (row.avatarSource === 'U' ? { avatarSource: 'G', avatarKey: null } : null));
  if (before.avatarKey && !after.avatarKey) await removeAvatarFiles(app, realm.id, before.avatarKey);
  return avatarUrl(after);
}
