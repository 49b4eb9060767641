// POST /user_uploads: store one file under the uploads directory at Zulip's path id form
// `<realm id>/<random>/<sanitized name>`, record its Attachment row, and tell the uploader.
// DELETE /attachments/{id}: the owner removes a file; messages keep their text, not the file.
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Metadata } from 'sharp';
import { loadSharp } from './load-sharp.ts';
import { errorText, log } from '../log.ts';
import type { App } from '../app.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { bareContentType, guessContentType, servesInline } from '../domain/mime-types.ts';
import { formatsFor, type StoredThumbnail, THUMBNAIL_ACCEPT_IMAGE_TYPES, thumbnailPath } from '../domain/thumbnails.ts';
import { badRequest } from '../errors.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { attachmentDict, uploadFilePath, uploadSpaceUsed } from '../queries/uploads.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { EventBody } from '../events/schemas.ts';

/** Linux allows 255 bytes per path component, and the sanitized name is one. */
const MAX_FILE_NAME_BYTES = 255;

/** Cuts a name to `max` bytes, keeping its extension when that leaves room for the rest. */
function truncateFileName(name: string, max: number): string {
  if (Buffer.byteLength(name) <= max) return name;
  let ext = path.extname(name);
  let stem = name.slice(0, name.length - ext.length);
  if (Buffer.byteLength(ext) >= max) [stem, ext] = [name, ''];
  // Decoding a cut UTF-8 sequence yields U+FFFD at the end; drop it as Python's errors="ignore" does.
  const cut = Buffer.from(stem)
    .subarray(0, max - Buffer.byteLength(ext))
    .toString()
    .replace(/\uFFFD+$/, '');
  return cut + ext;
}

/** Zulip's sanitize_name: safe as a file name, in S3 and in a URL; Unicode letters stay. */
function sanitizeFileName(value: string): string {
  let name = value
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}_\s.-]/gu, '')
    .trim();
  name = truncateFileName(name.replace(/[-\s]+/g, '-'), MAX_FILE_NAME_BYTES);
  return name === '' || name === '.' || name === '..' ? 'uploaded-file' : name;
}

/** Python's urllib.parse.unquote: escapes that don't decode stay as they are. */
function unquote(value: string): string {
  return value.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** The name the client gave, as Django hands it on: its last path component, unquoted, no NULs. */
function originalName(file: UploadedFile): string {
  return unquote(file.filename.split(/[/\\]/).at(-1)!).replace(/\0/g, '');
}

/** Plain text is served inline, so it is labeled with its charset when that is clear. */
function withCharset(contentType: string, data: Buffer): string {
  if (bareContentType(contentType) !== 'text/plain' || /;\s*charset=/i.test(contentType)) return contentType;
  if (!data.some((b) => b > 0x7f)) return `${contentType}; charset="ascii"`;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return `${contentType}; charset="utf-8"`;
  } catch {
    return contentType;
  }
}

function mebibytes(bytes: number): string {
  return String(Math.round((bytes / 1024 / 1024) * 100) / 100);
}

export interface ImageRow {
  originalWidthPx: number;
  originalHeightPx: number;
  frames: number;
  contentType: string;
  thumbnailMetadata: StoredThumbnail[];
}

/**
 * An uploaded image's size and thumbnails, made now so that the message linking to it shows the
 * thumbnail at once (Zulip makes them in a queue worker, showing a spinner until then). A file
 * that does not decode as the image type it claims is no image: it gets no row and no preview.
 */
export async function thumbnailImage(app: App, pathId: string, data: Buffer, contentType: string): Promise<ImageRow | null> {
  const type = bareContentType(contentType);
  if (!THUMBNAIL_ACCEPT_IMAGE_TYPES.has(type)) return null;
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(data).metadata();
  } catch (err) {
    // Not an image libvips can read (or a type this build of it lacks, such as HEIC).
    log.info('upload not read as an image', { pathId, contentType: type, error: errorText(err) });
    return null;
  }
  const frames = meta.pages ?? 1;
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.pageHeight ?? meta.height;
  if (!width || !height) return null;
  const made: StoredThumbnail[] = [];
  try {
    for (const format of formatsFor(frames, servesInline(type))) {
      const { data: thumbnail, info } = await sharp(data, { animated: format.animated })
        .rotate()
        .resize(format.maxWidth, format.maxHeight, { fit: 'inside', withoutEnlargement: true })
        .webp()
        .toBuffer({ resolveWithObject: true });
      const target = uploadFilePath(app, thumbnailPath(pathId, format));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, thumbnail);
      made.push({
        extension: format.extension,
        max_width: format.maxWidth,
        max_height: format.maxHeight,
        animated: format.animated,
        content_type: 'image/webp',
        width: info.width,
        height: info.pageHeight ?? info.height,
        byte_size: thumbnail.length,
      });
    }
  } catch (err) {
    // The header parsed but the image does not decode: no thumbnails, so no preview.
    log.info('upload not thumbnailed', { pathId, contentType: type, error: errorText(err) });
    await rm(uploadFilePath(app, `thumbnail/${pathId}`), { recursive: true, force: true });
    return null;
  }
  return { originalWidthPx: width, originalHeightPx: height, frames, contentType, thumbnailMetadata: made };
}

export async function uploadFile(app: App, realm: RealmInfo, user: User, files: UploadedFile[]): Promise<{ url: string; filename: string }> {
  // A file input left empty arrives as a part without a name; Django drops it.
  const chosen = files.filter((f) => f.filename !== '');
  if (chosen.length === 0) throw badRequest('You must specify a file to upload');
  if (chosen.length > 1) throw badRequest('You may only upload one file at a time');
  const file = chosen[0]!;
  const max = app.config.MAX_UPLOAD_BYTES;
  if (file.data.length > max) throw badRequest(`File is larger than this server's configured maximum upload size (${mebibytes(max)} MiB).`);
  const fileName = originalName(file);
  const contentType = withCharset(file.contentType || guessContentType(fileName) || 'application/octet-stream', file.data);
  const pathId = `${realm.id}/${randomInt(256).toString(16)}/${randomBytes(18).toString('base64url')}/${sanitizeFileName(fileName)}`;
  const target = uploadFilePath(app, pathId);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, file.data, { flag: 'wx' });
  const image = await thumbnailImage(app, pathId, file.data, contentType);
  await atomic(app, async () => {
    const attachment = await app.prisma.attachment.create({
      data: { realmId: realm.id, ownerId: user.id, pathId, fileName, size: file.data.length, contentType },
    });
    if (image) {
      await app.prisma.imageAttachment.create({
        data: { realmId: realm.id, pathId, ...image, thumbnailMetadata: image.thumbnailMetadata as unknown as Prisma.InputJsonArray },
      });
    }
    await sendAttachmentEvent(app, realm, user, { op: 'add', attachment: attachmentDict(attachment, []) });
  }).catch(async (err: unknown) => {
    // No row, no file: an unreferenced file on disk would never be cleaned up.
    await rm(target, { force: true });
    await rm(uploadFilePath(app, `thumbnail/${pathId}`), { recursive: true, force: true });
    throw err;
  });
  return { url: `/user_uploads/${pathId}`, filename: fileName };
}

/** Attachments are not part of the register state, so no queue may drop one of these as already seen. */
async function sendAttachmentEvent(app: App, realm: RealmInfo, user: User, change: EventBody<'attachment', 'upload_space_used'>): Promise<void> {
  const upload_space_used = await uploadSpaceUsed(app, realm.id);
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'attachment', ...change, upload_space_used } }, { alwaysDeliver: true });
}

/** Zulip's access_attachment_by_id with needs_owner: someone else's file is as unknown as none. */
export async function deleteAttachment(app: App, realm: RealmInfo, user: User, attachmentId: number): Promise<void> {
  const pathId = await atomic(app, async () => {
    const [row] = await app.prisma.$queryRawUnsafe<{ pathId: string }[]>(
      'DELETE FROM "Attachment" WHERE id = $1 AND "ownerId" = $2 AND "realmId" = $3 RETURNING "pathId"',
      attachmentId,
      user.id,
      realm.id,
    );
    if (!row) throw badRequest('Invalid attachment');
    await sendAttachmentEvent(app, realm, user, { op: 'remove', attachment: { id: attachmentId } });
    return row.pathId;
  });
  // After the commit: a failed delete must not lose a file that its row still names.
  await rm(uploadFilePath(app, pathId), { force: true });
  await rm(uploadFilePath(app, `thumbnail/${pathId}`), { recursive: true, force: true });
}
