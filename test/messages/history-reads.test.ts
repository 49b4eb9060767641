// What register reads of a long history, from bounded sources: channel traffic from the daily
// counts (src/ops/history-upkeep.ts), recent direct-message conversations from the newest direct
// messages, and unread_msgs capped at the newest 50,000 as Zulip does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countChannelTraffic } from '../../src/ops/history-upkeep.ts';
import { newRealm } from '../helpers/server.ts';
import { age, makeChannel, send, sendDm } from './messages-helpers.ts';

const DAY = 86_400;

test('stream_weekly_traffic and is_recently_active come from the daily counts', async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  const ann = await realm.addUser();
  const busy = await makeChannel(realm, 'busy', [ann]);
  const quiet = await makeChannel(realm, 'quiet', [ann]);
  await app.prisma.channel.updateMany({ where: { id: { in: [busy, quiet] } }, data: { dateCreated: new Date(Date.now() - 400 * DAY * 1000) } });
  const recent = [];
  for (let i = 0; i < 41; i++) recent.push(await send(ann, busy, 't', `message ${i}`));
  await age(realm, recent, 2 * DAY);
  await age(realm, [await send(ann, quiet, 't', 'long ago')], 200 * DAY);
  const stats = async () => {
    const { body } = await ann.client.get('/users/me/subscriptions');
    return Object.fromEntries(body.subscriptions.map((s: Record<string, unknown>) => [s.stream_id, [s.stream_weekly_traffic, s.is_recently_active]]));
  };
  assert.equal(await stats(), { [busy]: [0, false], [quiet]: [0, false] }, 'not counted yet');
  await countChannelTraffic(app);
  // Four weeks of 41 messages: 10 a week (Zulip's two significant digits).
  assert.equal(await stats(), { [busy]: [10, true], [quiet]: [0, false] });
});

test("register: the organization's traffic as last counted, read again after each count", async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  const ann = await realm.addUser();
  const busy = await makeChannel(realm, 'busy', [ann]);
  await app.prisma.channel.update({ where: { id: busy }, data: { dateCreated: new Date(Date.now() - 400 * DAY * 1000) } });
  const traffic = async () => {
    const { body } = await ann.client.post('/register', { event_types: ['subscription'] });
    return body.subscriptions.find((s: { stream_id: number }) => s.stream_id === busy).stream_weekly_traffic;
  };
  const sendAged = async (n: number) => {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push(await send(ann, busy, 't', `message ${i}`));
    await age(realm, ids, 2 * DAY);
  };
  await sendAged(8);
  assert.equal([await traffic(), await traffic()], [0, 0], 'not counted yet');
  await countChannelTraffic(app);
  assert.equal([await traffic(), await traffic()], [2, 2]);
  await sendAged(40);
  assert.equal(await traffic(), 2, 'sent but not counted');
  await countChannelTraffic(app);
  assert.equal(await traffic(), 12);
});

test('recent_private_conversations: each conversation with its newest message, newest first', async () => {
  const realm = await newRealm();
  const [ann, bob, cy] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  await sendDm(ann, [bob.id], 'one');
  const group = await sendDm(cy, [ann.id, bob.id], 'two');
  const withBob = await sendDm(bob, [ann.id], 'three');
  const self = await sendDm(ann, [ann.id], 'note to self');
  const { body } = await ann.client.post('/register', { event_types: ['recent_private_conversations'] });
  assert.equal(body.recent_private_conversations, [
    { max_message_id: self, user_ids: [] },
    { max_message_id: withBob, user_ids: [bob.id] },
    { max_message_id: group, user_ids: [bob.id, cy.id].sort((a, b) => a - b) },
  ]);
});

test('unread_msgs: the newest 50,000 unread messages, with old_unreads_missing', async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'flood', [ann]);
  const [early, late] = [await makeChannel(realm, 'early', [ann]), await makeChannel(realm, 'late', [ann])];
  const first = await send(realm.owner, channel, 'flood', 'first');
  await send(realm.owner, early, 'old', 'older than the newest 50,000');
  // 50,001 more unread messages, written in bulk as an import would.
  await app.prisma.$executeRaw`
    WITH m AS (
      INSERT INTO "Message" ("realmId", "senderId", "channelId", topic, content, "renderedContent")
      SELECT ${realm.id}, ${realm.owner.id}, ${channel}, 'flood', 'bulk', '<p>bulk</p>' FROM generate_series(1, 50001) RETURNING id)
    INSERT INTO "UserMessage" ("userId", "messageId", flags) SELECT ${ann.id}, id, 0 FROM m`;
  const newest = await send(realm.owner, late, 'new', 'among the newest 50,000');
  const { body } = await ann.client.post('/register', { event_types: ['message', 'update_message_flags'] });
  const [topic] = body.unread_msgs.streams;
  assert.equal([body.unread_msgs.count, body.unread_msgs.old_unreads_missing, body.unread_msgs.streams.length], [50000, true, 2]);
  const ids: number[] = topic.unread_message_ids;
  assert.ok(!ids.includes(first) && ids[0]! > first + 1, 'the oldest are left out');
  assert.ok(
    ids.every((id, i) => i === 0 || id > ids[i - 1]!),
    'in id order',
  );
  // first_unread looks among the same newest 50,000: a narrow whose unread messages are all older
  // than them is read from its newest, as if it had none.
  const anchor = async (channelId: number) =>
    (
      await ann.client.get('/messages', {
        anchor: 'first_unread',
        num_before: 0,
        num_after: 1,
        narrow: JSON.stringify([{ operator: 'channel', operand: channelId }]),
      })
    ).body.anchor;
  assert.equal([await anchor(late), await anchor(early)], [newest, 10000000000000000]);
});

test("GET /messages from an anchor inside the user's history: the pages on both sides of it, in every narrow of their own rows", async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'long', [ann, bob]);
  const sent: { id: number; dm: boolean; bob: boolean }[] = [];
  for (let i = 0; i < 24; i++) {
    if (i % 3 === 0) sent.push({ id: await sendDm(bob, [ann.id], `dm ${i}`), dm: true, bob: true });
    else sent.push({ id: await send(i % 2 ? bob : ann, channel, 't', `message ${i}`), dm: false, bob: i % 2 === 1 });
  }
  const anchor = sent[12]!.id;
  const page = async (narrow: unknown[], numBefore: number, numAfter: number) => {
    const r = await ann.client.get('/messages', { anchor, num_before: numBefore, num_after: numAfter, include_anchor: false, narrow: JSON.stringify(narrow) });
    assert.is(r.status, 200, r.text);
    return [r.body.messages.map((m: { id: number }) => m.id), r.body.found_oldest, r.body.found_newest];
  };
  for (const [narrow, of] of [
    [[], () => true],
    [[{ operator: 'in', operand: 'home' }], () => true],
    [[{ operator: 'sender', operand: bob.id }], (m: (typeof sent)[0]) => m.bob],
    [[{ operator: 'dm', operand: [bob.id] }], (m: (typeof sent)[0]) => m.dm],
    [[{ operator: 'is', operand: 'dm' }], (m: (typeof sent)[0]) => m.dm],
    [[{ operator: 'topic', operand: 'T' }], (m: (typeof sent)[0]) => !m.dm],
  ] as const) {
    const ids = sent.filter(of).map((m) => m.id);
    const before = ids.filter((id) => id < anchor);
    const after = ids.filter((id) => id > anchor);
    assert.equal(await page([...narrow], 3, 0), [before.slice(-3), false, false], `before, ${JSON.stringify(narrow)}`);
    assert.equal(await page([...narrow], 0, 3), [after.slice(0, 3), false, false], `after, ${JSON.stringify(narrow)}`);
    assert.equal(await page([...narrow], 100, 100), [[...before, ...after], true, true], `all, ${JSON.stringify(narrow)}`);
  }
});

test("GET /messages with a topic and no channel: that topic in every channel of the user's, whatever its case, not another organization's", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const [one, two] = [await makeChannel(realm, 'one', [ann]), await makeChannel(realm, 'two', [ann])];
  const ids = [await send(ann, one, 'Plans', 'a'), await send(ann, two, 'plans', 'b')];
  await send(ann, one, 'other', 'c');
  await sendDm(ann, [realm.owner.id], 'a direct message has no topic');
  const elsewhere = await newRealm();
  await send(elsewhere.owner, await makeChannel(elsewhere, 'one', [elsewhere.owner]), 'plans', 'not ours');
  const r = await ann.client.get('/messages', {
    anchor: 'newest',
    num_before: 10,
    num_after: 0,
    narrow: JSON.stringify([{ operator: 'topic', operand: 'PLANS' }]),
  });
  assert.equal(
    [r.body.messages.map((m: { id: number; subject: string }) => [m.id, m.subject]), r.body.found_oldest],
    [
      [
        [ids[0], 'Plans'],
        [ids[1], 'plans'],
      ],
      true,
    ],
  );
});

test.run();
