// Files: POST /user_uploads; GET /user_uploads/{realm_id}/{path} (the file, for browsers and Basic
// auth), its thumbnails at /user_uploads/thumbnail/{realm_id}/{path}/{format}, its API twin that
// answers a temporary URL, the temporary URL itself, whether an upload's thumbnails are made yet
// (GET /thumbnail/status/{realm_id}/{path}), and the legacy GET /thumbnail.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { App } from '../app.ts';
import { deleteAttachment, uploadFile } from '../actions/uploads.ts';
import type { Attachment, User } from '../db/generated/client.ts';
import { servesInline } from '../domain/mime-types.ts';
import { defaultFormat, formatName, type StoredThumbnail, storedFormat } from '../domain/thumbnails.ts';
import { badRequest, notLoggedIn } from '../errors.ts';
import { pathId, str } from '../http/params.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { optionalUserRoute, publicRoute, userRoute } from './route.ts';
import type { RealmInfo } from '../queries/realms.ts';
import {
  attachmentByPath,
  canDownload,
  pathIdOfToken,
  readUpload,
  temporaryUrl,
  uploadFilePath,
  uploadSpaceUsed,
  userAttachments,
} from '../queries/uploads.ts';
import { attachment } from '../events/schemas.ts';

/** Room for the multipart framing around a file of the largest allowed size. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

const HTML = { 'Content-Type': 'text/html; charset=utf-8' };
const notFoundPage = () => new RawResponse(404, HTML, '<p>This file does not exist or has been deleted.</p>');
const forbiddenPage = () => new RawResponse(403, HTML, '<p>You are not authorized to view this file.</p>');

/** Python's urllib.parse.quote: like encodeURIComponent, but `/` stays and `!'()*` are escaped. */
const quote = (s: string) =>
  encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, '/');

/** Django's content_disposition_header: a quoted ASCII name, or RFC 8187 UTF-8 for anything else. */
function contentDisposition(inline: boolean, fileName: string): string {
  const name = /^[\x20-\x7e]*$/.test(fileName) ? `filename="${fileName.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : `filename*=utf-8''${quote(fileName)}`;
  return `${inline ? 'inline' : 'attachment'}; ${name}`;
}

async function serveFile(app: App, a: Attachment): Promise<RawResponse> {
  const data = await readUpload(app, a);
  if (!data) return new RawResponse(404, HTML, '<p>File not found</p>');
  const inline = servesInline(a.contentType);
  return new RawResponse(
    200,
    {
      'Content-Type': a.contentType,
      'Content-Disposition': contentDisposition(inline, a.fileName),
      'Cache-Control': 'private, immutable',
      'X-Content-Type-Options': 'nosniff',
    },
    data,
  );
}

const THUMBNAIL_FORMAT_RE = /^(\d+)x(\d+)(-anim)?\.(\w+)$/;

/**
 * `/user_uploads/thumbnail/<path id>/<format>`: a thumbnail made of an uploaded image, to whoever
 * may download the image; a format not made falls back to the one messages show.
 */
async function serveThumbnail(app: App, a: Attachment, format: string): Promise<RawResponse> {
  const row = await app.prisma.imageAttachment.findUnique({ where: { pathId: a.pathId } });
  const made = (row?.thumbnailMetadata ?? []) as unknown as StoredThumbnail[];
  if (!row || !THUMBNAIL_FORMAT_RE.test(format) || made.length === 0) return notFoundPage();
  const names = made.map((t) => formatName(storedFormat(t)));
  const name = names.includes(format) ? format : formatName(defaultFormat(row.frames));
  if (!names.includes(name)) return notFoundPage();
  let data: Buffer;
  try {
    data = await readFile(uploadFilePath(app, `thumbnail/${a.pathId}/${name}`));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new RawResponse(404, HTML, '<p>File not found</p>');
    throw err;
  }
  return new RawResponse(200, { 'Content-Type': 'image/webp', 'Cache-Control': 'private, immutable', 'X-Content-Type-Options': 'nosniff' }, data);
}

/** The attachment behind a download path, or the page refusing it; without credentials, a 401. */
async function downloadable(app: App, realm: RealmInfo, user: User | null, pathId: string): Promise<Attachment | RawResponse> {
  const a = await attachmentByPath(app, realm, pathId);
  if (!a) return notFoundPage();
  if (await canDownload(app, realm, user, a)) return a;
  if (!user) throw notLoggedIn();
  return forbiddenPage();
}

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/attachments',
    params: {},
    response: z.object({ attachments: z.array(attachment), upload_space_used: z.number().int() }),
    async handler({ app, realm, user }) {
      return { attachments: await userAttachments(app, user.id), upload_space_used: await uploadSpaceUsed(app, realm.id) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/attachments/:attachment_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteAttachment(
        app,
        realm,
        user,
        pathId(path.attachment_id, () => badRequest('Invalid attachment')),
      );
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/user_uploads',
    params: {},
    response: z.object({ uri: z.string().describe('The name of url before feature level 272'), url: z.string(), filename: z.string() }),
    maxBody: (config) => config.MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES,
    uploads: true,
    async handler({ app, realm, user, files }) {
      const { url, filename } = await uploadFile(app, realm, user, files);
      // `uri` is the pre-FL272 name of `url`; clients still read it.
      return { uri: url, url, filename };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/user_uploads/*',
    params: {},
    response: z.object({ url: z.string().describe('Serves the file without authentication for a minute') }),
    async handler({ app, realm, user, path }) {
      const a = await downloadable(app, realm, user, path['*']!);
      return a instanceof RawResponse ? a : { url: temporaryUrl(app, a.pathId) };
    },
  }),
  userRoute({
    method: 'GET',
    // The path is the upload's: `{realm_id}/{filename}`, slashes and all.
    path: '/api/v1/thumbnail/status/*',
    params: {},
    response: z.object({ has_thumbnail: z.boolean() }),
    async handler({ app, realm, user, path }) {
      const a = await attachmentByPath(app, realm, path['*']!);
      // Unknown and forbidden alike: the answer does not tell whether someone else's file exists.
      if (!a || !(await canDownload(app, realm, user, a))) throw badRequest('Invalid attachment');
      const row = await app.prisma.imageAttachment.findUnique({ where: { pathId: a.pathId } });
      return { has_thumbnail: ((row?.thumbnailMetadata ?? []) as unknown as StoredThumbnail[]).length > 0 };
    },
  }),
  optionalUserRoute({
    method: 'GET',
    path: '/user_uploads/*',
    params: {},
    response: new RawSuccess(200, '*/*', 'The file'),
    noRateLimit: true,
    async handler({ app, realm, user, path }) {
      const wanted = path['*']!;
      const thumbnail = /^thumbnail\/(.+)\/([^/]+)$/s.exec(wanted);
      const a = await downloadable(app, realm, user, thumbnail ? thumbnail[1]! : wanted);
      if (a instanceof RawResponse) return a;
      return thumbnail ? serveThumbnail(app, a, thumbnail[2]!) : serveFile(app, a);
    },
  }),
  optionalUserRoute({
    method: 'GET',
    // Zulip's legacy thumbnail URL, outside /api/v1 like the files: it serves the uploaded file
    // itself (there is no smaller version of old uploads) and refuses anything else.
    path: '/thumbnail',
    params: { url: str(), size: str() },
    response: new RawSuccess(200, '*/*', 'The uploaded file itself'),
    async handler({ app, realm, user, params }) {
      const upload = /^user_uploads\/(\d+)\/(.*)/s.exec(params.url);
      if (!upload) return new RawResponse(403, HTML, '');
      const a = await downloadable(app, realm, user, `${upload[1]}/${upload[2]}`);
      return a instanceof RawResponse ? a : serveFile(app, a);
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/user_uploads/temporary/:token/:filename',
    params: {},
    response: new RawSuccess(200, '*/*', 'The file'),
    noRateLimit: true,
    async handler({ app, realm, path }) {
      const pathId = pathIdOfToken(app, path.token!);
      if (pathId === null) throw badRequest('Invalid token');
      if (pathId.split('/').at(-1) !== path.filename) throw badRequest('Invalid filename');
      const a = await attachmentByPath(app, realm, pathId);
      if (!a) throw badRequest('Invalid token');
      return serveFile(app, a);
    },
  }),
];
