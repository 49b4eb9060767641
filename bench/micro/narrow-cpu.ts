// CPU per GET /messages narrow on a kept history database (bench/scenarios/history.ts with
// --reuse-seeded): the server process and the database's PostgreSQL backends, from /proc/<pid>/stat
// around N requests of each kind made one after another by the bench users in turn. ROOTS names
// checkouts whose built servers run side by side on the database; rounds alternate between them
// (A B A B) kind by kind, so the machine's load falls on both alike.
// Usage: DB=narrows_10000000 N=200 ROUNDS=2 ROOTS=/tmp/base,. npx tsx bench/micro/narrow-cpu.ts
// KINDS=unread,starred: only the requests whose name holds one of these words.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { SeedReport } from '../lib/history-seed.ts';
import { BENCH_SERVER_ENV, startServing } from '../lib/self-server.ts';
import { basicAuth } from '../lib/zulip-api.ts';
import { REQUESTS } from '../scenarios/history.ts';

const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = process.env.DB ?? 'narrows_10000';
const N = Number(process.env.N ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const roots = (process.env.ROOTS ?? '.').split(',').map((r) => resolve(r));
const only = process.env.KINDS?.split(',');
const url = new URL(server);
url.pathname = `/${name}`;

const db = new pg.Client({ connectionString: url.toString() });
await db.connect();
const {
  rows: [row],
} = await db.query<{ comment: string | null }>(`SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`, [name]);
if (!row?.comment) throw new Error(`${name} holds no seed report: seed it with the history bench's --reuse-seeded`);
const users = (JSON.parse(row.comment) as SeedReport).benchUsers;
const kinds = REQUESTS.filter((r) => r.name.startsWith('messages:') || r.name.startsWith('search:')).filter(
  (r) => !only || only.some((word) => r.name.includes(word)),
);

/** utime + stime of a process in ms (clock ticks of 10 ms); 0 for one gone. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The CPU so far of the database's backends but this script's own, by pid. */
async function backends(): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  return new Map(rows.map((r) => [r.pid, cpuMs(r.pid)]));
}

const dirs: string[] = [];
const servers = [];
for (const root of roots) {
  const dir = await mkdtemp(join(tmpdir(), 'narrow-cpu-'));
  dirs.push(dir);
  const env = { ...BENCH_SERVER_ENV, DATABASE_URL: url.toString(), CLUSTER: 'off', DATA_DIR: dir };
  servers.push({ root, ...(await startServing(root, env, root)) });
}
try {
  const results = new Map<string, string[]>();
  for (const kind of kinds) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of servers) {
        const send = async (i: number) => {
          const u = users[i % users.length]!;
          const req = kind.request(u);
          const res = await fetch(`${s.url}${req.path}`, { headers: { Authorization: basicAuth(u), 'Accept-Encoding': 'identity' } });
          if (res.status !== 200) throw new Error(`${kind.name}: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        };
        for (let i = 0; i < 20; i++) await send(i);
        const pg0 = await backends();
        const server0 = cpuMs(s.process.pid);
        const t0 = performance.now();
        for (let i = 0; i < N; i++) await send(i);
        const wall = (performance.now() - t0) / N;
        const serverMs = (cpuMs(s.process.pid) - server0) / N;
        let pgMs = 0;
        for (const [pid, now] of await backends()) pgMs += now - (pg0.get(pid) ?? 0);
        pgMs /= N;
        const line = `${serverMs.toFixed(2)} + ${pgMs.toFixed(2)} = ${(serverMs + pgMs).toFixed(2)} ms (wall ${wall.toFixed(1)})`;
        results.set(`${kind.name}\t${s.root}`, [...(results.get(`${kind.name}\t${s.root}`) ?? []), line]);
        console.log(`${kind.name.padEnd(40)} ${s.root.padEnd(30)} ${line}`);
      }
    }
  }
  console.log('\nCPU per request, server + PostgreSQL, by round:');
  for (const [key, lines] of results) console.log(`${key.replace('\t', '  ')}\n  ${lines.join('\n  ')}`);
} finally {
  for (const s of servers) await s.process.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await db.end();
}
