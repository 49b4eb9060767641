// POST /user_uploads and the downloads: stored names and paths, the upload limits, who may fetch
// a file (owner, readers of a message linking to it, spectators), temporary URLs, and the
// detached_uploads of an edit that drops the link.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '../helpers/client.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm, setRealmSettings, setChannelRow } from '../messages/messages-helpers.ts';

type Upload = { url: string; filename: string; pathId: string };

async function upload(u: TestUser, filename: string, data: string | Buffer, contentType = 'text/plain'): Promise<Upload> {
  const r = await u.client.postMultipart('/user_uploads', {}, [{ field: 'file', filename, contentType, data: Buffer.from(data) }]);
  assert.is(r.status, 200, r.text);
  assert.is(r.body.uri, r.body.url);
  return { url: r.body.url, filename: r.body.filename, pathId: r.body.url.slice('/user_uploads/'.length) };
}

/** The browser-style download path (percent-encoded, as browsers send it), with the client's credentials. */
const download = (c: Client, url: string) => c.request('GET', encodeURI(url));

const FORBIDDEN = [403, '<p>You are not authorized to view this file.</p>'];
const MISSING = [404, '<p>This file does not exist or has been deleted.</p>'];

test('upload: the reference response, Zulip path id, stored row and attachment event', async () => {
  const realm = await newRealm();
  const reg = await realm.owner.client.post('/register', { event_types: ['attachment'] });
  const r = await realm.owner.client.postMultipart('/user_uploads', {}, [
    { field: 'file', filename: 'zulip.txt', contentType: 'text/plain', data: Buffer.from('zulip!') },
  ]);
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['filename', 'msg', 'result', 'uri', 'url']);
  assert.equal([r.body.result, r.body.msg, r.body.filename], ['success', '', 'zulip.txt']);
  assert.match(r.body.url, new RegExp(`^/user_uploads/${realm.id}/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/zulip\\.txt$`));
  const pathId = r.body.url.slice('/user_uploads/'.length);
  const row = await realm.server.app.prisma.attachment.findUniqueOrThrow({ where: { pathId } });
  assert.equal([row.ownerId, row.fileName, row.size, row.contentType], [realm.owner.id, 'zulip.txt', 6, 'text/plain; charset="ascii"']);
  const events = (await realm.owner.client.get('/events', { queue_id: reg.body.queue_id, last_event_id: -1, dont_block: true })).body.events;
  assert.equal(events, [
    {
      type: 'attachment',
      op: 'add',
      id: 0,
      upload_space_used: 6,
      attachment: { id: row.id, name: 'zulip.txt', path_id: pathId, size: 6, create_time: Math.floor(row.createTime.getTime() / 1000), message_ids: [] },
    },
  ]);
});

test('upload errors: no file, two files, too large, no credentials', async () => {
  const realm = await newRealm();
  const c = realm.owner.client;
  const none = await c.postMultipart('/user_uploads', { note: 'no file' }, []);
  assert.equal([none.status, none.body], [400, errorBody('You must specify a file to upload')]);
  const file = (name: string, size = 3) => ({ field: name, filename: `${name}.txt`, contentType: 'text/plain', data: Buffer.alloc(size, 'a') });
  const two = await c.postMultipart('/user_uploads', {}, [file('f1'), file('f2')]);
  assert.equal([two.status, two.body], [400, errorBody('You may only upload one file at a time')]);
  const big = await c.postMultipart('/user_uploads', {}, [file('big', 25 * 1024 * 1024 + 1)]);
  assert.equal([big.status, big.body], [400, errorBody("File is larger than this server's configured maximum upload size (25 MiB).")]);
  const anon = await realm.anonymous.postMultipart('/user_uploads', {}, [file('f')]);
  assert.equal([anon.status, anon.body.code], [401, 'UNAUTHORIZED']);
  assert.is(await realm.server.app.prisma.attachment.count({ where: { realmId: realm.id } }), 0);
});

test('names: sanitized in the path, kept in filename; content type guessed when absent', async () => {
  const realm = await newRealm();
  const spaced = await upload(realm.owner, 'my file (1).txt', 'x');
  assert.is(spaced.filename, 'my file (1).txt');
  assert.match(spaced.url, /\/my-file-1\.txt$/);
  const accented = await upload(realm.owner, 'résumé 2.pdf', '%PDF', '');
  assert.is(accented.filename, 'résumé 2.pdf');
  assert.match(accented.pathId, /\/résumé-2\.pdf$/);
  const r = await download(realm.owner.client, `/user_uploads/${accented.pathId}`);
  assert.is(r.headers['content-type'], 'application/pdf');
  assert.is(r.headers['content-disposition'], "inline; filename*=utf-8''r%C3%A9sum%C3%A9%202.pdf");
  const quoted = await upload(realm.owner, 'a%20b.txt', 'x');
  assert.is(quoted.filename, 'a b.txt');
  const symbols = await upload(realm.owner, '&&&', 'x', 'application/octet-stream');
  assert.match(symbols.url, /\/uploaded-file$/);
});

test('download: the owner gets the bytes and headers; others 403; no credentials 401; unknown 404', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const file = await upload(realm.owner, 'notes.txt', 'zulip!');
  const own = await download(realm.owner.client, file.url);
  assert.equal([own.status, own.text], [200, 'zulip!']);
  assert.is(own.headers['content-type'], 'text/plain; charset="ascii"');
  assert.is(own.headers['content-disposition'], 'inline; filename="notes.txt"');
  assert.is(own.headers['cache-control'], 'private, immutable');
  const viaApi = await realm.owner.client.request('GET', `/api/v1${file.url}`);
  assert.is(viaApi.status, 200, viaApi.text);
  assert.match(viaApi.body.url, /^\/user_uploads\/temporary\/[^/]+\/notes\.txt$/);
  const other = await download(bob.client, file.url);
  assert.equal([other.status, other.text], FORBIDDEN);
  const otherApi = await bob.client.request('GET', `/api/v1${file.url}`);
  assert.equal([otherApi.status, otherApi.text], FORBIDDEN);
  const anon = await download(realm.anonymous, file.url);
  assert.equal([anon.status, anon.body], [401, errorBody('Not logged in: API authentication or user session required', 'UNAUTHORIZED')]);
  assert.is(anon.headers['www-authenticate'], 'Basic realm="zulip"');
  const badKey = await download(realm.owner.client.withCredentials(realm.owner.email, 'x'.repeat(32)), file.url);
  assert.equal([badKey.status, badKey.body.msg], [401, 'Invalid API key']);
  for (const url of [`/user_uploads/${realm.id}/ab/nothing/here.txt`, '/user_uploads/nothing', `${file.url}x`]) {
    const r = await download(realm.owner.client, url);
    assert.equal([r.status, r.text], MISSING, url);
  }
  const html = await upload(realm.owner, 'page.html', '<script>alert(1)</script>', 'text/html');
  const page = await download(realm.owner.client, html.url);
  assert.is(page.headers['content-disposition'], 'attachment; filename="page.html"');
});

test('temporary URLs serve without credentials; forged tokens and names are refused', async () => {
  const realm = await newRealm();
  const file = await upload(realm.owner, 'report.txt', 'numbers');
  const { url } = (await realm.owner.client.request('GET', `/api/v1${file.url}`)).body as { url: string };
  const got = await realm.anonymous.request('GET', url);
  assert.equal([got.status, got.text, got.headers['content-disposition']], [200, 'numbers', 'inline; filename="report.txt"']);
  const [, , , token] = url.split('/');
  const [payload, signature] = token!.split('.');
  const otherPath = Buffer.from(`${realm.id}/00/forged/report.txt\n9999999999`).toString('base64url');
  for (const [forged, msg] of [
    [`/user_uploads/temporary/${otherPath}.${signature}/report.txt`, 'Invalid token'],
    [`/user_uploads/temporary/${payload}/report.txt`, 'Invalid token'],
    [`/user_uploads/temporary/${token}/other.txt`, 'Invalid filename'],
  ] as const) {
    const r = await realm.anonymous.request('GET', forged);
    assert.equal([r.status, r.body], [400, errorBody(msg)], forged);
  }
});

/** Uploads a file and links it from a message sent by `sender` with `post`. */
async function shared(realm: TestRealm, post: (content: string) => Promise<number>): Promise<Upload> {
  const file = await upload(realm.owner, 'shared.txt', 'shared content');
  await post(`[shared.txt](${file.url})`);
  const row = await realm.server.app.prisma.attachment.findUniqueOrThrow({ where: { pathId: file.pathId }, include: { messages: true } });
  assert.is(row.messages.length, 1);
  return file;
}

test('a file in a public channel: members read it, guests outside the channel do not', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const subscribedGuest = await realm.addUser({ role: 600 });
  const sid = await makeChannel(realm, 'public', [realm.owner, subscribedGuest]);
  const file = await shared(realm, (content) => send(realm.owner, sid, 'files', content));
  assert.equal((await download(member.client, file.url)).text, 'shared content');
  assert.equal((await download(subscribedGuest.client, file.url)).text, 'shared content');
  const refused = await download(guest.client, file.url);
  assert.equal([refused.status, refused.text], FORBIDDEN);
});

test('a file in a private channel or a DM: recipients only', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const carol = await realm.addUser();
  const late = await realm.addUser();
  const sid = await makeChannel(realm, 'secret', [realm.owner, bob], { invite_only: true });
  const inChannel = await shared(realm, (content) => send(realm.owner, sid, 'files', content));
  await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [late.id] });
  const inDm = await shared(realm, (content) => sendDm(realm.owner, [bob.id], content));
  for (const file of [inChannel, inDm]) {
    assert.equal((await download(bob.client, file.url)).text, 'shared content');
    const r = await download(carol.client, file.url);
    assert.equal([r.status, r.text], FORBIDDEN);
  }
  // Protected history: subscribing later does not open earlier messages, nor their files.
  const lateTry = await download(late.client, inChannel.url);
  assert.equal([lateTry.status, lateTry.text], FORBIDDEN);
  const open = await makeChannel(realm, 'open-history', [realm.owner], { invite_only: true, history_public_to_subscribers: true });
  const inOpen = await shared(realm, (content) => send(realm.owner, open, 'files', content));
  await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'open-history' }], principals: [late.id] });
  assert.equal((await download(late.client, inOpen.url)).text, 'shared content');
});

test('spectators read files of web-public channels when the organization allows it', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'web', [realm.owner]);
  await setChannelRow(realm, sid, { isWebPublic: true });
  const file = await shared(realm, (content) => send(realm.owner, sid, 'files', content));
  const closed = await download(realm.anonymous, file.url);
  assert.is(closed.status, 401);
  await setRealmSettings(realm, { enable_spectator_access: true });
  const open = await download(realm.anonymous, file.url);
  assert.equal([open.status, open.text], [200, 'shared content']);
  const unshared = await upload(realm.owner, 'private.txt', 'mine');
  assert.is((await download(realm.anonymous, unshared.url)).status, 401);
});

test('editing the link away reports the upload as detached (spec 2.4)', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const file = await upload(realm.owner, 'draft.txt', 'draft text');
  const id = await send(realm.owner, sid, 'files', `see [draft.txt](${file.url})`);
  const kept = await realm.owner.client.patch(`/messages/${id}`, { content: `still [draft.txt](${file.url})` });
  assert.equal(kept.body.detached_uploads, []);
  const r = await realm.owner.client.patch(`/messages/${id}`, { content: 'no file any more' });
  assert.is(r.status, 200, r.text);
  const row = await realm.server.app.prisma.attachment.findUniqueOrThrow({ where: { pathId: file.pathId } });
  assert.equal(r.body.detached_uploads, [
    { id: row.id, name: 'draft.txt', path_id: file.pathId, size: 10, create_time: Math.floor(row.createTime.getTime() / 1000), message_ids: [] },
  ]);
  assert.ok(Math.abs(r.body.detached_uploads[0].create_time - Date.now() / 1000) < 60, 'create_time is in seconds');
});

test.run();
