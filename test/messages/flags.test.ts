// Read state: POST /messages/flags, /messages/flags/narrow, /mark_all_as_read, /mark_stream_as_read,
// /mark_topic_as_read, and their group commit through the user's actor.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { holdActor } from '../helpers/held-actor.ts';
import { openQueue, type OpenQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from './messages-helpers.ts';

const flagsOf = async (client: { get: Function }, id: number) => (await client.get(`/messages/${id}`)).body.message.flags;

test('POST /messages/flags: add/remove, events, validation', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const [a, b] = [await send(realm.owner, sid, 't', 'one'), await send(realm.owner, sid, 't', 'two @**Olivia Owner**')];
  const dm = await sendDm(realm.owner, [alice.id], 'dm');
  const events = captureEvents(realm.server.app, realm.id);
  const r = await alice.client.post('/messages/flags', { messages: [a, b, dm], op: 'add', flag: 'starred' });
  assert.equal(r.body, { result: 'success', msg: '', messages: [a, b, dm], ignored_because_not_subscribed_channels: [] });
  await alice.client.post('/messages/flags', { messages: [a, dm], op: 'add', flag: 'read' });
  await alice.client.post('/messages/flags', { messages: [a, dm], op: 'remove', flag: 'read' });
  events.stop();
  const [star, read, unread] = events.ofType('update_message_flags');
  assert.equal(
    [star!.userIds, star!.event],
    [[alice.id], { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [a, b, dm], all: false }],
  );
  assert.equal(read!.event.messages, [a, dm]);
  assert.equal(unread!.event, {
    type: 'update_message_flags',
    op: 'remove',
    operation: 'remove',
    flag: 'read',
    messages: [a, dm],
    all: false,
    message_details: { [a]: { type: 'stream', stream_id: sid, topic: 't', unmuted_stream_msg: true }, [dm]: { type: 'private', user_ids: [realm.owner.id] } },
  });
  assert.equal(await flagsOf(alice.client, a), ['starred']);
  const errors: [Record<string, unknown>, string][] = [
    [{ messages: [a], op: 'add', flag: 'bogus' }, "Invalid flag: 'bogus'"],
    [{ messages: [a], op: 'add', flag: 'mentioned' }, "Flag not editable: 'mentioned'"],
    [{ messages: [a], op: 'toggle', flag: 'read' }, "Invalid message flag operation: 'toggle'"],
    [{ messages: [999999], op: 'add', flag: 'read' }, 'Invalid message(s)'],
  ];
  for (const [params, msg] of errors) assert.equal((await alice.client.post('/messages/flags', params)).body, errorBody(msg));
});

test('flags on unsubscribed public-channel messages: historical rows; unread is ignored', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const id = await send(realm.owner, sid, 't', 'x');
  await member.client.post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' });
  assert.equal(await flagsOf(member.client, id), ['read', 'starred', 'historical']);
  const unread = await member.client.post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' });
  assert.equal(unread.body.ignored_because_not_subscribed_channels, [sid]);
  assert.equal(await flagsOf(member.client, id), ['read', 'starred', 'historical']);
  assert.equal((await guest.client.post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' })).body, errorBody('Invalid message(s)'));
});

test('POST /messages/flags: only flags that change are announced; a message without a row writes nothing before its access check', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const other = await makeChannel(realm, 'other', [realm.owner]);
  const [a, b] = [await send(realm.owner, sid, 't', 'one'), await send(realm.owner, sid, 't', 'two')];
  const unheld = await send(realm.owner, other, 't', 'not received');
  const events = captureEvents(realm.server.app, realm.id);
  const star = (messages: number[], op = 'add') => alice.client.post('/messages/flags', { messages, op, flag: 'starred' });
  await star([a]);
  // Repeated and already-starred ids: only b changes.
  assert.equal((await star([b, a, b])).body.messages, [b, a, b]);
  // A listed message without a row the user may not read: nothing is written, a stays unstarred.
  await star([a], 'remove');
  assert.equal((await star([a, 999999])).body, errorBody('Invalid message(s)'));
  assert.equal(await flagsOf(alice.client, a), []);
  // One without a row in a public channel: a historical row, with the held one in the same answer.
  await star([unheld, a]);
  await star([a, b], 'remove');
  await star([a, b], 'remove');
  events.stop();
  assert.equal(
    events.ofType('update_message_flags').map((e) => [e.event.op, e.event.messages]),
    [
      ['add', [a]],
      ['add', [b]],
      ['remove', [a]],
      ['add', [a, unheld]],
      ['remove', [a, b]],
      ['remove', []],
    ],
  );
  assert.equal(await flagsOf(alice.client, unheld), ['read', 'starred', 'historical']);
  assert.equal([await flagsOf(alice.client, a), await flagsOf(alice.client, b)], [[], []]);
});

test('POST /messages/flags/narrow: counts and range', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await send(realm.owner, sid, i < 2 ? 'a' : 'b', `m${i}`));
  const r = await alice.client.post('/messages/flags/narrow', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 10,
    narrow: [{ operator: 'topic', operand: 'a' }],
    op: 'add',
    flag: 'read',
  });
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    processed_count: 2,
    updated_count: 2,
    first_processed_id: ids[0],
    last_processed_id: ids[1],
    found_oldest: true,
    found_newest: true,
    ignored_because_not_subscribed_channels: [],
  });
  const again = await alice.client.post('/messages/flags/narrow', {
    anchor: ids[1],
    include_anchor: true,
    num_before: 1,
    num_after: 1,
    narrow: [],
    op: 'add',
    flag: 'read',
  });
  assert.equal([again.body.processed_count, again.body.updated_count, again.body.first_processed_id, again.body.last_processed_id], [3, 1, ids[0], ids[2]]);
  const bad = await alice.client.post('/messages/flags/narrow', {
    anchor: ids[1],
    include_anchor: false,
    num_before: 1,
    num_after: 1,
    op: 'add',
    flag: 'read',
  });
  assert.equal(bad.body, errorBody('The anchor can only be excluded at an end of the range'));
  const none = await alice.client.post('/messages/flags/narrow', {
    anchor: 'newest',
    num_before: 0,
    num_after: 0,
    narrow: [{ operator: 'is', operand: 'unread' }],
    op: 'add',
    flag: 'read',
  });
  assert.equal([none.body.processed_count, none.body.first_processed_id, none.body.last_processed_id], [0, null, null]);
});

test('mark_all_as_read, mark_stream_as_read, mark_topic_as_read', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const s1 = await makeChannel(realm, 'one', [realm.owner, alice]);
  const s2 = await makeChannel(realm, 'two', [realm.owner, alice]);
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const [a, b, c, d] = [
    await send(realm.owner, s1, 'x', '1'),
    await send(realm.owner, s1, 'Y', '2'),
    await send(realm.owner, s2, 'x', '3'),
    await sendDm(realm.owner, [alice.id], '4'),
  ];
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await alice.client.post('/mark_topic_as_read', { stream_id: s1, topic_name: 'y' })).body, { result: 'success', msg: '' });
  assert.equal(await flagsOf(alice.client, b), ['read']);
  assert.equal(await flagsOf(alice.client, a), []);
  assert.equal((await alice.client.post('/mark_topic_as_read', { stream_id: s1, topic_name: 'nope' })).body, errorBody("No such topic 'nope'"));
  await alice.client.post('/mark_stream_as_read', { stream_id: s1 });
  assert.equal(await flagsOf(alice.client, a), ['read']);
  assert.equal(await flagsOf(alice.client, c), []);
  assert.equal((await alice.client.post('/mark_stream_as_read', { stream_id: secret })).body, errorBody('Invalid channel ID'));
  const all = await alice.client.post('/mark_all_as_read');
  events.stop();
  assert.equal(all.body, { result: 'success', msg: '', complete: true });
  assert.equal([await flagsOf(alice.client, c), await flagsOf(alice.client, d)], [['read'], ['read']]);
  assert.equal(
    events.ofType('update_message_flags').map((e) => [e.event.messages, e.event.all]),
    [
      [[b], false],
      [[a], false],
      [[], true],
    ],
  );
});

test('mark_all_as_read takes a large backlog a batch at a time and announces it once, when done', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  // More than one batch (2,000) of unread messages.
  const ids: number[] = [];
  for (let start = 0; start < 2050; start += 50)
    ids.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => send(realm.owner, sid, 't', `m${start + i}`)))));
  const unread = async () =>
    (await alice.client.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] })).body.messages
      .length;
  assert.equal(await unread(), 2050);
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await alice.client.post('/mark_all_as_read')).body, { result: 'success', msg: '', complete: true });
  events.stop();
  assert.equal(await unread(), 0);
  assert.equal(
    events.ofType('update_message_flags').map((e) => [e.userIds, e.event.messages, e.event.all]),
    [[[alice.id], [], true]],
  );
});

const post = (u: TestUser, [path, params]: Change) => u.client.post(path, params).then((r) => [r.status, r.body]);
type Change = [string, Record<string, unknown>];

async function eventsOf(queue: OpenQueue, n: number): Promise<Record<string, any>[]> {
  const seen: Record<string, any>[] = [];
  while (seen.length < n) seen.push(...(await queue.next()));
  seen.push(...(await queue.pending()));
  return seen;
}

test("group commit: changes that wait for the user's actor are one batch in one transaction, each answered and announced as if alone", async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const bob = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice, bob]);
  const other = await makeChannel(realm, 'other', [realm.owner]);
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) ids.push(await send(realm.owner, sid, i < 2 ? 'a' : 'b', `m${i}`));
  const elsewhere = await send(realm.owner, other, 't', 'in a channel they do not follow');
  const [m0, m1, m2, m3] = ids as [number, number, number, number];
  const changes: Change[] = [
    ['/messages/flags', { messages: [m0, m1], op: 'add', flag: 'read' }],
    ['/messages/flags', { messages: [m1, m2], op: 'add', flag: 'read' }],
    ['/messages/flags', { messages: [m1], op: 'remove', flag: 'read' }],
    ['/messages/flags', { messages: [999999], op: 'add', flag: 'starred' }],
    ['/messages/flags', { messages: [m0, elsewhere], op: 'add', flag: 'starred' }],
    ['/messages/flags', { messages: [elsewhere], op: 'remove', flag: 'read' }],
    ['/messages/flags', { messages: [elsewhere, m3], op: 'remove', flag: 'starred' }],
    ['/mark_topic_as_read', { stream_id: sid, topic_name: 'A' }],
    ['/messages/flags', { messages: [m3], op: 'add', flag: 'starred' }],
    ['/mark_all_as_read', {}],
    ['/messages/flags', { messages: [m3], op: 'remove', flag: 'read' }],
    ['/mark_stream_as_read', { stream_id: sid }],
  ];
  const bobQueue = await openQueue(bob, { event_types: ['update_message_flags'] });
  const alone = [];
  for (const change of changes) alone.push(await post(bob, change));
  const aliceQueue = await openQueue(alice, { event_types: ['update_message_flags'] });
  const held = holdActor<unknown[]>(realm.server.app, realm.server.app.users, alice.id);
  for (const change of changes) await held.enqueue(() => post(alice, change));
  const { results, batches, writes, transactions } = await held.release();
  assert.equal([batches.map((b) => b.length), writes, transactions], [[changes.length], 0, 1]);
  assert.equal(results, alone);
  assert.equal(results[3], [400, errorBody('Invalid message(s)')], 'the bad change fails alone');
  const events = await eventsOf(aliceQueue, changes.length - 1);
  assert.equal(events, await eventsOf(bobQueue, changes.length - 1));
  assert.equal(
    events.map((e) => [e.op, e.flag, e.messages, e.all]),
    [
      ['add', 'read', [m0, m1], false],
      ['add', 'read', [m2], false],
      ['remove', 'read', [m1], false],
      ['add', 'starred', [m0, elsewhere], false],
      ['remove', 'read', [], false],
      ['remove', 'starred', [elsewhere], false],
      ['add', 'read', [m1], false],
      ['add', 'starred', [m3], false],
      ['add', 'read', [], true],
      ['remove', 'read', [m3], false],
      ['add', 'read', [m3], false],
    ],
  );
  for (const id of [...ids, elsewhere]) assert.equal(await flagsOf(alice.client, id), await flagsOf(bob.client, id));
});

test("group commit keeps the order of the user's other writes: a change after a mute is written after it", async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const id = await send(realm.owner, sid, 't', 'x');
  await alice.client.post('/messages/flags', { messages: [id], op: 'add', flag: 'read' });
  const queue = await openQueue(alice, { event_types: ['update_message_flags', 'muted_users'] });
  const held = holdActor<number>(realm.server.app, realm.server.app.users, alice.id);
  const unread = () => alice.client.post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' }).then((r) => r.status);
  await held.enqueue(unread);
  await held.enqueue(() => alice.client.post(`/users/me/muted_users/${realm.owner.id}`).then((r) => r.status));
  await held.enqueue(unread);
  const { results, batches, writes } = await held.release();
  assert.equal([results, batches.map((b) => b.length), writes], [[200, 200, 200], [1, 1], 1]);
  const events = await eventsOf(queue, 4);
  assert.equal(
    events.map((e) => (e.type === 'muted_users' ? 'muted' : `${e.op} ${e.messages}`)),
    [`remove ${id}`, `add ${id}`, 'muted', `remove ${id}`],
  );
  assert.equal(await flagsOf(alice.client, id), []);
});

test("concurrent flag changes of one user: every change announced once, in the same order to each of the user's clients, and that order is the state's", async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) ids.push(await send(realm.owner, sid, 't', `m${i}`));
  const queues = [await openQueue(alice, { event_types: ['update_message_flags'] }), await openQueue(alice, { event_types: ['update_message_flags'] })];
  const changes = Array.from({ length: 40 }, (_, i) => ({ id: ids[i % 10]!, op: Math.floor(i / 10) % 2 === 0 ? 'add' : 'remove' }));
  const answers = await Promise.all(changes.map((c) => alice.client.post('/messages/flags', { messages: [c.id], op: c.op, flag: 'read' })));
  assert.equal(
    answers.map((r) => r.status),
    changes.map(() => 200),
  );
  const [events, other] = [await eventsOf(queues[0]!, 40), await eventsOf(queues[1]!, 40)];
  assert.equal(other, events, 'both clients see the same events in the same order');
  assert.is(events.length, 40, 'one event per change, none twice');
  assert.equal(events.filter((e) => e.op === 'add').length, 20);
  // Replayed in order from all unread, each event changes exactly what it names; it ends as stored.
  const read = new Set<number>();
  for (const e of events) {
    for (const id of e.messages as number[]) {
      assert.is(read.has(id), e.op === 'remove', `${e.op} ${id} changes it`);
      if (e.op === 'add') read.add(id);
      else read.delete(id);
    }
  }
  for (const id of ids) assert.equal(await flagsOf(alice.client, id), read.has(id) ? ['read'] : []);
});

test.run();
