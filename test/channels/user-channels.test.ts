// GET /users/{id}/channels (Zulip's feature level 440): the ids of the channels a user is
// subscribed to, limited to those whose metadata the caller may see.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';
import { errorBody, makeChannel } from '../messages/messages-helpers.ts';

test("what each caller may see of one user's channels", async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const guest = await realm.addUser({ role: 600 });
  const open = await makeChannel(realm, 'open', [ann]);
  const shared = await makeChannel(realm, 'shared', [ann, bob], { invite_only: true });
  const secret = await makeChannel(realm, 'secret', [ann], { invite_only: true });
  const left = await makeChannel(realm, 'left', [ann, bob]);
  assert.is((await ann.client.delete('/users/me/subscriptions', { subscriptions: ['left'] })).status, 200);
  const ids = async (viewer: typeof ann) => {
    const r = await viewer.client.get(`/users/${ann.id}/channels`);
    assert.is(r.status, 200, r.text);
    return r.body;
  };
  assert.equal(await ids(ann), { result: 'success', msg: '', subscribed_channel_ids: [open, shared, secret] });
  assert.equal((await ids(realm.owner)).subscribed_channel_ids, [open, shared, secret], 'administrators see every channel');
  assert.equal((await ids(bob)).subscribed_channel_ids, [open, shared]);
  assert.equal((await ids(cat)).subscribed_channel_ids, [open]);
  assert.equal((await ids(guest)).subscribed_channel_ids, []);
  assert.equal((await bob.client.get(`/users/${bob.id}/channels`)).body.subscribed_channel_ids, [shared, left]);
});

test('errors: an unknown user; only numeric ids name users here', async () => {
  const realm = await newRealm();
  const missing = await realm.owner.client.get('/users/999999/channels');
  assert.equal([missing.status, missing.body], [400, errorBody('No such user')]);
  const named = await realm.owner.client.get('/users/me/channels');
  assert.equal([named.status, named.body], [404, errorBody('Not Found', 'NOT_FOUND')]);
});

test.run();
