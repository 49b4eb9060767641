// Muted users (Zulip's test_muted_users.py): POST/DELETE /users/me/muted_users/{id}, their errors,
// `muted_users` events and register data, the muted user's messages marked read at once and
// arriving read afterwards, and read receipts leaving muting out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue, type OpenQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm, setRealmSettings, systemGroup } from '../messages/messages-helpers.ts';

type Event = Record<string, any>;
const SUCCESS = { result: 'success', msg: '' };

const mute = (u: TestUser, id: number | string) => u.client.post(`/users/me/muted_users/${id}`);
const unmute = (u: TestUser, id: number | string) => u.client.delete(`/users/me/muted_users/${id}`);
const markRead = (u: TestUser, ids: number[]) => u.client.post('/messages/flags', { messages: ids, op: 'add', flag: 'read' });

/** The user's mutes as register has them, with the times checked and written 'now'. */
async function registered(u: TestUser): Promise<{ id: number; timestamp: string }[]> {
  const r = await u.client.post('/register', { fetch_event_types: ['muted_users'] });
  return timed(r.body.muted_users);
}

function timed(entries: { id: number; timestamp: number }[]): { id: number; timestamp: string }[] {
  return entries.map(({ id, timestamp }) => {
    assert.ok(Math.abs(timestamp - Date.now() / 1000) < 60, `${timestamp} is not now`);
    return { id, timestamp: 'now' };
  });
}

async function take(q: OpenQueue, count: number): Promise<Event[]> {
  const events: Event[] = [];
  while (events.length < count) events.push(...(await q.next()));
  assert.is(events.length, count, JSON.stringify(events));
  return events.map((e) => (e.type === 'muted_users' ? { ...e, muted_users: timed(e.muted_users) } : e));
}

/** The user's flags of each message, by id. */
async function flagsOf(u: TestUser, ids: number[]): Promise<Record<number, string[]>> {
  const r = await u.client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 });
  assert.is(r.status, 200, r.text);
  return Object.fromEntries((r.body.messages as Event[]).filter((m) => ids.includes(m.id)).map((m) => [m.id, m.flags]));
}

test("mute and unmute: the muted user's unread messages become read, events to the user's clients, register", async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const bot = await realm.addUser({ bot: true });
  const general = await makeChannel(realm, 'general', [ann, bob, cat]);
  const [one, two] = [await send(bob, general, 'hi', 'one'), await send(bob, general, 'hi', 'two')];
  const dm = await sendDm(bob, [ann.id], 'psst');
  const fromCat = await send(cat, general, 'hi', 'three');
  await markRead(ann, [one]);
  const q = await openQueue(ann, { event_types: ['muted_users', 'update_message_flags'] });

  assert.equal((await mute(ann, bob.id)).body, SUCCESS);
  assert.equal(await take(q, 2), [
    { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [two, dm], all: false },
    { type: 'muted_users', muted_users: [{ id: bob.id, timestamp: 'now' }] },
  ]);
  const flags = await flagsOf(ann, [one, two, dm, fromCat]);
  assert.equal([flags[two], flags[dm], flags[fromCat]], [['read'], ['read'], []], "only the muted user's messages");
  assert.equal((await flagsOf(cat, [two]))[two], [], 'and only for the user who muted them');

  // Bots and deactivated users can be muted too; with nothing unread from them, no flag event.
  assert.equal((await mute(ann, bot.id)).body, SUCCESS);
  assert.equal((await realm.owner.client.delete(`/users/${cat.id}`)).status, 200);
  assert.equal((await mute(ann, cat.id)).body, SUCCESS);
  const all = [
    { id: bob.id, timestamp: 'now' },
    { id: bot.id, timestamp: 'now' },
    { id: cat.id, timestamp: 'now' },
  ];
  assert.equal(await take(q, 3), [
    { type: 'muted_users', muted_users: all.slice(0, 2) },
    { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [fromCat], all: false },
    { type: 'muted_users', muted_users: all },
  ]);
  assert.equal(await registered(ann), all);

  assert.equal((await unmute(ann, bob.id)).body, SUCCESS);
  assert.equal(await take(q, 1), [{ type: 'muted_users', muted_users: all.slice(1) }]);
  assert.equal(await registered(ann), all.slice(1));
  assert.equal((await flagsOf(ann, [two]))[two], ['read'], 'unmuting leaves the messages read');
});

test("errors: oneself, unknown users, twice, not muted, users one cannot access; nobody changes another's mutes", async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const elsewhere = (await newRealm()).owner;
  const cases: [Promise<{ status: number; body: unknown }>, string][] = [
    [mute(ann, ann.id), 'Cannot mute self'],
    [unmute(ann, ann.id), 'User is not muted'],
    [mute(ann, 999999), 'No such user'],
    [unmute(ann, 999999), 'No such user'],
    [mute(ann, 'bob'), 'No such user'],
    [mute(ann, elsewhere.id), 'No such user'],
    [unmute(ann, bob.id), 'User is not muted'],
  ];
  for (const [reply, msg] of cases) {
    const r = await reply;
    assert.equal([r.status, r.body], [400, errorBody(msg)], msg);
  }
  assert.equal((await mute(ann, bob.id)).body, SUCCESS);
  const twice = await mute(ann, bob.id);
  assert.equal([twice.status, twice.body], [400, errorBody('User already muted')]);

  // A guest limited to the users they share a channel with cannot mute the others.
  await setRealmSettings(realm, {}, { can_access_all_users_group: systemGroup(realm, 'role:members') });
  const guest = await realm.addUser({ role: Role.GUEST });
  const denied = await mute(guest, bob.id);
  assert.equal([denied.status, denied.body], [400, errorBody('Insufficient permission')]);

  // Mutes are each user's own: bob sees none, and cannot undo ann's.
  assert.equal(await registered(bob), []);
  const notHis = await unmute(bob, bob.id);
  assert.equal([notHis.status, notHis.body], [400, errorBody('User is not muted')]);
  assert.equal(await registered(ann), [{ id: bob.id, timestamp: 'now' }]);
});

test("messages from a muted user arrive read, channel and direct; others' stay unread; unmuted, unread again", async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const general = await makeChannel(realm, 'general', [ann, bob, cat]);
  await mute(ann, bob.id);
  const annQueue = await openQueue(ann, { event_types: ['message'] });
  const catQueue = await openQueue(cat, { event_types: ['message'] });
  const fromBob = await send(bob, general, 'news', 'hello');
  const [annEvent] = await take(annQueue, 1);
  const [catEvent] = await take(catQueue, 1);
  assert.equal([annEvent!.message.id, annEvent!.flags], [fromBob, ['read']]);
  assert.equal([catEvent!.message.id, catEvent!.flags], [fromBob, []]);
  const dm = await sendDm(bob, [ann.id, cat.id], 'both of you');
  assert.equal((await take(annQueue, 1))[0]!.flags, ['read']);
  const fromCat = await send(cat, general, 'news', 'and me');
  assert.equal((await take(annQueue, 1))[0]!.flags, []);
  const unread = (await ann.client.post('/register', { fetch_event_types: ['message', 'update_message_flags'] })).body.unread_msgs;
  assert.equal([unread.count, unread.streams.flatMap((s: Event) => s.unread_message_ids)], [1, [fromCat]]);
  assert.equal(await flagsOf(cat, [fromBob, dm]), { [fromBob]: [], [dm]: [] });

  await unmute(ann, bob.id);
  const later = await send(bob, general, 'news', 'unmuted');
  const [laterEvent] = await take(annQueue, 1);
  assert.equal([laterEvent!.message.id, laterEvent!.flags], [later, []]);
  assert.equal((await flagsOf(ann, [later]))[later], []);
});

test('read receipts leave out users who muted the caller and users the caller muted', async () => {
  const realm = await newRealm();
  const [ann, bob, cat, dan, eve] = [await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const general = await makeChannel(realm, 'general', [ann, bob, cat, dan, eve]);
  await mute(cat, ann.id);
  await mute(dan, bob.id);
  const id = await send(ann, general, 'receipts', 'who read this?');
  await markRead(bob, [id]);
  const receipts = async (u: TestUser) => (await u.client.get(`/messages/${id}/read_receipts`)).body.user_ids;
  assert.equal(await receipts(eve), [bob.id, cat.id], 'cat read it at once, having muted its sender');
  assert.equal(await receipts(ann), [bob.id], 'cat muted ann');
  assert.equal(await receipts(dan), [cat.id], 'dan muted bob');
});

test.run();
