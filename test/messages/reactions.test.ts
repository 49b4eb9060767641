// POST and DELETE /messages/{id}/reactions: by name or by code, the three emoji namespaces,
// votes, errors, who may react, and who hears of it (mirrors Zulip's test_reactions.py); and the
// group commit of a channel's reactions through its actor.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { holdActor } from '../helpers/held-actor.ts';
import { openQueue, type OpenQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm, setChannelRow } from './messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const react = (u: TestUser, id: number, params: Record<string, unknown>) => u.client.post(`/messages/${id}/reactions`, params);
const unreact = (u: TestUser, id: number, params: Record<string, unknown>) => u.client.delete(`/messages/${id}/reactions`, params);

async function reactionsOf(u: TestUser, id: number) {
  const r = await u.client.get(`/messages/${id}`);
  assert.is(r.status, 200, r.text);
  return r.body.message.reactions;
}

async function apiEmail(u: TestUser): Promise<string> {
  return (await u.client.get('/users/me')).body.email;
}

async function customEmoji(realm: TestRealm, name: string, deactivated = false): Promise<string> {
  const row = await realm.server.app.prisma.realmEmoji.create({ data: { realmId: realm.id, name, fileName: `${name}.png`, deactivated } });
  return String(row.id);
}

test('add by name only; the message shows it; the event reaches the subscribers over GET /events', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const outsider = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, bob]);
  const id = await send(realm.owner, sid, 'topic', 'hello');
  const reg = await bob.client.post('/register', { event_types: ['reaction'] });
  const events = captureEvents(realm.server.app, realm.id);
  const r = await react(bob, id, { emoji_name: 'smile' });
  events.stop();
  assert.equal([r.status, r.body], [200, SUCCESS]);
  assert.equal(await reactionsOf(realm.owner, id), [{ emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji', user_id: bob.id }]);
  const polled = await bob.client.get('/events', { queue_id: reg.body.queue_id, last_event_id: -1, dont_block: true });
  assert.equal(polled.body.events, [
    {
      type: 'reaction',
      op: 'add',
      id: 0,
      message_id: id,
      emoji_name: 'smile',
      emoji_code: '1f604',
      reaction_type: 'unicode_emoji',
      user_id: bob.id,
      user: { user_id: bob.id, email: await apiEmail(bob), full_name: 'Bob' },
    },
  ]);
  const [sent] = events.ofType('reaction');
  assert.equal(
    [...sent!.userIds].sort((a, b) => a - b),
    [realm.owner.id, bob.id],
  );
  assert.not.ok(sent!.userIds.includes(outsider.id));
});

test('remove: by name, by code, from the query string; the event and the message follow', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const id = await sendDm(realm.owner, [bob.id], 'hi');
  for (const name of ['smile', 'tada', 'octopus']) assert.is((await react(bob, id, { emoji_name: name })).status, 200);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await unreact(bob, id, { emoji_name: 'smile' })).body, SUCCESS);
  assert.equal((await unreact(bob, id, { emoji_code: '1f389' })).body, SUCCESS);
  const viaQuery = await bob.client.withQuery('DELETE', `/messages/${id}/reactions`, { emoji_code: '1f419', reaction_type: 'unicode_emoji' });
  events.stop();
  assert.equal(viaQuery.body, SUCCESS);
  assert.equal(await reactionsOf(bob, id), []);
  const removed = events.ofType('reaction');
  assert.equal(
    removed.map((e) => [e.event.op, e.event.emoji_name, e.event.emoji_code]),
    [
      ['remove', 'smile', '1f604'],
      ['remove', 'tada', '1f389'],
      ['remove', 'octopus', '1f419'],
    ],
  );
  assert.equal(
    [...removed[0]!.userIds].sort((a, b) => a - b),
    [realm.owner.id, bob.id],
  );
});

test('errors, exactly as Zulip words them', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const id = await send(realm.owner, sid, 'topic', 'hello');
  const o = realm.owner;
  assert.equal((await react(o, id, { emoji_name: 'smile' })).body, SUCCESS);
  const cases: [Promise<{ status: number; body: unknown }>, unknown][] = [
    [react(o, id, { emoji_name: 'smile' }), errorBody('Reaction already exists.', 'REACTION_ALREADY_EXISTS')],
    [
      react(o, id, { emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' }),
      errorBody('Reaction already exists.', 'REACTION_ALREADY_EXISTS'),
    ],
    [unreact(o, id, { emoji_name: 'tada' }), errorBody("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST')],
    [unreact(o, id, {}), errorBody('At least one of the following arguments must be present: emoji_name, emoji_code')],
    [react(o, id, {}), errorBody("Missing 'emoji_name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'emoji_name' })],
    [react(o, id, { emoji_name: 'foo' }), errorBody("Emoji 'foo' does not exist")],
    [unreact(o, id, { emoji_name: 'foo' }), errorBody("Emoji 'foo' does not exist")],
    [react(o, id, { emoji_name: 'tada', emoji_code: 'zzzz', reaction_type: 'unicode_emoji' }), errorBody('Invalid emoji code.')],
    [react(o, id, { emoji_name: 'tada', emoji_code: '1f600', reaction_type: 'unicode_emoji' }), errorBody('Invalid emoji name.')],
    [react(o, id, { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'foo' }), errorBody('Invalid emoji type.')],
    [react(o, id, { emoji_name: 'tada', reaction_type: 'foo' }), errorBody('Invalid emoji type.')],
    [react(o, id, { emoji_name: 'zulip', emoji_code: 'nope', reaction_type: 'service_extra_emoji' }), errorBody('Invalid emoji code.')],
    [react(o, id, { emoji_name: 'tada', emoji_code: 'zulip', reaction_type: 'service_extra_emoji' }), errorBody('Invalid emoji name.')],
    [react(o, 99999999, { emoji_name: 'tada' }), errorBody('Invalid message(s)')],
    [react(o, 0, { emoji_name: 'tada' }), errorBody('Invalid message(s)')],
    [unreact(o, 99999999, { emoji_name: 'tada' }), errorBody('Invalid message(s)')],
  ];
  for (const [pending, body] of cases) {
    const r = await pending;
    assert.equal([r.status, r.body], [400, body]);
  }
  assert.is((await realm.anonymous.post(`/messages/${id}/reactions`, { emoji_name: 'tada' })).status, 401);
  assert.equal(await reactionsOf(o, id), [{ emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji', user_id: o.id }]);
});

test('a second user with the same code votes for the existing reaction and keeps its name', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const id = await sendDm(realm.owner, [bob.id], 'hi');
  assert.equal((await react(realm.owner, id, { emoji_name: 'thumbs_up' })).body, SUCCESS);
  const events = captureEvents(realm.server.app, realm.id);
  // An unknown name would fail validation; as a vote it is not checked, and the first name wins.
  const vote = await react(bob, id, { emoji_name: 'not_a_name', emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
  events.stop();
  assert.equal(vote.body, SUCCESS);
  assert.equal(events.ofType('reaction')[0]!.event.emoji_name, 'thumbs_up');
  assert.equal(await reactionsOf(bob, id), [
    { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: realm.owner.id },
    { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: bob.id },
  ]);
});

// Names whose code changed as current Zulip names them (smile and its neighbours since Zulip 11,
// the curated names over CLDR's), and names Zulip no longer has.
const RENAMED: [name: string, code: string | null][] = [
  ['smile', '1f604'],
  ['slight_smile', '1f642'],
  ['big_smile', null],
  ['first_place', '1f947'],
  ['gold', '1f947'],
  ['kitten', '1f431'],
  ['puppy', '1f436'],
  ['working_on_it', '1f6e0'],
  ['mine', '26cf'],
  ['cat_face', null],
];

test('reactions by name follow the current names; a name that is gone does not exist', async () => {
  const realm = await newRealm();
  for (const [name, code] of RENAMED) {
    const id = await sendDm(realm.owner, [realm.owner.id], name);
    const r = await react(realm.owner, id, { emoji_name: name });
    if (code === null) {
      assert.equal([r.status, r.body], [400, errorBody(`Emoji '${name}' does not exist`)], name);
      continue;
    }
    assert.equal([r.status, r.body], [200, SUCCESS], name);
    assert.equal(await reactionsOf(realm.owner, id), [{ emoji_name: name, emoji_code: code, reaction_type: 'unicode_emoji', user_id: realm.owner.id }], name);
  }
});

test('a reaction stored under a name that now means another emoji keeps its name and code', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const id = await sendDm(realm.owner, [bob.id], 'from before the rename');
  await realm.server.app.prisma.reaction.create({
    data: { messageId: id, userId: realm.owner.id, emojiName: 'smile', emojiCode: '1f642', reactionType: 'unicode_emoji' },
  });
  // Clicking the old reaction votes for it: name and code as the server showed them.
  assert.equal((await react(bob, id, { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' })).body, SUCCESS);
  // "smile" alone is 😄 now: another reaction.
  assert.equal((await react(bob, id, { emoji_name: 'smile' })).body, SUCCESS);
  assert.equal(
    (await reactionsOf(bob, id)).map((r: { emoji_name: string; emoji_code: string; user_id: number }) => [r.emoji_name, r.emoji_code, r.user_id]),
    [
      ['smile', '1f642', realm.owner.id],
      ['smile', '1f642', bob.id],
      ['smile', '1f604', bob.id],
    ],
  );
  // A new reaction pairing the old name with the old code is refused, as in Zulip.
  const other = await sendDm(realm.owner, [bob.id], 'after the rename');
  const r = await react(bob, other, { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' });
  assert.equal([r.status, r.body], [400, errorBody('Invalid emoji name.')]);
  assert.equal((await unreact(bob, id, { emoji_code: '1f642', reaction_type: 'unicode_emoji' })).body, SUCCESS);
  assert.equal((await unreact(realm.owner, id, { emoji_code: '1f642', reaction_type: 'unicode_emoji' })).body, SUCCESS);
  assert.equal(
    (await reactionsOf(bob, id)).map((r: { emoji_code: string }) => r.emoji_code),
    ['1f604'],
  );
});

test('custom emoji: by name and by id; deactivated ones can be voted for and removed, not added', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const id = await sendDm(realm.owner, [bob.id], 'hi');
  const other = await sendDm(realm.owner, [bob.id], 'again');
  const parrot = await customEmoji(realm, 'parrot');
  const retired = await customEmoji(realm, 'retired', true);
  assert.equal((await react(realm.owner, id, { emoji_name: 'parrot' })).body, SUCCESS);
  assert.equal(await reactionsOf(bob, id), [{ emoji_name: 'parrot', emoji_code: parrot, reaction_type: 'realm_emoji', user_id: realm.owner.id }]);
  const errors: [Record<string, unknown>, string][] = [
    [{ emoji_name: 'parrot', emoji_code: '999999', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
    [{ emoji_name: 'parrot', emoji_code: 'abc', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
    [{ emoji_name: 'other', emoji_code: parrot, reaction_type: 'realm_emoji' }, 'Invalid custom emoji name.'],
    [{ emoji_name: 'retired', emoji_code: retired, reaction_type: 'realm_emoji' }, 'This custom emoji has been deactivated.'],
    [{ emoji_name: 'retired' }, "Emoji 'retired' does not exist"],
  ];
  for (const [params, msg] of errors) {
    const r = await react(bob, other, params);
    assert.equal([r.status, r.body], [400, errorBody(msg)], JSON.stringify(params));
  }
  await realm.server.app.prisma.realmEmoji.update({ where: { id: Number(parrot) }, data: { deactivated: true } });
  assert.equal((await react(bob, id, { emoji_name: 'parrot', emoji_code: parrot, reaction_type: 'realm_emoji' })).body, SUCCESS);
  assert.equal((await unreact(bob, id, { emoji_code: parrot, reaction_type: 'realm_emoji' })).body, SUCCESS);
  assert.equal((await unreact(realm.owner, id, { emoji_code: parrot, reaction_type: 'realm_emoji' })).body, SUCCESS);
  assert.equal(await reactionsOf(bob, id), []);
});

test('the extra emoji: both type names are one namespace, shown under the spec name', async () => {
  const realm = await newRealm();
  const id = await sendDm(realm.owner, [realm.owner.id], 'note');
  assert.equal((await react(realm.owner, id, { emoji_name: 'zulip' })).body, SUCCESS);
  assert.equal(await reactionsOf(realm.owner, id), [
    { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'service_extra_emoji', user_id: realm.owner.id },
  ]);
  const again = await react(realm.owner, id, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
  assert.equal([again.status, again.body.code], [400, 'REACTION_ALREADY_EXISTS']);
  // By name alone, the name's own type is used (Zulip would assume unicode_emoji and miss it).
  assert.equal((await unreact(realm.owner, id, { emoji_name: 'zulip' })).body, SUCCESS);
  assert.equal((await react(realm.owner, id, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' })).body, SUCCESS);
  assert.equal((await unreact(realm.owner, id, { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' })).body, SUCCESS);
});

test('an unsubscribed member reacts to a public-channel message: a historical read row, and later events', async () => {
  const realm = await newRealm();
  const carol = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const sid = await makeChannel(realm, 'public', [realm.owner]);
  const id = await send(realm.owner, sid, 'topic', 'hello');
  const denied = await react(guest, id, { emoji_name: 'smile' });
  assert.equal([denied.status, denied.body], [400, errorBody('Invalid message(s)')]);
  assert.equal((await react(carol, id, { emoji_name: 'smile' })).body, SUCCESS);
  const row = await realm.server.app.prisma.userMessage.findUnique({ where: { userId_messageId: { userId: carol.id, messageId: id } } });
  assert.ok(row);
  assert.equal((await carol.client.get(`/messages/${id}`)).body.message.flags, ['read', 'historical']);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await react(realm.owner, id, { emoji_name: 'tada' })).body, SUCCESS);
  events.stop();
  assert.equal(
    [...events.ofType('reaction')[0]!.userIds].sort((a, b) => a - b),
    [realm.owner.id, carol.id],
  );
});

test("private channels, other people's DMs and archived channels are off limits", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const carol = await realm.addUser();
  const secret = await makeChannel(realm, 'secret', [realm.owner, bob], { invite_only: true });
  const inSecret = await send(realm.owner, secret, 'topic', 'classified');
  const dm = await sendDm(realm.owner, [bob.id], 'just us');
  assert.equal((await react(bob, inSecret, { emoji_name: 'smile' })).body, SUCCESS);
  assert.equal((await react(bob, dm, { emoji_name: 'smile' })).body, SUCCESS);
  for (const target of [inSecret, dm]) {
    for (const r of [await react(carol, target, { emoji_name: 'smile' }), await unreact(carol, target, { emoji_name: 'smile' })]) {
      assert.equal([r.status, r.body], [400, errorBody('Invalid message(s)')]);
    }
  }
  const open = await makeChannel(realm, 'old', [realm.owner]);
  const inOld = await send(realm.owner, open, 'topic', 'history');
  await setChannelRow(realm, open, { isArchived: true });
  const archived = await react(realm.owner, inOld, { emoji_name: 'smile' });
  assert.equal([archived.status, archived.body], [400, errorBody('Invalid message(s)')]);
});

test('protected history: only subscribers who received the message react or hear of it', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const late = await realm.addUser();
  const sid = await makeChannel(realm, 'vault', [realm.owner, bob], { invite_only: true, history_public_to_subscribers: false });
  const id = await send(realm.owner, sid, 'topic', 'before you came');
  const sub = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], principals: [late.id] });
  assert.is(sub.status, 200, sub.text);
  const lateTry = await react(late, id, { emoji_name: 'smile' });
  assert.equal([lateTry.status, lateTry.body], [400, errorBody('Invalid message(s)')]);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await react(bob, id, { emoji_name: 'smile' })).body, SUCCESS);
  events.stop();
  assert.equal(
    [...events.ofType('reaction')[0]!.userIds].sort((a, b) => a - b),
    [realm.owner.id, bob.id],
  );
});

test('private channel with shared history: every subscriber hears of a reaction', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const late = await realm.addUser();
  const outsider = await realm.addUser();
  const sid = await makeChannel(realm, 'club', [realm.owner, bob], { invite_only: true, history_public_to_subscribers: true });
  const id = await send(realm.owner, sid, 'topic', 'welcome');
  const sub = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [late.id] });
  assert.is(sub.status, 200, sub.text);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await react(late, id, { emoji_name: 'wave' })).body, SUCCESS);
  events.stop();
  const recipients = [...events.ofType('reaction')[0]!.userIds].sort((a, b) => a - b);
  assert.equal(recipients, [realm.owner.id, bob.id, late.id]);
  assert.not.ok(recipients.includes(outsider.id));
});

type Change = [TestUser, 'add' | 'remove', 'm' | 'x', Record<string, unknown>];

test("group commit: reactions that wait for the channel's actor are one batch in one transaction, each answered and announced as if alone", async () => {
  const realm = await newRealm();
  const [alice, bob, carol, dave, erin] = [await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const members = [realm.owner, alice, bob, carol];
  // The same changes on two channels: one after the other on `twin`, waiting as one batch on `general`.
  const setUp = async (name: string) => {
    const sid = await makeChannel(realm, name, members);
    const messages = { m: await send(realm.owner, sid, 't', 'm'), x: await send(realm.owner, sid, 't', 'x') };
    assert.equal((await react(carol, messages.m, { emoji_name: 'tada' })).body, SUCCESS);
    return { sid, messages };
  };
  const [twin, general] = [await setUp('twin'), await setUp('general')];
  const changes: Change[] = [
    [alice, 'add', 'm', { emoji_name: 'octopus' }],
    [bob, 'add', 'm', { emoji_name: 'not_a_name', emoji_code: '1f419', reaction_type: 'unicode_emoji' }],
    [alice, 'add', 'm', { emoji_name: 'octopus' }],
    [alice, 'remove', 'm', { emoji_name: 'octopus' }],
    [carol, 'remove', 'm', { emoji_code: '1f389' }],
    [carol, 'add', 'm', { emoji_name: 'tada' }],
    [dave, 'add', 'x', { emoji_name: 'smile' }],
    [erin, 'add', 'x', { emoji_name: 'smile' }],
    [bob, 'remove', 'm', { emoji_name: 'tada' }],
    [alice, 'add', 'm', { emoji_name: 'no_such_emoji' }],
    [erin, 'remove', 'x', { emoji_name: 'smile' }],
  ];
  const run = ([user, op, target, params]: Change, messages: Record<'m' | 'x', number>) =>
    (op === 'add' ? react : unreact)(user, messages[target], params).then((r) => [r.status, r.body]);
  const announced = async (channel: typeof general, write: () => Promise<unknown>) => {
    const events = captureEvents(realm.server.app, realm.id);
    await write();
    events.stop();
    const names = new Map(Object.entries(channel.messages).map(([k, id]) => [id, k]));
    return events.ofType('reaction').map((e) => [[...e.userIds].sort((a, b) => a - b), { ...e.event, message_id: names.get(e.event.message_id as number) }]);
  };
  const alone: unknown[] = [];
  const twinEvents = await announced(twin, async () => {
    for (const change of changes) alone.push(await run(change, twin.messages));
  });
  const held = holdActor<unknown[]>(realm.server.app, realm.server.app.channels, general.sid);
  const batchedEvents = await announced(general, async () => {
    for (const change of changes) await held.enqueue(() => run(change, general.messages));
    const { results, batches, writes, transactions } = await held.release();
    assert.equal([batches.map((b) => b.length), writes, transactions], [[changes.length], 0, 1]);
    assert.equal(results, alone);
  });
  assert.equal(
    alone.map((r) => (r as [number])[0]),
    [200, 200, 400, 200, 200, 200, 200, 200, 400, 400, 200],
  );
  assert.equal(batchedEvents, twinEvents);
  const [subscribers, withDave] = [members.map((u) => u.id), [...members.map((u) => u.id), dave.id]];
  // The refused changes have no event: the last three are dave's, erin's and erin's.
  assert.equal(
    batchedEvents.slice(5).map(([userIds]) => userIds),
    [withDave.sort((a, b) => a - b), [...withDave, erin.id].sort((a, b) => a - b), [...withDave, erin.id].sort((a, b) => a - b)],
    'a user the batch gave a historical row hears of the changes from theirs on',
  );
  assert.equal(
    batchedEvents.slice(0, 5).map(([userIds]) => userIds),
    Array(5).fill(subscribers.sort((a, b) => a - b)),
  );
  for (const key of ['m', 'x'] as const)
    assert.equal(await reactionsOf(realm.owner, general.messages[key]), await reactionsOf(realm.owner, twin.messages[key]));
  assert.equal(
    (await reactionsOf(realm.owner, general.messages.m)).map((r: { user_id: number; emoji_name: string }) => [r.user_id, r.emoji_name]),
    [
      [bob.id, 'octopus'],
      [carol.id, 'tada'],
    ],
  );
});

test("group commit keeps the order of the channel's other writes: a reaction after a deletion is refused", async () => {
  const realm = await newRealm();
  const [alice, bob] = [await realm.addUser(), await realm.addUser()];
  const sid = await makeChannel(realm, 'general', [realm.owner, alice, bob]);
  const id = await send(realm.owner, sid, 't', 'soon gone');
  const held = holdActor<number>(realm.server.app, realm.server.app.channels, sid);
  await held.enqueue(() => react(alice, id, { emoji_name: 'smile' }).then((r) => r.status));
  await held.enqueue(() => realm.owner.client.delete(`/messages/${id}`).then((r) => r.status));
  await held.enqueue(() => react(bob, id, { emoji_name: 'smile' }).then((r) => r.status));
  const { results, batches, writes } = await held.release();
  assert.equal([results, batches.map((b) => b.length), writes], [[200, 200, 400], [1, 1], 1]);
});

test('concurrent reactions to one message: every change announced once, in the same order to every client, and that order is the stored one', async () => {
  const realm = await newRealm();
  const users = [realm.owner];
  for (let i = 0; i < 5; i++) users.push(await realm.addUser());
  const sid = await makeChannel(realm, 'general', users);
  const id = await send(realm.owner, sid, 't', 'react to me');
  const queues: OpenQueue[] = [];
  for (const u of [realm.owner, users[1]!, users[1]!, users[5]!]) queues.push(await openQueue(u, { event_types: ['reaction'] }));
  const steps: ['add' | 'remove', string][] = [
    ['add', 'tada'],
    ['add', 'smile'],
    ['remove', 'tada'],
    ['add', 'tada'],
    ['remove', 'smile'],
  ];
  // Each user's own changes one after the other (a removal needs its reaction); the users at once.
  const statuses = await Promise.all(
    users.map(async (u) => {
      const out: number[] = [];
      for (const [op, emoji] of steps) out.push((await (op === 'add' ? react : unreact)(u, id, { emoji_name: emoji })).status);
      return out;
    }),
  );
  assert.equal(
    statuses,
    users.map(() => steps.map(() => 200)),
  );
  const total = users.length * steps.length;
  const seen = [];
  for (const q of queues) {
    const events: Record<string, any>[] = [];
    while (events.length < total) events.push(...(await q.next()));
    events.push(...(await q.pending()));
    seen.push(events);
  }
  for (const events of seen.slice(1)) assert.equal(events, seen[0], 'every client sees the same events in the same order');
  const events = seen[0]!;
  assert.is(events.length, total, 'one event per change, none twice');
  for (const u of users)
    assert.equal(
      events.filter((e) => e.user_id === u.id).map((e) => [e.op, e.emoji_name]),
      steps,
      "each user's changes in the order made",
    );
  // Replayed in order from none, each event is valid where it stands and ends as stored, in the stored order.
  const held: [number, string][] = [];
  for (const e of events) {
    const at = held.findIndex(([user, name]) => user === e.user_id && name === e.emoji_name);
    assert.is(at >= 0, e.op === 'remove', `${e.op} ${e.emoji_name} by ${e.user_id}`);
    if (e.op === 'add') held.push([e.user_id, e.emoji_name]);
    else held.splice(at, 1);
  }
  assert.equal(
    (await reactionsOf(realm.owner, id)).map((r: { user_id: number; emoji_name: string }) => [r.user_id, r.emoji_name]),
    held,
  );
});

test.run();
