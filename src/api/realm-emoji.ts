// Custom emoji: GET /realm/emoji, POST and DELETE /realm/emoji/{emoji_name}, and the images at the
// URLs their `source_url` gives.
import { z } from 'zod';
import { addRealmEmoji, deactivateRealmEmoji } from '../actions/realm-emoji.ts';
import { guessContentType } from '../domain/mime-types.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { publicRoute, userRoute } from './route.ts';
import { readEmojiImage, realmEmojiDict } from '../queries/realm-emoji.ts';
import { realmEmoji } from '../events/schemas.ts';

/** Room for the multipart framing around the largest accepted image. */
const MAX_EMOJI_REQUEST_BYTES = 6 * 1024 * 1024;

const notFoundPage = () => new RawResponse(404, { 'Content-Type': 'text/html; charset=utf-8' }, '<p>File not found</p>');

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/realm/emoji',
    params: {},
    response: z.object({ emoji: z.record(z.string(), realmEmoji).describe('By emoji id') }),
    async handler({ app, realm }) {
      return { emoji: await realmEmojiDict(app.prisma, realm.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/emoji/:emoji_name',
    params: {},
    response: z.object({}),
    maxBody: () => MAX_EMOJI_REQUEST_BYTES,
    uploads: true,
    async handler({ app, realm, user, path, files }) {
      await addRealmEmoji(app, realm, user, path.emoji_name!, files);
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/realm/emoji/:emoji_name',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deactivateRealmEmoji(app, realm, user, path.emoji_name!);
      return {};
    },
  }),
  // Public, as Zulip serves them: images show in messages anyone with the link may read.
  publicRoute({
    method: 'GET',
    path: '/user_avatars/:realm_id/emoji/images/:file_name',
    params: {},
    response: new RawSuccess(200, 'image/*', 'The emoji image'),
    noRateLimit: true,
    async handler({ app, realm, path }) {
      if (path.realm_id !== String(realm.id)) return notFoundPage();
      const data = await readEmojiImage(app, realm.id, path.file_name!);
      if (!data) return notFoundPage();
      const headers = {
        'Content-Type': guessContentType(path.file_name!) ?? 'application/octet-stream',
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
      };
      return new RawResponse(200, headers, data);
    },
  }),
];
