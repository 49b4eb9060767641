// Avatars: GET /avatar/{email_or_id}[/medium] redirects to the image (Zulip's views/users.py
// avatar), POST and DELETE /users/me/avatar change one's own, and the uploaded images themselves
// at /user_avatars/{realm_id}/{file}, public as Zulip serves them: their names are random.
import { z } from 'zod';
import { deleteAvatar, setAvatar } from '../actions/avatars.ts';
import { notLoggedIn } from '../errors.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { avatarOwner, readAvatarImage } from '../queries/avatars.ts';
import { canAccessUser, UNKNOWN_USER_AVATAR_PATH } from '../queries/user-access.ts';
import { avatarUrl, gravatarUrl } from '../queries/users.ts';
import { optionalUserRoute, publicRoute, userRoute, type Route, type Scope } from './route.ts';
import type { User } from '../db/generated/client.ts';
import { MULTIPART_OVERHEAD_BYTES } from './uploads.ts';

/** Zulip's append_url_query_string: the request's own query goes along (`?s=50` for Gravatar). */
const withQuery = (url: string, query: string) => (query ? `${url}${url.includes('?') ? '&' : '?'}${query}` : url);

/**
 * Where an avatar address leads: the user's avatar, the unknown-user image when the viewer may
 * not access them, and for nobody the Gravatar of the address itself. Spectators may ask only by
 * id, and only where the organization lets them in.
 */
async function avatarRedirect({ app, realm }: Scope, viewer: User | null, emailOrId: string, medium: boolean, query: string): Promise<RawResponse> {
  if (!viewer && (!realm.settings.enable_spectator_access || !/^[+-]?\d+$/.test(emailOrId))) throw notLoggedIn();
  const owner = await avatarOwner(app, realm, emailOrId);
  let url: string;
  if (!owner) url = gravatarUrl(emailOrId, 1, medium);
  else if (viewer && !(await canAccessUser(app, realm, viewer, owner))) url = UNKNOWN_USER_AVATAR_PATH;
  else url = avatarUrl(owner, medium);
  return new RawResponse(302, { Location: withQuery(url, query), 'Content-Type': 'text/html; charset=utf-8' }, '');
}

const notFoundPage = () => new RawResponse(404, { 'Content-Type': 'text/html; charset=utf-8' }, '<p>File not found</p>');

export const routes: Route[] = [
  optionalUserRoute({
    method: 'GET',
    path: '/avatar/:email_or_id',
    params: {},
    response: new RawSuccess(302, 'text/html', 'A redirect to the avatar image'),
    noRateLimit: true,
    handler: (ctx) => avatarRedirect(ctx, ctx.user, ctx.path.email_or_id!, false, ctx.query),
  }),
  optionalUserRoute({
    method: 'GET',
    path: '/avatar/:email_or_id/medium',
    params: {},
    response: new RawSuccess(302, 'text/html', 'A redirect to the medium-size avatar image'),
    noRateLimit: true,
    handler: (ctx) => avatarRedirect(ctx, ctx.user, ctx.path.email_or_id!, true, ctx.query),
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/users/me/avatar',
    params: {},
    response: z.object({ avatar_url: z.string() }),
    maxBody: (config) => config.MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES,
    uploads: true,
    async handler({ app, realm, user, files }) {
      return { avatar_url: await setAvatar(app, realm, user, files) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/users/me/avatar',
    params: {},
    response: z.object({ avatar_url: z.string() }),
    async handler({ app, realm, user }) {
      return { avatar_url: await deleteAvatar(app, realm, user) };
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/user_avatars/:realm_id/:file_name',
    params: {},
    response: new RawSuccess(200, 'image/png', 'The avatar image'),
    noRateLimit: true,
    async handler({ app, realm, path }) {
      if (path.realm_id !== String(realm.id)) return notFoundPage();
      const data = await readAvatarImage(app, realm.id, path.file_name!);
      if (!data) return notFoundPage();
      return new RawResponse(
        200,
        { 'Content-Type': 'image/png', 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' },
        data,
      );
    },
  }),
];
