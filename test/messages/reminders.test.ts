// Message reminders: GET/POST /reminders, DELETE /reminders/{id}, their errors, `reminders` events
// and register data, and delivery as a Notification Bot direct message (mirrors Zulip's
// test_reminders.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { eventually, expectError, makeChannel, send, sendDm, soon } from './messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

async function setup(): Promise<{ realm: TestRealm; bob: TestUser; zoe: TestUser; channelId: number; realmUrl: string }> {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const zoe = await realm.addUser({ name: 'Zoe' });
  const channelId = await makeChannel(realm, 'Verona', [realm.owner, bob, zoe]);
  const app = realm.server.app;
  return { realm, bob, zoe, channelId, realmUrl: app.realms.url(app.realms.byId(realm.id)!) };
}

async function remind(user: TestUser, messageId: number, params: Record<string, unknown> = {}): Promise<number> {
  const r = await user.client.post('/reminders', { message_id: messageId, scheduled_delivery_timestamp: inAnHour(), ...params });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, { ...SUCCESS, reminder_id: r.body.reminder_id });
  return r.body.reminder_id;
}

async function list(user: TestUser): Promise<Record<string, any>[]> {
  const r = await user.client.get('/reminders');
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['msg', 'reminders', 'result']);
  return r.body.reminders;
}

const mention = (u: TestUser, name: string) => `@_**${name}|${u.id}**`;

test("POST /reminders: the Notification Bot's text quotes the message, with the note; GET lists them soonest first", async () => {
  const { realm, bob, zoe, channelId, realmUrl } = await setup();
  const channelMessage = await send(bob, channelId, 'plans {x}', 'Meet at *noon*');
  const t = inAnHour();
  const first = await remind(bob, channelMessage, { note: '\n\nBring the slides\n  ', scheduled_delivery_timestamp: t + 20 });
  const dm = await sendDm(zoe, [bob.id], 'Can you review?');
  const second = await remind(bob, dm, { scheduled_delivery_timestamp: t + 10 });
  const near = `${realmUrl}/#narrow/channel/${channelId}-Verona/topic/plans.20.7Bx.7D/near/${channelMessage}`;
  const withLink = `#narrow/channel/${channelId}-Verona/topic/plans.20.7Bx.7D/with/${channelMessage}`;
  const pair = [bob.id, zoe.id].sort((a, b) => a - b).join(',');
  const reminders = await list(bob);
  assert.equal(
    reminders.map(({ rendered_content: _, ...r }) => r),
    [
      {
        reminder_id: second,
        type: 'private',
        to: [bob.id],
        scheduled_delivery_timestamp: t + 10,
        failed: false,
        reminder_target_message_id: dm,
        content: `You requested a reminder for the following direct message.\n\n${mention(zoe, 'Zoe')} [said](${realmUrl}/#narrow/dm/${pair}/near/${dm}) to ${mention(bob, 'Bob')}:\n\`\`\`quote\nCan you review?\n\`\`\``,
      },
      {
        reminder_id: first,
        type: 'private',
        to: [bob.id],
        scheduled_delivery_timestamp: t + 20,
        failed: false,
        reminder_target_message_id: channelMessage,
        content: `You requested a reminder for the following message. Note:\n > Bring the slides\n\n${mention(bob, 'Bob')} [said](${near}) in [#Verona > plans {x}](${withLink}):\n\`\`\`quote\nMeet at *noon*\n\`\`\``,
      },
    ],
  );
  assert.match(reminders[1]!.rendered_content, /^<p>You requested a reminder for the following message\. Note:<\/p>\n<blockquote>\n<p>Bring the slides<\/p>/);
  assert.equal(await list(zoe), [], 'only the owner sees them');
  assert.equal(await list(realm.owner), []);
});

test('POST /reminders: notes to oneself, polls and todo lists, a group, and long messages cut to fit', async () => {
  const { realm, bob, zoe, realmUrl } = await setup();
  const self = await sendDm(bob, [bob.id], 'buy ```milk```\n```\ncode\n```');
  const poll = await sendDm(bob, [bob.id], '/poll Lunch?');
  const todo = await sendDm(zoe, [bob.id, realm.owner.id], '/todo Chores');
  const long = await sendDm(zoe, [bob.id], 'x'.repeat(10_000));
  for (const id of [self, poll, todo, long]) await remind(bob, id);
  const group = [realm.owner.id, bob.id, zoe.id].sort((a, b) => a - b).join(',');
  const pair = [bob.id, zoe.id].sort((a, b) => a - b).join(',');
  const [a, b, c, d] = (await list(bob)).map((r) => r.content as string);
  assert.is(
    a,
    `You requested a reminder for the following direct message.\n\nYou [sent](${realmUrl}/#narrow/dm/${bob.id}/near/${self}) a note to yourself:\n\`\`\`\`quote\nbuy \`\`\`milk\`\`\`\n\`\`\`\ncode\n\`\`\`\n\`\`\`\``,
  );
  assert.is(b, `You requested a reminder for the following direct message.\n\nYou [sent](${realmUrl}/#narrow/dm/${bob.id}/near/${poll}) yourself a poll.`);
  const others = [realm.owner, bob].sort((x, y) => x.id - y.id).map((u) => mention(u, u === bob ? 'Bob' : 'Olivia Owner'));
  assert.is(
    c,
    `You requested a reminder for the following direct message.\n\n${mention(zoe, 'Zoe')} [sent](${realmUrl}/#narrow/dm/${group}/near/${todo}) a todo list to ${others.join(' and ')}.`,
  );
  const head = `You requested a reminder for the following direct message.\n\n${mention(zoe, 'Zoe')} [said](${realmUrl}/#narrow/dm/${pair}/near/${long}) to ${mention(bob, 'Bob')}:\n\`\`\`quote\n`;
  assert.is(d!.length, 10_000);
  assert.ok(d!.startsWith(`${head}xxx`) && d!.endsWith('x\n[message truncated]\n```'), d!.slice(-60));
});

test('POST /reminders errors', async () => {
  const { realm, bob, zoe, channelId } = await setup();
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const hidden = await send(realm.owner, secret, 't', 'not for Bob');
  const theirs = await sendDm(zoe, [realm.owner.id], 'private');
  const mine = await send(bob, channelId, 't', 'mine');
  const post = (params: Record<string, unknown>) => bob.client.post('/reminders', { message_id: mine, scheduled_delivery_timestamp: inAnHour(), ...params });
  expectError(await post({ scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) }), 'Scheduled delivery time must be in the future.');
  for (const id of [hidden, theirs, 99999999]) expectError(await post({ message_id: id }), 'Invalid message(s)');
  expectError(await post({ note: 'n'.repeat(1001) }), 'Maximum reminder note length: 1000 characters');
  expectError(await post({ message_id: 'abc' }), 'Argument "message_id" is not valid JSON.', 400, 'BAD_REQUEST', { var_name: 'message_id' });
  for (const name of ['message_id', 'scheduled_delivery_timestamp']) {
    expectError(await post({ [name]: undefined }), `Missing '${name}' argument`, 400, 'REQUEST_VARIABLE_MISSING', { var_name: name });
  }
  assert.equal(await list(bob), []);
  // At the limit, and with trailing space trimmed first, the note is accepted.
  await remind(bob, mine, { note: `${'n'.repeat(1000)}\n \n` });
  assert.ok((await list(bob))[0]!.content.includes(`Note:\n > ${'n'.repeat(1000)}\n\n`));
});

test("DELETE /reminders/{id}: only one's own; scheduled messages and reminders are separate", async () => {
  const { bob, zoe, channelId } = await setup();
  const msg = await send(bob, channelId, 't', 'hello');
  const id = await remind(bob, msg);
  const scheduled = await bob.client.post('/scheduled_messages', {
    type: 'stream',
    to: channelId,
    topic: 't',
    content: 'c',
    scheduled_delivery_timestamp: inAnHour(),
  });
  const scheduledId = scheduled.body.scheduled_message_id as number;
  expectError(await zoe.client.delete(`/reminders/${id}`), 'Reminder does not exist', 404);
  expectError(await bob.client.delete(`/reminders/${scheduledId}`), 'Reminder does not exist', 404);
  expectError(await bob.client.delete(`/scheduled_messages/${id}`), 'Scheduled message does not exist', 404);
  expectError(await bob.client.patch(`/scheduled_messages/${id}`, { content: 'x' }), 'Scheduled message does not exist', 404);
  assert.equal(
    (await bob.client.get('/scheduled_messages')).body.scheduled_messages.map((m: { scheduled_message_id: number }) => m.scheduled_message_id),
    [scheduledId],
  );
  assert.equal((await bob.client.delete(`/reminders/${id}`)).body, SUCCESS);
  assert.equal(await list(bob), []);
  expectError(await bob.client.delete(`/reminders/${id}`), 'Reminder does not exist', 404);
});

test('events: a second client of the same user hears of new and deleted reminders; register has the list', async () => {
  const { bob, zoe, channelId } = await setup();
  const queue = await openQueue(bob, { event_types: ['reminders'] });
  const zoeQueue = await openQueue(zoe, { event_types: ['reminders'] });
  const msg = await send(zoe, channelId, 't', 'hello');
  const id = await remind(bob, msg);
  const [entry] = await list(bob);
  assert.equal(await queue.next(), [{ type: 'reminders', op: 'add', reminders: [entry] }]);
  assert.equal((await openQueue(bob, { fetch_event_types: ['reminders'] })).state.reminders, [entry]);
  await bob.client.delete(`/reminders/${id}`);
  assert.equal(await queue.next(), [{ type: 'reminders', op: 'remove', reminder_id: id }]);
  assert.equal(await zoeQueue.pending(), []);
  assert.equal((await openQueue(zoe, { fetch_event_types: ['reminders'] })).state.reminders, []);
});

test('delivery: the Notification Bot sends the reminder to its owner, quoting the message as it is then', async () => {
  const { realm, bob, zoe, channelId, realmUrl } = await setup();
  const queue = await openQueue(bob, { event_types: ['reminders', 'message'], apply_markdown: false });
  const zoeQueue = await openQueue(zoe, { event_types: ['message'] });
  const msg = await send(zoe, channelId, 'topic', 'first words');
  await queue.next();
  // A second of margin, for the edit to land first.
  const id = await remind(bob, msg, { note: 'reply today', scheduled_delivery_timestamp: soon(1000) });
  await zoe.client.patch(`/messages/${msg}`, { content: 'edited words' });
  const events: Record<string, any>[] = [];
  await eventually(
    async () => (events.push(...(await queue.pending())), events),
    (e) => e.some((x) => x.op === 'remove'),
    'the reminder',
  );
  const delivered = events.filter((e) => e.type === 'message');
  assert.is(delivered.length, 1);
  const message = delivered[0]!.message;
  assert.equal(
    [message.sender_full_name, message.type, message.display_recipient.map((u: { id: number }) => u.id).sort()],
    ['Notification Bot', 'private', [message.sender_id, bob.id].sort()],
  );
  assert.is(
    message.content,
    `You requested a reminder for the following message. Note:\n > reply today\n\n${mention(zoe, 'Zoe')} [said](${realmUrl}/#narrow/channel/${channelId}-Verona/topic/topic/near/${msg}) in [#Verona > topic](#narrow/channel/${channelId}-Verona/topic/topic/with/${msg}):\n\`\`\`quote\nedited words\n\`\`\``,
  );
  assert.equal(delivered[0]!.flags, [], 'unread for its owner');
  assert.equal(
    events.filter((e) => e.type === 'reminders').map((e) => e.op),
    ['add', 'remove'],
  );
  assert.equal(events.at(-1), { type: 'reminders', op: 'remove', reminder_id: id });
  const row = await realm.server.app.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
  assert.equal([row.delivered, row.failed, row.deliveredMessageId], [true, false, message.id]);
  assert.equal(await list(bob), []);
  assert.equal(
    (await zoeQueue.pending()).filter((e) => e.message.sender_full_name === 'Notification Bot'),
    [],
    'nobody else gets it',
  );
});

test('delivery after the message was deleted: the text as it was when scheduled', async () => {
  const { bob, channelId } = await setup();
  const queue = await openQueue(bob, { event_types: ['message'], apply_markdown: false });
  const msg = await send(bob, channelId, 'topic', 'soon gone');
  await queue.next();
  const id = await remind(bob, msg, { scheduled_delivery_timestamp: soon(1000) });
  const [{ content }] = await list(bob);
  assert.is((await bob.client.delete(`/messages/${msg}`)).status, 200);
  const [event] = await eventually(
    () => queue.pending(),
    (e) => e.some((x) => x.type === 'message'),
    'the reminder',
  );
  assert.is(event!.message.content, content);
  assert.ok(content.includes('soon gone'));
  expectError(await bob.client.delete(`/reminders/${id + 1000}`), 'Reminder does not exist', 404);
});

test.run();
