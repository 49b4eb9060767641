// GET /attachments and DELETE /attachments/{id}: the user's own uploads with the messages that
// link to them, the organization's upload_space_used, and `attachment` remove events.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send } from '../messages/messages-helpers.ts';

async function upload(u: TestUser, filename: string, data: string): Promise<{ url: string; pathId: string }> {
  const r = await u.client.postMultipart('/user_uploads', {}, [{ field: 'file', filename, contentType: 'text/plain', data: Buffer.from(data) }]);
  assert.is(r.status, 200, r.text);
  return { url: r.body.url, pathId: r.body.url.slice('/user_uploads/'.length) };
}

test("GET /attachments: own uploads only, with linking messages; space used is the organization's", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'files', [ann, bob]);
  const first = await upload(ann, 'a.txt', 'aaaa');
  const second = await upload(ann, 'b.txt', 'bb');
  await upload(bob, 'c.txt', 'c');
  const m1 = await send(ann, channel, 'files', `[a](${first.url})`);
  const m2 = await send(ann, channel, 'files', `[a again](${first.url})`);
  const r = await ann.client.get('/attachments');
  assert.is(r.status, 200, r.text);
  const rows = await realm.server.app.prisma.attachment.findMany({ where: { ownerId: ann.id }, orderBy: { id: 'asc' } });
  const created = (i: number) => Math.floor(rows[i]!.createTime.getTime() / 1000);
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    upload_space_used: 7,
    attachments: [
      { id: rows[0]!.id, name: 'a.txt', path_id: first.pathId, size: 4, create_time: created(0), message_ids: [m1, m2] },
      { id: rows[1]!.id, name: 'b.txt', path_id: second.pathId, size: 2, create_time: created(1), message_ids: [] },
    ],
  });
  assert.equal((await realm.owner.client.get('/attachments')).body.attachments, []);
});

test("DELETE /attachments/{id}: the file goes, messages stay, the owner's clients hear of it", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'files', [ann]);
  const file = await upload(ann, 'gone.txt', 'gone');
  const kept = await upload(ann, 'kept.txt', 'kept!');
  const message = await send(ann, channel, 'files', `[gone](${file.url})`);
  const id = (await realm.server.app.prisma.attachment.findUniqueOrThrow({ where: { pathId: file.pathId } })).id;
  const queue = await openQueue(ann, { event_types: ['attachment'] });
  const r = await ann.client.delete(`/attachments/${id}`);
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '' }]);
  assert.equal(await queue.next(), [{ type: 'attachment', op: 'remove', attachment: { id }, upload_space_used: 5 }]);
  const download = await ann.client.request('GET', file.url);
  assert.is(download.status, 404, 'the file is gone');
  assert.is((await ann.client.request('GET', kept.url)).status, 200);
  const m = await ann.client.get(`/messages/${message}`);
  assert.is(m.body.message.content.includes('gone.txt'), true, 'the message still links to it');
  assert.equal(
    (await ann.client.get('/attachments')).body.attachments.map((a: { name: string }) => a.name),
    ['kept.txt'],
  );
});

test("DELETE /attachments/{id} errors: someone else's, unknown, twice, not a number", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const file = await upload(ann, 'mine.txt', 'mine');
  const id = (await realm.server.app.prisma.attachment.findUniqueOrThrow({ where: { pathId: file.pathId } })).id;
  for (const [user, path] of [
    [bob, `/attachments/${id}`],
    [realm.owner, `/attachments/${id}`],
    [ann, '/attachments/99999999'],
    [ann, '/attachments/abc'],
  ] as const) {
    const r = await user.client.delete(path);
    assert.equal([r.status, r.body], [400, errorBody('Invalid attachment')], path);
  }
  assert.is((await ann.client.request('GET', file.url)).status, 200, 'nothing was deleted');
  assert.is((await ann.client.delete(`/attachments/${id}`)).status, 200);
  const again = await ann.client.delete(`/attachments/${id}`);
  assert.equal([again.status, again.body], [400, errorBody('Invalid attachment')]);
});

test.run();
