// Presence over HTTP: pings, the legacy and modern forms, last_update_id, history limits, one user's
// presence, realm and personal switches, and `presence` events end to end in both shapes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { forgetPresence } from '../../src/actions/presence.ts';
import { Role } from '../../src/domain/roles.ts';
import { captureEvents } from '../helpers/events.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const ok = { result: 'success', msg: '' };
const err = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
const secs = (d: Date) => Math.floor(d.getTime() / 1000);

const ping = async (user: TestUser, params: Record<string, unknown>) => {
  const r = await user.client.post('/users/me/presence', params);
  assert.is(r.status, 200, r.text);
  return r.body;
};

/** Puts a user's stored presence at fixed times, as if they had pinged then. */
async function setPresence(realm: TestRealm, user: TestUser, active: Date | null, connected: Date | null, lastUpdateId = 0): Promise<void> {
  const { app } = realm.server;
  const data = { lastActiveTime: active, lastConnectedTime: connected, lastUpdateId };
  await app.prisma.presence.upsert({ where: { userId: user.id }, create: { userId: user.id, ...data }, update: data });
  forgetPresence(app, user.id);
}

async function storedTimes(realm: TestRealm, user: TestUser) {
  const row = await realm.server.app.prisma.presence.findUniqueOrThrow({ where: { userId: user.id } });
  return { active: row.lastActiveTime ? secs(row.lastActiveTime) : null, connected: secs(row.lastConnectedTime!), lastUpdateId: row.lastUpdateId };
}

test('POST /users/me/presence: missing and invalid status, bots refused', async () => {
  const realm = await newRealm();
  const bot = await realm.addUser({ bot: true });
  const missing = await realm.owner.client.post('/users/me/presence', {});
  assert.is(missing.status, 400);
  assert.equal(missing.body, { result: 'error', msg: "Missing 'status' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'status' });
  const invalid = await realm.owner.client.post('/users/me/presence', { status: 'foo' });
  assert.is(invalid.status, 400);
  assert.equal(invalid.body, err('Invalid status: foo'));
  const fromBot = await bot.client.post('/users/me/presence', { status: 'active' });
  assert.is(fromBot.status, 400);
  assert.equal(fromBot.body, err('This endpoint does not accept bot requests.'));
});

test('POST /users/me/presence: legacy form by API email, ping_only answers nothing else', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  assert.equal(await ping(bob, { status: 'idle', ping_only: true }), ok);
  const body = await ping(realm.owner, { status: 'active' });
  const owner = await storedTimes(realm, realm.owner);
  const bobTimes = await storedTimes(realm, bob);
  const bobJoined = secs(await joined(realm, bob));
  assert.equal(Object.keys(body), ['result', 'msg', 'presences', 'server_timestamp', 'presence_last_update_id']);
  assert.type(body.server_timestamp, 'number');
  assert.equal(body.presences, {
    [realm.owner.email]: {
      website: { client: 'website', status: 'active', timestamp: owner.active, pushable: false },
      aggregated: { client: 'website', status: 'active', timestamp: owner.active },
    },
    // Never active reads as active when joining, as in Zulip; just joined, that is recent.
    [bob.email]: {
      website: { client: 'website', status: 'active', timestamp: bobJoined, pushable: false },
      aggregated: { client: 'website', status: 'active', timestamp: bobJoined },
    },
  });
  assert.is(bobTimes.active, null, 'an idle first ping sets only the connection time');
  assert.is(body.presence_last_update_id, owner.lastUpdateId);
  assert.is(owner.lastUpdateId, bobTimes.lastUpdateId + 1);
});

test('POST /users/me/presence: last_update_id returns only newer data, in the modern form', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const first = await ping(realm.owner, { status: 'idle', last_update_id: -1 });
  const owner = await storedTimes(realm, realm.owner);
  assert.equal(first.presences, { [realm.owner.id]: { active_timestamp: secs(await joined(realm, realm.owner)), idle_timestamp: owner.connected } });
  const last = first.presence_last_update_id;
  assert.is(last, owner.lastUpdateId);
  // A second idle ping so soon changes nothing, so there is nothing new.
  const again = await ping(realm.owner, { status: 'idle', last_update_id: last });
  assert.equal(again.presences, {});
  assert.is(again.presence_last_update_id, last);
  const legacy = await ping(realm.owner, { status: 'idle', slim_presence: false });
  assert.is(legacy.presence_last_update_id, last, 'also in the legacy form');
  const bobFirst = await ping(bob, { status: 'active', last_update_id: last });
  assert.equal(Object.keys(bobFirst.presences), [String(bob.id)]);
  assert.is(bobFirst.presence_last_update_id, last + 1);
  const slim = await ping(realm.owner, { status: 'idle', slim_presence: true });
  assert.equal(Object.keys(slim.presences).sort(), [String(realm.owner.id), String(bob.id)].sort());
  assert.equal(Object.keys(slim.presences[bob.id]), ['active_timestamp', 'idle_timestamp']);
});

test('POST /users/me/presence: the modern form as a whole, without users who hide their presence or left', async () => {
  const realm = await newRealm();
  const [bob, carol, dave] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  // Times with milliseconds, which the answer drops; carol never active reads as her join date.
  await setPresence(realm, bob, new Date('2026-11-20T10:00:05.999Z'), new Date('2026-11-20T10:01:07.500Z'), 4);
  await setPresence(realm, carol, null, new Date('2026-11-21T08:00:00.001Z'), 5);
  await setPresence(realm, dave, new Date('2026-11-22T09:00:00Z'), new Date('2026-11-22T09:00:00Z'), 6);
  const { app } = realm.server;
  await app.prisma.user.update({ where: { id: dave.id }, data: { settings: { presence_enabled: false } } });
  const r = await realm.owner.client.post('/users/me/presence', { status: 'active', last_update_id: 0, history_limit_days: 365 });
  assert.is(r.status, 200, r.text);
  const owner = await storedTimes(realm, realm.owner);
  assert.is(owner.lastUpdateId, 7, "the realm's first write starts after the stored presences");
  assert.equal(r.body, {
    ...ok,
    presences: {
      [bob.id]: { active_timestamp: secs(new Date('2026-11-20T10:00:05Z')), idle_timestamp: secs(new Date('2026-11-20T10:01:07Z')) },
      [carol.id]: { active_timestamp: secs(await joined(realm, carol)), idle_timestamp: secs(new Date('2026-11-21T08:00:00Z')) },
      [realm.owner.id]: { active_timestamp: owner.active, idle_timestamp: owner.connected },
    },
    server_timestamp: r.body.server_timestamp,
    presence_last_update_id: owner.lastUpdateId,
  });
  assert.type(r.body.server_timestamp, 'number');
  // Deactivated, bob is no longer shown; what changed after carol's update is only the owner's.
  const gone = await realm.owner.client.delete(`/users/${bob.id}`);
  assert.is(gone.status, 200, gone.text);
  const since = await ping(realm.owner, { status: 'active', last_update_id: 4, history_limit_days: 365 });
  assert.equal(
    Object.keys(since.presences),
    [String(carol.id), String(realm.owner.id)].sort((a, b) => Number(a) - Number(b)),
  );
});

async function joined(realm: TestRealm, user: TestUser): Promise<Date> {
  return (await realm.server.app.prisma.user.findUniqueOrThrow({ where: { id: user.id } })).dateJoined;
}

test('POST /users/me/presence: history_limit_days and the two-week default', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const carol = await realm.addUser();
  const daysAgo = (n: number) => new Date(Date.now() - n * 86400_000);
  await setPresence(realm, bob, daysAgo(100), daysAgo(100), 1);
  await setPresence(realm, carol, daysAgo(20), daysAgo(20), 2);
  const keys = async (params: Record<string, unknown>) => Object.keys((await ping(realm.owner, { status: 'idle', ...params })).presences).sort();
  const me = String(realm.owner.id);
  assert.equal(await keys({ last_update_id: -1 }), [me]);
  assert.equal(await keys({ last_update_id: -1, history_limit_days: 50 }), [me, String(carol.id)].sort());
  assert.equal(await keys({ last_update_id: -1, history_limit_days: 101 }), [me, String(bob.id), String(carol.id)].sort());
  const none = await ping(realm.owner, { status: 'idle', last_update_id: -1, history_limit_days: 0 });
  assert.equal([none.presences, none.presence_last_update_id], [{}, -1]);
  // A client with data gets every newer update, however old.
  assert.equal(await keys({ last_update_id: 1 }), [me, String(carol.id)].sort());
});

test('GET /realm/presence: legacy form for everyone, bots included, no update id', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const bot = await realm.addUser({ bot: true });
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  await setPresence(realm, bob, new Date(at.getTime() - 600_000), at, 3);
  const r = await bot.client.get('/realm/presence');
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body), ['result', 'msg', 'presences', 'server_timestamp']);
  assert.equal(r.body.presences, {
    [bob.email]: {
      website: { client: 'website', status: 'idle', timestamp: secs(at), pushable: false },
      aggregated: { client: 'website', status: 'idle', timestamp: secs(at) },
    },
  });
});

test('GET /users/{user_id_or_email}/presence: errors, legacy form with offline, modern form', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const carol = await realm.addUser();
  const gone = await realm.addUser();
  const bot = await realm.addUser({ bot: true });
  const get = (who: string, params = {}) => realm.owner.client.get(`/users/${who}/presence`, params);
  const fails = async (who: string, msg: string) => {
    const r = await get(who);
    assert.is(r.status, 400, who);
    assert.equal(r.body, err(msg));
  };
  await realm.server.app.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } });
  await fails('nobody@example.com', 'No such user');
  await fails('99999999', 'No such user');
  await fails(gone.email, 'No such user');
  await fails(String(gone.id), 'No such user');
  await fails(carol.email, `No presence data for ${carol.email}`);
  await fails(String(carol.id), `No presence data for ${carol.id}`);
  await fails(bot.email, 'Presence is not supported for bot users.');
  const recent = new Date(Math.floor(Date.now() / 1000) * 1000 - 30_000);
  await setPresence(realm, bob, recent, recent);
  const byEmail = await get(bob.email);
  assert.is(byEmail.status, 200);
  const fresh = { status: 'active', timestamp: secs(recent) };
  assert.equal(byEmail.body, { ...ok, presence: { website: fresh, aggregated: fresh } });
  assert.equal((await get(String(bob.id))).body, byEmail.body);
  assert.equal((await get(String(bob.id), { slim_presence: true })).body, {
    ...ok,
    presence: { active_timestamp: secs(recent), idle_timestamp: secs(recent) },
  });
  const old = new Date(Math.floor(Date.now() / 1000) * 1000 - 300_000);
  await setPresence(realm, bob, old, old);
  const stale = { status: 'active', timestamp: secs(old) };
  assert.equal((await get(bob.email)).body, { ...ok, presence: { website: stale, aggregated: { ...stale, status: 'offline' } } });
});

test('presence_disabled (realm) and presence_enabled=false (user) hide presence', async () => {
  const realm = await newRealm();
  const { app } = realm.server;
  const bob = await realm.addUser();
  await app.prisma.user.update({ where: { id: bob.id }, data: { settings: { presence_enabled: false } } });
  app.auth.forget(bob.id);
  await ping(bob, { status: 'active' });
  assert.is(await app.prisma.presence.findUnique({ where: { userId: bob.id } }), null, 'nothing stored');
  const shown = await ping(realm.owner, { status: 'active' });
  assert.equal(Object.keys(shown.presences), [realm.owner.email]);
  await app.prisma.realm.update({ where: { id: realm.id }, data: { settings: { presence_disabled: true } } });
  await app.realms.reload(realm.id);
  const events = captureEvents(app, realm.id);
  const carol = await realm.addUser();
  const body = await ping(carol, { status: 'active', last_update_id: -1 });
  assert.equal([body.presences, body.presence_last_update_id], [{}, -1]);
  assert.ok(await app.prisma.presence.findUnique({ where: { userId: carol.id } }), 'still recorded');
  assert.equal((await realm.owner.client.get('/realm/presence')).body.presences, {});
  assert.equal(events.ofType('presence'), [], 'no event');
  events.stop();
});

/** A slim answer's entry for a user, from their stored times. */
async function slimEntry(realm: TestRealm, user: TestUser) {
  const t = await storedTimes(realm, user);
  return { active_timestamp: t.active ?? secs(await joined(realm, user)), idle_timestamp: t.connected };
}

test('POST /users/me/presence: each answer brings what was written since the last, across writes by several users', async () => {
  const realm = await newRealm();
  const [bob, carol] = [await realm.addUser(), await realm.addUser()];
  const first = await ping(realm.owner, { status: 'active', slim_presence: true });
  assert.equal(first.presences, { [realm.owner.id]: await slimEntry(realm, realm.owner) });
  // Two writes after the server's copy was made: both are in the next answer.
  await ping(bob, { status: 'idle', ping_only: true });
  await ping(carol, { status: 'active', ping_only: true });
  const second = await ping(realm.owner, { status: 'active', last_update_id: first.presence_last_update_id });
  assert.equal(second.presences, { [bob.id]: await slimEntry(realm, bob), [carol.id]: await slimEntry(realm, carol) });
  assert.is(second.presence_last_update_id, (await storedTimes(realm, carol)).lastUpdateId);
  // Bob's second write (now active) replaces his entry; carol's is not newer than the client's.
  await ping(bob, { status: 'active', ping_only: true });
  const bobNow = await slimEntry(realm, bob);
  assert.is.not(bobNow.active_timestamp, null);
  const third = await ping(realm.owner, { status: 'active', last_update_id: second.presence_last_update_id });
  assert.equal(third, {
    ...ok,
    presences: { [bob.id]: bobNow },
    server_timestamp: third.server_timestamp,
    presence_last_update_id: (await storedTimes(realm, bob)).lastUpdateId,
  });
  // Nothing new: empty, and the client's own id back.
  const fourth = await ping(realm.owner, { status: 'active', last_update_id: third.presence_last_update_id });
  assert.equal([fourth.presences, fourth.presence_last_update_id], [{}, third.presence_last_update_id]);
  // A first fetch still lists everyone, in user id order.
  const all = await ping(realm.owner, { status: 'active', slim_presence: true });
  assert.equal(Object.keys(all.presences), [realm.owner.id, bob.id, carol.id].map(String));
});

test('POST /users/me/presence: pings at once share writes and reads, each still gets its own update id and sees the others', async () => {
  const realm = await newRealm();
  const users = [realm.owner, ...(await Promise.all(Array.from({ length: 11 }, () => realm.addUser())))];
  const first = await ping(realm.owner, { status: 'active', slim_presence: true });
  // Everyone else pings at once: writes that wait for the realm's write in flight go in one batch.
  const answers = await Promise.all(users.slice(1).map((u) => ping(u, { status: 'active', last_update_id: first.presence_last_update_id })));
  const ids = await Promise.all(users.map(async (u) => (await storedTimes(realm, u)).lastUpdateId));
  assert.is(new Set(ids).size, users.length);
  assert.equal(
    [...ids].sort((a, b) => a - b),
    ids.map((_, i) => first.presence_last_update_id + i),
  );
  // Each answer holds at least the pinger's own write: its refresh started after the write committed.
  for (const [i, answer] of answers.entries()) assert.ok(String(users[i + 1]!.id) in answer.presences, JSON.stringify(answer));
  const after = await ping(realm.owner, { status: 'active', last_update_id: first.presence_last_update_id });
  assert.equal(
    Object.keys(after.presences),
    users
      .slice(1)
      .map((u) => u.id)
      .sort((a, b) => a - b)
      .map(String),
  );
  assert.is(after.presence_last_update_id, Math.max(...ids));
});

test('POST /users/me/presence: a deactivated user leaves the answer at once, and comes back when reactivated', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  await ping(realm.owner, { status: 'active', slim_presence: true });
  await ping(bob, { status: 'active', ping_only: true });
  const keys = async () => Object.keys((await ping(realm.owner, { status: 'active', last_update_id: 0 })).presences);
  assert.equal(await keys(), [realm.owner.id, bob.id].map(String));
  assert.is((await realm.owner.client.delete(`/users/${bob.id}`)).status, 200);
  assert.equal(await keys(), [String(realm.owner.id)]);
  assert.is((await realm.owner.client.post(`/users/${bob.id}/reactivate`)).status, 200);
  assert.equal(await keys(), [realm.owner.id, bob.id].map(String));
});

test('POST /users/me/presence: turning presence_enabled off hides the user from the next answer, on again shows them', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  await ping(bob, { status: 'active', ping_only: true });
  const keys = async () => Object.keys((await ping(realm.owner, { status: 'active', last_update_id: 0 })).presences);
  assert.equal(await keys(), [realm.owner.id, bob.id].map(String));
  const setting = async (value: boolean) => assert.is((await bob.client.patch('/settings', { presence_enabled: value })).status, 200);
  await setting(false);
  assert.equal(await keys(), [String(realm.owner.id)]);
  await setting(true);
  assert.equal(await keys(), [realm.owner.id, bob.id].map(String));
});

const register = async (user: TestUser, capabilities: Record<string, boolean> = {}) => {
  const r = await user.client.post('/register', { event_types: ['presence'], client_capabilities: capabilities });
  assert.is(r.status, 200, r.text);
  return r.body.queue_id as string;
};
const pending = async (user: TestUser, queueId: string) => {
  const r = await user.client.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.is(r.status, 200, r.text);
  return r.body.events.filter((e: { type: string }) => e.type === 'presence');
};

test('presence events: sent when a user comes online, legacy and simplified shapes', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ role: Role.MEMBER });
  const legacyQueue = await register(bob);
  const modernQueue = await register(bob, { simplified_presence_events: true });
  await ping(realm.owner, { status: 'active', ping_only: true });
  const t = await storedTimes(realm, realm.owner);
  const [legacy] = await pending(bob, legacyQueue);
  assert.type(legacy.server_timestamp, 'number');
  assert.equal(legacy, {
    id: legacy.id,
    type: 'presence',
    user_id: realm.owner.id,
    email: realm.owner.email,
    server_timestamp: legacy.server_timestamp,
    presence: { website: { client: 'website', status: 'active', timestamp: t.active, pushable: false } },
  });
  assert.equal(await pending(bob, modernQueue), [
    { id: 0, type: 'presence', presences: { [realm.owner.id]: { active_timestamp: t.active, idle_timestamp: t.connected } } },
  ]);
});

test('presence events: none for routine pings or going idle, one when active after being away', async () => {
  const realm = await newRealm();
  const { app } = realm.server;
  await ping(realm.owner, { status: 'active' });
  const events = captureEvents(app, realm.id);
  await ping(realm.owner, { status: 'active' });
  await ping(realm.owner, { status: 'idle' });
  assert.is(events.ofType('presence').length, 0, 'nothing changed that others would see');
  const before = await storedTimes(realm, realm.owner);
  const away = new Date(Date.now() - 180_000);
  await setPresence(realm, realm.owner, away, away, before.lastUpdateId);
  await ping(realm.owner, { status: 'idle' });
  assert.is(events.ofType('presence').length, 0, 'still idle: only the connection time moves');
  const afterIdle = await storedTimes(realm, realm.owner);
  assert.equal([afterIdle.active, afterIdle.lastUpdateId], [secs(away), before.lastUpdateId + 1]);
  await ping(realm.owner, { status: 'active' });
  const sent = events.ofType('presence');
  assert.is(sent.length, 1, 'back online');
  assert.equal(sent[0]!.userIds, [realm.owner.id]);
  events.stop();
});

test.run();
