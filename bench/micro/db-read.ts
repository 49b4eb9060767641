// What one simple read costs the server's process by each way it can be made: Prisma's model
// API, Prisma's `$queryRaw` (tagged template) and `$queryRawUnsafe`, and the project's `rawQuery`
// (db/transaction.ts: straight on the adapter's pg pool outside a transaction). Two reads: a user
// row by id, and the subscriptions of a user (here 10 rows). Rounds of every way interleave, so the
// machine's load falls on all of them alike; process.cpuUsage() of the process divided by the
// calls. PostgreSQL's own CPU is another process and not counted.
//   npx tsx bench/micro/db-read.ts                 all ways, N calls each (N=2000), writes bench/results/
//   npx tsx bench/micro/db-read.ts <way> <n>       one way n times (for callgrind: scripts/callgrind-step.sh)
import { mkdirSync, writeFileSync } from 'node:fs';
import { rawQuery } from '../../src/db/transaction.ts';
import { endTestRun, newRealm, startTestServer } from '../../test/helpers/server.ts';

const server = await startTestServer({});
const realm = await newRealm(server);
const user = await realm.addUser();
for (let i = 0; i < 10; i++) await user.client.post('/users/me/subscriptions', { subscriptions: [{ name: `c${i}` }] });
const { app } = server;
const prisma = app.db.prisma;
const userId = user.id;

const USER_SQL = 'SELECT id, "realmId", "fullName", "deliveryEmail", role, "isActive", "isBot" FROM "User" WHERE id = $1';
const SUBS_SQL = 'SELECT "channelId", color, "isMuted", "pinToTop" FROM "Subscription" WHERE "userId" = $1 AND active';
const userSelect = { id: true, realmId: true, fullName: true, deliveryEmail: true, role: true, isActive: true, isBot: true } as const;
const subsSelect = { channelId: true, color: true, isMuted: true, pinToTop: true } as const;

const ways: Record<string, () => Promise<unknown[] | unknown>> = {
  'user/model': () => prisma.user.findUnique({ where: { id: userId }, select: userSelect }),
  'user/queryRaw': () => prisma.$queryRaw`SELECT id, "realmId", "fullName", "deliveryEmail", role, "isActive", "isBot" FROM "User" WHERE id = ${userId}`,
  'user/queryRawUnsafe': () => prisma.$queryRawUnsafe(USER_SQL, userId),
  'user/rawQuery': () => rawQuery(app, USER_SQL, userId),
  'subs/model': () => prisma.subscription.findMany({ where: { userId, active: true }, select: subsSelect }),
  'subs/queryRaw': () => prisma.$queryRaw`SELECT "channelId", color, "isMuted", "pinToTop" FROM "Subscription" WHERE "userId" = ${userId} AND active`,
  'subs/queryRawUnsafe': () => prisma.$queryRawUnsafe(SUBS_SQL, userId),
  'subs/rawQuery': () => rawQuery(app, SUBS_SQL, userId),
};

async function check(): Promise<void> {
  for (const [name, run] of Object.entries(ways)) {
    const r = await run();
    const rows = Array.isArray(r) ? r.length : r ? 1 : 0;
    if (rows !== (name.startsWith('user') ? 1 : 10)) throw new Error(`${name}: ${rows} rows`);
  }
}

async function times(run: () => Promise<unknown>, n: number): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await run();
  const c = process.cpuUsage(c0);
  return c.user + c.system;
}

await check();
const [way, count] = process.argv.slice(2);
if (way) {
  const run = ways[way];
  if (!run) throw new Error(`way: one of ${Object.keys(ways).join(', ')}`);
  // Warm in both the measured and the empty run, so the difference is the calls alone.
  for (let i = 0; i < 200; i++) await run();
  await times(run, Number(count ?? 1000));
} else {
  const N = Number(process.env.N ?? 2000);
  const ROUNDS = 5;
  const micros: Record<string, number> = Object.fromEntries(Object.keys(ways).map((k) => [k, 0]));
  for (const run of Object.values(ways)) await times(run, 200);
  for (let r = 0; r < ROUNDS; r++) for (const [name, run] of Object.entries(ways)) micros[name] += await times(run, N / ROUNDS);
  const perCall = Object.fromEntries(Object.entries(micros).map(([k, v]) => [k, v / N]));
  const lines = Object.entries(perCall).map(([name, us]) => {
    const base = perCall[`${name.split('/')[0]}/rawQuery`];
    return `${name.padEnd(20)} ${us.toFixed(1).padStart(7)} µs CPU/call  ${(us / base).toFixed(2)}x rawQuery`;
  });
  console.log(lines.join('\n'));
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/db-read-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, `${JSON.stringify({ bench: 'db-read', calls: N, microsecondsCpuPerCall: perCall }, null, 2)}\n`);
  console.log(`written ${file}`);
}
await server.stop();
await endTestRun();
process.exit(0);
