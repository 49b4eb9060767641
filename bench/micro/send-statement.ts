// What PostgreSQL spends on the message insert (src/actions/messages-store.ts), without the server:
// the statement as the server prepares it, B channel messages a statement, each to the same R
// recipients, run one after another on one connection per plan cache mode; the backend's CPU
// (/proc/<pid>/stat) divided by the messages. Rounds of each mode interleave, so the machine's load
// falls on all alike. It needs a database the send bench filled (an organization, its users
// subscribed to 100 channels), such as a server's DATA_DIR after
// `npm run bench -- send --url ... --channels 100`:
//   SEND_DB_URL='postgresql://postgres@localhost/postgres?host=DATA_DIR/postgres' npx tsx bench/micro/send-statement.ts
// Settings (environment): B messages a statement (4), R recipients (32), N statements a round (150),
// ROUNDS (5), MODES plan_cache_mode values (auto,force_generic_plan). It inserts real messages.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { INSERT_MESSAGES } from '../../src/actions/messages-store.ts';

const url = process.env.SEND_DB_URL ?? process.env.DATABASE_URL;
if (!url) throw new Error('SEND_DB_URL: the database of a server the send bench filled');
const setting = (name: string, value: number) => Number(process.env[name] ?? value);
const [perStatement, recipientCount, statements, rounds] = [setting('B', 4), setting('R', 32), setting('N', 150), setting('ROUNDS', 5)];
const modes = (process.env.MODES ?? 'auto,force_generic_plan').split(',');
// Without push relay, outgoing webhooks or a cluster's outbox: the server's common form.
const statement = INSERT_MESSAGES[0]![0]![0]!;

const setup = new pg.Client({ connectionString: url });
await setup.connect();
const [realm] = (await setup.query<{ id: number }>('SELECT id FROM "Realm" ORDER BY id LIMIT 1')).rows;
const users = (
  await setup.query<{ id: number }>('SELECT id FROM "User" WHERE "realmId" = $1 AND "isActive" AND NOT "isBot" ORDER BY id LIMIT $2', [
    realm!.id,
    recipientCount,
  ])
).rows.map((u) => u.id);
const channels = (await setup.query<{ id: number }>('SELECT id FROM "Channel" WHERE "realmId" = $1 ORDER BY id LIMIT 100', [realm!.id])).rows.map((c) => c.id);
await setup.end();
if (users.length < recipientCount || channels.length === 0) throw new Error(`the database has ${users.length} users and ${channels.length} channels`);

let sent = 0;
/** The statement's parameters for B messages, each from the next user to a random channel, unread by all but its sender. */
function parameters(): unknown[] {
  const senders = Array.from({ length: perStatement }, () => users[sent++ % users.length]!);
  const each = <T>(value: T) => senders.map(() => value);
  const recipients = senders.flatMap((sender, i) => users.map((u) => [i + 1, u, u === sender ? 1 : 0] as const));
  return [
    perStatement,
    each(realm!.id),
    senders,
    senders.map(() => channels[Math.floor(Math.random() * channels.length)]!),
    each(null),
    each('bench'),
    senders.map((_, i) => `bench statement ${sent + i}`),
    senders.map((_, i) => `<p>bench statement ${sent + i}</p>`),
    each('bench'),
    each(false),
    each(false),
    each(false),
    recipients.map((r) => r[0]),
    recipients.map((r) => r[1]),
    recipients.map((r) => r[2]),
  ];
}

const sessions = await Promise.all(
  modes.map(async (mode) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`SET plan_cache_mode = ${mode}`);
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
    return { client, mode, pid, perMessage: [] as number[] };
  }),
);
/** The process's user and system CPU so far, in µs (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

for (let round = 0; round < rounds; round++) {
  for (const session of sessions) {
    const before = cpuMicros(session.pid);
    for (let i = 0; i < statements; i++) await session.client.query({ name: 'insert', text: statement, values: parameters() });
    session.perMessage.push((cpuMicros(session.pid) - before) / (statements * perStatement));
  }
}
for (const { client, mode, perMessage } of sessions) {
  const [plans] = (
    await client.query<{ generic_plans: number; custom_plans: number }>("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'insert'")
  ).rows;
  const sorted = perMessage.slice(1).sort((a, b) => a - b);
  console.log(
    `${mode.padEnd(20)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} µs backend CPU per message (median of ${sorted.length} rounds after one; ` +
      `all: ${perMessage.map((v) => v.toFixed(0)).join(' ')}), plans: ${plans!.generic_plans} generic, ${plans!.custom_plans} custom`,
  );
  await client.end();
}
