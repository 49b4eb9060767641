// GET /messages/{id}/read_receipts (Zulip's test_read_receipts.py): who read a message, never the
// sender, deactivated users or those who turned send_read_receipts off; the organization can turn
// receipts off; the caller must be able to read the message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from './messages-helpers.ts';

const markRead = (u: TestUser, id: number) => u.client.post('/messages/flags', { messages: [id], op: 'add', flag: 'read' });
const receipts = async (u: TestUser, id: number) => (await u.client.get(`/messages/${id}/read_receipts`)).body;

test('readers only: not the sender, not deactivated users, not those who opted out', async () => {
  const realm = await newRealm();
  const [ann, bob, cat, dan, eve] = [await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'receipts', [ann, bob, cat, dan, eve]);
  const id = await send(ann, channel, 'topic', 'read me');
  assert.equal(await receipts(eve, id), { result: 'success', msg: '', user_ids: [] });
  for (const u of [bob, cat, dan]) await markRead(u, id);
  assert.equal((await receipts(eve, id)).user_ids, [bob.id, cat.id, dan.id]);
  assert.equal((await cat.client.patch('/settings', { send_read_receipts: false })).status, 200);
  assert.equal((await realm.owner.client.delete(`/users/${dan.id}`)).status, 200);
  assert.equal((await receipts(ann, id)).user_ids, [bob.id]);
});

test('errors: receipts turned off for the organization; a message the caller cannot read', async () => {
  const realm = await newRealm();
  const [ann, bob, outsider] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const dm = await sendDm(ann, [bob.id], 'private');
  const hidden = await outsider.client.get(`/messages/${dm}/read_receipts`);
  assert.equal([hidden.status, hidden.body], [400, errorBody('Invalid message(s)')]);
  assert.equal((await realm.owner.client.patch('/realm', { enable_read_receipts: false })).status, 200);
  const off = await bob.client.get(`/messages/${dm}/read_receipts`);
  assert.equal([off.status, off.body], [400, errorBody('Read receipts are disabled in this organization.')]);
  assert.is((await bob.client.post('/register', { fetch_event_types: ['realm'] })).body.realm_enable_read_receipts, false);
});

test.run();
