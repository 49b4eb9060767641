// Scheduled messages: GET/POST /scheduled_messages, PATCH/DELETE /scheduled_messages/{id}, their
// errors, `scheduled_messages` events and register data, and delivery by the scheduler (mirrors
// Zulip's test_scheduled_messages.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { deliverDueMessages } from '../../src/actions/scheduled-delivery.ts';
import { notificationBot } from '../../src/actions/messages.ts';
import { atomic } from '../../src/actions/transaction.ts';
import type { RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { openQueue } from '../helpers/queues.ts';
import { freshDatabase, newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import { eventually, expectError, makeChannel, ownerBobZoe, send, setRealmSettings, soon } from './messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

async function schedule(user: TestUser, params: Record<string, unknown>): Promise<number> {
  const r = await user.client.post('/scheduled_messages', { scheduled_delivery_timestamp: inAnHour(), ...params });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, { ...SUCCESS, scheduled_message_id: r.body.scheduled_message_id });
  return r.body.scheduled_message_id;
}

async function list(user: TestUser): Promise<Record<string, any>[]> {
  const r = await user.client.get('/scheduled_messages');
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['msg', 'result', 'scheduled_messages']);
  return r.body.scheduled_messages;
}

test('POST /scheduled_messages: every type name; GET lists them soonest first, with rendered content', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const t = inAnHour();
  const a = await schedule(bob, { type: 'stream', to: channelId, topic: 'plans', content: 'Hello **all**', scheduled_delivery_timestamp: t + 30 });
  const b = await schedule(bob, { type: 'channel', to: String(channelId), topic: 'plans', content: 'second', scheduled_delivery_timestamp: t + 10 });
  const c = await schedule(bob, { type: 'direct', to: [zoe.id], content: 'to Zoe', topic: 'ignored', scheduled_delivery_timestamp: t + 20 });
  const d = await schedule(bob, {
    type: 'private',
    to: JSON.stringify([realm.owner.id, zoe.id, bob.id, zoe.id]),
    content: 'group',
    scheduled_delivery_timestamp: t + 40,
  });
  const e = await schedule(bob, { type: 'direct', to: [bob.id], content: 'note to self', scheduled_delivery_timestamp: t + 50 });
  const stream = (id: number, content: string, html: string, at: number) => ({
    scheduled_message_id: id,
    type: 'stream',
    to: channelId,
    topic: 'plans',
    content,
    rendered_content: html,
    scheduled_delivery_timestamp: at,
    failed: false,
  });
  const direct = (id: number, to: number[], content: string, at: number) => ({
    scheduled_message_id: id,
    type: 'private',
    to,
    content,
    rendered_content: `<p>${content}</p>`,
    scheduled_delivery_timestamp: at,
    failed: false,
  });
  assert.equal(await list(bob), [
    stream(b, 'second', '<p>second</p>', t + 10),
    direct(c, [zoe.id], 'to Zoe', t + 20),
    stream(a, 'Hello **all**', '<p>Hello <strong>all</strong></p>', t + 30),
    direct(
      d,
      [realm.owner.id, zoe.id].sort((x, y) => x - y),
      'group',
      t + 40,
    ),
    direct(e, [bob.id], 'note to self', t + 50),
  ]);
  assert.equal(await list(zoe), [], 'nobody else sees them');
  assert.equal(await list(realm.owner), []);
});

test('POST /scheduled_messages: topics — (no topic) and the empty-topic display name are the empty topic; long ones truncated', async () => {
  const { bob, channelId } = await ownerBobZoe();
  for (const topic of ['(no topic)', 'general chat', '', '  ']) await schedule(bob, { type: 'stream', to: channelId, topic, content: 'x' });
  await schedule(bob, { type: 'stream', to: channelId, topic: 't'.repeat(70), content: 'x' });
  assert.equal(
    (await list(bob)).map((m) => m.topic),
    ['', '', '', '', `${'t'.repeat(57)}...`],
  );
  await schedule(bob, { type: 'stream', to: channelId, subject: 'legacy name', content: 'x' });
  assert.is((await list(bob))[5]!.topic, 'legacy name');
});

test('POST /scheduled_messages: content is checked and truncated as for a message sent now', async () => {
  const { bob, channelId } = await ownerBobZoe();
  await schedule(bob, { type: 'stream', to: channelId, topic: 't', content: `\n\n${'y'.repeat(10_005)}  ` });
  const [long] = await list(bob);
  assert.is(long!.content.length, 10_000);
  assert.ok(long!.content.endsWith('\n[message truncated]'));
  expectError(
    await bob.client.post('/scheduled_messages', { type: 'stream', to: channelId, topic: 't', content: '   ', scheduled_delivery_timestamp: inAnHour() }),
    'Message must not be empty',
  );
});

test('POST /scheduled_messages errors', async () => {
  const { realm, bob, channelId } = await ownerBobZoe();
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const gone = await realm.addUser({ name: 'Gone' });
  await realm.server.app.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } });
  const post = (params: Record<string, unknown>) =>
    bob.client.post('/scheduled_messages', { type: 'stream', to: channelId, topic: 't', content: 'c', scheduled_delivery_timestamp: inAnHour(), ...params });
  const now = Math.floor(Date.now() / 1000);
  expectError(await post({ scheduled_delivery_timestamp: now - 10 }), 'Scheduled delivery time must be in the future.');
  expectError(await post({ scheduled_delivery_timestamp: now }), 'Scheduled delivery time must be in the future.');
  expectError(await post({ to: 99999 }), "Channel with ID '99999' does not exist", 400, 'STREAM_DOES_NOT_EXIST', { stream_id: 99999 });
  expectError(await post({ to: [channelId] }), 'Invalid data type for channel ID');
  expectError(await post({ to: secret }), "Not authorized to send to channel 'secret'");
  expectError(await post({ topic: undefined }), 'Missing topic');
  expectError(await post({ type: 'direct', to: [99999] }), 'Invalid user ID 99999');
  expectError(await post({ type: 'direct', to: [gone.id] }), `'${gone.email}' is no longer using Zulip.`);
  expectError(await post({ type: 'direct', to: bob.id }), 'Invalid data type for recipients');
  expectError(await post({ type: 'direct', to: [] }), 'Message must have recipients');
  expectError(await post({ type: 'huddle' }), 'Invalid type', 400, 'BAD_REQUEST', { var_name: 'type' });
  expectError(await post({ to: 'general' }), 'Argument "to" is not valid JSON.', 400, 'BAD_REQUEST', { var_name: 'to' });
  for (const name of ['content', 'to', 'type', 'scheduled_delivery_timestamp']) {
    expectError(await post({ [name]: undefined }), `Missing '${name}' argument`, 400, 'REQUEST_VARIABLE_MISSING', { var_name: name });
  }
  await setRealmSettings(realm, { topics_policy: 'disable_empty_topic' });
  for (const topic of ['', '(no topic)', 'general chat']) expectError(await post({ topic }), 'Topics are required in this organization.');
  assert.equal(await list(bob), [], 'nothing was scheduled');
});

test('PATCH /scheduled_messages/{id}: content, time, topic, recipients and type', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const other = await makeChannel(realm, 'other', [bob]);
  const id = await schedule(bob, { type: 'stream', to: channelId, topic: 'plans', content: 'draft' });
  const patch = async (params: Record<string, unknown>) => {
    const r = await bob.client.patch(`/scheduled_messages/${id}`, params);
    assert.equal([r.status, r.body], [200, SUCCESS], r.text);
    return (await list(bob))[0]!;
  };
  assert.equal(await patch({ content: 'final *words*' }), {
    scheduled_message_id: id,
    type: 'stream',
    to: channelId,
    topic: 'plans',
    content: 'final *words*',
    rendered_content: '<p>final <em>words</em></p>',
    scheduled_delivery_timestamp: (await list(bob))[0]!.scheduled_delivery_timestamp,
    failed: false,
  });
  const later = inAnHour() + 7200;
  assert.is((await patch({ scheduled_delivery_timestamp: later })).scheduled_delivery_timestamp, later);
  assert.is((await patch({ topic: '(no topic)' })).topic, '');
  assert.is((await patch({ topic: 'renamed' })).topic, 'renamed');
  assert.equal(await patch({ to: other }), { ...(await list(bob))[0], to: other, topic: 'renamed' });
  const direct = await patch({ type: 'direct', to: [zoe.id, realm.owner.id] });
  assert.equal([direct.type, direct.to, 'topic' in direct], ['private', [realm.owner.id, zoe.id].sort((x, y) => x - y), false]);
  assert.is((await patch({ topic: 'ignored for direct messages' })).type, 'private');
  assert.equal((await patch({ to: [zoe.id] })).to, [zoe.id]);
  const back = await patch({ type: 'channel', to: channelId, topic: 'plans again' });
  assert.equal([back.type, back.to, back.topic, back.content, back.scheduled_delivery_timestamp], ['stream', channelId, 'plans again', 'final *words*', later]);
});

test('PATCH /scheduled_messages/{id} errors', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const id = await schedule(bob, { type: 'stream', to: channelId, topic: 't', content: 'c' });
  const zoes = await schedule(zoe, { type: 'stream', to: channelId, topic: 't', content: 'z' });
  const patch = (params: Record<string, unknown>, target = id) => bob.client.patch(`/scheduled_messages/${target}`, params);
  expectError(await patch({}), 'Nothing to change');
  expectError(await patch({ type: 'direct' }), 'Recipient required when updating type of scheduled message.');
  expectError(await patch({ type: 'stream', to: channelId }), 'Topic required when updating scheduled message type to channel.');
  expectError(await patch({ scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) - 5 }), 'Scheduled delivery time must be in the future.');
  expectError(await patch({ to: 99999 }), "Channel with ID '99999' does not exist", 400, 'STREAM_DOES_NOT_EXIST', { stream_id: 99999 });
  expectError(await patch({ to: [zoe.id] }), 'Invalid data type for channel ID');
  expectError(await patch({ type: 'direct', to: zoe.id }), 'Invalid data type for recipients');
  expectError(await patch({ type: 'direct', to: [99999] }), 'Invalid user ID 99999');
  expectError(await patch({ content: '' }), 'Message must not be empty');
  expectError(await patch({ content: 'x' }, zoes), 'Scheduled message does not exist', 404);
  expectError(await patch({ content: 'x' }, 99999999), 'Scheduled message does not exist', 404);
  await setRealmSettings(realm, { topics_policy: 'disable_empty_topic' });
  expectError(await patch({ topic: 'general chat' }), 'Topics are required in this organization.');
  assert.equal(
    (await list(bob)).map((m) => [m.topic, m.content]),
    [['t', 'c']],
    'unchanged',
  );
  assert.equal(
    (await list(zoe)).map((m) => m.content),
    ['z'],
    "Zoe's is untouched",
  );
});

test("DELETE /scheduled_messages/{id}: only one's own", async () => {
  const { bob, zoe, channelId } = await ownerBobZoe();
  const id = await schedule(bob, { type: 'stream', to: channelId, topic: 't', content: 'c' });
  expectError(await zoe.client.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  assert.is((await list(bob)).length, 1);
  assert.equal((await bob.client.delete(`/scheduled_messages/${id}`)).body, SUCCESS);
  assert.equal(await list(bob), []);
  expectError(await bob.client.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  expectError(await bob.client.delete('/scheduled_messages/abc'), 'Scheduled message does not exist', 404);
});

test('events: a second client of the same user hears of every change; register has the list', async () => {
  const { bob, zoe, channelId } = await ownerBobZoe();
  const queue = await openQueue(bob, { event_types: ['scheduled_messages'] });
  const zoeQueue = await openQueue(zoe, { event_types: ['scheduled_messages'] });
  const t = inAnHour();
  const id = await schedule(bob, { type: 'stream', to: channelId, topic: 't', content: 'hi', scheduled_delivery_timestamp: t });
  const added = {
    scheduled_message_id: id,
    type: 'stream',
    to: channelId,
    topic: 't',
    content: 'hi',
    rendered_content: '<p>hi</p>',
    scheduled_delivery_timestamp: t,
    failed: false,
  };
  assert.equal(await queue.next(), [{ type: 'scheduled_messages', op: 'add', scheduled_messages: [added] }]);
  await bob.client.patch(`/scheduled_messages/${id}`, { content: 'hello' });
  assert.equal(await queue.next(), [
    { type: 'scheduled_messages', op: 'update', scheduled_message: { ...added, content: 'hello', rendered_content: '<p>hello</p>' } },
  ]);
  const registered = await openQueue(bob, { fetch_event_types: ['scheduled_messages'], event_types: ['scheduled_messages'] });
  assert.equal(registered.state.scheduled_messages, [{ ...added, content: 'hello', rendered_content: '<p>hello</p>' }]);
  await bob.client.delete(`/scheduled_messages/${id}`);
  assert.equal(await queue.next(), [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }]);
  assert.equal(await zoeQueue.pending(), [], 'other users hear nothing');
  assert.equal((await openQueue(zoe, { fetch_event_types: ['scheduled_messages'] })).state.scheduled_messages, []);
});

test('delivery at the scheduled time: sent as its sender through the normal path, once, and removed', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const bobQueue = await openQueue(bob, { event_types: ['scheduled_messages', 'message'] });
  const zoeQueue = await openQueue(zoe, { event_types: ['message'] });
  // Margin for both requests to arrive before it.
  const at = soon(800);
  const channelMsg = await schedule(bob, {
    type: 'stream',
    to: channelId,
    topic: 'later',
    content: 'on **time**',
    scheduled_delivery_timestamp: at,
    read_by_sender: true,
  });
  const dm = await schedule(bob, { type: 'direct', to: [zoe.id], content: 'psst', scheduled_delivery_timestamp: at });
  const received: Record<string, any>[] = [];
  await eventually(
    async () => (received.push(...(await zoeQueue.pending())), received),
    (r) => r.length >= 2,
    "Zoe's two messages",
  );
  assert.equal(
    received.map((e) => [e.type, e.message.content, e.message.sender_id]),
    [
      ['message', 'on **time**', bob.id],
      ['message', 'psst', bob.id],
    ],
  );
  assert.ok(Date.now() >= at * 1000, 'not before its time');
  const rows = await realm.server.app.prisma.scheduledMessage.findMany({ where: { id: { in: [channelMsg, dm] } }, orderBy: { id: 'asc' } });
  assert.equal(
    rows.map((r) => [r.delivered, r.failed, r.deliveredMessageId]),
    [
      [true, false, received[0]!.message.id],
      [true, false, received[1]!.message.id],
    ],
  );
  const bobEvents: Record<string, any>[] = [];
  await eventually(
    async () => (bobEvents.push(...(await bobQueue.pending())), bobEvents),
    (r) => r.length >= 4,
    "Bob's events",
  );
  const removed = bobEvents.filter((e) => e.type === 'scheduled_messages').map((e) => [e.op, e.scheduled_message_id]);
  assert.equal(
    removed.slice(-2).sort(),
    [
      ['remove', channelMsg],
      ['remove', dm],
    ].sort(),
    JSON.stringify(bobEvents),
  );
  const sent = bobEvents.filter((e) => e.type === 'message');
  assert.equal(
    sent.map((e) => [e.message.id, e.flags]),
    [
      [received[0]!.message.id, ['read']],
      [received[1]!.message.id, []],
    ],
    'read_by_sender as asked, else unread from an API client',
  );
  assert.equal(await list(bob), []);
  const stored = await bob.client.get(`/messages/${received[0]!.message.id}`);
  assert.equal([stored.body.message.subject, stored.body.raw_content, stored.body.message.client], ['later', 'on **time**', 'Unspecified']);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await zoeQueue.pending(), [], 'sent once');
});

test('delivery that is no longer allowed: marked failed, the sender told by the Notification Bot; a new time sends it', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const queue = await openQueue(bob, { event_types: ['scheduled_messages', 'message'] });
  // A second of margin, for the channel to be archived first.
  const at = soon(1000);
  const id = await schedule(bob, { type: 'stream', to: channelId, topic: 'doomed', content: 'never', scheduled_delivery_timestamp: at });
  const archived = await realm.owner.client.delete(`/streams/${channelId}`);
  assert.is(archived.status, 200, archived.text);
  const events: Record<string, any>[] = [];
  await eventually(
    async () => (events.push(...(await queue.pending())), events),
    (e) => e.some((x) => x.type === 'message'),
    'the notice',
  );
  const failedEntry = {
    scheduled_message_id: id,
    type: 'stream',
    to: channelId,
    topic: 'doomed',
    content: 'never',
    rendered_content: '<p>never</p>',
    scheduled_delivery_timestamp: at,
    failed: true,
  };
  assert.equal(events[0], { type: 'scheduled_messages', op: 'add', scheduled_messages: [{ ...failedEntry, failed: false }] });
  assert.equal(
    events.slice(1).map((e) => (e.type === 'message' ? 'message' : e)),
    [{ type: 'scheduled_messages', op: 'update', scheduled_message: failedEntry }, 'message'],
  );
  const notice = events.at(-1)!.message;
  const iso = new Date(at * 1000).toISOString().replace('.000Z', '+00:00');
  const raw = (await bob.client.get(`/messages/${notice.id}`)).body.raw_content;
  assert.is(
    raw,
    `The message you scheduled for <time:${iso}> was not sent because of the following error:\n\n> Not authorized to send to channel 'general'\n\n[View scheduled messages](#scheduled)`,
  );
  assert.equal(
    [notice.sender_full_name, notice.type, notice.display_recipient.map((u: { id: number }) => u.id).includes(bob.id)],
    ['Notification Bot', 'private', true],
  );
  assert.equal(await list(bob), [failedEntry]);
  const row = await realm.server.app.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
  assert.equal([row.failed, row.failureMessage, row.delivered], [true, "Not authorized to send to channel 'general'", false]);
  // Editing a failed message needs a new time; the edit clears the failure.
  expectError(await bob.client.patch(`/scheduled_messages/${id}`, { content: 'again' }), 'Scheduled delivery time must be in the future.');
  const dm = await bob.client.patch(`/scheduled_messages/${id}`, { type: 'direct', to: [zoe.id], scheduled_delivery_timestamp: soon() });
  assert.is(dm.status, 200, dm.text);
  assert.is((await list(bob))[0]!.failed, false);
  await eventually(
    () => list(bob),
    (l) => l.length === 0,
    'the retried delivery',
  );
  const delivered = await realm.server.app.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
  assert.equal([delivered.delivered, delivered.failed, delivered.failureMessage], [true, false, null]);
  expectError(await bob.client.patch(`/scheduled_messages/${id}`, { content: 'too late' }), 'Scheduled message was already sent');
  assert.equal((await bob.client.delete(`/scheduled_messages/${id}`)).body, SUCCESS, 'a delivered one can still be deleted, as in Zulip');
});

test('more than ten minutes late, a message fails with a notice; from a deactivated account it fails silently; reminders are never too late', async () => {
  const { realm, bob, zoe, channelId } = await ownerBobZoe();
  const app = realm.server.app;
  const late = await schedule(bob, { type: 'stream', to: channelId, topic: 't', content: 'stale news' });
  const fromZoe = await schedule(zoe, { type: 'direct', to: [bob.id], content: 'from a leaver' });
  const target = await send(zoe, channelId, 't', 'old but useful');
  const reminder = (await bob.client.post('/reminders', { message_id: target, scheduled_delivery_timestamp: inAnHour() })).body.reminder_id as number;
  await app.prisma.scheduledMessage.updateMany({
    where: { id: { in: [late, fromZoe, reminder] } },
    data: { scheduledTimestamp: new Date(Date.now() - 11 * 60_000) },
  });
  assert.is((await realm.owner.client.delete(`/users/${zoe.id}`)).status, 200);
  await deliverDueMessages(app);
  const rows = await app.prisma.scheduledMessage.findMany({ where: { id: { in: [late, fromZoe, reminder] } }, orderBy: { id: 'asc' } });
  assert.equal(
    rows.map((r) => [r.delivered, r.failed, r.failureMessage]),
    [
      [false, true, 'Message could not be sent at the scheduled time.'],
      [false, true, 'Account is deactivated'],
      [true, false, null],
    ],
  );
  const notices = await app.prisma.message.findMany({ where: { realmId: realm.id, sender: { fullName: 'Notification Bot' } }, orderBy: { id: 'asc' } });
  assert.equal(notices.length, 2, 'the notice to Bob and his reminder; nothing for the deactivated Zoe');
  assert.match(
    notices[0]!.content,
    /was not sent because of the following error:\n\n> Message could not be sent at the scheduled time\.\n\n\[View scheduled messages\]\(#scheduled\)$/,
  );
  assert.ok(notices[1]!.content.includes('old but useful'));
  assert.equal(
    (await list(bob)).map((m) => [m.scheduled_message_id, m.failed]),
    [[late, true]],
  );
});

/** How many stored messages have exactly this source text. */
const copies = (server: RunningServer, realm: TestRealm, content: string) => server.app.prisma.message.count({ where: { realmId: realm.id, content } });

test('a restart sends what fell due while the server was down, each once, and the restored queue hears of it', async () => {
  const database = { DATABASE_URL: await freshDatabase() };
  const first = await startTestServer(database);
  const realm = await newRealm(first);
  const bob = await realm.addUser({ name: 'Bob' });
  const zoe = await realm.addUser({ name: 'Zoe' });
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob, zoe]);
  const target = await send(zoe, channelId, 't', 'remember me');
  const reg = await bob.client.post('/register', { event_types: ['message', 'scheduled_messages', 'reminders'], apply_markdown: false });
  // A second of margin, for the server to be down before anything falls due.
  const at = soon(1000);
  const ids = [
    await schedule(bob, { type: 'stream', to: channelId, topic: 'while down', content: 'sent after the restart', scheduled_delivery_timestamp: at }),
    await schedule(bob, { type: 'direct', to: [zoe.id], content: 'a direct one after the restart', scheduled_delivery_timestamp: at }),
  ];
  const reminder = await bob.client.post('/reminders', { message_id: target, scheduled_delivery_timestamp: at, note: 'restart note' });
  assert.is(reminder.status, 200, reminder.text);
  await first.stop();
  await new Promise((r) => setTimeout(r, Math.max(0, at * 1000 - Date.now()) + 200));

  const second = await startTestServer(database);
  try {
    const prisma = second.app.prisma;
    const all = [...ids, reminder.body.reminder_id as number];
    await eventually(
      () => prisma.scheduledMessage.findMany({ where: { id: { in: all } } }),
      (rows) => rows.every((r) => r.delivered),
      'delivery at start',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.is(await copies(second, realm, 'sent after the restart'), 1);
    assert.is(await copies(second, realm, 'a direct one after the restart'), 1);
    const notes = await prisma.message.findMany({ where: { realmId: realm.id, content: { contains: 'restart note' } } });
    assert.is(notes.length, 1, 'the reminder once');
    const rows = await prisma.scheduledMessage.findMany({ where: { id: { in: all } }, orderBy: { id: 'asc' } });
    assert.ok(
      rows.every((r) => r.deliveredMessageId !== null && !r.failed),
      JSON.stringify(rows),
    );
    assert.is(rows[2]!.deliveredMessageId, notes[0]!.id);
    const host = realm.host.replace(/:\d+$/, `:${second.port}`);
    const bobAgain = new Client(second.port, host, bob.client.credentials);
    const events = (await bobAgain.get('/events', { queue_id: reg.body.queue_id, last_event_id: -1, dont_block: true })).body.events as Record<string, any>[];
    const seen = events
      .filter((e) => e.type !== 'heartbeat' && !(e.op === 'add'))
      .map((e) => (e.type === 'message' ? e.message.content.slice(0, 22) : `${e.type}/${e.op}`));
    assert.equal(seen.filter((x) => x.startsWith('sched') || x.startsWith('remind')).sort(), [
      'reminders/remove',
      'scheduled_messages/remove',
      'scheduled_messages/remove',
    ]);
    assert.ok(seen.includes('sent after the restart'), JSON.stringify(seen));
  } finally {
    await second.stop();
  }
});

test('two processes sending from one database never send a row twice (FOR UPDATE SKIP LOCKED)', async () => {
  const database = { DATABASE_URL: await freshDatabase() };
  const [a, b] = [await startTestServer(database), await startTestServer(database)];
  try {
    const realm = await newRealm(a);
    const bob = await realm.addUser({ name: 'Bob' });
    const zoe = await realm.addUser({ name: 'Zoe' });
    const channels = [await makeChannel(realm, 'one', [bob, zoe]), await makeChannel(realm, 'two', [bob, zoe])];
    const target = await send(zoe, channels[0]!, 't', 'target');
    const contents: string[] = [];
    for (let n = 0; n < 12; n++) {
      const content = `race ${n}`;
      contents.push(content);
      if (n % 4 === 3) await bob.client.post('/reminders', { message_id: target, note: content, scheduled_delivery_timestamp: inAnHour() });
      else if (n % 4 === 2) await schedule(bob, { type: 'direct', to: [zoe.id], content });
      else await schedule(bob, { type: 'stream', to: channels[n % 2], topic: 't', content });
    }
    // All of them due now, behind the backs of both schedulers; three runs race for them.
    await a.app.prisma.scheduledMessage.updateMany({ where: { realmId: realm.id }, data: { scheduledTimestamp: new Date(Date.now() - 1000) } });
    await Promise.all([deliverDueMessages(a.app), deliverDueMessages(b.app), deliverDueMessages(a.app), deliverDueMessages(b.app)]);
    for (const [n, content] of contents.entries()) {
      const count =
        n % 4 === 3
          ? await a.app.prisma.message.count({ where: { realmId: realm.id, content: { contains: `Note:\n > ${content}\n` } } })
          : await copies(a, realm, content);
      assert.is(count, 1, content);
    }
    const rows = await a.app.prisma.scheduledMessage.findMany({ where: { realmId: realm.id } });
    assert.ok(rows.length === 12 && rows.every((r) => r.delivered && !r.failed && r.deliveredMessageId !== null), JSON.stringify(rows));
  } finally {
    await a.stop();
    await b.stop();
  }
});

test('direct messages that start a conversation and fall due together are each sent once, none failed', async () => {
  const database = { DATABASE_URL: await freshDatabase() };
  const [a, b] = [await startTestServer(database), await startTestServer(database)];
  try {
    const realm = await newRealm(a);
    const [bob, zoe, cid] = [await realm.addUser({ name: 'Bob' }), await realm.addUser({ name: 'Zoe' }), await realm.addUser({ name: 'Cid' })];
    const contents = ['new 0', 'new 1', 'new 2', 'new 3', 'group 0', 'group 1', 'group 2', 'group 3'];
    for (const content of contents) await schedule(bob, { type: 'direct', to: content.startsWith('new') ? [zoe.id] : [zoe.id, cid.id], content });
    await a.app.prisma.scheduledMessage.updateMany({ where: { realmId: realm.id }, data: { scheduledTimestamp: new Date(Date.now() - 1000) } });
    await Promise.all([deliverDueMessages(a.app), deliverDueMessages(b.app), deliverDueMessages(a.app), deliverDueMessages(b.app)]);
    const rows = await a.app.prisma.scheduledMessage.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } });
    assert.equal(
      rows.map((r) => [r.content, r.delivered, r.failureMessage]),
      contents.map((c) => [c, true, null]),
    );
    for (const content of contents) assert.is(await copies(a, realm, content), 1, content);
  } finally {
    await a.stop();
    await b.stop();
  }
});

test('two processes that need the Notification Bot at once, inside their transactions, make it once', async () => {
  const database = { DATABASE_URL: await freshDatabase() };
  const [a, b] = [await startTestServer(database), await startTestServer(database)];
  try {
    for (let round = 0; round < 3; round++) {
      const realm = await newRealm(a);
      const inB = (await b.app.realms.reload(realm.id))!;
      const bots = await Promise.all([
        atomic(a.app, () => notificationBot(a.app, a.app.realms.byId(realm.id)!)),
        atomic(b.app, () => notificationBot(b.app, inB)),
      ]);
      assert.is(bots[0].id, bots[1].id);
    }
  } finally {
    await a.stop();
    await b.stop();
  }
});

test.run();
