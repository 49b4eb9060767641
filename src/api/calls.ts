// Video calls (Zulip's zerver/views/video_calls.py) on a server with no call provider configured:
// Zoom and Webex refuse as Zulip does without credentials, Nextcloud Talk and Constructor Groups as
// it does without their server; a BigBlueButton link is created (the meeting's details signed into
// it), and following it says the server has no BigBlueButton.
import { z } from 'zod';
import { randomInt } from 'node:crypto';
import { badRequest } from '../errors.ts';
import { bool, type Fields, str } from '../http/params.ts';
import { RawSuccess } from '../http/route.ts';
import { optionalUserRoute, userRoute } from './route.ts';

/** A call route that, as Zulip without the provider's credentials or server, only says so. */
const notConfigured = <F extends Fields>(provider: string, path: string, params: F, msg: string) =>
  userRoute({
    method: 'POST',
    path,
    params,
    response: z.object({ url: z.string() }).describe(`Never answered here: ${provider} is not configured`),
    async handler() {
      throw badRequest(msg);
    },
  });

export const routes = [
  notConfigured('Zoom', '/api/v1/calls/zoom/create', { is_video_call: bool().default(true) }, 'Zoom credentials have not been configured'),
  notConfigured('Webex', '/api/v1/calls/webex/create', {}, 'Webex credentials have not been configured'),
  notConfigured('Nextcloud Talk', '/api/v1/calls/nextcloud_talk/create', { room_name: str() }, 'Nextcloud Talk is not configured.'),
  notConfigured(
    'Constructor Groups',
    '/api/v1/calls/constructorgroups/create',
    { is_video_call: bool().default(true) },
    'Constructor Groups is not configured.',
  ),
  userRoute({
    method: 'GET',
    path: '/api/v1/calls/bigbluebutton/create',
    params: { meeting_name: str(), voice_only: bool().default(false) },
    response: z.object({ url: z.string() }),
    async handler({ app, user, params }) {
      const meeting = {
        meeting_id: `zulip-${randomInt(100_000_000_000, 999_999_999_999)}`,
        name: params.meeting_name,
        lock_settings_disable_cam: params.voice_only,
        moderator: user.id,
      };
      return { url: `/calls/bigbluebutton/join?${new URLSearchParams({ bigbluebutton: app.tokens.sign(JSON.stringify(meeting)) })}` };
    },
  }),
  optionalUserRoute({
    method: 'GET',
    path: '/calls/bigbluebutton/join',
    params: { bigbluebutton: str() },
    response: new RawSuccess(302, 'text/html', 'Never answered here: BigBlueButton is not configured'),
    async handler() {
      throw badRequest('BigBlueButton is not configured.');
    },
  }),
];
