// Video calls (Zulip's zerver/views/video_calls.py) on a server with no call provider configured:
// Zoom and Webex refuse as Zulip does without credentials, Nextcloud Talk and Constructor Groups as
// it does without their server; a BigBlueButton link is created (the meeting's details signed into
// it), and following it says the server has no BigBlueButton.
import { z } from 'zod';
import { randomInt } from 'node:crypto';
import { badRequest } from '../errors.ts';
import { bool, str } from '../http/params.ts';
import { RawSuccess } from '../http/route.ts';
import { optionalUserRoute, userRoute } from './route.ts';

const notConfigured = (provider: string) => badRequest(`${provider} credentials have not been configured`);

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/calls/zoom/create',
    params: { is_video_call: bool().default(true) },
    response: z.object({ url: z.string() }).describe('Never answered here: no Zoom credentials are configured'),
    async handler() {
      throw notConfigured('Zoom');
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/calls/webex/create',
    params: {},
    response: z.object({ url: z.string() }).describe('Never answered here: no Webex credentials are configured'),
    async handler() {
      throw notConfigured('Webex');
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/calls/nextcloud_talk/create',
    params: { room_name: str() },
    response: z.object({ url: z.string() }).describe('Never answered here: no Nextcloud server is configured'),
    async handler() {
      throw badRequest('Nextcloud Talk is not configured.');
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/calls/constructorgroups/create',
    params: { is_video_call: bool().default(true) },
    response: z.object({ url: z.string() }).describe('Never answered here: no Constructor Groups server is configured'),
    async handler() {
      throw badRequest('Constructor Groups is not configured.');
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/calls/bigbluebutton/create',
    params: { meeting_name: str(), voice_only: bool().default(false) },
    response: z.object({ url: z.string() }),
    async handler({ app, user, params }) {
      const meeting = { meeting_id: `zulip-${randomInt(100_000_000_000, 999_999_999_999)}`, name: params.meeting_name, lock_settings_disable_cam: params.voice_only, moderator: user.id };
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
