// Black-box flows that lean on the SQL: users and email visibility, and a message and its
// recipients' rows written in one statement each and deleted together.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, sharedServer } from '../helpers/server.ts';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

test('database: users, login, GET /users and email visibility over HTTP', async () => {
  const server = await sharedServer();
  const realm = await newRealm(server);
  const member = await realm.addUser({ name: 'Mary Member' });
  const hidden = await realm.addUser({ name: 'Hidden Hugo' });
  const created = await realm.owner.client.post('/users', { email: 'new@example.com', password: 'new-password', full_name: 'New Nina' });
  assert.is(created.status, 200, created.text);

  const login = await realm.anonymous.post('/fetch_api_key', { username: 'NEW@example.com', password: 'new-password' });
  assert.equal([login.status, login.body.user_id, login.body.email], [200, created.body.user_id, 'new@example.com']);
  const wrong = await realm.anonymous.post('/fetch_api_key', { username: 'new@example.com', password: 'nope' });
  assert.equal([wrong.status, wrong.body.code], [401, 'AUTHENTICATION_FAILED']);

  // Admins only may see Hugo's address; a member sees the dummy address, which also finds him.
  await server.app.prisma.user.update({ where: { id: hidden.id }, data: { settings: { email_address_visibility: 3 } } });
  server.app.auth.forget(hidden.id);
  const dummy = `user${hidden.id}@${realm.subdomain}.localhost`;
  const asMember = await member.client.get('/users');
  assert.equal(
    asMember.body.members.map((m: { full_name: string; email: string; delivery_email: string | null }) => [m.full_name, m.email, m.delivery_email]),
    [
      ['Olivia Owner', realm.owner.email, realm.owner.email],
      ['Mary Member', member.email, member.email],
      ['Hidden Hugo', dummy, null],
      ['New Nina', 'new@example.com', 'new@example.com'],
    ],
  );
  const asOwner = await realm.owner.client.get(`/users/${encodeURIComponent(hidden.email)}`);
  assert.equal([asOwner.status, asOwner.body.user.delivery_email], [200, hidden.email]);
  const byRealAddress = await member.client.get(`/users/${encodeURIComponent(hidden.email)}`);
  assert.equal([byRealAddress.status, byRealAddress.body.msg], [400, 'No such user']);
  const byDummy = await member.client.get(`/users/${encodeURIComponent(dummy)}`);
  assert.equal([byDummy.status, byDummy.body.user.user_id], [200, hidden.id]);

  const denied = await member.client.post('/users', { email: 'x@example.com', password: 'x-password', full_name: 'X' });
  assert.equal([denied.status, denied.body.code], [400, 'UNAUTHORIZED_PRINCIPAL']);
  assert.is(await server.app.prisma.user.count({ where: { realmId: realm.id, isSystemBot: false } }), 4, 'the refused creation wrote nothing');
});

test('database: a channel message and a DM are stored in one statement each, read back, and deleted with their rows', async () => {
  const server = await sharedServer();
  const realm = await newRealm(server);
  const bob = await realm.addUser({ name: 'Bob' });
  const channelId = await makeChannel(realm, 'pg', [realm.owner, bob]);
  const queue = await openQueue(bob, { event_types: ['message', 'delete_message'] });
  const id = await send(realm.owner, channelId, 'topic', 'hello **pg**');
  const dm = await sendDm(realm.owner, [bob.id], 'psst');
  const got = await bob.client.get('/messages', { anchor: 'newest', num_before: 2, num_after: 0 });
  assert.equal(
    got.body.messages.map((m: Record<string, unknown>) => [m.id, m.content, m.flags]),
    [
      [id, '<p>hello <strong>pg</strong></p>', []],
      [dm, '<p>psst</p>', []],
    ],
  );
  assert.equal((await server.app.prisma.channel.findUniqueOrThrow({ where: { id: channelId } })).firstMessageId, id);
  assert.is((await realm.owner.client.delete(`/messages/${id}`)).status, 200);
  assert.is(await server.app.prisma.userMessage.count({ where: { messageId: id } }), 0, 'the rows went with the message');
  const events = [...(await queue.next()), ...(await queue.pending())];
  assert.equal(
    events.map((e) => [e.type, e.message?.id ?? e.message_id]),
    [
      ['message', id],
      ['message', dm],
      ['delete_message', id],
    ],
  );
});

test.run();
