// POST /messages/{id}/report and the realm's moderation request channel (Zulip's
// test_message_report.py): the report the Notification Bot posts, word for word, for channel
// messages and each kind of direct message; the errors; the setting's rules and events.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { errorBody, makeChannel, send, sendDm, withSystemBots } from './messages-helpers.ts';

const mention = (name: string, id: number) => `@_**${name}|${id}**`;

async function sentAt(realm: TestRealm, id: number): Promise<string> {
  const m = await realm.server.app.prisma.message.findUniqueOrThrow({ where: { id } });
  return `<time:${m.dateSent.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00')}>`;
}

/** A realm whose moderation requests go to the private channel "reports", where the owner reads them. */
async function moderatedRealm() {
  const realm = await newRealm();
  const reports = await makeChannel(realm, 'reports', [realm.owner], { invite_only: true });
  const r = await realm.owner.client.patch('/realm', { moderation_request_channel_id: reports });
  assert.equal(r.body, { result: 'success', msg: '', moderation_request_channel_id: reports });
  return { realm, reports };
}

/** The newest report in the moderation channel: its sender, topic and Markdown. */
async function lastReport(realm: TestRealm, reports: number) {
  const r = await realm.owner.client.get('/messages', {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    apply_markdown: false,
    narrow: [{ operator: 'channel', operand: reports }],
  });
  const [m] = r.body.messages;
  return { sender: m.sender_full_name as string, topic: m.subject as string, content: m.content as string };
}

const preview = (reason: string, description: string, original: string, quoted: string, fence = '```') =>
  `\n\`\`\`quote\n**${reason}**. ${description}\n\`\`\`\n\n${fence} spoiler ${original}\n${quoted}\n${fence}`;

test('a channel message: the Notification Bot posts the report to "<sender> moderation"', async () => {
  const { realm, reports } = await moderatedRealm();
  const ann = await realm.addUser({ name: 'Ann' });
  const bob = await realm.addUser({ name: 'Bob' });
  const general = await makeChannel(realm, 'general', [ann, bob]);
  const id = await send(bob, general, 'food', 'I squeeze toothpaste from the middle');
  await withSystemBots(realm);
  const events = await verifyAction(realm, () => ann.client.post(`/messages/${id}/report`, { report_type: 'harassment', description: 'crime against food' }), [
    'message',
  ]);
  assert.equal(events[0]!.userIds, [
    realm.owner.id,
    (await realm.server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, fullName: 'Notification Bot' } })).id,
  ]);
  assert.equal(await lastReport(realm, reports), {
    sender: 'Notification Bot',
    topic: 'Bob moderation',
    content:
      `${mention('Ann', ann.id)} reported a message sent by ${mention('Bob', bob.id)} at ${await sentAt(realm, id)}.` +
      preview('Harassment', 'crime against food', `Original message at #**general>food@${id}**`, 'I squeeze toothpaste from the middle'),
  });
  // Anyone who can read the message may report it, subscribed or not.
  const cat = await realm.addUser({ name: 'Cat' });
  // As zulip-js posts: multipart form data.
  assert.equal((await cat.client.postMultipart(`/messages/${id}/report`, { report_type: 'spam' })).body, { result: 'success', msg: '' });
  assert.match((await lastReport(realm, reports)).content, `${mention('Cat', cat.id)} reported a message sent by`);
});

test('the link falls back to plain Markdown for names that would break it; the quote gets a longer fence', async () => {
  const { realm, reports } = await moderatedRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const odd = await makeChannel(realm, 'Sw*den', [bob, realm.owner]);
  const code = 'look:\n````\nx\n````';
  const id = await send(bob, odd, '', code);
  assert.is((await realm.owner.client.post(`/messages/${id}/report`, { report_type: 'norms' })).status, 200);
  const { content } = await lastReport(realm, reports);
  assert.ok(
    content.endsWith(
      preview(
        'Violates community norms',
        '',
        `Original message at [#Sw&#42;den > general chat @ 💬](#narrow/channel/${odd}-Sw.2Aden/topic//near/${id})`,
        code,
        '`````',
      ),
    ),
    content,
  );
});

test("direct messages: one-on-one, one's own, to oneself, and groups", async () => {
  const { realm, reports } = await moderatedRealm();
  const url = realm.server.app.realms.url(realm.server.app.realms.byId(realm.id)!);
  const [ann, bob, cat, dan] = [
    await realm.addUser({ name: 'Ann' }),
    await realm.addUser({ name: 'Bob' }),
    await realm.addUser({ name: 'Cat' }),
    await realm.addUser({ name: 'Dan' }),
  ];
  const report = async (who: TestUser, id: number) => {
    assert.equal((await who.client.post(`/messages/${id}/report`, { report_type: 'spam', description: 'ads' })).body, { result: 'success', msg: '' });
    return (await lastReport(realm, reports)).content;
  };
  const ids = (...users: TestUser[]) => users.map((u) => u.id).sort((a, b) => a - b);

  const dm = await sendDm(bob, [ann.id], 'buy now');
  assert.equal(
    await report(ann, dm),
    `${mention('Ann', ann.id)} reported a direct message sent by ${mention('Bob', bob.id)} at ${await sentAt(realm, dm)}.` +
      preview('Spam', 'ads', `[Original message](${url}/#narrow/dm/${ids(ann, bob).join(',')}/near/${dm})`, 'buy now'),
  );

  const own = await sendDm(bob, [ann.id], 'my own');
  assert.match(await report(bob, own), `${mention('Bob', bob.id)} reported a direct message sent by ${mention('Bob', bob.id)} to ${mention('Ann', ann.id)} at`);
  const self = await sendDm(bob, [bob.id], 'note to self');
  assert.match(await report(bob, self), `reported a direct message sent by ${mention('Bob', bob.id)} to ${mention('Bob', bob.id)} at`);

  const group = await sendDm(bob, [ann.id, cat.id], 'group');
  const groupReport = await report(ann, group);
  assert.match(groupReport, `reported a direct message sent by ${mention('Bob', bob.id)} to ${mention('Ann', ann.id)} and ${mention('Cat', cat.id)} at`);
  assert.match(groupReport, `[Original message](${url}/#narrow/dm/${ids(ann, bob, cat).join(',')}-group/near/${group})`);
  const bigger = await sendDm(bob, [ann.id, cat.id, dan.id], 'bigger');
  assert.match(await report(ann, bigger), `to ${mention('Ann', ann.id)}, ${mention('Cat', cat.id)}, and ${mention('Dan', dan.id)} at`);

  // Only the conversation's members can report it.
  const r = await dan.client.post(`/messages/${dm}/report`, { report_type: 'spam' });
  assert.equal([r.status, r.body], [400, errorBody('Invalid message(s)')]);
});

test('long messages are quoted truncated; an empty-topic-only channel gets the report in the empty topic', async () => {
  const { realm, reports } = await moderatedRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const general = await makeChannel(realm, 'general', [bob]);
  const id = await send(bob, general, 'long', '.'.repeat(9000));
  assert.is((await realm.owner.client.patch(`/streams/${reports}`, { topics_policy: 'empty_topic_only' })).status, 200);
  assert.is((await realm.owner.client.post(`/messages/${id}/report`, { report_type: 'spam' })).status, 200);
  const report = await lastReport(realm, reports);
  assert.ok(report.content.endsWith(`\n${'.'.repeat(8500 - 20)}\n[message truncated]\n\`\`\``));
  assert.is(report.topic, 'general chat');
});

test("errors, in Zulip's order: parameters, explanation, reporting off, access", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const id = await sendDm(realm.owner, [realm.owner.id], 'private');
  const cases: [Record<string, unknown>, object][] = [
    [{}, errorBody("Missing 'report_type' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'report_type' })],
    [{ report_type: 'rude' }, errorBody('Invalid report_type', 'BAD_REQUEST', { var_name: 'report_type' })],
    [
      { report_type: 'spam', description: 'x'.repeat(1001) },
      errorBody('description is too long (limit: 1000 characters)', 'BAD_REQUEST', { var_name: 'description' }),
    ],
    [{ report_type: 'other' }, errorBody('An explanation is required.')],
    [{ report_type: 'other', description: 'why' }, errorBody('Message reporting is not enabled in this organization.')],
  ];
  for (const [params, body] of cases) {
    const r = await bob.client.post(`/messages/${id}/report`, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  assert.is((await bob.client.post('/register', { fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, -1);
});

test('the setting: a private active channel or none; it stays private; archiving it turns reporting off', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const bob = await realm.addUser();
  const open = await makeChannel(realm, 'open', [realm.owner]);
  const closed = await makeChannel(realm, 'closed', [realm.owner], { invite_only: true });
  const set = (value: unknown, client = o) => client.patch('/realm', { moderation_request_channel_id: value });
  assert.equal((await set(open)).body, errorBody('Moderation request channel must be private.'));
  assert.equal((await set(999999)).body, errorBody('Invalid channel ID'));
  assert.equal((await set(closed, bob.client)).body, errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
  const events = await verifyAction(realm, () => set(closed), ['realm/update']);
  assert.equal(events[0]!.event, { type: 'realm', op: 'update', property: 'moderation_request_channel_id', value: closed });
  assert.is((await bob.client.post('/register', { fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, closed);
  assert.equal((await set(closed)).body, { result: 'success', msg: '' });

  assert.equal((await o.patch(`/streams/${closed}`, { is_private: false })).body, errorBody('Moderation request channel must be private.'));
  const archived = await verifyAction(realm, () => o.delete(`/streams/${closed}`), ['realm/update_dict', 'stream/update', 'stream/delete']);
  assert.equal(archived[0]!.event, { type: 'realm', op: 'update_dict', property: 'default', data: { moderation_request_channel_id: -1 } });
  assert.is((await bob.client.post('/register', { fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, -1);
  assert.equal((await set(closed)).body, errorBody('Invalid channel ID'));
  assert.equal((await set(-1)).body, { result: 'success', msg: '', moderation_request_channel_id: -1 });
});

test.run();
