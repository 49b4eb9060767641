// GET /thumbnail (Zulip's legacy backend_serve_thumbnail): for an uploaded file it serves the
// file itself, with the download rules of /user_uploads; any other URL is refused with 403.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeForm, type Client } from '../helpers/client.ts';
import { newRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const thumbnail = (c: Client, params: Record<string, unknown>) => c.request('GET', `/thumbnail?${encodeForm(params)}`);

test('an upload is served as the file, to those who may download it', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const up = await realm.owner.client.postMultipart('/user_uploads', {}, [
    { field: 'file', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('hello') },
  ]);
  const url = (up.body.url as string).slice(1);
  const r = await thumbnail(realm.owner.client, { url, size: 'thumbnail' });
  assert.equal([r.status, r.text, r.headers['content-type']], [200, 'hello', 'text/plain; charset="ascii"']);
  assert.equal((await thumbnail(realm.owner.client, { url, size: 'full' })).text, 'hello');
  const other = await thumbnail(bob.client, { url, size: 'full' });
  assert.equal([other.status, other.text], [403, '<p>You are not authorized to view this file.</p>']);
  const anon = await thumbnail(realm.anonymous, { url, size: 'full' });
  assert.equal([anon.status, anon.body], [401, errorBody('Not logged in: API authentication or user session required', 'UNAUTHORIZED')]);
  const missing = await thumbnail(realm.owner.client, { url: `user_uploads/${realm.id}/ab/nothing/here.txt`, size: 'full' });
  assert.equal([missing.status, missing.text], [404, '<p>This file does not exist or has been deleted.</p>']);
});

test('anything but an upload is refused; both parameters are required', async () => {
  const realm = await newRealm();
  for (const url of ['https://example.com/cat.png', '/user_uploads/1/a/b.png', 'user_uploads/x/a.png']) {
    const r = await thumbnail(realm.owner.client, { url, size: 'full' });
    assert.equal([r.status, r.text], [403, ''], url);
  }
  const noSize = await thumbnail(realm.owner.client, { url: 'https://example.com/cat.png' });
  assert.equal([noSize.status, noSize.body], [400, errorBody("Missing 'size' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'size' })]);
});

test.run();
