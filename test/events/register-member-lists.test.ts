// Register's member lists (realm_users, realm_non_active_users) come from a per-organization cache
// of serialized JSON (src/queries/member-list.ts). Each kind of viewer must see in them what
// GET /users shows that viewer (which addresses, gravatars, profile data, their own address),
// and every change to a user must show in the very next register.
import { connect } from 'node:net';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

type Person = Record<string, unknown>;
const byId = (a: Person, b: Person) => (a.user_id as number) - (b.user_id as number);

async function ok(reply: Promise<{ status: number; text: string; body: any }>): Promise<any> {
  const r = await reply;
  assert.is(r.status, 200, r.text);
  return r.body;
}

/** The two lists of `viewer`'s register. */
async function lists(viewer: TestUser, clientGravatar: boolean): Promise<{ active: Person[]; inactive: Person[] }> {
  const body = await ok(viewer.client.post('/register', { fetch_event_types: ['realm_user'], client_gravatar: clientGravatar }));
  return { active: body.realm_users, inactive: body.realm_non_active_users };
}

/** What GET /users shows `viewer`, split as register splits it. */
async function expected(viewer: TestUser, clientGravatar: boolean): Promise<{ active: Person[]; inactive: Person[] }> {
  const body = await ok(viewer.client.get('/users', { client_gravatar: clientGravatar, include_custom_profile_fields: true }));
  const members = (body.members as Person[]).filter((m) => !m.is_system_bot).sort(byId);
  const listed = (active: boolean) => members.filter((m) => m.is_active === active).map(({ is_active: _, ...m }) => m);
  return { active: listed(true), inactive: listed(false) };
}

/** Every viewer's lists, with and without client_gravatar, are what GET /users shows them. */
async function allSeeWhatTheyMay(viewers: TestUser[]): Promise<void> {
  for (const viewer of viewers) {
    for (const clientGravatar of [true, false]) {
      const got = await lists(viewer, clientGravatar);
      assert.equal({ active: [...got.active].sort(byId), inactive: [...got.inactive].sort(byId) }, await expected(viewer, clientGravatar));
      // In id order, as register always listed them.
      assert.equal(
        got.active.map((p) => p.user_id),
        [...got.active].sort(byId).map((p) => p.user_id),
      );
    }
  }
}

async function entryOf(viewer: TestUser, userId: number): Promise<{ list: 'active' | 'inactive'; person: Person } | undefined> {
  const got = await lists(viewer, false);
  for (const list of ['active', 'inactive'] as const) {
    const person = got[list].find((p) => p.user_id === userId);
    if (person) return { list, person };
  }
  return undefined;
}

async function cast() {
  const realm = await newRealm();
  const admin = await realm.addUser({ name: 'Ada', role: Role.ADMINISTRATOR });
  const moderator = await realm.addUser({ name: 'Mo', role: Role.MODERATOR });
  const member = await realm.addUser({ name: 'Mem' });
  const guest = await realm.addUser({ name: 'Gus', role: Role.GUEST });
  const target = await realm.addUser({ name: 'Tara' });
  const bot = await realm.addUser({ name: 'Botty', bot: true });
  const viewers = [realm.owner, admin, moderator, member, guest, target];
  return { realm, admin, moderator, member, guest, target, bot, viewers };
}

test('a guest, a member, a moderator and an administrator each see the addresses Zulip shows them, and their own', async () => {
  const { realm, admin, moderator, member, guest, target, viewers } = await cast();
  // Moderators and up may see Tara's address; members and guests see her stand-in address only.
  await ok(target.client.patch('/settings', { email_address_visibility: 5 }));
  await allSeeWhatTheyMay(viewers);
  const dummy = `user${target.id}@${realm.subdomain}.localhost`;
  for (const [viewer, delivery] of [
    [realm.owner, target.email],
    [admin, target.email],
    [moderator, target.email],
    [member, null],
    [guest, null],
    [target, target.email],
  ] as const) {
    const seen = await entryOf(viewer, target.id);
    assert.is(seen?.person.delivery_email, delivery, `as seen by ${viewer.email}`);
    assert.is(seen?.person.email, dummy);
  }
  // Each sees their own address, whatever the others may see.
  await ok(member.client.patch('/settings', { email_address_visibility: 4 }));
  assert.is((await entryOf(member, member.id))?.person.delivery_email, member.email);
  assert.is((await entryOf(admin, member.id))?.person.delivery_email, null);
  await allSeeWhatTheyMay(viewers);
});

test('every change to a user shows in the next register of everyone', async () => {
  const { realm, member, target, bot, viewers } = await cast();
  await allSeeWhatTheyMay(viewers);
  const seen = async (id: number) => (await entryOf(member, id))!;

  await ok(realm.owner.client.patch(`/users/${target.id}`, { full_name: 'Tara Renamed' }));
  assert.is((await seen(target.id)).person.full_name, 'Tara Renamed');
  await allSeeWhatTheyMay(viewers);

  await ok(target.client.patch('/settings', { full_name: 'Tara Again', timezone: 'Europe/Paris' }));
  assert.is((await seen(target.id)).person.full_name, 'Tara Again');
  assert.is((await seen(target.id)).person.timezone, 'Europe/Paris');

  const moderators = async () => {
    const body = await ok(member.client.post('/register', { fetch_event_types: ['realm_user_groups'] }));
    return (body.realm_user_groups as Person[]).find((g) => g.name === 'role:moderators')!.members as number[];
  };
  assert.not.ok((await moderators()).includes(target.id));
  await ok(realm.owner.client.patch(`/users/${target.id}`, { role: Role.MODERATOR }));
  assert.is((await seen(target.id)).person.role, Role.MODERATOR);
  // System groups' members come from the same cached users.
  assert.ok((await moderators()).includes(target.id));
  await allSeeWhatTheyMay(viewers);

  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#c33' } })
    .png()
    .toBuffer();
  const before = (await seen(target.id)).person.avatar_version as number;
  await ok(target.client.postMultipart('/users/me/avatar', {}, [{ field: 'file', filename: 'me.png', contentType: 'image/png', data: png }]));
  assert.ok(((await seen(target.id)).person.avatar_version as number) > before);
  assert.match((await seen(target.id)).person.avatar_url as string, /^\/user_avatars\//);
  await allSeeWhatTheyMay(viewers);

  const field = (await ok(realm.owner.client.post('/realm/profile_fields', { name: 'Editor', field_type: 1 }))).id as number;
  await ok(target.client.patch('/users/me/profile_data', { data: [{ id: field, value: 'emacs' }] }));
  assert.equal((await seen(target.id)).person.profile_data, { [field]: { value: 'emacs', rendered_value: '<p>emacs</p>' } });
  await allSeeWhatTheyMay(viewers);
  await ok(realm.owner.client.delete(`/realm/profile_fields/${field}`));
  assert.equal((await seen(target.id)).person.profile_data, {});

  // From "administrators only" to everyone: members now see her real address.
  await ok(target.client.patch('/settings', { email_address_visibility: 3 }));
  assert.is((await seen(target.id)).person.delivery_email, null);
  await ok(target.client.patch('/settings', { email_address_visibility: 1 }));
  assert.is((await seen(target.id)).person.delivery_email, target.email);
  assert.is((await seen(target.id)).person.email, target.email);
  await allSeeWhatTheyMay(viewers);

  const newcomer = await realm.addUser({ name: 'Newcomer' });
  assert.is((await seen(newcomer.id)).person.full_name, 'Newcomer');
  await allSeeWhatTheyMay(viewers);

  // realm_bots come from the same cached rows when a register warmed them.
  const ownersBot = async () =>
    ((await ok(realm.owner.client.post('/register', { fetch_event_types: ['realm_user', 'realm_bot'] }))).realm_bots as Person[]).find(
      (b) => b.user_id === bot.id,
    );
  assert.is((await ownersBot())?.full_name, 'Botty');
  await ok(realm.owner.client.patch(`/bots/${bot.id}`, { full_name: 'Botty Renamed' }));
  assert.is((await seen(bot.id)).person.full_name, 'Botty Renamed');
  assert.is((await ownersBot())?.full_name, 'Botty Renamed');

  await ok(realm.owner.client.delete(`/users/${target.id}`));
  assert.is((await seen(target.id)).list, 'inactive');
  assert.not.ok((await moderators()).includes(target.id));
  await allSeeWhatTheyMay(viewers.filter((v) => v !== target));
  await ok(realm.owner.client.post(`/users/${target.id}/reactivate`));
  assert.is((await seen(target.id)).list, 'active');
  await allSeeWhatTheyMay(viewers);
});

test('the organization of one register is not another’s', async () => {
  const one: TestRealm = await newRealm();
  const two: TestRealm = await newRealm();
  const [a, b] = [await one.addUser({ name: 'In one' }), await two.addUser({ name: 'In two' })];
  assert.ok(await entryOf(one.owner, a.id));
  assert.is(await entryOf(one.owner, b.id), undefined);
  assert.ok(await entryOf(two.owner, b.id));
  assert.is(await entryOf(two.owner, a.id), undefined);
});

/**
 * POST /register for `viewer`'s member lists over a socket read a little at a time, so the
 * server finds the socket full again and again: the status line, the Content-Length header and
 * the body as received.
 */
function readSlowly(realm: TestRealm, viewer: TestUser): Promise<{ head: string; body: Buffer }> {
  const form = `fetch_event_types=${encodeURIComponent('["realm_user"]')}`;
  const auth = Buffer.from(`${viewer.email}:${viewer.apiKey}`).toString('base64');
  return new Promise((resolve, reject) => {
    const socket = connect(realm.server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let expectedLength = -1;
    let received = 0;
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      if (expectedLength < 0 && headEnd >= 0) expectedLength = headEnd + 4 + Number(/content-length: (\d+)/i.exec(all.subarray(0, headEnd).toString())?.[1]);
      if (expectedLength >= 0 && received >= expectedLength) {
        socket.destroy();
        resolve({ head: all.subarray(0, headEnd).toString(), body: all.subarray(headEnd + 4) });
        return;
      }
      socket.pause();
      setTimeout(() => socket.resume(), 2);
    });
    socket.write(
      `POST /api/v1/register HTTP/1.1\r\nHost: ${realm.host}\r\nAuthorization: Basic ${auth}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`,
    );
  });
}

test('a large answer reaches a client that reads slowly whole, with the own entry after multi-byte names', async () => {
  const realm = await newRealm();
  const named = await realm.addUser({ name: 'Zoë 日本語 ✓' });
  const viewer = await realm.addUser({ name: 'Viewer' });
  // Copies of the first user with long multi-byte names: an answer of several megabytes, more
  // than the sockets' buffers hold, written across many writable events.
  await realm.server.app.prisma.$executeRawUnsafe(
    `INSERT INTO "User"
     SELECT (json_populate_record(NULL::"User", (to_jsonb(u) || jsonb_build_object(
         'id', nextval(pg_get_serial_sequence('"User"', 'id')),
         'email', 'bulk' || i || '@bulk.test', 'deliveryEmail', 'bulk' || i || '@bulk.test', 'apiKey', md5('bulk' || i || random()),
         'fullName', 'Bulk ' || i || ' ' || repeat('é✓', 150)))::json)).*
     FROM "User" u, generate_series(1, 8000) i WHERE u.id = ${named.id}`,
  );
  const { head, body } = await readSlowly(realm, viewer);
  assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(head, new RegExp(`\r\nContent-Length: ${body.length}(\r\n|$)`, 'i'));
  assert.ok(body.length > 6_000_000, `${body.length} bytes`);
  const got = JSON.parse(body.toString()) as { realm_users: Person[]; realm_non_active_users: Person[] };
  assert.equal({ active: got.realm_users, inactive: got.realm_non_active_users }, await expected(viewer, true));
});

test.run();
