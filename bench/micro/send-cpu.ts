// CPU per sent message, split into the server process, its PostgreSQL and the load generator: the
// server as the send bench starts it (`npm start`'s build on a fresh embedded PostgreSQL), 32 users
// subscribed to 100 channels, then 32 senders at once post W messages to warm up and N measured
// ones round robin over the channels, as `npm run bench -- send --channels 100 --senders 32` does.
// utime + stime from /proc/<pid>/stat around the N: the server's process, every process of its
// PostgreSQL (backends, WAL writer, checkpointer), and this process. CPU per message moves less
// with the machine's load than the bench's rate does.
//   N=6000 npx tsx bench/micro/send-cpu.ts
// Settings (environment): N (6000), W (1500), SENDERS (32), CHANNELS (100), RUNS (1: servers
// started one after another, each measured). PROFILE=DIR: the server runs with --cpu-prof into DIR
// and the script prints the profile's self time by function over the measured window only (the
// profile's clock and process.hrtime are both the monotonic clock). BENCH_PG_STAT_STATEMENTS=1:
// PostgreSQL's statement costs over the window from pg_stat_statements.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { HttpConnection, parseEndpoint } from '../lib/http-client.ts';
import { descendants } from '../lib/proc-sampler.ts';
import { startSelfServer } from '../lib/self-server.ts';
import { ZulipTarget } from '../lib/zulip-target.ts';

const setting = (name: string, value: number) => Number(process.env[name] ?? value);
const [N, W, SENDERS, CHANNELS, RUNS] = [setting('N', 6000), setting('W', 1500), setting('SENDERS', 32), setting('CHANNELS', 100), setting('RUNS', 1)];
const profileDir = process.env.PROFILE;
if (profileDir) process.env.BENCH_SERVER_FLAGS = `${process.env.BENCH_SERVER_FLAGS ?? ''} --cpu-prof --cpu-prof-dir=${profileDir}`;
const statementStats = process.env.BENCH_PG_STAT_STATEMENTS === '1';

/** utime and stime of a process in ms (clock ticks of 10 ms); 0 for one that is gone. */
function cpuSplitMs(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
  } catch {
    return { user: 0, system: 0 };
  }
}

const cpuMs = (pid: number) => {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
};

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * The profile's samples between two monotonic instants (µs): self time by package (a dependency,
 * the server's bundle, Node, or V8's own: GC, idle, native code), then the functions with the most
 * self time, then the server's own functions with the most inclusive time (callees included).
 */
function profileWindow(file: string, from: number, to: number, top = 30): string {
  type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; startTime: number; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = ({ functionName, url, lineNumber }: Node['callFrame']) =>
    `${functionName || '(anonymous)'} ${url.replace(/^.*\/(build|node_modules)\//, '$1/')}:${lineNumber + 1}`;
  const area = ({ functionName, url }: Node['callFrame']) =>
    /node_modules\//.test(url)
      ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
      : /\/build\//.test(url)
        ? 'the server (build/)'
        : url.startsWith('node:')
          ? 'node:'
          : `${functionName} (native)`;
  const [self, inclusive, areas] = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  let t = profile.startTime;
  let total = 0;
  for (const [i, id] of profile.samples.entries()) {
    t += profile.timeDeltas[i]!;
    if (t < from || t > to) continue;
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    total++;
    add(self, name(frame));
    add(areas, area(frame));
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const f = byId.get(n)!.callFrame;
      if (f.url.includes('/build/')) seen.add(name(f));
    }
    for (const key of seen) add(inclusive, key);
  }
  const list = (title: string, map: Map<string, number>) => [
    title,
    ...[...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, n]) => `${((100 * n) / total).toFixed(1).padStart(5)} %  ${key}`),
  ];
  return [
    `${total} samples in the window, not idle`,
    ...list('self time by package:', areas),
    ...list('self time by function:', self),
    ...list("the server's functions, inclusive:", inclusive),
  ].join('\n');
}

async function run(): Promise<void> {
  const self = await startSelfServer();
  try {
    const server = await ZulipTarget.connect({ target: 'server', url: self.url, pid: self.process.pid }, self.admin);
    const users = await server.ensureUsers(SENDERS);
    const channels = await server.ensureChannels(users, CHANNELS);
    const senders = server.senders(users, SENDERS, channels);
    server.close();
    const endpoint = parseEndpoint(self.url);
    const conns = await Promise.all(senders.map(() => HttpConnection.open(endpoint)));
    let seq = 0;
    /** Messages `count` more, from every sender at once; each must be accepted. */
    const send = async (count: number) => {
      const end = seq + count;
      await Promise.all(
        senders.map(async (spec, i) => {
          while (seq < end) {
            const n = seq++;
            const { method, path, body } = spec.request(`send-cpu ${n}`, n, 0);
            const res = await conns[i]!.request(method, path, spec.headers, body);
            if (res.status !== 200) throw new Error(`message ${n}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
          }
        }),
      );
    };
    await send(W);
    const stats = statementStats
      ? new pg.Client({ connectionString: `postgresql://postgres@localhost/postgres?host=${join(dataDirOf(self.process.pid), 'postgres')}` })
      : null;
    if (stats) {
      await stats.connect();
      await stats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await stats.query('SELECT pg_stat_statements_reset()');
    }
    const dbBefore = new Map(descendants(self.process.pid).map((pid) => [pid, cpuMs(pid)]));
    const before = { server: cpuSplitMs(self.process.pid), loader: process.cpuUsage() };
    const from = process.hrtime.bigint();
    await send(N);
    const to = process.hrtime.bigint();
    // A process that started meanwhile counts whole; one that ended meanwhile (rare) is lost.
    const db = sum(descendants(self.process.pid).map((pid) => cpuMs(pid) - (dbBefore.get(pid) ?? 0)));
    const after = { server: cpuSplitMs(self.process.pid), loader: process.cpuUsage(before.loader) };
    for (const c of conns) c.close();
    const seconds = Number(to - from) / 1e9;
    const per = (ms: number) => (ms / N).toFixed(3);
    const serverMs = after.server.user + after.server.system - before.server.user - before.server.system;
    const serverSystemMs = after.server.system - before.server.system;
    const dbMs = db;
    const loaderMs = (after.loader.user + after.loader.system) / 1000;
    const totalMs = serverMs + dbMs + loaderMs;
    console.log(
      `${N} messages in ${seconds.toFixed(1)} s (${(N / seconds).toFixed(0)}/s): ms CPU per message: server ${per(serverMs)} (system ${per(serverSystemMs)}), PostgreSQL ${per(dbMs)}, ` +
        `load generator ${per(loaderMs)}, total ${per(totalMs)} -> 2 cores reach ${((2000 * N) / totalMs).toFixed(0)}/s at most`,
    );
    if (stats) {
      const { rows } = await stats.query<{ calls: string; total: number; mean: number; rows: string; query: string }>(
        `SELECT calls, round(total_exec_time::numeric, 1)::float AS total, round(mean_exec_time::numeric, 3)::float AS mean, rows,
                regexp_replace(left(query, 110), '\\s+', ' ', 'g') AS query
           FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12`,
      );
      console.log('pg_stat_statements over the window (ms):');
      for (const r of rows)
        console.log(
          `  ${String(r.calls).padStart(6)} calls ${String(r.total).padStart(9)} total ${String(r.mean).padStart(7)} mean ${String(r.rows).padStart(7)} rows  ${r.query}`,
        );
      await stats.end();
    }
    if (profileDir) {
      const pid = self.process.pid;
      await self.stop();
      const file = readdirSync(profileDir).find((f) => f.includes(`.${pid}.`) && f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile of ${pid} in ${profileDir}`);
      console.log(profileWindow(join(profileDir, file), Number(from / 1000n), Number(to / 1000n)));
    }
  } finally {
    await self.stop();
  }
}

/** The server's DATA_DIR, from its environment. */
function dataDirOf(pid: number): string {
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return env.find((e) => e.startsWith('DATA_DIR='))!.slice('DATA_DIR='.length);
}

for (let i = 0; i < RUNS; i++) await run();
process.exit(0);
