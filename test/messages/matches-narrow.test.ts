// GET /messages/matches_narrow (Zulip's messages_in_narrow): which of the given messages the user
// received match a narrow, with their rendered content and escaped topic, search words highlighted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from './messages-helpers.ts';

test('the received messages that match, with match_content and match_subject', async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'matching', [ann, bob]);
  const hit = await send(ann, channel, 'a <b> & "c"', 'hello **world**');
  const miss = await send(ann, channel, 'other', 'goodbye');
  const dm = await sendDm(ann, [realm.owner.id], 'hello there');
  const r = await bob.client.get('/messages/matches_narrow', { msg_ids: [hit, miss, dm, 99999999], narrow: [{ operator: 'search', operand: 'hello' }] });
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    messages: {
      [hit]: { match_content: '<p><span class="highlight">hello</span> <strong>world</strong></p>', match_subject: 'a &lt;b&gt; &amp; &quot;c&quot;' },
    },
  });
  const byTopic = await bob.client.get('/messages/matches_narrow', {
    msg_ids: [hit, miss],
    narrow: [
      ['channel', 'matching'],
      ['topic', 'other'],
    ],
  });
  assert.equal(Object.keys(byTopic.body.messages), [String(miss)]);
  assert.equal((await bob.client.get('/messages/matches_narrow', { msg_ids: [], narrow: [] })).body.messages, {});
});

test('errors: missing parameters, a bad narrow', async () => {
  const realm = await newRealm();
  const missing = await realm.owner.client.get('/messages/matches_narrow', { narrow: [] });
  assert.equal([missing.status, missing.body], [400, errorBody("Missing 'msg_ids' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'msg_ids' })]);
  const bad = await realm.owner.client.get('/messages/matches_narrow', { msg_ids: [1], narrow: [['nonsense', 'x']] });
  assert.equal(
    [bad.status, bad.body],
    [400, errorBody('Invalid narrow operator: unknown operator nonsense', 'BAD_NARROW', { desc: 'unknown operator nonsense' })],
  );
});

test.run();
