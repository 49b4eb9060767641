// Custom emoji (Zulip's zerver/views/realm_emoji.py and actions/realm_emoji.py): members allowed
// by can_add_custom_emoji_group upload one image under a name; admins and the author deactivate
// it. Everyone in the organization gets one `realm_emoji` event per change, published with both
// the change and the full dict, so each queue sends add/update_one or the legacy update.
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { App } from '../app.ts';
import { hasRealmPermission } from '../auth/permissions.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { bareContentType, guessContentType } from '../domain/mime-types.ts';
import { emojiCodeByName } from '../emoji/index.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';
import { activeEmojiByName, emojiImagePath, emojiInfo, realmEmojiDict } from '../queries/realm-emoji.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { realmViewers } from '../queries/users.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { EventBody } from '../events/schemas.ts';
import { isAdmin, refuseGuests } from '../auth/policy.ts';

/** Zulip's MAX_EMOJI_FILE_SIZE_MIB. */
const MAX_EMOJI_FILE_MIB = 5;
/** Image types Zulip both thumbnails and serves inline, with Python's guess_extension for each. */
const EXTENSIONS: Record<string, string> = {
  'image/avif': '.avif',
  'image/gif': '.gif',
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/webp': '.webp',
};
/** Advisory-lock class of emoji writes (the second key is the realm id). */
const EMOJI_LOCK = 0x454d4f4a;

function checkEmojiName(name: string): void {
  if (name === '') throw badRequest('Emoji name is missing');
  if (/^[0-9a-z_-]*[0-9a-z]$/.test(name)) return;
  if (/^[0-9a-z_-]+$/.test(name)) throw badRequest('Emoji names must end with either a letter or digit.');
  throw badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
}

const duplicateName = () => badRequest('A custom emoji with this name already exists.');

/** The one uploaded image's extension, after Zulip's checks in Zulip's order. */
function checkImage(user: User, name: string, files: UploadedFile[]): string {
  if (files.length !== 1) throw badRequest('You must upload exactly one file.');
  if (emojiCodeByName(name) !== undefined && !isAdmin(user)) throw badRequest('Only administrators can override default emoji.');
  const file = files[0]!;
  if (file.data.length > MAX_EMOJI_FILE_MIB * 1024 * 1024) throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_EMOJI_FILE_MIB} MiB`);
  const extension = EXTENSIONS[bareContentType(file.contentType || guessContentType(file.filename) || '')];
  if (!extension) throw badRequest('Invalid image format');
  return extension;
}

/** Serializes a realm's emoji writes, so two uploads can't both take a free name. */
async function lockRealmEmoji(tx: Prisma.TransactionClient, realmId: number): Promise<void> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock($1, $2)', EMOJI_LOCK, realmId);
}

/** The change, with the organization's emoji as the transaction leaves them, to every active user. */
async function sendEmojiChange(app: App, realm: RealmInfo, change: EventBody<'realm_emoji', 'realm_emoji'>): Promise<void> {
  const userIds = (await realmViewers(app, realm.id)).map((u) => u.id);
  sendOnCommit({ realmId: realm.id, userIds, event: { type: 'realm_emoji', ...change, realm_emoji: await realmEmojiDict(app.prisma, realm.id) } });
  onCommit(() => cacheChanged(app, { cache: 'realm-emoji', realmId: realm.id }));
}

/** POST /realm/emoji/{emoji_name}: spaces in the name count as underscores. */
export async function addRealmEmoji(app: App, realm: RealmInfo, user: User, rawName: string, files: UploadedFile[]): Promise<void> {
  refuseGuests(user);
  const name = rawName.trim().replace(/ /g, '_');
  checkEmojiName(name);
  if (!(await hasRealmPermission(app.realms, realm, user, 'can_add_custom_emoji_group'))) throw badRequest('Insufficient permission');
  if (await activeEmojiByName(app.prisma, realm.id, name)) throw duplicateName();
  const extension = checkImage(user, name, files);
  // A random name, as Zulip's salted hash: image URLs can't be guessed from emoji ids.
  const fileName = `${randomBytes(4).toString('hex')}${extension}`;
  const target = emojiImagePath(app, realm.id, fileName);
  await atomic(app, async () => {
    await lockRealmEmoji(app.prisma, realm.id);
    if (await activeEmojiByName(app.prisma, realm.id, name)) throw duplicateName();
    const row = await app.prisma.realmEmoji.create({ data: { realmId: realm.id, name, fileName, authorId: user.id } });
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, files[0]!.data, { flag: 'wx' });
    await sendEmojiChange(app, realm, { op: 'add', emoji: emojiInfo(row) });
  }).catch(async (err: unknown) => {
    // No row, no file; a file of another emoji (name clash) is not ours to remove.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await rm(target, { force: true });
    throw err;
  });
}

/** DELETE /realm/emoji/{emoji_name}: deactivates, so old messages and reactions still show it. */
export async function deactivateRealmEmoji(app: App, realm: RealmInfo, user: User, name: string): Promise<void> {
  await atomic(app, async () => {
    await lockRealmEmoji(app.prisma, realm.id);
    const emoji = await activeEmojiByName(app.prisma, realm.id, name);
    // One of the few 404s of Zulip's API, still with the generic code.
    if (!emoji) throw new ApiError(`Emoji '${name}' does not exist`, 'BAD_REQUEST', 404);
    if (!isAdmin(user) && emoji.authorId !== user.id) throw badRequest('Must be an organization administrator or emoji author');
    await app.prisma.realmEmoji.update({ where: { id: emoji.id }, data: { deactivated: true } });
    await sendEmojiChange(app, realm, { op: 'update_one', emoji_id: String(emoji.id), data: { deactivated: true } });
  });
}
