// Applies prisma/migrations at start, keeping Prisma Migrate's own bookkeeping (`_prisma_migrations`,
// sha256 checksums, its advisory lock id), so `prisma migrate deploy` accepts the same database
// wherever the Prisma schema engine is available.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { PROJECT_ROOT } from '../paths.ts';
import type { Database, SqlSession } from './client.ts';

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations');

export interface Migration {
  /** Directory name, `<YYYYMMDDHHMMSS>_<name>`. */
  name: string;
  script: string;
}

/** The id Prisma Migrate locks with, so our runner and `prisma migrate deploy` exclude each other. */
const PRISMA_MIGRATE_LOCK_ID = 72707369;
/** How often a start waiting for another one's migrations tries the lock again. */
const LOCK_RETRY_MS = 200;

/** Prisma's DDL for the table, plus IF NOT EXISTS. */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
}

/** Migration directories in the order they apply (Prisma sorts by directory name). */
export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(names.map(async (name) => ({ name, script: await readFile(path.join(dir, name, 'migration.sql'), 'utf8') })));
}

/** Prisma's checksum: sha256 of the script, lowercase hex. */
export function migrationChecksum(script: string): string {
  return createHash('sha256').update(script).digest('hex');
}

/**
 * Prisma also accepts a checkout with other line endings, and checksums that an old engine wrote
 * without zero-padding each byte.
 */
function scriptMatchesChecksum(script: string, checksum: string): boolean {
  const variants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return variants.some((variant) => {
    const digest = createHash('sha256').update(variant).digest();
    const rendered = checksum.length === 64 ? digest.toString('hex') : [...digest].map((b) => b.toString(16)).join('');
    return rendered === checksum;
  });
}

/**
 * Applies the migrations not yet recorded, each in its own transaction, and returns their names.
 * Refuses to run when an applied migration was edited or an earlier attempt failed half-way.
 */
export async function applyMigrations(db: Database, migrationsDir: string = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(migrationsDir);
  return db.withSession(async (session) => {
    // Concurrent starts against one PostgreSQL wait here; the later ones then find nothing to do.
    // They wait between statements: CREATE INDEX CONCURRENTLY waits for every open statement,
    // so one blocked in pg_advisory_lock() would deadlock with it.
    while (!(await session.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${PRISMA_MIGRATE_LOCK_ID}) AS locked`))[0]!.locked) {
      await setTimeout(LOCK_RETRY_MS);
    }
    try {
      await session.exec(CREATE_MIGRATIONS_TABLE);
      const rows = await session.query<MigrationRow>('SELECT migration_name, checksum, finished_at, rolled_back_at, logs FROM _prisma_migrations');
      checkHistory(rows, migrations);
      // Rows of migrations unknown here (a newer release ran first) are left alone, as Prisma does.
      const applied = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
      const pending = migrations.filter((m) => !applied.has(m.name));
      for (const migration of pending) await applyOne(session, migration);
      return pending.map((m) => m.name);
    } finally {
      await session.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK_ID})`);
    }
  });
}

/** Of these migration names, those the database has not applied (for readiness: a restored old backup, a failed start). */
export async function unappliedMigrations(db: Database, names: readonly string[]): Promise<string[]> {
  const rows = await db.withSession((session) =>
    session.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL'),
  );
  const applied = new Set(rows.map((r) => r.migration_name));
  return names.filter((name) => !applied.has(name));
}

function checkHistory(rows: MigrationRow[], migrations: Migration[]): void {
  const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed.length > 0) {
    const details = failed.map((r) => `${r.migration_name}${r.logs ? `: ${r.logs.trim()}` : ''}`).join('\n');
    throw new Error(
      `Migrations started but never finished; fix the database by hand, then mark them rolled back ` +
        `(prisma migrate resolve --rolled-back NAME):\n${details}`,
    );
  }
  const scripts = new Map(migrations.map((m) => [m.name, m.script]));
  const edited = rows
    .filter((r) => r.rolled_back_at === null && scripts.has(r.migration_name))
    .filter((r) => !scriptMatchesChecksum(scripts.get(r.migration_name)!, r.checksum))
    .map((r) => r.migration_name);
  if (edited.length > 0) {
    throw new Error(
      `Applied migrations were modified after they ran (checksum mismatch): ${edited.join(', ')}. ` +
        'Restore their migration.sql and put the change in a new migration.',
    );
  }
}

async function applyOne(session: SqlSession, migration: Migration): Promise<void> {
  const id = randomUUID();
  const checksum = migrationChecksum(migration.script);
  try {
    if (!controlsOwnTransaction(migration.script) && !buildsConcurrently(migration.script)) {
      await session.transaction(async (tx) => {
        await tx.exec(migration.script);
        await tx.query(
          `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
          [id, checksum, migration.name],
        );
      });
      return;
    }
    // A script with its own BEGIN/COMMIT (Prisma writes these for enum changes) cannot be nested
    // in ours, nor can CREATE/DROP INDEX CONCURRENTLY run in a transaction, so record it the way
    // Prisma does: started, then finished, or failed with its logs.
    if (buildsConcurrently(migration.script)) await dropInvalidIndex(session, migration.script);
    await session.query('INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ($1, $2, $3)', [id, checksum, migration.name]);
    try {
      await session.exec(migration.script);
    } catch (err) {
      // Leave the script's own transaction, aborted by the error, so the failure can be recorded.
      await session.exec('ROLLBACK');
      await session.query('UPDATE _prisma_migrations SET logs = $2 WHERE id = $1', [id, (err as Error).message]);
      throw err;
    }
    await session.query('UPDATE _prisma_migrations SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1', [id]);
  } catch (err) {
    throw new Error(`Migration ${migration.name} failed: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * An index built or dropped without blocking writes (CREATE/DROP INDEX CONCURRENTLY): it runs outside
 * any transaction, so such a migration holds that one statement (as `prisma migrate deploy` needs too).
 */
function buildsConcurrently(script: string): boolean {
  return /^\s*(CREATE\s+(UNIQUE\s+)?|DROP\s+)INDEX\s+CONCURRENTLY\b/im.test(script);
}

/** A concurrent build that failed half-way leaves an invalid index of its name: drop it so the retry can build it. */
async function dropInvalidIndex(session: SqlSession, script: string): Promise<void> {
  const name = /CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?"([^"]+)"/i.exec(script)?.[1];
  if (!name) return;
  const [invalid] = await session.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
    [name],
  );
  if (invalid) await session.exec(`DROP INDEX CONCURRENTLY "${name.replaceAll('"', '""')}"`);
}

function controlsOwnTransaction(script: string): boolean {
  // `BEGIN;` alone, not the `BEGIN` that opens a PL/pgSQL block (never followed by a semicolon).
  return /^\s*(BEGIN|START\s+TRANSACTION)\s*;/im.test(script);
}
