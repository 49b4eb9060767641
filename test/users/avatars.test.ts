// Avatars over HTTP: uploading one (resized server-side, Zulip's checks and errors), deleting it,
// avatar_version and avatar_source, the URLs users and register give with and without
// client_gravatar, `realm_user` update events, avatar_changes_disabled, and the /avatar redirects.
import { createHash } from 'node:crypto';
import { get } from 'node:http';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, setRealmSettings, systemGroup } from '../messages/messages-helpers.ts';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const gravatar = (email: string, version: number, medium = false) =>
  `https://secure.gravatar.com/avatar/${md5(email.toLowerCase())}?d=identicon${medium ? '&s=500' : ''}&version=${version}`;

const image = (width: number, height: number, format: 'png' | 'jpeg' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    [format]()
    .toBuffer();

/** A PNG whose header claims 10000x10000 pixels: refused before anything is decoded. */
function bombPng(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(10000, 0);
  ihdr.writeUInt32BE(10000, 4);
  ihdr[8] = 8;
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(10))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

type File = { field: string; filename: string; contentType: string; data: Buffer };
const file = (data: Buffer, filename = 'me.png', contentType = 'image/png', field = 'file'): File => ({ field, filename, contentType, data });
const upload = (user: TestUser, files: File[]) => user.client.postMultipart('/users/me/avatar', {}, files);

async function me(user: TestUser): Promise<Record<string, any>> {
  const r = await user.client.get('/users/me');
  assert.is(r.status, 200, r.text);
  return r.body;
}

async function uploaded(user: TestUser, data?: Buffer): Promise<string> {
  const r = await upload(user, [file(data ?? (await image(300, 200)))]);
  assert.is(r.status, 200, r.text);
  return r.body.avatar_url;
}

/** A served file's bytes (the test client decodes bodies as text). */
function bytes(realm: TestRealm, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port: realm.server.port, path, headers: { Host: realm.host } }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (c: Buffer) => chunks.push(c))
        .on('end', () => resolve(Buffer.concat(chunks)))
        .on('error', reject);
    }).on('error', reject);
  });
}

async function redirect(client: TestRealm['anonymous'], path: string): Promise<string> {
  const r = await client.request('GET', path);
  assert.is(r.status, 302, `${path}: ${r.text}`);
  assert.is(r.text, '');
  return String(r.headers.location);
}

test('POST /users/me/avatar: resized to 100x100 and 500x500 PNGs, served; version and source change; the old files go', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  assert.equal([(await me(alice)).avatar_url, (await me(alice)).avatar_version], [gravatar(alice.email, 1), 1]);
  const url = await uploaded(alice, await image(300, 200, 'jpeg'));
  assert.match(url, new RegExp(`^/user_avatars/${realm.id}/[0-9a-f]{40}\\.png$`));
  const small = await realm.anonymous.request('GET', url);
  assert.is(small.status, 200);
  assert.is(small.headers['content-type'], 'image/png');
  const fetch = async (path: string) => sharp(await bytes(realm, path)).metadata();
  const medium = url.replace(/\.png$/, '-medium.png');
  assert.equal(await fetch(url).then((m) => [m.format, m.width, m.height]), ['png', 100, 100]);
  assert.equal(await fetch(medium).then((m) => [m.format, m.width, m.height]), ['png', 500, 500]);
  const own = await me(alice);
  assert.equal([own.avatar_url, own.avatar_version], [url, 2]);
  // A new upload: a new name, version 3, the previous files removed.
  const second = await uploaded(alice);
  assert.is.not(second, url);
  assert.is((await me(alice)).avatar_version, 3);
  assert.is((await realm.anonymous.request('GET', url)).status, 404);
  assert.is((await realm.anonymous.request('GET', medium)).status, 404);
  assert.is((await realm.anonymous.request('GET', second)).status, 200);
  // Only the two PNGs are served, and only in their own organization.
  assert.is((await realm.anonymous.request('GET', second.replace(/\.png$/, '.original'))).status, 404);
  const other = await newRealm();
  assert.is((await other.anonymous.request('GET', second)).status, 404);
});

test("POST /users/me/avatar: Zulip's errors, in Zulip's order", async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const png = await image(10, 10);
  const refused = async (files: File[], msg: string, code = 'BAD_REQUEST') => {
    const r = await upload(alice, files);
    assert.equal([r.status, r.body], [400, errorBody(msg, code)], msg);
  };
  await refused([], 'You must upload exactly one avatar.');
  await refused([file(png, 'a.png', 'image/png', 'f1'), file(png, 'b.png', 'image/png', 'f2')], 'You must upload exactly one avatar.');
  await refused([file(Buffer.alloc(5 * 1024 * 1024 + 1))], 'Uploaded file is larger than the allowed limit of 5 MiB');
  await refused([file(Buffer.from('hello'), 'a.txt', 'text/plain')], 'Invalid image format', 'BAD_IMAGE');
  await refused([file(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'a.svg', 'image/svg+xml')], 'Invalid image format', 'BAD_IMAGE');
  await refused([file(Buffer.from('not an image at all'))], 'Could not decode image; did you upload an image file?', 'BAD_IMAGE');
  // The label does not make the bytes an image Zulip decodes.
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
  await refused([file(svg)], 'Could not decode image; did you upload an image file?', 'BAD_IMAGE');
  await refused([file(bombPng())], 'Image size exceeds limit.', 'BAD_IMAGE');
  // Without a Content-Type the name tells the type.
  assert.is((await upload(alice, [file(png, 'me.png', '')])).status, 200);
  const r = await realm.anonymous.postMultipart('/users/me/avatar', {}, [file(png)]);
  assert.is(r.status, 401);
});

test('DELETE /users/me/avatar: back to Gravatar with a new version; a second delete changes nothing', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const url = await uploaded(alice);
  const r = await alice.client.delete('/users/me/avatar');
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '', avatar_url: gravatar(alice.email, 3) }]);
  assert.equal([(await me(alice)).avatar_url, (await me(alice)).avatar_version], [gravatar(alice.email, 3), 3]);
  assert.is((await realm.anonymous.request('GET', url)).status, 404, 'the files are gone');
  const again = await alice.client.delete('/users/me/avatar');
  assert.equal(again.body.avatar_url, gravatar(alice.email, 3));
  assert.is((await me(alice)).avatar_version, 3);
});

test('avatar_changes_disabled binds members, not administrators', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  await uploaded(alice);
  const set = await realm.owner.client.patch('/realm', { avatar_changes_disabled: true });
  assert.is(set.status, 200, set.text);
  const png = await image(10, 10);
  for (const r of [await upload(alice, [file(png)]), await alice.client.delete('/users/me/avatar')]) {
    assert.equal([r.status, r.body], [400, errorBody('Avatar changes are disabled in this organization.')]);
  }
  // The count of files comes first.
  assert.equal((await upload(alice, [])).body.msg, 'You must upload exactly one avatar.');
  assert.is((await upload(admin, [file(png)])).status, 200);
  assert.is((await admin.client.delete('/users/me/avatar')).status, 200);
});

test('users, register and messages give the uploaded avatar, with or without client_gravatar; others get realm_user updates', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const queue = await openQueue(bob, { event_types: ['realm_user'] });
  const url = await uploaded(alice);
  const medium = url.replace(/\.png$/, '-medium.png');
  assert.equal(await queue.next(), [
    { type: 'realm_user', op: 'update', person: { avatar_source: 'U', avatar_url: url, avatar_url_medium: medium, avatar_version: 2, user_id: alice.id } },
  ]);
  const members = async (clientGravatar: boolean) => {
    const r = await bob.client.get('/users', { client_gravatar: clientGravatar });
    return Object.fromEntries((r.body.members as Record<string, any>[]).map((m) => [m.user_id, m.avatar_url]));
  };
  assert.equal(await members(true), { [realm.owner.id]: null, [alice.id]: url, [bob.id]: null });
  assert.equal((await members(false))[bob.id], gravatar(bob.email, 1));
  assert.is((await bob.client.get(`/users/${alice.id}`)).body.user.avatar_url, url);
  const state = (await alice.client.post('/register', { fetch_event_types: ['realm_user'] })).body;
  assert.equal([state.avatar_source, state.avatar_url, state.avatar_url_medium], ['U', url, medium]);
  const bobState = (await bob.client.post('/register', { fetch_event_types: ['realm_user'] })).body;
  assert.equal([bobState.avatar_source, bobState.avatar_url, bobState.avatar_url_medium], ['G', gravatar(bob.email, 1), gravatar(bob.email, 1, true)]);
  assert.is((bobState.realm_users as Record<string, any>[]).find((u) => u.user_id === alice.id)!.avatar_url, url);
  const sid = await makeChannel(realm, 'general', [alice, bob]);
  await alice.client.post('/messages', { type: 'stream', to: sid, topic: 't', content: 'hi' });
  const fetched = await bob.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: sid }] });
  assert.is(fetched.body.messages[0].avatar_url, url, 'client_gravatar leaves uploaded avatars alone');
  await alice.client.delete('/users/me/avatar');
  assert.equal(await queue.next(), [
    {
      type: 'realm_user',
      op: 'update',
      person: {
        avatar_source: 'G',
        avatar_url: gravatar(alice.email, 3),
        avatar_url_medium: gravatar(alice.email, 3, true),
        avatar_version: 3,
        user_id: alice.id,
      },
    },
  ]);
});

test('GET /avatar/{id or email}[/medium] redirects to the avatar, passing the query on', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const c = bob.client;
  assert.is(await redirect(c, `/avatar/${alice.id}`), gravatar(alice.email, 1));
  assert.is(await redirect(c, `/avatar/${alice.id}/medium`), gravatar(alice.email, 1, true));
  assert.is(await redirect(c, `/avatar/${encodeURIComponent(alice.email.toUpperCase())}?s=50`), `${gravatar(alice.email, 1)}&s=50`);
  const url = await uploaded(alice);
  assert.is(await redirect(c, `/avatar/${alice.id}`), url);
  assert.is(await redirect(c, `/avatar/${alice.id}/medium?x=1`), `${url.replace(/\.png$/, '-medium.png')}?x=1`);
  // Nobody by that id or address: the Gravatar of what was asked, at version 1.
  assert.is(await redirect(c, '/avatar/99999999'), gravatar('99999999', 1));
  assert.is(await redirect(c, '/avatar/nobody@example.com'), gravatar('nobody@example.com', 1));
  const other = await newRealm();
  assert.is(await redirect(c, `/avatar/${other.owner.id}`), gravatar(String(other.owner.id), 1), 'users of other organizations are nobody here');
  // A real address that looks like a dummy one still names its owner.
  const lookalike = await realm.addUser({ email: 'user7@example.test' });
  await uploaded(lookalike);
  assert.match(await redirect(c, '/avatar/user7@example.test'), /^\/user_avatars\//);
});

test('GET /avatar: hidden addresses name nobody, dummy ones do; guests get the unknown-user image; spectators only by id', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const set = await alice.client.patch('/settings', { email_address_visibility: 4 });
  assert.is(set.status, 200, set.text);
  const url = await uploaded(alice);
  assert.is(await redirect(bob.client, `/avatar/${encodeURIComponent(alice.email)}`), gravatar(alice.email, 1));
  assert.is(await redirect(bob.client, `/avatar/user${alice.id}@${realm.subdomain}.localhost`), url);
  const guest = await realm.addUser({ role: Role.GUEST });
  await setRealmSettings(realm, {}, { can_access_all_users_group: systemGroup(realm, 'role:members') });
  assert.is(await redirect(guest.client, `/avatar/${alice.id}`), '/static/images/unknown-user-avatar.png');
  assert.is(await redirect(guest.client, `/avatar/${guest.id}`), gravatar(guest.email, 1));
  const anonymous = await realm.anonymous.request('GET', `/avatar/${alice.id}`);
  assert.equal([anonymous.status, anonymous.body], [401, errorBody('Not logged in: API authentication or user session required', 'UNAUTHORIZED')]);
  await setRealmSettings(realm, { enable_spectator_access: true });
  assert.is(await redirect(realm.anonymous, `/avatar/${alice.id}/medium`), url.replace(/\.png$/, '-medium.png'));
  assert.is((await realm.anonymous.request('GET', `/avatar/user${alice.id}@${realm.subdomain}.localhost`)).status, 401);
});

test.run();
