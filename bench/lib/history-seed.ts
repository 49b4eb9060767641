// Seeds an organization's history straight into PostgreSQL (INSERT ... SELECT over
// generate_series, never the API), so that 10 million messages load in minutes: the history
// scenario measures reads against it. The organization, one user and one channel are made by the
// server first (CLI init, then the API); every other user, channel and subscription is a copy of
// those rows with new names, so the seed keeps up with whatever columns the schema gains.
//
// Shape (docs/benchmarks.md, History):
// - USERS people, each subscribed to #general and 4 other channels; CHANNELS channels.
// - Channel traffic is skewed (channel k gets a share growing like sqrt), topics too (a few hot
//   ones, a long tail); 5 % of messages are direct messages (1:1, group DMs).
// - BENCH_USERS users hold UserMessage rows: the first ("heavy") follows the 20 busiest channels,
//   the others 20 channels each. Everyone else joined their channels after the history was written
//   (no rows), so they cost the seed nothing and the reads measured nothing either.
// - Of each bench user's rows: 0.5 % unread, 0.1 % starred, 1 % mentioned, 0.5 % wildcard
//   mentioned, 0.1 % with an alert word; 1 % of messages carry a reaction. Rows of direct
//   messages carry the internal is_private bit, and channel traffic is counted at the end, as the
//   server does for what it writes (docs/operations.md, "Upgrading a database with a long history").
// Bulk loading drops the two tables' secondary indexes and builds them again afterwards, then
// VACUUM ANALYZE, as a database that has lived with its history would be.
import pg from 'pg';
import { FLAG_BITS, IS_PRIVATE } from '../../src/domain/message-flags.ts';

export const USERS = 10_000;
export const CHANNELS = 200;
export const BENCH_USERS = 20;
const CHANNELS_PER_BENCH_USER = 20;
const DM_SHARE = 0.05;
/** Messages are dated evenly over this span, the newest now. */
const HISTORY_DAYS = 3 * 365;
const BATCH = 500_000;

/** Words messages are made of; `NEVER_WRITTEN` is not among them. */
const WORDS = (
  'the be to of and a in that have it for not on with he as you do at this but his by from they we say her she or an will my one all would there ' +
  'their what so up out if about who get which go me when make can like time no just him know take people into year your good some could them see ' +
  'other than then now look only come its over think also back after use two how our work first well way even new want because any these give day ' +
  'most us deploy release build test server client database query index message channel topic stream user admin review merge branch commit ' +
  'bug fix issue ticket customer meeting lunch coffee weekend holiday design mockup feedback launch plan roadmap sprint standup retro incident ' +
  'outage latency timeout error warning metrics dashboard alert pager oncall backup restore migration schema table column row cache queue worker ' +
  'thread process memory cpu disk network socket request response header cookie session token password login logout signup invite email ' +
  'notification mobile desktop browser android iphone tablet laptop keyboard screen window button menu dialog form field label icon image photo ' +
  'video audio call voice chat emoji reaction thanks please sorry great awesome nice cool interesting weird strange broken working running ' +
  'stopped started finished pending blocked waiting ready done shipped tomorrow yesterday today morning afternoon evening night week month quarter ' +
  'budget invoice contract sales marketing support engineering product finance legal office remote travel conference talk slides paper draft ' +
  'document spec proposal decision question answer idea suggestion problem solution reason example detail summary update status progress'
).split(' ');
export const NEVER_WRITTEN = 'xylophonequartz';
export const COMMON_WORD = 'deploy';

export interface SeedTemplates {
  realmId: number;
  /** A member made through the API: the copies take its row. */
  userId: number;
  /** A channel made through the API, and the template user's subscription to it. */
  channelId: number;
  subscriptionId: number;
}

export interface BenchUser {
  id: number;
  email: string;
  apiKey: string;
  /** A channel the user follows, one of its hot topics, and a message id in its middle. */
  channelId: number;
  channelName: string;
  topic: string;
  middleMessageId: number;
  /** Another member of one of the user's 1:1 conversations. */
  dmPartnerEmail: string;
}

export interface SeedReport {
  messages: number;
  userMessages: number;
  benchUsers: BenchUser[];
  /** Rows of the heaviest bench user. */
  heaviestRows: number;
  seconds: { setup: number; messages: number; userMessages: number; indexes: number; vacuum: number };
}

const log = (line: string) => process.stderr.write(`history seed: ${line}\n`);

/** Column names of a table, in order, quoted. */
async function columns(db: pg.Client, table: string): Promise<string[]> {
  const { rows } = await db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.column_name);
}

/** INSERTs copies of row `templateId` of `table`, one per value of `g` in `from`, with `overrides` (SQL over g). */
async function cloneRows(db: pg.Client, table: string, templateId: number, from: string, overrides: Record<string, string>): Promise<void> {
  const cols = (await columns(db, table)).filter((c) => c !== 'id');
  const list = cols.map((c) => `"${c}"`).join(', ');
  const values = cols.map((c) => overrides[c] ?? `t."${c}"`).join(', ');
  await db.query(`INSERT INTO "${table}" (${list}) SELECT ${values} FROM "${table}" t, ${from} WHERE t.id = ${templateId} ON CONFLICT DO NOTHING`);
}

interface IndexDef {
  name: string;
  def: string;
}

/** Secondary indexes of `table` (not those behind a primary key or unique constraint). */
async function secondaryIndexes(db: pg.Client, table: string): Promise<IndexDef[]> {
  const { rows } = await db.query<{ name: string; def: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      WHERE t.relname = $1 AND t.relnamespace = current_schema()::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
    [table],
  );
  return rows;
}

const elapsed = (t0: number) => (performance.now() - t0) / 1000;

export async function seedHistory(databaseUrl: string, templates: SeedTemplates, messageCount: number): Promise<SeedReport> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(`SET synchronous_commit = off; SET maintenance_work_mem = '512MB'; SET work_mem = '64MB'`);
    return await seed(db, templates, messageCount);
  } finally {
    await db.end();
  }
}

async function seed(db: pg.Client, t: SeedTemplates, messageCount: number): Promise<SeedReport> {
  const seconds = { setup: 0, messages: 0, userMessages: 0, indexes: 0, vacuum: 0 };
  let t0 = performance.now();
  await db.query('SELECT setseed(0.25)');

  // People: user1..userN, each a copy of the template member with its own address and API key.
  await cloneRows(db, 'User', t.userId, `generate_series(1, ${USERS}) g`, {
    deliveryEmail: `'user' || g || '@bench.example.com'`,
    fullName: `'Bench User ' || g`,
    apiKey: `md5('history-bench:' || g || ':' || random())`,
    passwordHash: 'NULL',
  });
  const users = (
    await db.query<{ id: number; deliveryEmail: string; apiKey: string }>(
      `SELECT id, "deliveryEmail", "apiKey" FROM "User" WHERE "realmId" = $1 AND "deliveryEmail" LIKE 'user%@bench.example.com' ORDER BY id`,
      [t.realmId],
    )
  ).rows;
  const bench = users.slice(0, BENCH_USERS);

  // Channels: the template is "general"; the others are copies, channel-1 .. channel-199.
  await db.query(`UPDATE "Channel" SET name = 'general' WHERE id = $1`, [t.channelId]);
  await cloneRows(db, 'Channel', t.channelId, `generate_series(1, ${CHANNELS - 1}) g`, { name: `'channel-' || g`, description: `'Channel number ' || g` });
  const channelIds = (
    await db.query<{ id: number }>(`SELECT id FROM "Channel" WHERE "realmId" = $1 AND (id = $2 OR name LIKE 'channel-%') ORDER BY id`, [t.realmId, t.channelId])
  ).rows.map((r) => r.id);
  // Busiest first: channel index k (0-based) gets traffic ~ sqrt((k+1)/C) - sqrt(k/C).
  await db.query(`CREATE TEMP TABLE seed_channel (k int PRIMARY KEY, id int NOT NULL)`);
  await db.query(`INSERT INTO seed_channel SELECT k - 1, id FROM unnest($1::int[]) WITH ORDINALITY AS c(id, k)`, [channelIds]);

  // Subscriptions: everyone in #general and 4 channels spread by user number; bench users in 20.
  await db.query(`CREATE TEMP TABLE seed_user (n int PRIMARY KEY, id int NOT NULL)`);
  await db.query(`INSERT INTO seed_user SELECT n, id FROM unnest($1::int[]) WITH ORDINALITY AS u(id, n)`, [users.map((u) => u.id)]);
  await db.query(`CREATE TEMP TABLE seed_sub (user_id int, channel_id int, PRIMARY KEY (user_id, channel_id))`);
  await db.query(`INSERT INTO seed_sub SELECT DISTINCT u.id, c.id FROM seed_user u CROSS JOIN generate_series(1, 4) j
                    JOIN seed_channel c ON c.k = 0 OR c.k = 1 + (u.n * 37 + j * 53) % ${CHANNELS - 1} ON CONFLICT DO NOTHING`);
  await db.query(`INSERT INTO seed_sub SELECT DISTINCT u.id, c.id FROM seed_user u CROSS JOIN generate_series(0, ${CHANNELS_PER_BENCH_USER - 1}) j
                    JOIN seed_channel c ON (u.n = 1 AND c.k < ${CHANNELS_PER_BENCH_USER}) OR (u.n BETWEEN 2 AND ${BENCH_USERS} AND c.k = (u.n * 7 + j * 11) % ${CHANNELS})
                  ON CONFLICT DO NOTHING`);
  await cloneRows(db, 'Subscription', t.subscriptionId, 'seed_sub s', {
    userId: 's.user_id',
    channelId: 's.channel_id',
    color: `(ARRAY['#76ce90','#fae589','#a6c7e5','#e79ab5','#bfd56f','#f4ae55','#b0a5fd','#addfe5'])[1 + (s.channel_id % 8)]`,
  });
  // The channel copies took the template's subscriber count; the subscriptions' trigger added to it.
  await db.query('SELECT recount_channel_subscribers($1)', [t.realmId]);

  // Direct-message conversations: each bench user with 30 people (1:1) and in 3 groups of 3-4.
  await db.query(`CREATE TEMP TABLE seed_dm (n serial PRIMARY KEY, members int[] NOT NULL)`);
  await db.query(`INSERT INTO seed_dm (members)
                  SELECT DISTINCT ARRAY(SELECT DISTINCT x FROM unnest(m) x ORDER BY x) FROM (
                    SELECT ARRAY[b.id, (SELECT id FROM seed_user WHERE n = 1 + (b.n * 131 + j * 977) % ${USERS})] AS m
                      FROM seed_user b CROSS JOIN generate_series(1, 30) j WHERE b.n <= ${BENCH_USERS}
                    UNION ALL
                    SELECT ARRAY[b.id] || ARRAY(SELECT id FROM seed_user WHERE n IN (1 + (b.n * 17 + j * 389) % ${USERS}, 1 + (b.n * 29 + j * 613) % ${USERS}, 1 + (b.n + j) % ${BENCH_USERS}))
                      FROM seed_user b CROSS JOIN generate_series(1, 3) j WHERE b.n <= ${BENCH_USERS}) pairs`);
  await db.query(`INSERT INTO "DirectMessageGroup" ("realmId", "memberKey") SELECT $1, array_to_string(members, ',') FROM seed_dm ON CONFLICT DO NOTHING`, [
    t.realmId,
  ]);
  await db.query(`ALTER TABLE seed_dm ADD COLUMN group_id int`);
  await db.query(
    `UPDATE seed_dm d SET group_id = g.id FROM "DirectMessageGroup" g WHERE g."realmId" = $1 AND g."memberKey" = array_to_string(d.members, ',')`,
    [t.realmId],
  );
  const dmCount = Number((await db.query('SELECT count(*) AS n FROM seed_dm')).rows[0].n);

  // Sentences and topic names to draw from: skewed towards the first words, like language.
  await db.query(`CREATE TEMP TABLE seed_text (n int PRIMARY KEY, body text NOT NULL)`);
  await db.query(
    `INSERT INTO seed_text SELECT s, (SELECT string_agg(($1::text[])[1 + floor(random() ^ 2 * $2)::int], ' ') FROM generate_series(1, 4 + (s * 7) % 22) w)
                  FROM generate_series(1, 20000) s`,
    [WORDS, WORDS.length],
  );
  await db.query(`CREATE TEMP TABLE seed_topic (n int PRIMARY KEY, name text NOT NULL)`);
  await db.query(
    `INSERT INTO seed_topic SELECT s, ($1::text[])[1 + (s * 31) % $2] || ' ' || ($1::text[])[1 + (s * 97 + 41) % $2] FROM generate_series(0, 299) s`,
    [WORDS.slice(100), WORDS.length - 100],
  );
  seconds.setup = elapsed(t0);
  log(`${USERS} users, ${CHANNELS} channels, ${dmCount} DM conversations in ${seconds.setup.toFixed(1)} s`);

  // The two big tables load without their secondary indexes, which are built again at the end.
  const dropped: IndexDef[] = [];
  for (const table of ['Message', 'UserMessage', 'Reaction']) {
    for (const index of await secondaryIndexes(db, table)) {
      await db.query(`DROP INDEX "${index.name}"`);
      dropped.push(index);
    }
  }

  // Messages, in id order, dated evenly over the history.
  t0 = performance.now();
  const base = Number((await db.query(`SELECT coalesce(max(id), 0) AS m FROM "Message"`)).rows[0].m);
  for (let lo = 1; lo <= messageCount; lo += BATCH) {
    const hi = Math.min(messageCount, lo + BATCH - 1);
    await db.query(
      `
      INSERT INTO "Message" ("realmId", "senderId", "channelId", "directGroupId", topic, content, "renderedContent", "dateSent")
      SELECT $1,
             CASE WHEN r.dm THEN d.members[1 + r.g % cardinality(d.members)] ELSE u.id END,
             CASE WHEN r.dm THEN NULL ELSE c.id END,
             CASE WHEN r.dm THEN d.group_id END,
             CASE WHEN r.dm THEN '' ELSE tp.name END,
             x.body, '<p>' || x.body || '</p>',
             now() - (($2::bigint - g) * (interval '${HISTORY_DAYS} days' / $2::bigint))
        FROM (SELECT g, random() < ${DM_SHARE} AS dm, random() AS rc, random() AS rt, random() AS ru, random() AS rx, random() AS rd FROM generate_series($3::bigint, $4::bigint) g) r
        JOIN seed_channel c ON c.k = least(${CHANNELS - 1}, floor(r.rc ^ 2 * ${CHANNELS})::int)
        JOIN seed_topic tp ON tp.n = floor(r.rt ^ 3 * 300)::int
        JOIN seed_user u ON u.n = 1 + floor(r.ru * ${USERS})::int
        JOIN seed_text x ON x.n = 1 + floor(r.rx * 20000)::int
        JOIN seed_dm d ON d.n = 1 + floor(r.rd * ${dmCount})::int
       ORDER BY g`,
      [t.realmId, messageCount, lo, hi],
    );
    log(`messages ${hi.toLocaleString('en')}/${messageCount.toLocaleString('en')} (${elapsed(t0).toFixed(0)} s)`);
  }
  seconds.messages = elapsed(t0);

  // UserMessage rows: every bench user's channel messages, every member's direct messages.
  t0 = performance.now();
  const flags = `(CASE WHEN random() < 0.005 THEN 0 ELSE ${FLAG_BITS.read} END)
               | (CASE WHEN random() < 0.001 THEN ${FLAG_BITS.starred} ELSE 0 END)
               | (CASE WHEN random() < 0.01 THEN ${FLAG_BITS.mentioned} ELSE 0 END)
               | (CASE WHEN random() < 0.005 THEN ${FLAG_BITS.stream_wildcard_mentioned} ELSE 0 END)
               | (CASE WHEN random() < 0.001 THEN ${FLAG_BITS.has_alert_word} ELSE 0 END)`;
  await db.query(
    `CREATE TEMP TABLE seed_bench_sub AS SELECT s.user_id, s.channel_id FROM seed_sub s JOIN seed_user u ON u.id = s.user_id AND u.n <= ${BENCH_USERS}`,
  );
  for (let lo = base + 1; lo <= base + messageCount; lo += BATCH) {
    const hi = Math.min(base + messageCount, lo + BATCH - 1);
    await db.query(
      `INSERT INTO "UserMessage" ("userId", "messageId", flags)
                    SELECT s.user_id, m.id, ${flags} FROM "Message" m JOIN seed_bench_sub s ON s.channel_id = m."channelId" WHERE m.id BETWEEN $1 AND $2
                    UNION ALL
                    SELECT member, m.id, ${flags} | ${IS_PRIVATE} FROM "Message" m JOIN seed_dm d ON d.group_id = m."directGroupId" CROSS JOIN unnest(d.members) member
                     WHERE m.id BETWEEN $1 AND $2 AND m."directGroupId" IS NOT NULL`,
      [lo, hi],
    );
    await db.query(
      `INSERT INTO "Reaction" ("messageId", "userId", "emojiName", "emojiCode", "reactionType")
                    SELECT m.id, m."senderId", 'thumbs_up', '1f44d', 'unicode_emoji' FROM "Message" m WHERE m.id BETWEEN $1 AND $2 AND random() < 0.01`,
      [lo, hi],
    );
    log(`recipients of messages up to ${(hi - base).toLocaleString('en')} (${elapsed(t0).toFixed(0)} s)`);
  }
  seconds.userMessages = elapsed(t0);

  t0 = performance.now();
  for (const index of dropped) {
    await db.query(index.def);
    log(`index ${index.name} (${elapsed(t0).toFixed(0)} s)`);
  }
  // What the server's upkeep job would have counted as the messages came (stream_weekly_traffic).
  await db.query('SELECT count_channel_traffic(NULL)');
  await db.query(
    `UPDATE "Channel" c SET "firstMessageId" = f.first FROM (SELECT "channelId", min(id) AS first FROM "Message" WHERE "channelId" IS NOT NULL GROUP BY "channelId") f WHERE f."channelId" = c.id`,
  );
  seconds.indexes = elapsed(t0);

  t0 = performance.now();
  await db.query('VACUUM ANALYZE');
  seconds.vacuum = elapsed(t0);

  return { ...(await describe(db, t, bench)), seconds };
}

/** What the measurement needs of each bench user, read back from the seeded tables. */
async function describe(db: pg.Client, t: SeedTemplates, bench: { id: number; deliveryEmail: string; apiKey: string }[]): Promise<Omit<SeedReport, 'seconds'>> {
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);
  const benchUsers: BenchUser[] = [];
  for (const u of bench) {
    const {
      rows: [channel],
    } = await db.query<{ id: number; name: string }>(
      `SELECT c.id, c.name FROM seed_bench_sub s JOIN "Channel" c ON c.id = s.channel_id WHERE s.user_id = $1 ORDER BY c.id DESC LIMIT 1`,
      [u.id],
    );
    const {
      rows: [hot],
    } = await db.query<{ topic: string; middle: number }>(
      `SELECT topic, (SELECT id FROM "Message" WHERE "channelId" = $1 ORDER BY id OFFSET (SELECT count(*) / 2 FROM "Message" WHERE "channelId" = $1) LIMIT 1) AS middle
         FROM (SELECT topic FROM "Message" WHERE "channelId" = $1 ORDER BY id DESC LIMIT 1000) recent GROUP BY topic ORDER BY count(*) DESC LIMIT 1`,
      [channel!.id],
    );
    const {
      rows: [partner],
    } = await db.query<{ email: string }>(
      `SELECT p."deliveryEmail" AS email FROM seed_dm d JOIN "User" p ON p.id = ANY (d.members) AND p.id <> $1 WHERE $1 = ANY (d.members) AND cardinality(d.members) = 2 ORDER BY d.n LIMIT 1`,
      [u.id],
    );
    benchUsers.push({
      id: u.id,
      email: u.deliveryEmail,
      apiKey: u.apiKey,
      channelId: channel!.id,
      channelName: channel!.name,
      topic: hot?.topic ?? '',
      middleMessageId: hot?.middle ?? 0,
      dmPartnerEmail: partner!.email,
    });
  }
  return {
    messages: await count(`SELECT count(*) AS n FROM "Message" WHERE "realmId" = $1`, [t.realmId]),
    userMessages: await count(`SELECT count(*) AS n FROM "UserMessage"`),
    heaviestRows: await count(`SELECT count(*) AS n FROM "UserMessage" WHERE "userId" = $1`, [bench[0]!.id]),
    benchUsers,
  };
}
