// CPU of one client's POST /register (all data) in an organization of U users (default 10,000,
// inserted in SQL as copies of one member, 1 in 10 an administrator, moderator or guest), one
// request after another after 10 to warm up: process.cpuUsage() of the process per request. The
// server runs in-process without the tests' OpenAPI check of answers, and the client only drains
// the answer's bytes, so nearly all of it is the server's. `node --cpu-prof --import tsx` for where it goes.
// Usage: U=10000 N=30 npx tsx bench/micro/register-cpu.ts
import { request } from 'node:http';
import { loadConfig } from '../../src/config.ts';
import { Role } from '../../src/domain/roles.ts';
import { setLogLevel } from '../../src/log.ts';
import { startServer } from '../../src/server.ts';
import { endTestRun, freshDatabase, newRealm, TEST_ENV, tempDir } from '../../test/helpers/server.ts';

const U = Number(process.env.U ?? 10_000);
const N = Number(process.env.N ?? 30);
setLogLevel('silent');
const server = await startServer(loadConfig({ ...TEST_ENV, EVENT_SCHEMA_CHECK: 'log', DATA_DIR: tempDir(), DATABASE_URL: await freshDatabase() }), {});
const realm = await newRealm(server);
const member = await realm.addUser();
await server.app.prisma.$executeRawUnsafe(
  `INSERT INTO "User"
   SELECT (json_populate_record(NULL::"User", (to_jsonb(u) || jsonb_build_object(
       'id', nextval(pg_get_serial_sequence('"User"', 'id')),
       'email', 'bulk' || i || '@bulk.test', 'deliveryEmail', 'bulk' || i || '@bulk.test', 'apiKey', md5('bulk' || i || random()),
       'fullName', 'Bulk ' || i,
       'role', CASE i % 10 WHEN 1 THEN ${Role.ADMINISTRATOR} WHEN 2 THEN ${Role.MODERATOR} WHEN 3 THEN ${Role.GUEST} ELSE ${Role.MEMBER} END))::json)).*
   FROM "User" u, generate_series(1, ${U}) i WHERE u.id = ${member.id}`,
);
const auth = `Basic ${Buffer.from(`${realm.owner.email}:${realm.owner.apiKey}`).toString('base64')}`;
/** POST /register with no parameters (all data); its status and length, the body only drained. */
const register = () =>
  new Promise<{ status: number; length: number }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/api/v1/register',
        headers: { Host: realm.host, Authorization: auth, 'Content-Length': 0 },
      },
      (res) => {
        let length = 0;
        res.on('data', (c: Buffer) => (length += c.length)).on('end', () => resolve({ status: res.statusCode ?? 0, length }));
      },
    );
    req.on('error', reject).end();
  });
let bytes = 0;
for (let i = 0; i < 10; i++) {
  const r = await register();
  if (r.status !== 200) throw new Error(`register answered ${r.status}`);
  bytes = r.length;
}
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i++) await register();
const c = process.cpuUsage(c0);
console.log(
  `${U} users: ${((c.user + c.system) / 1000 / N).toFixed(1)} ms CPU per register (server and a client that only drains), ${((performance.now() - t0) / N).toFixed(1)} ms wall, ${bytes} bytes`,
);
await server.stop();
await endTestRun();
process.exit(0);
