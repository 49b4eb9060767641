// Custom emoji over HTTP: upload (name rules, permissions, file checks), list, serve, deactivate,
// the register snapshot, and `realm_emoji` events end to end for old and new clients.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const ok = { result: 'success', msg: '' };
const err = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
// A 1x1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const png = (field = 'f1') => ({ field, filename: 'img.png', contentType: 'image/png', data: PNG });

const upload = (user: TestUser, name: string, files = [png()]) => user.client.postMultipart(`/realm/emoji/${encodeURIComponent(name)}`, {}, files);

async function fails(reply: Promise<{ status: number; body: unknown }>, msg: string, status = 400): Promise<void> {
  const r = await reply;
  assert.is(r.status, status, msg);
  assert.equal(r.body, err(msg));
}

async function emojiList(user: TestUser): Promise<Record<string, Record<string, unknown>>> {
  const r = await user.client.get('/realm/emoji');
  assert.is(r.status, 200, r.text);
  return r.body.emoji;
}

async function setEmojiPermission(realm: TestRealm, group: string): Promise<void> {
  const { app } = realm.server;
  const info = app.realms.byId(realm.id)!;
  const groupId = info.systemGroups[group as keyof typeof info.systemGroups];
  await app.prisma.realm.update({ where: { id: realm.id }, data: { permissions: { can_add_custom_emoji_group: groupId } } });
  await app.realms.reload(realm.id);
}

test('POST /realm/emoji/{name}: a member adds one; listed with every field; the image is served', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  assert.equal(await emojiList(bob), {});
  const r = await upload(bob, 'my_emoji');
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, ok);
  const list = await emojiList(realm.owner);
  const [id] = Object.keys(list);
  const entry = list[id!]!;
  assert.match(String(entry.source_url), new RegExp(`^/user_avatars/${realm.id}/emoji/images/[0-9a-f]{8}\\.png$`));
  assert.equal(entry, { id, name: 'my_emoji', source_url: entry.source_url, deactivated: false, author_id: bob.id, still_url: null });
  const image = await realm.anonymous.request('GET', String(entry.source_url));
  assert.is(image.status, 200);
  assert.is(image.headers['content-type'], 'image/png');
  assert.is(image.text, PNG.toString('utf8'));
  const missing = await realm.anonymous.request('GET', `/user_avatars/${realm.id}/emoji/images/00000000.png`);
  assert.is(missing.status, 404);
  const otherRealm = await realm.anonymous.request('GET', String(entry.source_url).replace(`/${realm.id}/`, `/${realm.id + 1000}/`));
  assert.is(otherRealm.status, 404);
  // Spaces are underscores.
  assert.is((await upload(bob, ' party time ')).status, 200);
  assert.ok(Object.values(await emojiList(bob)).some((e) => e.name === 'party_time'));
});

test('POST /realm/emoji/{name}: name rules', async () => {
  const realm = await newRealm();
  await fails(upload(realm.owner, ' '), 'Emoji name is missing');
  await fails(upload(realm.owner, 'my_emoji_'), 'Emoji names must end with either a letter or digit.');
  await fails(upload(realm.owner, 'my-emoji-'), 'Emoji names must end with either a letter or digit.');
  const chars = 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.';
  await fails(upload(realm.owner, 'my_EMoji'), chars);
  await fails(upload(realm.owner, 'my_em*oji'), chars);
  await fails(upload(realm.owner, 'my.emoji'), chars);
  assert.is((await upload(realm.owner, 'a-1_b2')).status, 200);
});

test('POST /realm/emoji/{name}: guests, can_add_custom_emoji_group, overriding built-in emoji', async () => {
  const realm = await newRealm();
  const guest = await realm.addUser({ role: Role.GUEST });
  const member = await realm.addUser();
  const moderator = await realm.addUser({ role: Role.MODERATOR });
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  await fails(upload(guest, 'guest_emoji'), 'Not allowed for guest users');
  await setEmojiPermission(realm, 'role:moderators');
  await fails(upload(member, 'member_emoji'), 'Insufficient permission');
  assert.is((await upload(moderator, 'moderator_emoji')).status, 200);
  await setEmojiPermission(realm, 'role:members');
  assert.is((await upload(member, 'member_emoji')).status, 200);
  await fails(upload(member, 'smile'), 'Only administrators can override default emoji.');
  assert.is((await upload(admin, 'smile')).status, 200);
});

test('POST /realm/emoji/{name}: duplicate names, file count, size and format', async () => {
  const realm = await newRealm();
  assert.is((await upload(realm.owner, 'taken')).status, 200);
  await fails(upload(realm.owner, 'taken'), 'A custom emoji with this name already exists.');
  await fails(upload(realm.owner, 'two', [png('f1'), png('f2')]), 'You must upload exactly one file.');
  await fails(upload(realm.owner, 'none', []), 'You must upload exactly one file.');
  const big = { ...png(), data: Buffer.alloc(5 * 1024 * 1024 + 1) };
  await fails(upload(realm.owner, 'big', [big]), 'Uploaded file is larger than the allowed limit of 5 MiB');
  await fails(upload(realm.owner, 'tiff', [{ field: 'f1', filename: 'img.tif', contentType: 'image/tiff', data: PNG }]), 'Invalid image format');
  await fails(upload(realm.owner, 'svg', [{ field: 'f1', filename: 'img.svg', contentType: '', data: PNG }]), 'Invalid image format');
  // Without a Content-Type the file name tells.
  assert.is((await upload(realm.owner, 'gif', [{ field: 'f1', filename: 'img.gif', contentType: '', data: PNG }])).status, 200);
  assert.equal(
    Object.values(await emojiList(realm.owner)).map((e) => e.name),
    ['taken', 'gif'],
  );
});

test('DELETE /realm/emoji/{name}: 404 when absent, author or admin only, deactivates, name reusable', async () => {
  const realm = await newRealm();
  const author = await realm.addUser();
  const other = await realm.addUser();
  await fails(realm.owner.client.delete('/realm/emoji/invalid_emoji'), "Emoji 'invalid_emoji' does not exist", 404);
  assert.is((await upload(author, 'my_emoji')).status, 200);
  await fails(other.client.delete('/realm/emoji/my_emoji'), 'Must be an organization administrator or emoji author');
  const r = await author.client.delete('/realm/emoji/my_emoji');
  assert.is(r.status, 200);
  assert.equal(r.body, ok);
  await fails(author.client.delete('/realm/emoji/my_emoji'), "Emoji 'my_emoji' does not exist", 404);
  assert.is((await upload(other, 'my_emoji')).status, 200);
  assert.is((await realm.owner.client.delete('/realm/emoji/my_emoji')).status, 200, 'admins remove anyone’s');
  const list = Object.values(await emojiList(author));
  assert.equal(
    list.map((e) => [e.name, e.deactivated, e.author_id]),
    [
      ['my_emoji', true, author.id],
      ['my_emoji', true, other.id],
    ],
  );
  const image = await realm.anonymous.request('GET', String(list[0]!.source_url));
  assert.is(image.status, 200, 'old messages still show a deactivated emoji');
});

test('new messages see an emoji from its upload on, and not after it was removed (the renderer caches them)', async () => {
  const realm = await newRealm();
  const rendered = async () => {
    const sent = await realm.owner.client.post('/messages', { type: 'direct', to: [realm.owner.id], content: 'hi :party_parrot:' });
    assert.is(sent.status, 200, sent.text);
    return (await realm.owner.client.get(`/messages/${sent.body.id}`)).body.message.content as string;
  };
  assert.is(await rendered(), '<p>hi :party_parrot:</p>');
  assert.is((await upload(realm.owner, 'party_parrot')).status, 200);
  assert.match(await rendered(), /<img alt=":party_parrot:" class="emoji" src="[^"]+" title="party parrot">/);
  assert.is((await realm.owner.client.delete('/realm/emoji/party_parrot')).status, 200);
  assert.is(await rendered(), '<p>hi :party_parrot:</p>');
});

const register = async (user: TestUser, capabilities: Record<string, boolean> = {}) => {
  const r = await user.client.post('/register', { event_types: ['realm_emoji'], client_capabilities: capabilities });
  assert.is(r.status, 200, r.text);
  return r.body as { queue_id: string; realm_emoji: Record<string, unknown> };
};
const pending = async (user: TestUser, queueId: string) => {
  const r = await user.client.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.is(r.status, 200, r.text);
  return r.body.events.filter((e: { type: string }) => e.type === 'realm_emoji');
};

test('realm_emoji events: add and update_one with individual_emoji_changes, the full dict otherwise', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  assert.is((await upload(realm.owner, 'before')).status, 200);
  const snapshot = await register(bob);
  assert.equal(snapshot.realm_emoji, await emojiList(bob));
  const legacy = snapshot.queue_id;
  const modern = (await register(bob, { individual_emoji_changes: true })).queue_id;
  assert.is((await upload(realm.owner, 'party')).status, 200);
  assert.is((await realm.owner.client.delete('/realm/emoji/party')).status, 200);
  const all = await emojiList(bob);
  const partyId = Object.keys(all).find((id) => all[id]!.name === 'party')!;
  const added = { ...all[partyId], deactivated: false };
  assert.equal(await pending(bob, modern), [
    { id: 0, type: 'realm_emoji', op: 'add', emoji: added },
    { id: 1, type: 'realm_emoji', op: 'update_one', emoji_id: partyId, data: { deactivated: true } },
  ]);
  const before = Object.fromEntries(Object.entries(all).filter(([id]) => id !== partyId));
  assert.equal(await pending(bob, legacy), [
    { id: 0, type: 'realm_emoji', op: 'update', realm_emoji: { ...before, [partyId]: added } },
    { id: 1, type: 'realm_emoji', op: 'update', realm_emoji: all },
  ]);
});

test.run();
