// The database layer: opening PGlite and PostgreSQL, the migration runner and its bookkeeping in
// Prisma's `_prisma_migrations`, the data-directory lock, and that the migrations match the schema.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase, type Database } from '../src/db/client.ts';
import { applyMigrations, migrationChecksum, readMigrations } from '../src/db/migrate.ts';
import { checkDrift } from '../src/db/check-drift.ts';

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}

const scratchDirs: string[] = [];
let memory: Database | undefined;

function scratchDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'chat-db-test-'));
  scratchDirs.push(dir);
  return dir;
}

/** A migrations directory holding the given scripts, named in order. */
function migrationsDir(scripts: Record<string, string>): string {
  const dir = scratchDir();
  for (const [name, script] of Object.entries(scripts)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), script);
  }
  return dir;
}

function migrationRows(db: Database): Promise<MigrationRow[]> {
  return db.withSession((s) =>
    s.query<MigrationRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    ),
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
  await memory?.close();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

test('pglite: applies every migration once and records it as Prisma does', async () => {
  memory = await openDatabase({});
  assert.is(memory.kind, 'pglite');
  const migrations = await readMigrations();
  assert.ok(migrations.length > 0, 'prisma/migrations has migrations');
  assert.equal(await applyMigrations(memory), migrations.map((m) => m.name));
  assert.equal(await applyMigrations(memory), []);
  await assertFullyMigrated(memory);
});

test('pglite: a failing migration leaves neither its changes nor a record', async () => {
  const db = memory!;
  const dir = migrationsDir({ '20990101000000_broken': 'CREATE TABLE probe_broken (id int);\nSELECT * FROM no_such_table;\n' });
  await rejects(applyMigrations(db, dir), /Migration 20990101000000_broken failed: .*no_such_table/);
  const [probe] = await db.withSession((s) => s.query<{ t: string | null }>(`SELECT to_regclass('probe_broken')::text AS t`));
  assert.is(probe!.t, null);
  assert.not.ok((await migrationRows(db)).some((r) => r.migration_name === '20990101000000_broken'));
});

test('pglite: an edited migration is refused, other line endings are not', async () => {
  const db = memory!;
  const name = '20990101000001_probe';
  const dir = migrationsDir({ [name]: 'CREATE TABLE probe_edit (id int);\n' });
  assert.equal(await applyMigrations(db, dir), [name]);
  writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE TABLE probe_edit (id int);\r\n');
  assert.equal(await applyMigrations(db, dir), []);
  writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE TABLE probe_edit (id bigint);\n');
  await rejects(applyMigrations(db, dir), /checksum mismatch.*20990101000001_probe/);
});

test('pglite: a script with its own BEGIN/COMMIT is applied and recorded', async () => {
  const db = memory!;
  const name = '20990101000002_own_transaction';
  const dir = migrationsDir({ [name]: '-- AlterEnum\nBEGIN;\nCREATE TABLE probe_own_tx (id int);\nCOMMIT;\n' });
  assert.equal(await applyMigrations(db, dir), [name]);
  const row = (await migrationRows(db)).find((r) => r.migration_name === name);
  assert.ok(row?.finished_at instanceof Date);
  assert.is(row?.applied_steps_count, 1);
});

test('pglite: a data directory is used by one server at a time', async () => {
  const dataDir = path.join(scratchDir(), 'db');
  const pidFile = path.join(dataDir, 'server.pid');
  const first = await openDatabase({ dataDir });
  assert.is(readFileSync(pidFile, 'utf8').trim(), String(process.pid));
  await rejects(openDatabase({ dataDir }), /already open in this process/);
  await first.close();
  assert.not.ok(existsSync(pidFile), 'close removes the pid file');

  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    writeFileSync(pidFile, `${other.pid}\n`);
    await rejects(openDatabase({ dataDir }), new RegExp(`in use by process ${other.pid}`));
  } finally {
    other.kill();
  }
  await once(other, 'exit');
  // The owner is gone: its pid file is stale and the directory opens.
  const reopened = await openDatabase({ dataDir });
  assert.is(readFileSync(pidFile, 'utf8').trim(), String(process.pid));
  await reopened.close();
});

test('prisma/migrations produce exactly prisma/schema.prisma', async () => {
  const report = await checkDrift();
  assert.ok(report.inSync, `missing migration:\n${report.missingSql}`);
});

const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl) {
  test('postgres: concurrent starts apply every migration exactly once', async () => {
    const name = `chat_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    const opened: Database[] = [];
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(databaseUrl);
      url.pathname = `/${name}`;
      const a = await openDatabase({ databaseUrl: url.toString() });
      opened.push(a);
      const b = await openDatabase({ databaseUrl: url.toString() });
      opened.push(b);
      assert.is(a.kind, 'postgres');
      const names = (await readMigrations()).map((m) => m.name);
      const [fromA, fromB] = await Promise.all([applyMigrations(a), applyMigrations(b)]);
      assert.equal([...fromA, ...fromB].sort(), names);
      assert.equal(await applyMigrations(a), []);
      await assertFullyMigrated(a);
    } finally {
      for (const db of opened) await db.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
} else {
  console.log('skipped: DATABASE_URL not set');
  test.skip('postgres: concurrent starts apply every migration exactly once', () => {});
}

test.run();
