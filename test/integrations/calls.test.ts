// Video call routes on a server with no call provider configured, as Zulip answers there.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

test('Zoom and Webex: not configured', async () => {
  const realm = await newRealm();
  const zoom = await realm.owner.client.post('/calls/zoom/create', { is_video_call: false });
  assert.equal([zoom.status, zoom.body], [400, errorBody('Zoom credentials have not been configured')]);
  const webex = await realm.owner.client.post('/calls/webex/create');
  assert.equal([webex.status, webex.body], [400, errorBody('Webex credentials have not been configured')]);
  const anonymous = await realm.anonymous.post('/calls/zoom/create');
  assert.is(anonymous.status, 401);
});

test('Nextcloud Talk and Constructor Groups: not configured, after their parameters are checked', async () => {
  const realm = await newRealm();
  const talk = await realm.owner.client.post('/calls/nextcloud_talk/create', { room_name: 'general conversation' });
  assert.equal([talk.status, talk.body], [400, errorBody('Nextcloud Talk is not configured.')]);
  const unnamed = await realm.owner.client.post('/calls/nextcloud_talk/create');
  assert.equal([unnamed.status, unnamed.body], [400, errorBody("Missing 'room_name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'room_name' })]);
  const groups = await realm.owner.client.post('/calls/constructorgroups/create', { is_video_call: false });
  assert.equal([groups.status, groups.body], [400, errorBody('Constructor Groups is not configured.')]);
  assert.equal((await realm.owner.client.post('/calls/constructorgroups/create')).body, errorBody('Constructor Groups is not configured.'));
  assert.is((await realm.anonymous.post('/calls/constructorgroups/create')).status, 401);
});

test('BigBlueButton: a signed join link for each meeting, which says the server has no BigBlueButton', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.get('/calls/bigbluebutton/create', { meeting_name: 'Standup', voice_only: true });
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['msg', 'result', 'url']);
  const url = new URL(r.body.url, 'http://x');
  assert.is(url.pathname, '/calls/bigbluebutton/join');
  const [payload] = url.searchParams.get('bigbluebutton')!.split('.');
  const meeting = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  assert.equal(
    { ...meeting, meeting_id: typeof meeting.meeting_id },
    { meeting_id: 'string', name: 'Standup', lock_settings_disable_cam: true, moderator: realm.owner.id },
  );
  assert.match(meeting.meeting_id, /^zulip-\d{12}$/);
  const second = await realm.owner.client.get('/calls/bigbluebutton/create', { meeting_name: 'Standup' });
  assert.is.not(second.body.url, r.body.url, 'each call is a new meeting');
  const missing = await realm.owner.client.get('/calls/bigbluebutton/create');
  assert.equal([missing.status, missing.body], [400, errorBody("Missing 'meeting_name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'meeting_name' })]);
  const join = await realm.owner.client.request('GET', r.body.url);
  assert.equal([join.status, join.body], [400, errorBody('BigBlueButton is not configured.')]);
});

test.run();
