// Data exports over HTTP (POST/GET/DELETE /export/realm, consents, the tarball at export_url, the
// realm_export and realm_export_consent events), what public and consented exports hold, and the
// round trip: an organization exported, imported into a fresh database by the CLI's import
// command, and compared through the API with the same API keys and passwords.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAdminCommand, runAdminCommand, UsageError } from '../../src/cli/commands.ts';
import { EXPORT_STATUS } from '../../src/domain/realm-export.ts';
import { Role } from '../../src/domain/roles.ts';
import { EXPORTED_TABLES, NOT_EXPORTED_TABLES } from '../../src/export/tables.ts';
import { extractTarGz } from '../../src/export/tar.ts';
import { Client } from '../helpers/client.ts';
import { captureEvents } from '../helpers/events.ts';
import { removeStreamOf } from '../helpers/nats.ts';
import { openQueue } from '../helpers/queues.ts';
import { freshDatabase, newRealm, startTestServer, tempDir, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

type Row = Record<string, any>;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Requests an export and waits until its last `realm_export` event says it is done. */
async function exportAndWait(realm: TestRealm, by: TestUser, params: Record<string, unknown> = {}): Promise<{ id: number; exports: Row[] }> {
  const capture = captureEvents(realm.server.app, realm.id);
  try {
    const r = await by.client.post('/export/realm', params);
    assert.is(r.status, 200, r.text);
    const id = r.body.id as number;
    for (let i = 0; i < 600; i++) {
      const last = capture.ofType('realm_export').at(-1)?.event.exports as Row[] | undefined;
      const mine = last?.find((e) => e.id === id);
      if (mine && !mine.pending) return { id, exports: last! };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`export ${id} did not finish`);
  } finally {
    capture.stop();
  }
}

/** The export behind an export_url, extracted: its folder. */
async function fetchExport(url: string, host: string, port: number): Promise<{ file: string; root: string; status: number }> {
  const u = new URL(url);
  const body = await new Promise<{ status: number; data: Buffer }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: u.pathname, headers: { Host: host } }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (c: Buffer) => chunks.push(c))
        .on('end', () => resolve({ status: res.statusCode ?? 0, data: Buffer.concat(chunks) }))
        .on('error', reject);
    }).on('error', reject);
  });
  const dir = tempDir();
  const file = path.join(dir, path.basename(u.pathname));
  if (body.status !== 200) return { file, root: dir, status: body.status };
  await writeFile(file, body.data);
  const names = await extractTarGz(file, path.join(dir, 'x'));
  return { file, root: path.join(dir, 'x', names[0]!.split('/')[0]!), status: 200 };
}

/** The next `n` events of a queue, however they are batched. */
async function collect(queue: Awaited<ReturnType<typeof openQueue>>, n: number): Promise<Row[]> {
  const events: Row[] = [];
  while (events.length < n) events.push(...(await queue.next()));
  return events;
}

const readJson = async (root: string, name: string) => JSON.parse(await readFile(path.join(root, name), 'utf8'));

const png = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: '#22aa44' } })
    .png()
    .toBuffer();

test("POST /export/realm: administrators only, Zulip's export types; pending, then finished with a URL, a notice and events", async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR, name: 'Ada' });
  const member = await realm.addUser();
  const refused = await member.client.post('/export/realm');
  assert.equal([refused.status, refused.body], [400, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')]);
  assert.equal((await member.client.get('/export/realm')).body, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
  assert.equal((await member.client.get('/export/realm/consents')).body.code, 'UNAUTHORIZED_PRINCIPAL');
  const bad = await admin.client.post('/export/realm', { export_type: 3 });
  assert.equal([bad.status, bad.body], [400, errorBody('Invalid export_type', 'BAD_REQUEST', { var_name: 'export_type' })]);
  assert.equal((await admin.client.get('/export/realm')).body, { result: 'success', msg: '', exports: [] });

  const ownerQueue = await openQueue(realm.owner, { event_types: ['realm_export'] });
  const adminQueue = await openQueue(admin, { event_types: ['realm_export', 'message'], apply_markdown: true });
  const memberQueue = await openQueue(member, { event_types: ['realm_export'] });
  const before = Math.floor(Date.now() / 1000);
  const { id, exports } = await exportAndWait(realm, admin);
  const done = exports.find((e) => e.id === id)!;
  assert.match(
    done.export_url,
    new RegExp(`^http://${realm.host.replace(/\./g, '\\.')}/user_avatars/exports/${realm.id}/[A-Za-z0-9_-]{24}/zulip-export-[0-9a-f]{8}\\.tar\\.gz$`),
  );
  assert.ok(done.export_time >= before && done.export_time <= before + 60);
  assert.equal(done, {
    id,
    export_time: done.export_time,
    acting_user_id: admin.id,
    export_url: done.export_url,
    deleted_timestamp: null,
    failed_timestamp: null,
    pending: false,
    export_type: 1,
  });
  const list = await admin.client.get('/export/realm');
  assert.equal(list.body, { result: 'success', msg: '', exports: [done] });

  // Administrators hear of it twice: requested, then finished; the maker gets a direct message first.
  const pendingEvent = { type: 'realm_export', exports: [{ ...done, export_url: null, pending: true }] };
  assert.equal(await collect(ownerQueue, 2), [pendingEvent, { type: 'realm_export', exports: [done] }]);
  const seen = await collect(adminQueue, 3);
  assert.equal(seen[0], pendingEvent);
  assert.equal(
    [seen[1]!.type, seen[1]!.message.sender_full_name, seen[1]!.message.content],
    ['message', 'Notification Bot', '<p>Your data export is complete. <a href="/#organization/data-exports-admin">View and download exports</a>.</p>'],
  );
  assert.equal(seen[2], { type: 'realm_export', exports: [done] });
  assert.equal(await memberQueue.pending(), []);

  const fetched = await fetchExport(done.export_url, realm.host, realm.server.port);
  assert.is(fetched.status, 200);
  const stats = await readJson(fetched.root, 'stats.json');
  // Three people and the system bots, which are the organization's own rows.
  assert.equal([stats.export_type, stats.realm_id, stats.User], [1, realm.id, 6]);
  const row = await realm.server.app.prisma.realmExport.findUniqueOrThrow({ where: { id } });
  const { createHash } = await import('node:crypto');
  assert.is(
    createHash('sha256')
      .update(await readFile(fetched.file))
      .digest('hex'),
    row.sha256,
  );
  // Another organization's host does not serve it.
  const other = await newRealm();
  assert.is((await fetchExport(done.export_url, other.host, realm.server.port)).status, 404);
});

test('POST /export/realm: five a week, and organizations too large for it are sent to the administrator', async () => {
  const realm = await newRealm();
  const { prisma } = realm.server.app;
  const old = new Date(Date.now() - 8 * 86400_000);
  await prisma.realmExport.create({
    data: { realmId: realm.id, actingUserId: realm.owner.id, exportType: 1, status: EXPORT_STATUS.FAILED, dateRequested: old, dateFailed: old },
  });
  for (let i = 0; i < 5; i++)
    await prisma.realmExport.create({
      data: { realmId: realm.id, actingUserId: realm.owner.id, exportType: 1, status: EXPORT_STATUS.FAILED, dateFailed: new Date() },
    });
  const limited = await realm.owner.client.post('/export/realm');
  assert.equal([limited.status, limited.body], [400, errorBody('Exceeded rate limit.')]);
  await prisma.realmExport.deleteMany({ where: { realmId: realm.id } });
  const bigRealm = await newRealm();
  for (let i = 0; i < 11; i++) {
    await realm.server.app.prisma.attachment.create({
      data: { realmId: bigRealm.id, ownerId: bigRealm.owner.id, pathId: `${bigRealm.id}/big/${i}`, fileName: 'big', size: 2 * 1024 ** 3 - 1 },
    });
  }
  const big = await bigRealm.owner.client.post('/export/realm');
  assert.equal(
    [big.status, big.body],
    [400, errorBody(`The export you requested is too large for automatic processing. Please request a manual export by contacting admin@localhost.`)],
  );
  assert.is(await prisma.realmExport.count({ where: { realmId: bigRealm.id } }), 0);

  // One message over Zulip's 250,000, written in bulk as an import would: counted up to the limit, refused the same way.
  const longRealm = await newRealm();
  const channel = await makeChannel(longRealm, 'long', [longRealm.owner]);
  await prisma.$executeRaw`INSERT INTO "Message" ("realmId", "senderId", "channelId", topic, content, "renderedContent")
    SELECT ${longRealm.id}, ${longRealm.owner.id}, ${channel}, 't', 'm', '<p>m</p>' FROM generate_series(1, 250001)`;
  const long = await longRealm.owner.client.post('/export/realm');
  assert.equal([long.status, long.body], [big.status, big.body]);
  assert.is(await prisma.realmExport.count({ where: { realmId: longRealm.id } }), 0);
});

test("DELETE /export/realm/{id}: Zulip's refusals, then the tarball goes and everyone hears", async () => {
  const realm = await newRealm();
  const { prisma } = realm.server.app;
  const o = realm.owner.client;
  const member = await realm.addUser();
  assert.equal((await o.delete('/export/realm/999999')).body, errorBody('Invalid data export ID'));
  const otherRealm = await newRealm();
  const foreign = await prisma.realmExport.create({
    data: { realmId: otherRealm.id, actingUserId: otherRealm.owner.id, exportType: 1, status: EXPORT_STATUS.SUCCEEDED },
  });
  assert.equal((await o.delete(`/export/realm/${foreign.id}`)).body, errorBody('Invalid data export ID'));
  const waiting = await prisma.realmExport.create({ data: { realmId: realm.id, actingUserId: realm.owner.id, exportType: 1, status: EXPORT_STATUS.STARTED } });
  assert.equal((await o.delete(`/export/realm/${waiting.id}`)).body, errorBody('Export still in progress'));
  const failed = await prisma.realmExport.create({
    data: { realmId: realm.id, actingUserId: realm.owner.id, exportType: 1, status: EXPORT_STATUS.FAILED, dateFailed: new Date() },
  });
  assert.equal((await o.delete(`/export/realm/${failed.id}`)).body, errorBody('Export failed, nothing to delete'));
  await prisma.realmExport.deleteMany({ where: { id: { in: [waiting.id, failed.id] } } });

  const { id, exports } = await exportAndWait(realm, realm.owner);
  const url = exports.find((e) => e.id === id)!.export_url;
  assert.equal((await member.client.delete(`/export/realm/${id}`)).body.code, 'UNAUTHORIZED_PRINCIPAL');
  const queue = await openQueue(realm.owner, { event_types: ['realm_export'] });
  const r = await o.delete(`/export/realm/${id}`);
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '' }]);
  const [event] = await queue.next();
  const deleted = event!.exports[0];
  assert.ok(typeof deleted.deleted_timestamp === 'number');
  assert.equal(deleted, { ...exports[0], export_url: null, deleted_timestamp: deleted.deleted_timestamp });
  assert.is((await fetchExport(url, realm.host, realm.server.port)).status, 404);
  assert.equal((await o.delete(`/export/realm/${id}`)).body, errorBody('Export already deleted'));
});

test('GET /export/realm/consents and realm_export_consent events', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const alice = await realm.addUser();
  await realm.addUser({ bot: true, botOwnerId: alice.id });
  const hidden = await alice.client.patch('/settings', { email_address_visibility: 3 });
  assert.is(hidden.status, 200, hidden.text);
  const consents = (await admin.client.get('/export/realm/consents')).body;
  assert.equal(consents, {
    result: 'success',
    msg: '',
    export_consents: [
      { user_id: realm.owner.id, consented: false, email_address_visibility: 1 },
      { user_id: admin.id, consented: false, email_address_visibility: 1 },
      { user_id: alice.id, consented: false, email_address_visibility: 3 },
    ],
  });
  const queue = await openQueue(admin, { event_types: ['realm_export_consent'] });
  const aliceQueue = await openQueue(alice, { event_types: ['realm_export_consent'] });
  assert.is((await alice.client.patch('/settings', { allow_private_data_export: true })).status, 200);
  assert.equal(await queue.next(), [{ type: 'realm_export_consent', user_id: alice.id, consented: true }]);
  assert.equal(await aliceQueue.pending(), []);
  assert.is((await admin.client.get('/export/realm/consents')).body.export_consents[2].consented, true);
});

/** An organization with something of everything; its humans consent to export their private data, Dan only if asked. */
async function populate(danConsents: boolean) {
  const realm = await newRealm();
  const o = realm.owner;
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR, name: 'Ada Admin' });
  const bob = await realm.addUser({ name: 'Bob' });
  const guest = await realm.addUser({ role: Role.GUEST, name: 'Gus Guest' });
  const dan = await realm.addUser({ name: 'Dan' });
  const bot = await realm.addUser({ bot: true, botOwnerId: bob.id, name: 'Botty' });
  for (const u of danConsents ? [o, admin, bob, guest, dan] : [o, admin, bob, guest]) {
    assert.is((await u.client.patch('/settings', { allow_private_data_export: true })).status, 200);
  }
  assert.is((await o.client.patch('/realm', { name: 'Exported Org', description: 'All of it' })).status, 200);
  assert.is((await o.client.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.test/{id}' })).status, 200);
  assert.is(
    (await o.client.postMultipart('/realm/emoji/party', {}, [{ field: 'f', filename: 'p.png', contentType: 'image/png', data: await png() }])).status,
    200,
  );
  assert.is(
    (await bob.client.postMultipart('/users/me/avatar', {}, [{ field: 'f', filename: 'me.png', contentType: 'image/png', data: await png() }])).status,
    200,
  );
  const group = await o.client.post('/user_groups/create', { name: 'crew', description: 'The crew', members: [bob.id, admin.id] });
  assert.is(group.status, 200, group.text);
  const folder = await o.client.post('/channel_folders/create', { name: 'Work', description: 'work things' });
  assert.is(folder.status, 200, folder.text);
  const general = await makeChannel(realm, 'general', [o, admin, bob, guest, dan, bot]);
  const secret = await makeChannel(realm, 'secret', [o, bob], { invite_only: true });
  const danOnly = await makeChannel(realm, 'dan-only', [dan], { invite_only: true });
  assert.is((await o.client.patch(`/streams/${general}`, { folder_id: folder.body.channel_folder_id, description: 'Everyone **here**' })).status, 200);
  const props = [
    { stream_id: general, property: 'color', value: '#abcdef' },
    { stream_id: general, property: 'is_muted', value: true },
  ];
  assert.is((await bob.client.post('/users/me/subscriptions/properties', { subscription_data: props })).status, 200);
  const up = await bob.client.postMultipart('/user_uploads', {}, [
    { field: 'file', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('the notes') },
  ]);
  assert.is(up.status, 200, up.text);
  const m1 = await send(bob, general, 'hello', `Hi all, see [notes](${up.body.url}) and #12 :party:`);
  const m2 = await send(o, general, 'hello', 'Welcome @**Bob**');
  const m3 = await send(bob, secret, 'plans', 'secret plans');
  const m4 = await send(dan, danOnly, 'mine', 'only dan');
  const dm = await sendDm(bob, [admin.id], 'a direct word');
  const groupDm = await sendDm(guest, [bob.id, o.id], 'group chat');
  const danDm = await sendDm(dan, [bot.id], 'dan to the bot');
  assert.is((await admin.client.post(`/messages/${m1}/reactions`, { emoji_name: 'tada' })).status, 200);
  assert.is((await bob.client.post(`/messages/${m2}/reactions`, { emoji_name: 'party', reaction_type: 'realm_emoji' })).status, 200);
  assert.is((await bob.client.post('/messages/flags', { messages: [m2, m3], op: 'add', flag: 'starred' })).status, 200);
  assert.is((await admin.client.post('/messages/flags', { messages: [m1, dm], op: 'add', flag: 'read' })).status, 200);
  assert.is((await bob.client.post('/users/me/status', { status_text: 'exporting', emoji_name: 'octopus' })).status, 200);
  for (const u of [bob, dan])
    assert.is((await u.client.post('/drafts', { drafts: [{ type: 'stream', to: [general], topic: 't', content: 'unsent' }] })).status, 200);
  return { realm, users: { o, admin, bob, guest, dan, bot }, messages: { m1, m2, m3, m4, dm, groupDm, danDm }, upload: up.body.url as string };
}

/** What a user sees of the organization through the API. */
async function view(c: Client, statusOf: number): Promise<Record<string, unknown>> {
  // Refusals count too (guests may not list groups): the same answer either way.
  const ok = async (path: string, params: Record<string, unknown> = {}) => {
    const r = await c.get(path, params);
    return [r.status, r.body];
  };
  return {
    me: await ok('/users/me'),
    users: await ok('/users', { include_custom_profile_fields: true }),
    streams: await ok('/streams', { include_all: true }),
    subscriptions: await ok('/users/me/subscriptions', { include_subscribers: true }),
    messages: await ok('/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow: [] }),
    groups: await ok('/user_groups'),
    emoji: await ok('/realm/emoji'),
    linkifiers: await ok('/realm/linkifiers'),
    folders: await ok('/channel_folders'),
    drafts: await ok('/drafts'),
    status: await ok(`/users/${statusOf}/status`),
  };
}

test('an organization exported and imported into a fresh database answers the same through the API', async () => {
  const { realm, users, upload } = await populate(true);
  const humans = [users.o, users.admin, users.bob, users.guest, users.dan];
  const before = new Map<number, Record<string, unknown>>();
  for (const u of humans) before.set(u.id, await view(u.client, users.bob.id));
  const { prisma } = realm.server.app;
  const counts = { users: await prisma.user.count({ where: { realmId: realm.id } }), messages: await prisma.message.count({ where: { realmId: realm.id } }) };
  const { id, exports } = await exportAndWait(realm, users.o, { export_type: 2 });
  const fetched = await fetchExport(exports.find((e) => e.id === id)!.export_url, realm.host, realm.server.port);
  const realmJson = await readJson(fetched.root, 'realm.json');
  assert.equal(
    Object.keys(realmJson),
    EXPORTED_TABLES.filter((t) => t.file === 'realm').map((t) => t.table),
  );
  assert.ok((realmJson.User as Row[]).every((u) => typeof u.apiKey === 'string' && u.realmId === realm.id));
  assert.is((await readJson(fetched.root, 'uploads/records.json')).length, 1);
  assert.is((await readJson(fetched.root, 'avatars/records.json')).length, 3);
  assert.is((await readJson(fetched.root, 'emoji/records.json')).length, 1);

  // The import, into a server on a fresh database and data directory, as the CLI runs it.
  const target = await startTestServer({ DATABASE_URL: await freshDatabase(), DATA_DIR: tempDir() });
  try {
    const summary = await runAdminCommand(target.app, parseAdminCommand('import', [fetched.file]));
    assert.equal(summary, { realm_id: realm.id, subdomain: realm.subdomain, ...counts });
    const host = target.app.realms.host(target.app.realms.byId(realm.id)!);
    const client = (u: TestUser) => new Client(target.port, host, { email: u.email, apiKey: u.apiKey });
    for (const u of humans) assert.equal(await view(client(u), users.bob.id), before.get(u.id), `what ${u.email} sees`);
    // Passwords still work, and give the same API key.
    const login = await new Client(target.port, host).post('/fetch_api_key', { username: users.bob.email, password: users.bob.password });
    assert.equal([login.status, login.body.api_key], [200, users.bob.apiKey]);
    // Files came along: the upload, the avatar, the emoji image.
    const file = await client(users.admin).request('GET', upload);
    assert.equal([file.status, file.text], [200, 'the notes']);
    const anonymous = new Client(target.port, host);
    assert.is((await anonymous.request('GET', (before.get(users.bob.id)!.me as Row)[1].avatar_url)).status, 200);
    const emoji = Object.values((before.get(users.o.id)!.emoji as Row)[1].emoji as Record<string, Row>)[0]!;
    assert.is((await anonymous.request('GET', emoji.source_url)).status, 200);
    // New rows take ids after the imported ones.
    const sent = await client(users.bob).post('/messages', { type: 'stream', to: 'general', topic: 'after', content: 'still here' });
    assert.is(sent.status, 200, sent.text);
    assert.ok(sent.body.id > Math.max(...((before.get(users.o.id)!.messages as Row)[1].messages as Row[]).map((m) => m.id)));
    // A second import finds the organization there.
    const again = await runAdminCommand(target.app, { command: 'import', file: fetched.file }).catch((err: Error) => err);
    assert.match(String(again), 'the database already holds an organization');
  } finally {
    await target.stop();
  }
  // And the command itself, as an operator types it.
  const dataDir = tempDir();
  const databaseUrl = await freshDatabase();
  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'import', fetched.file], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  await removeStreamOf(databaseUrl);
  assert.is(cli.status, 0, cli.stderr);
  assert.equal(JSON.parse(cli.stdout), { realm_id: realm.id, subdomain: realm.subdomain, ...counts });
  assert.is(await readFile(path.join(dataDir, 'uploads', upload.slice('/user_uploads/'.length)), 'utf8'), 'the notes');
});

test('an export with consent holds the private data of consenting members only', async () => {
  const { realm, users, messages } = await populate(false);
  const { id, exports } = await exportAndWait(realm, users.admin, { export_type: 2 });
  const fetched = await fetchExport(exports.find((e) => e.id === id)!.export_url, realm.host, realm.server.port);
  const messagesJson = await readJson(fetched.root, 'messages-000001.json');
  const { m1, m2, m3, dm, groupDm } = messages;
  assert.equal(
    (messagesJson.Message as Row[]).map((m) => m.id),
    [m1, m2, m3, dm, groupDm],
    "neither Dan's channel nor his conversation with the bot",
  );
  const flagged = [...new Set((messagesJson.UserMessage as Row[]).map((um) => um.userId))].sort((a, b) => a - b);
  assert.equal(flagged, [users.o.id, users.admin.id, users.bob.id, users.guest.id]);
  const realmJson = await readJson(fetched.root, 'realm.json');
  assert.equal(
    (realmJson.Draft as Row[]).map((d) => d.userId),
    [users.bob.id],
  );
  assert.is((realmJson.DirectMessageGroup as Row[]).length, 2);
});

test("a public export holds public channels' messages and nobody's private data", async () => {
  const { realm, users, messages } = await populate(true);
  const { id, exports } = await exportAndWait(realm, users.admin);
  const fetched = await fetchExport(exports.find((e) => e.id === id)!.export_url, realm.host, realm.server.port);
  const messagesJson = await readJson(fetched.root, 'messages-000001.json');
  assert.equal(
    (messagesJson.Message as Row[]).map((m) => m.id),
    [messages.m1, messages.m2],
  );
  const realmJson = await readJson(fetched.root, 'realm.json');
  assert.equal([realmJson.Draft, realmJson.DirectMessageGroup], [[], []]);
  const subscriptions = await realm.server.app.prisma.subscription.count({ where: { user: { realmId: realm.id } } });
  assert.is((realmJson.Subscription as Row[]).length, subscriptions, 'subscriptions, to every channel, are not private');
  // Flags of public messages leave for everyone, the bot's too.
  assert.ok((messagesJson.UserMessage as Row[]).some((um) => um.userId === users.bot.id));
  assert.is((await readJson(fetched.root, 'attachment.json')).Attachment.length, 1);
});

/** `count` messages from `sender` to a channel topic, written in one statement as a bulk load would, each with a row for `reader`; their ids. */
async function bulkMessages(realm: TestRealm, channelId: number, sender: TestUser, reader: TestUser, count: number): Promise<number[]> {
  const rows = await realm.server.app.prisma.$queryRaw<{ id: number }[]>`
    WITH m AS (
      INSERT INTO "Message" ("realmId", "senderId", "channelId", topic, content, "renderedContent")
      SELECT ${realm.id}, ${sender.id}, ${channelId}, 'bulk', 'bulk ' || i, '<p>bulk ' || i || '</p>' FROM generate_series(1, ${count}::int) i
      RETURNING id),
    r AS (INSERT INTO "UserMessage" ("userId", "messageId", flags) SELECT ${reader.id}, id, 0 FROM m)
    SELECT id FROM m ORDER BY id`;
  return rows.map((r) => r.id);
}

/** The messages files of an extracted export, by name. */
async function messagesFiles(root: string): Promise<Record<string, Row>> {
  const names = (await readdir(root)).filter((n) => n.startsWith('messages-')).sort();
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await readJson(root, n)] as const)));
}

const idsOf = (rows: Row[]) => rows.map((r) => r.id as number);
const realmMessageIds = async (realm: TestRealm) =>
  (await realm.server.app.prisma.message.findMany({ where: { realmId: realm.id }, select: { id: true }, orderBy: { id: 'asc' } })).map((m) => m.id);

test('an export of 2,500+ messages: 1,000 per file in id order, each message once, its upload once; the round trip keeps them all', async () => {
  const realm = await newRealm();
  const o = realm.owner;
  const bob = await realm.addUser({ name: 'Bob' });
  const general = await makeChannel(realm, 'general', [o, bob]);
  const up = await bob.client.postMultipart('/user_uploads', {}, [
    { field: 'file', filename: 'n.txt', contentType: 'text/plain', data: Buffer.from('shared notes') },
  ]);
  assert.is(up.status, 200, up.text);
  const first = await send(bob, general, 'files', `see [notes](${up.body.url})`);
  const bulk = await bulkMessages(realm, general, o, bob, 2500);
  const last = await send(bob, general, 'files', `again [notes](${up.body.url})`);
  const all = await realmMessageIds(realm);
  // On each side of the first boundary.
  for (const m of [all[999]!, all[1000]!]) assert.is((await bob.client.post(`/messages/${m}/reactions`, { emoji_name: 'tada' })).status, 200);
  assert.ok(all.length > 2500 && all.length <= 3000 && all.includes(first) && all.includes(last));

  const { id, exports } = await exportAndWait(realm, o);
  const fetched = await fetchExport(exports.find((e) => e.id === id)!.export_url, realm.host, realm.server.port);
  const files = await messagesFiles(fetched.root);
  assert.equal(Object.keys(files), ['messages-000001.json', 'messages-000002.json', 'messages-000003.json']);
  assert.equal(
    Object.values(files).map((f) => idsOf(f.Message)),
    [all.slice(0, 1000), all.slice(1000, 2000), all.slice(2000)],
  );
  // Each file holds the flags and reactions of its own messages.
  for (const f of Object.values(files)) {
    const mine = new Set(idsOf(f.Message));
    assert.ok((f.UserMessage as Row[]).length >= mine.size && (f.UserMessage as Row[]).every((um) => mine.has(um.messageId)));
  }
  const bobFlags = Object.values(files).flatMap((f) => (f.UserMessage as Row[]).filter((um) => um.userId === bob.id).map((um) => um.messageId));
  assert.equal(bobFlags, all);
  assert.equal(
    Object.values(files).map((f) => (f.Reaction as Row[]).map((r) => [r.messageId, r.emojiName])),
    [[[all[999], 'tada']], [[all[1000], 'tada']], []],
  );
  // The upload linked from the first and the last file leaves once, with both links.
  const attachments = await readJson(fetched.root, 'attachment.json');
  assert.equal(
    (attachments.Attachment as Row[]).map((a) => [a.pathId, a.ownerId]),
    [[up.body.url.slice('/user_uploads/'.length), bob.id]],
  );
  assert.equal(
    (attachments.AttachmentMessage as Row[]).map((l) => l.messageId),
    [first, last],
  );
  const records = await readJson(fetched.root, 'uploads/records.json');
  assert.equal(records, [
    { path: up.body.url.slice('/user_uploads/'.length), realm_id: realm.id, user_profile_id: bob.id, content_type: 'text/plain; charset="ascii"', size: 12 },
  ]);
  assert.is(await readFile(path.join(fetched.root, 'uploads', records[0].path), 'utf8'), 'shared notes');
  const stats = await readJson(fetched.root, 'stats.json');
  assert.equal([stats.Message, stats.Attachment, stats.AttachmentMessage, stats['uploads files']], [all.length, 1, 2, 1]);

  // The round trip: every message of the three files back, with the upload.
  const target = await startTestServer({ DATABASE_URL: await freshDatabase(), DATA_DIR: tempDir() });
  try {
    const summary = await runAdminCommand(target.app, parseAdminCommand('import', [fetched.file]));
    assert.equal(summary, {
      realm_id: realm.id,
      subdomain: realm.subdomain,
      users: await realm.server.app.prisma.user.count({ where: { realmId: realm.id } }),
      messages: all.length,
    });
    const host = target.app.realms.host(target.app.realms.byId(realm.id)!);
    const client = new Client(target.port, host, { email: bob.email, apiKey: bob.apiKey });
    const got: number[] = [];
    for (let anchor: number | string = 'oldest'; ; ) {
      const page = await client.get('/messages', { anchor, num_before: 0, num_after: 1000, narrow: [], include_anchor: anchor === 'oldest' });
      assert.is(page.status, 200, page.text);
      got.push(...idsOf(page.body.messages));
      if (page.body.found_newest) break;
      anchor = got.at(-1)!;
    }
    assert.equal(got, all);
    const edge = await client.get(`/messages/${all[999]}`);
    assert.equal(
      [edge.body.message.content, edge.body.message.reactions.map((r: Row) => r.emoji_name)],
      [`<p>bulk ${bulk.indexOf(all[999]!) + 1}</p>`, ['tada']],
    );
    const file = await client.request('GET', up.body.url);
    assert.equal([file.status, file.text], [200, 'shared notes']);
  } finally {
    await target.stop();
  }
});

test('messages deleted or edited while an export runs: each file as its own transaction found it, later messages left out', async () => {
  const realm = await newRealm();
  const o = realm.owner;
  const bob = await realm.addUser({ name: 'Bob' });
  const general = await makeChannel(realm, 'general', [o, bob]);
  const bulk = await bulkMessages(realm, general, o, bob, 2500);
  const all = await realmMessageIds(realm);
  const inFirst = all[10]!;
  const inSecond = all[1500]!;
  const inThird = all[2200]!;
  const { app } = realm.server;
  // The export is held on the uploads of its first file, after it read that file's messages: there,
  // in the transaction holding it, one message of each file changes and one more is sent (in SQL:
  // sending and editing read the uploads too). It is first held on realm.json's playgrounds, which
  // nothing else reads, so the uploads can be locked after the request, which reads them.
  const waitingOn = async (table: string) => {
    for (let i = 0; i < 3000; i++) {
      const [{ waiting }] = await app.prisma.$queryRaw<{ waiting: number }[]>`
        SELECT count(*)::int AS waiting FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
         WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND c.relname = ${table} AND NOT l.granted`;
      if (waiting > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`the export never waited on ${table}`);
  };
  let sent = 0;
  let releasePlaygrounds = () => {};
  const playgroundsReleased = new Promise<void>((resolve) => (releasePlaygrounds = resolve));
  let playgroundsLocked = () => {};
  const playgroundsHeld = new Promise<void>((resolve) => (playgroundsLocked = resolve));
  const playgrounds = app.db.withSession((session) =>
    session.transaction(async (tx) => {
      await tx.query('LOCK TABLE "RealmPlayground" IN ACCESS EXCLUSIVE MODE');
      playgroundsLocked();
      await playgroundsReleased;
    }),
  );
  await playgroundsHeld;
  const r = await o.client.post('/export/realm');
  assert.is(r.status, 200, r.text);
  await waitingOn('RealmPlayground');
  const lockHeld = app.db.withSession((session) =>
    session.transaction(async (tx) => {
      await tx.query('LOCK TABLE "Attachment" IN ACCESS EXCLUSIVE MODE');
      releasePlaygrounds();
      await playgrounds;
      await waitingOn('Attachment');
      await tx.query(`UPDATE "Message" SET content = 'first, edited' WHERE id = $1`, [inFirst]);
      await tx.query('DELETE FROM "UserMessage" WHERE "messageId" = $1', [inSecond]);
      await tx.query('DELETE FROM "Message" WHERE id = $1', [inSecond]);
      await tx.query(`UPDATE "Message" SET content = 'third, edited' WHERE id = $1`, [inThird]);
      [{ id: sent }] = await tx.query<{ id: number }>(
        `INSERT INTO "Message" ("realmId", "senderId", "channelId", topic, content, "renderedContent") VALUES ($1, $2, $3, 'late', 'late', '<p>late</p>') RETURNING id`,
        [realm.id, bob.id, general],
      );
      return r.body.id as number;
    }),
  );
  const exportId = await lockHeld;
  let exported: Row | undefined;
  for (let i = 0; i < 1200 && !exported?.export_url; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    exported = ((await o.client.get('/export/realm')).body.exports as Row[]).find((e) => e.id === exportId);
  }
  assert.ok(exported?.export_url, 'the export finished');
  const fetched = await fetchExport(exported!.export_url, realm.host, realm.server.port);
  const files = Object.values(await messagesFiles(fetched.root));
  // File numbers follow the ids listed at the start: the deleted message leaves a gap in its file only.
  assert.equal(
    files.map((f) => idsOf(f.Message)),
    [all.slice(0, 1000), all.slice(1000, 2000).filter((m) => m !== inSecond), all.slice(2000)],
  );
  assert.not.ok(files.flatMap((f) => idsOf(f.Message)).includes(sent), 'a message sent after the export started stays out');
  assert.not.ok(
    files[1]!.UserMessage.some((um: Row) => um.messageId === inSecond),
    'nor the flags of the deleted message',
  );
  const content = (id: number) => files.flatMap((f) => f.Message as Row[]).find((m) => m.id === id)!.content;
  // The first file was read before the edit, the third after it.
  assert.equal([content(inFirst), content(inThird)], [`bulk ${bulk.indexOf(inFirst) + 1}`, 'third, edited']);
  assert.is((await readJson(fetched.root, 'stats.json')).Message, all.length - 1);
});

test("import: the command's arguments, and archives it refuses", async () => {
  assert.throws(
    () => parseAdminCommand('import', []),
    (e: unknown) => e instanceof UsageError,
  );
  assert.throws(
    () => parseAdminCommand('import', ['a.tar.gz', 'b.tar.gz']),
    (e: unknown) => e instanceof UsageError,
  );
  assert.throws(
    () => parseAdminCommand('import', ['--force']),
    (e: unknown) => e instanceof UsageError,
  );
  assert.equal(parseAdminCommand('import', ['x.tar.gz']), { command: 'import', file: path.resolve('x.tar.gz') });
  const target = await startTestServer({ DATABASE_URL: await freshDatabase(), DATA_DIR: tempDir() });
  try {
    const dir = await mkdtemp(path.join(tempDir(), 'bad-'));
    const { createTarGz } = await import('../../src/export/tar.ts');
    const notExport = createTarGz(path.join(dir, 'other.tar.gz'));
    await notExport.add('stuff/readme.txt', Buffer.from('hello'));
    await notExport.close();
    const r = await runAdminCommand(target.app, { command: 'import', file: path.join(dir, 'other.tar.gz') }).catch((err: Error) => err);
    assert.match(String(r), 'not a data export');
    const newer = createTarGz(path.join(dir, 'newer.tar.gz'));
    await newer.add('e/realm.json', Buffer.from('{}'));
    await newer.add('e/migration_status.json', Buffer.from(JSON.stringify({ migrations: ['29990101000000_from_the_future'] })));
    await newer.close();
    const n = await runAdminCommand(target.app, { command: 'import', file: path.join(dir, 'newer.tar.gz') }).catch((err: Error) => err);
    assert.match(String(n), 'newer version of the server (unknown migrations: 29990101000000_from_the_future)');
    assert.is(await target.app.prisma.realm.count(), 0);
  } finally {
    await target.stop();
  }
});

test("every table is either exported or named as no organization's data", async () => {
  const realm = await newRealm();
  const rows = await realm.server.app.prisma.$queryRawUnsafe<{ table_name: string }[]>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  const known = new Set([...EXPORTED_TABLES.map((t) => t.table), ...NOT_EXPORTED_TABLES]);
  assert.equal(
    rows.map((r) => r.table_name).filter((t) => !known.has(t)),
    [],
  );
});

test.run();
