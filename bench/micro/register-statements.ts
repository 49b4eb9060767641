// Where one register of a seeded history's bench user spends its database time, statement by
// statement: the server runs in-process on a database kept by `npm run bench -- history
// --reuse-seeded` (its migrations are applied: use a copy of your own, see bench/README.md),
// every pg query is timed by its text, and N registers of the heaviest bench user run one after
// another after 3 to warm up. Prints the statements by total time, and CPU and wall per register.
// REQUEST times another request of that user the same way (a GET with its query string).
// Usage: DB=mine_1000000 N=10 [TYPES=message,subscription,update_message_flags] npx tsx bench/micro/register-statements.ts
//        DB=mine_1000000 N=10 REQUEST='/users/me/subscriptions?include_subscribers=true' npx tsx bench/micro/register-statements.ts
import { request } from 'node:http';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { setLogLevel } from '../../src/log.ts';
import { startServer } from '../../src/server.ts';
import { TEST_ENV, tempDir } from '../../test/helpers/server.ts';
import type { SeedReport } from '../lib/history-seed.ts';

const N = Number(process.env.N ?? 10);
const url = `postgres://postgres@127.0.0.1:5432/${process.env.DB}`;
const meta = new pg.Client({ connectionString: url });
await meta.connect();
const comment = (await meta.query(`SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = current_database()`)).rows[0].c;
await meta.end();
const user = (JSON.parse(comment) as SeedReport).benchUsers[0]!;

const times = new Map<string, { calls: number; ms: number }>();
let timing = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (!timing) return query.apply(this, args);
  const first = args[0] as string | { text: string };
  const text = (typeof first === 'string' ? first : first.text).replace(/\s+/g, ' ').slice(0, 110);
  const t0 = performance.now();
  const done = () => {
    const t = times.get(text) ?? { calls: 0, ms: 0 };
    t.calls++;
    t.ms += performance.now() - t0;
    times.set(text, t);
  };
  // A pool's query (a statement outside a transaction) passes a callback instead of taking a promise.
  const callback = args.at(-1);
  if (typeof callback === 'function') {
    args[args.length - 1] = (...results: unknown[]) => {
      done();
      return callback(...results);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args);
  return result instanceof Promise ? result.finally(done) : result;
} as typeof pg.Client.prototype.query;

setLogLevel('silent');
const server = await startServer(loadConfig({ ...TEST_ENV, EVENT_SCHEMA_CHECK: 'log', DATA_DIR: tempDir(), DATABASE_URL: url, CLUSTER: 'off' }), {});
const GET = process.env.REQUEST;
const body = GET ? '' : process.env.TYPES ? `fetch_event_types=${encodeURIComponent(JSON.stringify(process.env.TYPES.split(',')))}` : '';
const auth = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`;
const register = () =>
  new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: GET ? 'GET' : 'POST',
        path: GET ? `/api/v1${GET}` : '/api/v1/register',
        headers: { Authorization: auth, 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let length = 0;
        res
          .on('data', (c: Buffer) => (length += c.length))
          .on('end', () => (res.statusCode === 200 ? resolve(length) : reject(new Error(`${GET ?? 'register'} answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject).end(body);
  });
for (let i = 0; i < 3; i++) await register();
timing = true;
const c0 = process.cpuUsage();
const t0 = performance.now();
let bytes = 0;
for (let i = 0; i < N; i++) bytes = await register();
const c = process.cpuUsage(c0);
const wall = (performance.now() - t0) / N;
timing = false;
const rows = [...times].sort((a, b) => b[1].ms - a[1].ms);
const total = rows.reduce((s, [, t]) => s + t.ms, 0) / N;
console.log(
  `${N} ${GET ?? 'registers'} of ${user.email}: ${wall.toFixed(1)} ms wall, ${((c.user + c.system) / 1000 / N).toFixed(1)} ms CPU (process), ${bytes} bytes;`,
);
console.log(`statements: ${(rows.reduce((s, [, t]) => s + t.calls, 0) / N).toFixed(1)} a request, ${total.toFixed(1)} ms summed (they overlap)`);
for (const [text, t] of rows.slice(0, 15)) console.log(`${(t.ms / N).toFixed(2).padStart(8)} ms ${String(t.calls / N).padStart(4)}x  ${text}`);
await server.stop();
process.exit(0);
