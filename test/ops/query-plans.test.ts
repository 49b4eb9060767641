// The hot reads of a long history use an index, not a scan: on 100,000 messages seeded in bulk,
// EXPLAIN of each statement (the shapes src/queries sends) names the index it should use and no
// sequential scan of Message or UserMessage. A plan that regresses fails here before a user waits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { HISTORY_UP_TO } from '../../src/actions/realm-export.ts';
import { NEXT_DUE } from '../../src/actions/scheduled-delivery.ts';
import { MARK_SENDER_READ, READ_ROWS, READ_ROWS_AND_UNREAD, SET_HELD_FLAGS, WRITE_FLAGS } from '../../src/actions/flags.ts';
import { TOPIC_SENDERS } from '../../src/actions/messages-prepare.ts';
import { CONVERSATION_EXISTS } from '../../src/actions/messages-send-checks.ts';
import type { App } from '../../src/app.ts';
import type { User } from '../../src/db/generated/client.ts';
import { channelTopicsSql } from '../../src/queries/channels.ts';
import { LOAD_MESSAGES, firstUnreadSql, otherVisibleTopicMessageSql, rangeStatement, visibleTopicMessagesSql } from '../../src/queries/messages.ts';
import { compileNarrow, narrowSource, type NarrowTerm } from '../../src/queries/narrow.ts';
import type { RealmInfo } from '../../src/queries/realms.ts';
import { NEWEST_MESSAGE_ID, UNREAD_CONVERSATIONS } from '../../src/queries/register.ts';
import { NEXT_DUE_TIME, UNDELIVERED } from '../../src/queries/scheduled-messages.ts';
import { MUTE_SETTINGS } from '../../src/queries/subscriptions.ts';
import { freshDatabase } from '../helpers/server.ts';

const MESSAGES = 100_000;
let db: Database;

test.before(async () => {
  db = await openDatabase({ databaseUrl: await freshDatabase() });
  await applyMigrations(db);
  await db.withSession((s) =>
    s.exec(`
      INSERT INTO "Realm" (id, name, subdomain) VALUES (1, 'plans', 'plans');
      INSERT INTO "User" (id, "realmId", "apiKey", "deliveryEmail", "fullName") SELECT u, 1, 'key' || u, u || '@plans.test', 'U' || u FROM generate_series(1, 3) u;
      INSERT INTO "Channel" (id, "realmId", name) SELECT c, 1, 'c' || c FROM generate_series(1, 5) c;
      INSERT INTO "DirectMessageGroup" (id, "realmId", "memberKey") VALUES (1, 1, '1,2');
      INSERT INTO "Message" (id, "realmId", "senderId", "channelId", "directGroupId", topic, content, "renderedContent")
        SELECT i, 1, 1 + i % 3, CASE WHEN i % 20 = 0 THEN NULL ELSE 1 + i % 5 END, CASE WHEN i % 20 = 0 THEN 1 END,
               CASE WHEN i % 20 = 0 THEN '' ELSE 'topic ' || i % 40 END, 'word' || i % 97 || ' common text', '<p>word' || i % 97 || ' common text</p>'
          FROM generate_series(1, ${MESSAGES}) i;
      INSERT INTO "UserMessage" ("userId", "messageId", flags)
        SELECT u, m.id, CASE WHEN m.id % 200 = 0 THEN 0 ELSE 1 END | CASE WHEN m.id % 500 = 0 THEN 2 ELSE 0 END
                      | CASE WHEN m.id % 100 = 0 THEN 8 ELSE 0 END | CASE WHEN m."directGroupId" IS NOT NULL THEN 512 ELSE 0 END
          FROM "Message" m CROSS JOIN generate_series(1, 2) u;
      INSERT INTO "Reaction" ("messageId", "userId", "emojiName", "emojiCode", "reactionType")
        SELECT id, 1 + id % 3, 'smile', '1f642', 'unicode_emoji' FROM "Message" WHERE id % 10 = 0;
      INSERT INTO "Realm" (id, name, subdomain) VALUES (2, 'other', 'other');
      INSERT INTO "Attachment" ("realmId", "ownerId", "pathId", "fileName", size)
        SELECT CASE WHEN i % 10 = 0 THEN 1 ELSE 2 END, CASE WHEN i % 1000 = 0 THEN 1 ELSE 2 END, 'p/' || i, 'f' || i, i FROM generate_series(1, 20000) i;
      INSERT INTO "Subscription" ("userId", "channelId", active, "isMuted") SELECT u, c, true, c = 5 FROM generate_series(1, 3) u CROSS JOIN generate_series(1, 5) c;
      INSERT INTO "UserTopic" ("userId", "channelId", topic, visibility) SELECT 1, c, 'topic ' || c, 1 FROM generate_series(1, 5) c;
      SELECT count_channel_traffic(NULL);`),
  );
  // As autovacuum leaves a settled history: visible to index-only scans.
  await db.withSession((s) => s.exec('VACUUM ANALYZE'));
});

test.after(async () => {
  await db?.close();
});

type PlanNode = { type: string; relation?: string; index?: string };

/**
 * The plan's nodes, flattened. `generic`: the plan PostgreSQL keeps for a prepared statement once
 * it stops planning per call (after five), made without the values; the pool's statements
 * (db.query, rawQuery outside a transaction) are prepared, so theirs is the one that runs.
 */
async function planNodes(sql: string, params: unknown[] = [], generic = false): Promise<PlanNode[]> {
  const [row] = await db.withSession(async (s) => {
    if (!generic) return s.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    await s.exec(`SET plan_cache_mode = force_generic_plan; PREPARE probe AS ${sql}`);
    try {
      return await s.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) EXECUTE probe(${params.map(() => 'NULL').join(', ')})`);
    } finally {
      await s.exec('DEALLOCATE probe; RESET plan_cache_mode');
    }
  });
  const nodes: PlanNode[] = [];
  const walk = (n: Record<string, unknown>) => {
    nodes.push({ type: n['Node Type'] as string, relation: n['Relation Name'] as string | undefined, index: n['Index Name'] as string | undefined });
    for (const child of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((row!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return nodes;
}

/** Tables that grow with history. */
const HISTORY = ['Message', 'UserMessage', 'Reaction'];

function assertIndexedNodes(nodes: PlanNode[], indexes: string[]): void {
  const scans = nodes.filter((n) => n.type === 'Seq Scan' && HISTORY.includes(n.relation ?? ''));
  assert.equal(scans, [], `no sequential scan of history: ${JSON.stringify(nodes)}`);
  assert.ok(
    nodes.some((n) => n.index !== undefined && indexes.includes(n.index)),
    `uses ${indexes.join(' or ')}: ${JSON.stringify(nodes)}`,
  );
}

/** The plan reads no history sequentially and uses one of `indexes`. */
async function assertIndexed(sql: string, params: unknown[], ...indexes: string[]): Promise<void> {
  assertIndexedNodes(await planNodes(sql, params), indexes);
}

/** assertIndexed for a statement prepared on the pool: both the plan for its values and the generic one. */
async function assertIndexedPrepared(sql: string, params: unknown[], ...indexes: string[]): Promise<void> {
  assertIndexedNodes(await planNodes(sql, params), indexes);
  assertIndexedNodes(await planNodes(sql, params, true), indexes);
}

test('register: unread, starred and recent direct messages come from the partial indexes', async () => {
  const unread = await planNodes(UNREAD_CONVERSATIONS, [1]);
  // Flags and conversations come from the unread index: no visit to UserMessage's heap or to
  // Message per unread message.
  assert.ok(
    unread.some((n) => n.type === 'Index Only Scan' && n.index === 'UserMessage_unread_conversation_idx'),
    JSON.stringify(unread),
  );
  assert.ok(
    unread.every((n) => !(n.type === 'Seq Scan' && n.relation !== 'DirectMessageGroup') && n.type !== 'Gather Merge'),
    JSON.stringify(unread),
  );
  await assertIndexed(
    `SELECT "messageId" FROM "UserMessage" WHERE "userId" = $1 AND (flags & 2) <> 0 ORDER BY "messageId" LIMIT 10000`,
    [1],
    'UserMessage_starred_idx',
  );
  await assertIndexed(
    `SELECT "messageId" FROM "UserMessage" WHERE "userId" = $1 AND (flags & 512) <> 0 ORDER BY "messageId" DESC LIMIT 1000`,
    [1],
    'UserMessage_is_private_idx',
  );
});

test('the planner knows how rare each flag is (statistics on the flag expressions)', async () => {
  // Without them it takes half of a user's rows for starred ones, and at millions of rows walks the
  // messageId index for is:starred instead of the starred partial index (2.5 s against 3 ms at 10M).
  for (const [flag, actual] of [
    ['(flags & 2) <> 0', MESSAGES / 500],
    ['(flags & 56) <> 0', MESSAGES / 100],
    ['(flags & 1) = 0', MESSAGES / 200],
  ] as const) {
    const [row] = await db.withSession((s) =>
      s.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(`EXPLAIN (FORMAT JSON) SELECT 1 FROM "UserMessage" WHERE ${flag}`),
    );
    const estimate = row!['QUERY PLAN'][0]!.Plan['Plan Rows'];
    const rows = 2 * actual;
    assert.ok(estimate > rows / 5 && estimate < rows * 5, `${flag}: ${estimate} rows expected, ${rows} there`);
  }
});

test('register: channel traffic is read from the daily counts, not Message', async () => {
  const nodes = await planNodes(
    `SELECT "channelId", sum(messages) FILTER (WHERE day > $2::date), max(day) FROM "ChannelMessageDay"
      WHERE "channelId" = ANY($1::int[]) AND day >= $3::date GROUP BY "channelId"`,
    [[1, 2, 3], '2026-01-01', '2025-06-01'],
  );
  assert.ok(
    nodes.every((n) => n.relation !== 'Message'),
    JSON.stringify(nodes),
  );
  const [{ total }] = await db.withSession((s) => s.query<{ total: number }>('SELECT sum(messages)::int AS total FROM "ChannelMessageDay"'));
  assert.is(total, MESSAGES - MESSAGES / 20, 'every channel message counted once');
});

test('GET /messages: channel + topic, the newest of a flag, first unread', async () => {
  await assertIndexed(
    `SELECT m.id, um.flags FROM "Message" m LEFT JOIN "UserMessage" um ON um."messageId" = m.id AND um."userId" = $1
      WHERE m."channelId" = $2 AND (m."channelId" IS NOT NULL AND upper(m.topic) = upper($3)) AND m.id < 10000000000000000 ORDER BY m.id DESC LIMIT 50`,
    [1, 2, 'TOPIC 1'],
    'Message_channelId_upper_topic_id_idx',
  );
  await assertIndexed(
    `SELECT m.id, um.flags FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
      WHERE um."userId" = $1 AND (um.flags & 56) <> 0 AND m.id < 10000000000000000 ORDER BY m.id DESC LIMIT 50`,
    [1],
    'UserMessage_mentioned_idx',
  );
  // Without statistics on the flag expressions the planner took half of a user's rows as starred
  // and walked the messageId index instead.
  await assertIndexed(
    `SELECT m.id, um.flags FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
      WHERE um."userId" = $1 AND (um.flags & 2) <> 0 AND m.id < 10000000000000000 ORDER BY m.id DESC LIMIT 50`,
    [1],
    'UserMessage_starred_idx',
  );
  // first_unread walks the unread index in id order, from the oldest of the user's newest 50,000
  // unread messages, and stops at the first message of the narrow.
  const channel = narrowSource({ history: true, conditions: ['m."channelId" = $2'], params: [] });
  const firstUnread = await planNodes(firstUnreadSql(channel.from, channel.where), [1, 2]);
  assert.equal(firstUnread[0]!.type, 'Limit', JSON.stringify(firstUnread));
  assert.ok(
    firstUnread.every((n) => n.type !== 'Seq Scan' && n.type !== 'Sort' && n.type !== 'Aggregate'),
    JSON.stringify(firstUnread),
  );
  assert.ok(
    firstUnread.some((n) => n.index === 'UserMessage_unread_conversation_idx'),
    JSON.stringify(firstUnread),
  );
  await assertIndexed(
    `SELECT m.id, um.flags FROM "Message" m LEFT JOIN "UserMessage" um ON um."messageId" = m.id AND um."userId" = $1
      WHERE m."channelId" = $2 AND m.id > 0 ORDER BY m.id ASC LIMIT 50`,
    [1, 3],
    'Message_channelId_id_idx',
    'Message_pkey',
  );
});

test('GET /messages: a channel from an anchor looks up the user rows per message, not the messageId index from its start', async () => {
  const nodes = await planNodes(
    `SELECT m.id, um.flags FROM "Message" m LEFT JOIN LATERAL (SELECT flags FROM "UserMessage" WHERE "userId" = $1 AND "messageId" = m.id LIMIT 1) um ON TRUE
      WHERE m."channelId" = $2 AND m.id > $3 ORDER BY m.id ASC LIMIT 25`,
    [1, 2, MESSAGES / 2],
  );
  assert.ok(
    nodes.every((n) => n.index !== 'UserMessage_messageId_idx' && n.type !== 'Seq Scan' && n.type !== 'Merge Join'),
    JSON.stringify(nodes),
  );
});

test('search: a word nobody wrote and a common word both stay on indexes', async () => {
  await assertIndexed(`SELECT id FROM "Message" WHERE "searchVector" @@ $1::tsquery LIMIT 1001`, [`'nobodywrotethis'`], 'Message_searchVector_idx');
  await assertIndexed(
    `SELECT m.id, um.flags FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
      WHERE um."userId" = $1 AND m."searchVector" @@ $2::tsquery AND m.id < 10000000000000000 ORDER BY m.id DESC LIMIT 50`,
    [1, `'common'`],
    'Message_pkey',
  );
});

test('topic list: a skip scan of the topic index, history shared or not', async () => {
  for (const shared of [true, false]) {
    const params = shared ? [2] : [2, 1];
    await assertIndexed(channelTopicsSql(shared), params, 'Message_channelId_upper_topic_id_idx');
    // Channel 2 has 8 topics of 2,500 messages: a descent and the newest message each (user 1 received them all).
    const read = await rowsRead(channelTopicsSql(shared), params, 'Message');
    assert.ok(read <= 3 * 8 + 2, `history shared: ${shared}, ${read} messages read`);
  }
});

test("marking a channel or a topic read: a batch of the user's unread rows from the unread index", async () => {
  for (const [topic, index] of [
    ['', 'Message_channelId_id_idx'],
    [' AND upper(m.topic) = upper($5)', 'Message_channelId_upper_topic_id_idx'],
  ] as const) {
    const nodes = await planNodes(
      `(SELECT um."messageId", um.flags, true AS paged FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
         WHERE um."userId" = $1 AND (um.flags & 1) = 0 AND um."messageId" > $3 AND m."channelId" = $4 AND m.id > $3${topic}
         ORDER BY um."messageId" LIMIT 2000)
       UNION ALL
       (SELECT um."messageId", um.flags, false FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
         WHERE um."userId" = $1 AND um."messageId" = ANY($2::int[]) AND m."channelId" = $4 AND m.id > $3${topic})`,
      topic ? [1, [], MESSAGES / 2, 2, 'TOPIC 2'] : [1, [], MESSAGES / 2, 2],
    );
    assert.ok(
      nodes.every((n) => n.type !== 'Seq Scan'),
      JSON.stringify(nodes),
    );
    assert.ok(nodes.some((n) => n.index === 'UserMessage_unread_conversation_idx') && nodes.some((n) => n.index === index), JSON.stringify(nodes));
  }
});

test("muting a user: a batch of the user's unread rows from that sender, from the unread index, never all of their rows", async () => {
  // EXPLAIN without ANALYZE: the statement writes. User 1 has 500 unread messages, a third from each sender.
  const nodes = await planNodes(MARK_SENDER_READ, [1, 2, MESSAGES / 2]);
  assert.ok(
    nodes.every((n) => n.type !== 'Seq Scan' && n.type !== 'Sort'),
    JSON.stringify(nodes),
  );
  assert.ok(
    nodes.some((n) => n.index === 'UserMessage_unread_conversation_idx'),
    JSON.stringify(nodes),
  );
});

test("a topic wildcard mention: the topic's senders by a skip scan, a descent each, not every message of the topic", async () => {
  // Channel 2's "topic 1" holds 2,500 messages from 3 senders.
  await assertIndexed(TOPIC_SENDERS, [2, 'TOPIC 1'], 'Message_channelId_upper_topic_senderId_idx');
  const read = await rowsRead(TOPIC_SENDERS, [2, 'TOPIC 1'], 'Message');
  assert.ok(read <= 2 * 3 + 2, `${read} messages read`);
});

test("a resolve notice: the topic's newest message by its exact name, on the topic index", async () => {
  await assertIndexed(
    `SELECT id, "senderId", content, "dateSent" FROM "Message"
      WHERE "channelId" = $1 AND upper(topic) = upper($2) AND topic = $2 ORDER BY id DESC LIMIT 1`,
    [2, 'no such topic'],
    'Message_channelId_upper_topic_id_idx',
  );
});

test("digest: the week's first message from the date index, then the channels' index from it", async () => {
  await assertIndexed(`SELECT min(id + 0) AS "firstId" FROM "Message" WHERE "dateSent" >= $1`, [new Date(Date.now() + 86_400_000)], 'Message_dateSent_idx');
  await assertIndexed(
    `SELECT "channelId", upper(topic) AS topic, count(*)::int AS count FROM "Message"
      WHERE "realmId" = $1 AND "channelId" = ANY($2::int[]) AND id >= $4 AND "dateSent" >= $3
      GROUP BY "channelId", upper(topic) ORDER BY count(*) DESC, max(id) DESC LIMIT 5`,
    [1, [1, 2], new Date(), MESSAGES - 100],
    'Message_channelId_id_idx',
    'Message_pkey',
    'Message_dateSent_idx',
  );
});

test("GET /messages: the page's messages, channels, conversations, reactions and senders by their ids", async () => {
  const page = Array.from({ length: 50 }, (_, i) => MESSAGES / 2 + i);
  await assertIndexedPrepared(LOAD_MESSAGES, [page], 'Message_pkey');
  // Each message's reactions from the reactions' message index, not the whole table.
  await assertIndexedPrepared(LOAD_MESSAGES, [page], 'Reaction_messageId_userId_emojiCode_reactionType_key');
});

test("flags: the user's rows of the listed messages, and what marking unread needs, by their keys", async () => {
  const listed = Array.from({ length: 100 }, (_, i) => MESSAGES / 2 + i);
  await assertIndexedPrepared(READ_ROWS, [1, listed], 'UserMessage_pkey');
  for (const index of ['UserMessage_pkey', 'Message_pkey']) await assertIndexedPrepared(READ_ROWS_AND_UNREAD, [1, listed, listed], index);
});

test("flags: the batch's write updates the user's rows by their key", async () => {
  const ids = Array.from({ length: 100 }, (_, i) => MESSAGES / 2 + i);
  const bits = ids.map(() => 1);
  await assertIndexedPrepared(WRITE_FLAGS, [1, ids, bits, bits.map(() => 0), ids.map(() => false)], 'UserMessage_pkey');
});

test("flags: a change alone checks and updates the user's rows by their key in one statement", async () => {
  const ids = Array.from({ length: 100 }, (_, i) => MESSAGES / 2 + i);
  await assertIndexedPrepared(SET_HELD_FLAGS, [1, ids, 2, true], 'UserMessage_pkey');
});

test("register: max_message_id is the user's newest row, and the mute settings read no history", async () => {
  const newest = await planNodes(NEWEST_MESSAGE_ID, [1]);
  assert.equal(newest[0]!.type, 'Limit', JSON.stringify(newest));
  assertIndexedNodes(newest, ['UserMessage_pkey']);
  const mutes = await planNodes(MUTE_SETTINGS, [1]);
  assert.ok(
    mutes.every((n) => !HISTORY.includes(n.relation ?? '')),
    JSON.stringify(mutes),
  );
});

/** The rows each scan of `table` returned, as EXPLAIN ANALYZE counts them (rows, not time). */
async function rowsRead(sql: string, params: unknown[], table: string): Promise<number> {
  const [row] = await db.withSession((s) =>
    s.query<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${sql}`, params),
  );
  let rows = 0;
  const walk = (n: Record<string, unknown>) => {
    if (n['Relation Name'] === table) rows += (n['Actual Rows'] as number) * (n['Actual Loops'] as number);
    for (const child of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(row!['QUERY PLAN'][0]!.Plan);
  return rows;
}

/** A page of GET /messages as fetchRange asks for it, the narrow compiled by src/queries/narrow.ts. */
async function pageStatement(narrow: NarrowTerm[], bound: string, order: 'ASC' | 'DESC'): Promise<{ sql: string; params: unknown[] }> {
  // These operators read no more of App than its database (a user's id, a conversation, search words).
  const app = { prisma: db.prisma, db } as unknown as App;
  const user = (await db.prisma.user.findUniqueOrThrow({ where: { id: 1 } })) as User;
  const compiled = await compileNarrow(app, { id: 1 } as RealmInfo, user, narrow, [user.id]);
  return { sql: rangeStatement(narrowSource(compiled), bound, order, 50), params: compiled.params };
}

const OPERATORS: NarrowTerm[][] = [
  [],
  [{ operator: 'in', operand: 'home' }],
  [{ operator: 'sender', operand: 2 }],
  [{ operator: 'dm', operand: [2] }],
  [{ operator: 'dm-including', operand: 2 }],
  [{ operator: 'is', operand: 'dm' }],
  [{ operator: 'is', operand: 'unread' }],
  [{ operator: 'is', operand: 'starred' }],
  [{ operator: 'is', operand: 'mentioned' }],
  [{ operator: 'is', operand: 'alerted' }],
  [{ operator: 'is', operand: 'resolved' }],
  [{ operator: 'has', operand: 'link' }],
  [{ operator: 'has', operand: 'reaction' }],
  [{ operator: 'id', operand: MESSAGES / 2 }],
  [{ operator: 'search', operand: 'word5' }],
  [{ operator: 'topic', operand: 'topic 7' }],
];

test("GET /messages: every operator over the user's rows, newest and from an anchor either way, reads no history sequentially", async () => {
  for (const narrow of OPERATORS) {
    for (const [bound, order] of [
      ['< 10000000000000000', 'DESC'],
      [`< ${MESSAGES / 2}`, 'DESC'],
      [`> ${MESSAGES / 2}`, 'ASC'],
    ] as const) {
      const { sql, params } = await pageStatement(narrow, bound, order);
      const scans = (await planNodes(sql, params)).filter((n) => n.type === 'Seq Scan' && HISTORY.includes(n.relation ?? ''));
      assert.equal(scans, [], `${JSON.stringify(narrow)} ${bound}`);
    }
  }
});

test('search: a word in every message is matched along the narrow, not listed from the GIN index', async () => {
  // "common" is in every message: the GIN index would list all 100,000 before the page's 50.
  const { sql, params } = await pageStatement([{ operator: 'search', operand: 'common' }], '< 10000000000000000', 'DESC');
  const ownRows = await planNodes(sql, params);
  assert.ok(
    ownRows.every((n) => n.index !== 'Message_searchVector_idx' && !(n.type === 'Seq Scan' && HISTORY.includes(n.relation ?? ''))),
    JSON.stringify(ownRows),
  );
  // In a channel whose history the user reads (as channelCondition makes it): newest first, by id.
  const compiled = await compileNarrow(
    { prisma: db.prisma, db } as unknown as App,
    { id: 1 } as RealmInfo,
    { id: 1 } as User,
    [{ operator: 'search', operand: 'common' }],
    [1],
  );
  const channel = narrowSource({ ...compiled, history: true, conditions: ['m."channelId" = 2', ...compiled.conditions] });
  const inChannel = rangeStatement(channel, '< 10000000000000000', 'DESC', 50);
  await assertIndexed(inChannel, compiled.params, 'Message_channelId_id_idx', 'Message_pkey');
  assert.ok((await planNodes(inChannel, compiled.params)).every((n) => n.index !== 'Message_searchVector_idx'));
  assert.ok((await rowsRead(inChannel, compiled.params, 'Message')) <= 50);
});

test("GET /messages from an anchor in the middle: the user's rows are read from the anchor, not from their first or newest one", async () => {
  // Bounded on m.id alone, a page after message 50,000 read the user's 50,050 rows before it.
  for (const narrow of [[], [{ operator: 'in', operand: 'home' }], [{ operator: 'sender', operand: 2 }]] as NarrowTerm[][]) {
    for (const [bound, order] of [
      [`< ${MESSAGES / 2}`, 'DESC'],
      [`> ${MESSAGES / 2}`, 'ASC'],
    ] as const) {
      const { sql, params } = await pageStatement(narrow, bound, order);
      const read = await rowsRead(sql, params, 'UserMessage');
      assert.ok(read <= 200, `${JSON.stringify(narrow)} ${bound}: ${read} rows of UserMessage for a page of 50`);
    }
  }
});

test("GET /messages: a topic without its channel from the organization's topic index, with its channel from the channel's", async () => {
  // Before, a topic nobody wrote walked every message from the newest (1.6 s at 1M messages).
  for (const topic of ['nobody wrote this', 'topic 7']) {
    const { sql, params } = await pageStatement([{ operator: 'topic', operand: topic }], '< 10000000000000000', 'DESC');
    await assertIndexed(sql, params, 'Message_realmId_upper_topic_id_idx');
    const read = await rowsRead(sql, params, 'Message');
    assert.ok(read <= 100, `${topic}: ${read} messages read for a page of 50`);
  }
  await assertIndexed(
    `SELECT m.id, um.flags FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId"
      WHERE um."userId" = $1 AND m."channelId" = $2 AND (m."channelId" IS NOT NULL AND m."realmId" = $3 AND upper(m.topic) = upper($4))
        AND m.id < 10000000000000000 AND um."messageId" < 10000000000000000 ORDER BY m.id DESC LIMIT 50`,
    [1, 3, 1, 'TOPIC 2'],
    'Message_channelId_upper_topic_id_idx',
  );
});

test("a data export request: the organization's messages counted up to the limit from the realm's index alone", async () => {
  await assertIndexed(HISTORY_UP_TO, [1, 1001], 'Message_realmId_id_idx');
  const read = await rowsRead(HISTORY_UP_TO, [1, 1001], 'Message');
  assert.ok(read <= 1001, `${read} messages read`);
});

test("scheduled messages: the next due and a user's list from the undelivered rows alone, none of the delivered ones", async () => {
  // 20,000 delivered rows (they stay, with the messages they became), 10 still to send.
  await db.withSession((s) =>
    s.exec(`INSERT INTO "ScheduledMessage" ("realmId", "senderId", "deliveryType", "channelId", content, "renderedContent", "sendingClient", "readBySender", "scheduledTimestamp", delivered)
      SELECT 1, 1 + i % 2, 1, 1, 'c', '<p>c</p>', 'test', false, now() - interval '1 day' * (1 + i % 400), i > 10 FROM generate_series(1, 20010) i;
      ANALYZE "ScheduledMessage"`),
  );
  for (const [sql, params] of [
    [NEXT_DUE, [Date.now() / 1000]],
    [NEXT_DUE_TIME, []],
    [UNDELIVERED, [1, 1]],
  ] as const) {
    await assertIndexed(sql.replace(' FOR UPDATE SKIP LOCKED', ''), [...params], 'ScheduledMessage_due_idx', 'ScheduledMessage_undelivered_idx');
    const read = await rowsRead(sql, [...params], 'ScheduledMessage');
    assert.ok(read <= 10, `${read} rows read: ${sql}`);
  }
});

test("drafts: a user's list and register's newest 1,000 in the edit-time index's order, no sort of all of them", async () => {
  await db.withSession((s) =>
    s.exec(`INSERT INTO "Draft" ("userId", type, content, "lastEditTime") SELECT 1 + i % 2, 'stream', 'd', now() - interval '1 minute' * i FROM generate_series(1, 20000) i;
      ANALYZE "Draft"`),
  );
  // As Prisma sends listDrafts and register's drafts.
  for (const sql of [
    'SELECT * FROM "Draft" WHERE "userId" = $1 ORDER BY "lastEditTime" ASC, id ASC OFFSET $2',
    'SELECT * FROM "Draft" WHERE "userId" = $1 ORDER BY "lastEditTime" DESC LIMIT $2 OFFSET $3',
  ]) {
    const params = sql.includes('LIMIT') ? [1, 1000, 0] : [1, 0];
    const nodes = await planNodes(sql, params);
    assert.ok(
      nodes.every((n) => n.type !== 'Sort' && n.type !== 'Seq Scan') && nodes.some((n) => n.index === 'Draft_userId_lastEditTime_id_idx'),
      JSON.stringify(nodes),
    );
  }
});

test('a topic move reads the moved messages from the topic index, and of the rest whether there is one', async () => {
  // Channel 3's "topic 2" holds 2,500 messages; user 1 received them all, user 3 none.
  for (const shared of [true, false]) {
    const user = shared ? [] : [1];
    await assertIndexed(visibleTopicMessagesSql(shared), [3, 'TOPIC 2', MESSAGES / 2, ...user], 'Message_channelId_upper_topic_id_idx');
    const other = [3, 'TOPIC 2', 2, 10_000_000_000_000_000, ...user];
    await assertIndexed(otherVisibleTopicMessageSql(shared), other, 'Message_channelId_upper_topic_id_idx');
    // Before, moving one message read the topic's every id (and, history protected, the user's row of each).
    const read = await rowsRead(otherVisibleTopicMessageSql(shared), other, 'Message');
    assert.ok(read <= 2, `history shared: ${shared}, ${read} messages read`);
  }
});

test("attachments: the user's uploads by their owner, the organization's space from the realm's index alone", async () => {
  // As Prisma sends them (uploads.ts): 20 of 20,000 uploads are user 1's, 2,000 their organization's.
  await assertIndexed('SELECT * FROM "Attachment" WHERE "ownerId" = $1 ORDER BY id OFFSET $2', [1, 0], 'Attachment_ownerId_idx');
  const space = await planNodes('SELECT SUM(size) FROM (SELECT size FROM "Attachment" WHERE "realmId" = $1 OFFSET $2) sub', [1, 0]);
  assert.ok(
    space.some((n) => n.type === 'Index Only Scan' && n.index === 'Attachment_realmId_size_idx'),
    JSON.stringify(space),
  );
});

test('a direct message from a user who may not start conversations: whether the conversation has a message, from its index', async () => {
  for (const key of ['1,2', '1,3']) {
    await assertIndexed(CONVERSATION_EXISTS, [1, key], 'Message_directGroupId_id_idx');
    assert.ok((await rowsRead(CONVERSATION_EXISTS, [1, key], 'Message')) <= 1, key);
  }
});

test.run();
