// Uploaded images in messages: thumbnails made at upload, the preview markup Zulip writes once an
// image is thumbnailed, the thumbnail URLs and who may fetch them, and what is not an image.
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';

async function upload(u: TestUser, filename: string, data: Buffer, contentType: string): Promise<string> {
  const r = await u.client.postMultipart('/user_uploads', {}, [{ field: 'file', filename, contentType, data }]);
  assert.is(r.status, 200, r.text);
  return r.body.url;
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();

test('an uploaded image previews as its thumbnail, with its size and type', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  const url = await upload(realm.owner, 'photo.png', await png(1200, 900), 'image/png');
  const pathId = url.slice('/user_uploads/'.length);
  const id = await send(realm.owner, channel, 'pics', `[photo.png](${url})`);
  const content = (await bob.client.get(`/messages/${id}`)).body.message.content;
  assert.is(
    content,
    `<p><a href="${url}">photo.png</a></p>\n<div class="message_inline_image"><a href="${url}" title="photo.png">` +
      `<img data-original-content-type="image/png" data-original-dimensions="1200x900" src="/user_uploads/thumbnail/${pathId}/840x560.webp"></a></div>`,
  );

  // A reader of the message fetches the thumbnail; a format not made is the one messages show.
  const thumb = await bob.client.request('GET', `/user_uploads/thumbnail/${pathId}/840x560.webp`);
  assert.equal([thumb.status, thumb.headers['content-type']], [200, 'image/webp']);
  const other = await bob.client.request('GET', `/user_uploads/thumbnail/${pathId}/100x100.webp`);
  assert.equal([other.status, other.headers['content-type']], [200, 'image/webp']);
  assert.is((await bob.client.request('GET', `/user_uploads/thumbnail/${pathId}/nonsense`)).status, 404);

  // Someone who cannot read a message linking to it cannot fetch it either.
  const secret = await upload(realm.owner, 'secret.png', await png(20, 20), 'image/png');
  await sendDm(realm.owner, [bob.id], `[secret.png](${secret})`);
  const outsider = await realm.addUser({ name: 'Outsider' });
  const secretThumb = `/user_uploads/thumbnail/${secret.slice('/user_uploads/'.length)}/840x560.webp`;
  assert.is((await bob.client.request('GET', secretThumb)).status, 200);
  assert.is((await outsider.client.request('GET', secretThumb)).status, 403);
});

test('an animated GIF shows its animated thumbnail', async () => {
  const realm = await newRealm();
  const frame = (background: string) =>
    sharp({ create: { width: 40, height: 30, channels: 4, background } })
      .png()
      .toBuffer();
  const gif = await sharp([await frame('#ff0000'), await frame('#00ff00')], { join: { animated: true } })
    .gif()
    .toBuffer();
  const url = await upload(realm.owner, 'spin.gif', gif, 'image/gif');
  const pathId = url.slice('/user_uploads/'.length);
  const rendered = (await realm.owner.client.post('/messages/render', { content: `[spin.gif](${url})` })).body.rendered;
  assert.is(
    rendered,
    `<p><a href="${url}">spin.gif</a></p>\n<div class="message_inline_image"><a href="${url}" title="spin.gif"><img data-animated="true" data-original-content-type="image/gif" data-original-dimensions="40x30" src="/user_uploads/thumbnail/${pathId}/840x560-anim.webp"></a></div>`,
  );
});

test('files that are not images, or do not decode, are plain links', async () => {
  const realm = await newRealm();
  const text = await upload(realm.owner, 'notes.png', Buffer.from('not an image'), 'image/png');
  const pdf = await upload(realm.owner, 'doc.pdf', Buffer.from('%PDF-1.4'), 'application/pdf');
  for (const url of [text, pdf]) {
    const name = url.split('/').at(-1);
    assert.is((await realm.owner.client.post('/messages/render', { content: `[${name}](${url})` })).body.rendered, `<p><a href="${url}">${name}</a></p>`);
  }
});

test('GET /thumbnail/status/{realm_id}/{filename}: whether the thumbnails are made, to those who may download the file', async () => {
  const realm = await newRealm();
  const outsider = await realm.addUser({ name: 'Outsider' });
  const status = (u: TestUser, url: string) => u.client.get(`/thumbnail/status/${url.slice('/user_uploads/'.length)}`);
  const image = await upload(realm.owner, 'photo.png', await png(60, 40), 'image/png');
  assert.equal((await status(realm.owner, image)).body, { result: 'success', msg: '', has_thumbnail: true });
  const text = await upload(realm.owner, 'notes.txt', Buffer.from('hello'), 'text/plain');
  assert.equal((await status(realm.owner, text)).body, { result: 'success', msg: '', has_thumbnail: false });
  for (const r of [await status(outsider, image), await status(realm.owner, `/user_uploads/${realm.id}/aa/nothing/here.png`)]) {
    assert.equal([r.status, r.body], [400, { result: 'error', msg: 'Invalid attachment', code: 'BAD_REQUEST' }]);
  }
});

test('register: the thumbnail formats clients may ask for', async () => {
  const realm = await newRealm();
  const { state } = await openQueue(realm.owner, { fetch_event_types: ['realm'] });
  assert.equal(state.server_thumbnail_formats, [
    { name: '840x560-anim.webp', max_width: 840, max_height: 560, format: 'webp', animated: true },
    { name: '840x560.webp', max_width: 840, max_height: 560, format: 'webp', animated: false },
  ]);
});

test.run();
