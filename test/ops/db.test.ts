// The database layer: the migration runner and its bookkeeping in Prisma's `_prisma_migrations`,
// the embedded PostgreSQL (its data directory, lock, user and stale files), and that the
// migrations match the schema.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { scratchServer } from '../../src/db/scratch.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { applyMigrations, migrationChecksum, readMigrations } from '../../src/db/migrate.ts';
import { historySettings } from '../../src/db/embedded.ts';
import { checkDrift } from '../../src/db/check-drift.ts';
import { DatabaseProxy } from '../helpers/db-proxy.ts';
import { freshDatabase, tempDir, testDatabaseServer } from '../helpers/server.ts';

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}

let fresh: Database | undefined;

/** A migrations directory holding the given scripts, named in order. */
function migrationsDir(scripts: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, script] of Object.entries(scripts)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), script);
  }
  return dir;
}

function migrationRows(db: Database): Promise<MigrationRow[]> {
  return db.withSession((s) =>
    s.query<MigrationRow>('SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name'),
  );
}

async function assertFullyMigrated(db: Database): Promise<void> {
  const migrations = await readMigrations();
  const rows = await migrationRows(db);
  assert.equal(
    rows.map((r) => r.migration_name),
    migrations.map((m) => m.name),
  );
  for (const [i, row] of rows.entries()) {
    assert.is(row.checksum, migrationChecksum(migrations[i]!.script));
    assert.ok(row.finished_at instanceof Date, `${row.migration_name} finished`);
    assert.is(row.rolled_back_at, null);
    assert.is(row.applied_steps_count, 1);
  }
  assert.is(await db.prisma.realm.count(), 0);
}

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const outcome = await promise.then(
    () => 'resolved',
    (err: Error) => err.message,
  );
  assert.match(outcome, pattern);
}

test.after(async () => {
  await fresh?.close();
});

test('migrations: every migration applies once and is recorded as Prisma does', async () => {
  fresh = await openDatabase({ databaseUrl: await freshDatabase() });
  const migrations = await readMigrations();
  assert.ok(migrations.length > 0, 'prisma/migrations has migrations');
  assert.equal(
    await applyMigrations(fresh),
    migrations.map((m) => m.name),
  );
  assert.equal(await applyMigrations(fresh), []);
  await assertFullyMigrated(fresh);
});

test('queryPlannedOnce: a statement with array parameters gets one generic plan; query keeps the default plan cache mode', async () => {
  const db = await openDatabase({ databaseUrl: await freshDatabase() });
  try {
    const sql =
      'SELECT count(*)::int AS n, current_setting($2) AS mode, (SELECT generic_plans FROM pg_prepared_statements WHERE statement = $3) AS generic FROM unnest($1::int[])';
    type Row = { n: number; mode: string; generic: string };
    // One statement at a time: each finds the connection the last one left.
    const planned: Row[] = [];
    for (let length = 1; length <= 8; length++)
      planned.push(...(await db.queryPlannedOnce<Row>(sql, [Array.from({ length }, (_, i) => i), 'plan_cache_mode', sql])));
    assert.equal(
      planned.map((r) => [r.n, r.mode, Number(r.generic)]),
      Array.from({ length: 8 }, (_, i) => [i + 1, 'force_generic_plan', i + 1]),
    );
    const pooled = await db.query<Row>(sql, [[1, 2], 'plan_cache_mode', sql]);
    assert.equal(
      pooled.map((r) => r.mode),
      ['auto'],
    );
  } finally {
    await db.close();
  }
});

test('queryPlannedPerCall: a statement left unprepared, planned for its values each time, timestamps read as UTC', async () => {
  const db = await openDatabase({ databaseUrl: await freshDatabase() });
  try {
    const sql = `SELECT $1::int + 1 AS n, '2026-01-02 03:04:05'::timestamp AS at, (SELECT count(*)::int FROM pg_prepared_statements WHERE statement = $2) AS prepared`;
    type Row = { n: number; at: Date; prepared: number };
    for (let i = 0; i < 7; i++) {
      const rows = await db.queryPlannedPerCall<Row>(sql, [i, sql]);
      assert.equal(rows, [{ n: i + 1, at: new Date('2026-01-02T03:04:05Z'), prepared: 0 }]);
    }
  } finally {
    await db.close();
  }
});

test('migrations: a failing migration leaves neither its changes nor a record', async () => {
  const db = fresh!;
  const dir = migrationsDir({ '20990101000000_broken': 'CREATE TABLE probe_broken (id int);\nSELECT * FROM no_such_table;\n' });
  await rejects(applyMigrations(db, dir), /Migration 20990101000000_broken failed: .*no_such_table/);
  const [probe] = await db.withSession((s) => s.query<{ t: string | null }>(`SELECT to_regclass('probe_broken')::text AS t`));
  assert.is(probe!.t, null);
  assert.not.ok((await migrationRows(db)).some((r) => r.migration_name === '20990101000000_broken'));
});

test('migrations: an edited migration is refused, other line endings are not', async () => {
  const db = fresh!;
  const name = '20990101000001_probe';
  const dir = migrationsDir({ [name]: 'CREATE TABLE probe_edit (id int);\n' });
  assert.equal(await applyMigrations(db, dir), [name]);
  writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE TABLE probe_edit (id int);\r\n');
  assert.equal(await applyMigrations(db, dir), []);
  writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE TABLE probe_edit (id bigint);\n');
  await rejects(applyMigrations(db, dir), /checksum mismatch.*20990101000001_probe/);
});

test('migrations: a script with its own BEGIN/COMMIT is applied and recorded', async () => {
  const db = fresh!;
  const name = '20990101000002_own_transaction';
  const dir = migrationsDir({ [name]: '-- AlterEnum\nBEGIN;\nCREATE TABLE probe_own_tx (id int);\nCOMMIT;\n' });
  assert.equal(await applyMigrations(db, dir), [name]);
  const row = (await migrationRows(db)).find((r) => r.migration_name === name);
  assert.ok(row?.finished_at instanceof Date);
  assert.is(row?.applied_steps_count, 1);
});

test('migrations: an index built concurrently runs outside a transaction, after dropping an invalid leftover of its name', async () => {
  const db = fresh!;
  await db.withSession(async (s) => {
    await s.exec('CREATE TABLE probe_concurrent (id int)');
    // What a failed CREATE INDEX CONCURRENTLY leaves: an index marked invalid.
    await s.exec('CREATE INDEX probe_concurrent_idx ON probe_concurrent (id)');
    await s.exec(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'probe_concurrent_idx'::regclass`);
  });
  const name = '20990101000003_concurrent_index';
  const dir = migrationsDir({ [name]: '-- A comment first.\nCREATE INDEX CONCURRENTLY "probe_concurrent_idx" ON probe_concurrent (id);\n' });
  assert.equal(await applyMigrations(db, dir), [name]);
  const [index] = await db.withSession((s) =>
    s.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'probe_concurrent_idx'::regclass`),
  );
  assert.equal(index, { valid: true });
  const row = (await migrationRows(db)).find((r) => r.migration_name === name);
  assert.ok(row?.finished_at instanceof Date);
});

test('embedded: a data directory is used by one server at a time, and PostgreSQL stops with it', async () => {
  const dataDir = tempDir();
  const pidFile = path.join(dataDir, 'server.pid');
  const postmasterPid = path.join(dataDir, 'postgres', 'postmaster.pid');
  const first = await openDatabase({ dataDir });
  assert.is(readFileSync(pidFile, 'utf8').trim(), String(process.pid));
  assert.ok(existsSync(postmasterPid), 'PostgreSQL runs on DATA_DIR/postgres');
  assert.match(readFileSync(path.join(dataDir, 'postgres.log'), 'utf8'), /database system is ready to accept connections/);
  if (process.getuid?.() === 0) assert.is.not(statSync(path.join(dataDir, 'postgres')).uid, 0, 'as root, PostgreSQL runs as another user');
  await first.prisma.realm.count().then(
    () => assert.unreachable('a fresh cluster has no tables before the migrations'),
    () => {},
  );
  await applyMigrations(first);
  const settings = await first.withSession((s) =>
    s.query<{ name: string; setting: string; unit: string | null }>(
      "SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'random_page_cost', 'autovacuum_vacuum_insert_scale_factor')",
    ),
  );
  const shown = Object.fromEntries(settings.map((r) => [r.name, r.setting]));
  // shared_buffers counts 8 kB pages, work_mem kB.
  assert.equal(
    shown,
    {
      shared_buffers: String(Number(historySettings().shared_buffers.replace('MB', '')) * 128),
      work_mem: '16384',
      random_page_cost: '1.1',
      autovacuum_vacuum_insert_scale_factor: '0.05',
    },
    'the embedded PostgreSQL is sized for a long history',
  );
  await rejects(openDatabase({ dataDir }), /already open in this process/);
  await first.close();
  assert.not.ok(existsSync(pidFile), 'close removes the pid file');
  assert.not.ok(existsSync(postmasterPid), 'close stops PostgreSQL');

  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    writeFileSync(pidFile, `${other.pid}\n`);
    await rejects(openDatabase({ dataDir }), new RegExp(`in use by process ${other.pid}`));
    // The owner is gone, so its pid file is stale; and the postmaster.pid of a PostgreSQL that
    // died names a live process that is not PostgreSQL: neither stops the start.
    other.kill();
    await once(other, 'exit');
    const unrelated = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(postmasterPid, `${unrelated.pid}\n${path.join(dataDir, 'postgres')}\n`);
      const reopened = await openDatabase({ dataDir });
      assert.is(readFileSync(pidFile, 'utf8').trim(), String(process.pid));
      assert.is(unrelated.exitCode, null, 'the unrelated process was left alone');
      assert.equal(await applyMigrations(reopened), [], 'the data was kept');
      await reopened.close();
    } finally {
      unrelated.kill();
    }
  } finally {
    other.kill();
  }
});

test('prisma/migrations produce exactly prisma/schema.prisma', async () => {
  const report = await checkDrift({ serverUrl: (await testDatabaseServer()).url });
  assert.ok(report.inSync, `missing migration:\n${report.missingSql}`);
});

test('migrations: concurrent starts apply every migration exactly once', async () => {
  const url = await freshDatabase();
  const opened: Database[] = [];
  try {
    const a = await openDatabase({ databaseUrl: url });
    opened.push(a);
    const b = await openDatabase({ databaseUrl: url });
    opened.push(b);
    const names = (await readMigrations()).map((m) => m.name);
    const [fromA, fromB] = await Promise.all([applyMigrations(a), applyMigrations(b)]);
    assert.equal([...fromA, ...fromB].sort(), names);
    assert.equal(await applyMigrations(a), []);
    await assertFullyMigrated(a);
  } finally {
    for (const db of opened) await db.close();
  }
});

/** A process holding a scratch database on `serverUrl`; answers its name, exits when its stdin ends. */
async function scratchHolder(serverUrl: string): Promise<{ child: ChildProcess; name: string }> {
  const scratch = JSON.stringify(path.resolve('src/db/scratch.ts'));
  const code = `const { scratchServer } = await import(${scratch}); const s = await scratchServer(process.argv[1]);
console.log(new URL(await s.createDatabase()).pathname.slice(1)); process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, serverUrl], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, name: String(line).trim() };
}

test('scratch databases: dropped at process.exit, swept once their process died, kept while it lives', async () => {
  const serverUrl = (await testDatabaseServer()).url;
  const names = async () => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      return (await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'chat_scratch_%'`)).rows.map((r) => r.datname);
    } finally {
      await admin.end();
    }
  };
  const exiting = await scratchHolder(serverUrl);
  const killed = await scratchHolder(serverUrl);
  const living = await scratchHolder(serverUrl);
  try {
    exiting.child.stdin!.end();
    await once(exiting.child, 'exit');
    killed.child.kill('SIGKILL');
    await once(killed.child, 'exit');
    let present = await names();
    assert.not.ok(present.includes(exiting.name), 'dropped by its process at exit');
    assert.ok(present.includes(killed.name) && present.includes(living.name));
    const sweeper = await scratchServer(serverUrl);
    await sweeper.close();
    present = await names();
    assert.not.ok(present.includes(killed.name), "a dead process's database is swept");
    assert.ok(present.includes(living.name), "a live process's database is kept");
  } finally {
    living.child.stdin!.end();
    await once(living.child, 'exit');
  }
  assert.not.ok((await names()).includes(living.name));
});

test('a session whose connection is lost fails its query; the process lives on', async () => {
  const proxy = await DatabaseProxy.start(await freshDatabase());
  const db = await openDatabase({ databaseUrl: proxy.url });
  try {
    const lost = db.withSession(async (session) => {
      await session.query('SELECT 1');
      await proxy.cut();
      // The connection's end arrives while the session holds it between two queries.
      await new Promise((r) => setTimeout(r, 200));
      return session.query('SELECT 1');
    });
    const outcome = await lost.then(
      () => 'answered',
      (err: Error) => err.message,
    );
    assert.match(outcome, /Connection terminated|not queryable/);
    await proxy.restore();
    assert.equal(await db.withSession((session) => session.query('SELECT 1 AS one')), [{ one: 1 }]);
  } finally {
    await db.close();
    await proxy.cut();
  }
});

test.run();
