// Opens the one database of a deployment: embedded PGlite by default, PostgreSQL when a URL is
// given. Both go through Prisma driver adapters, so the rest of the server sees one PrismaClient.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite, type Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from './generated/client.ts';

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; when set, PGlite is not used. */
  databaseUrl?: string;
  /** PGlite data directory; undefined or 'memory://...' keeps the database in memory. */
  dataDir?: string;
}

/** Plain SQL on one connection, outside Prisma. */
export interface SqlExecutor {
  /** One statement with $1, $2... parameters; rows come back as objects. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** A script of several statements without parameters. */
  exec(script: string): Promise<void>;
}

export interface SqlSession extends SqlExecutor {
  /** Runs fn in a transaction on this session: commit when it resolves, rollback when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

export interface Database {
  prisma: PrismaClient;
  kind: 'pglite' | 'postgres';
  /**
   * Runs fn on one connection held for its whole duration, for what Prisma cannot do: session
   * advisory locks and multi-statement scripts (migrations, maintenance). Not for request paths.
   */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Disconnects Prisma, closes the driver and releases the data directory; safe to call twice. */
  close(): Promise<void>;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl) : openPGlite(opts.dataDir);
}

async function openPostgres(url: string): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url });
  // An idle connection dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', (err) => console.error(`PostgreSQL connection error: ${err.message}`));
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end();
    throw new Error(`Cannot connect to PostgreSQL at ${redactUrl(url)}: ${(err as Error).message}`, { cause: err });
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    kind: 'postgres',
    withSession: async (fn) => {
      const client = await pool.connect();
      try {
        const result = await fn(pgSession(client));
        client.release();
        return result;
      } catch (err) {
        // Destroy rather than reuse the connection: it drops any session lock or state fn left.
        client.release(true);
        throw err;
      }
    },
    close: once(async () => {
      await prisma.$disconnect();
      await pool.end();
    }),
  };
}

function pgSession(client: pg.PoolClient): SqlSession {
  const executor: SqlExecutor = {
    query: async <Row>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as Row[],
    exec: async (script) => {
      // Without parameters pg uses the simple query protocol, which accepts several statements.
      await client.query(script);
    },
  };
  return {
    ...executor,
    transaction: async (fn) => {
      await client.query('BEGIN');
      try {
        const result = await fn(executor);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    },
  };
}

async function openPGlite(dataDir: string | undefined): Promise<Database> {
  const dir = dataDir === undefined || dataDir.startsWith('memory://') ? undefined : path.resolve(dataDir);
  const releaseDir = dir === undefined ? () => {} : lockDataDir(dir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir === undefined ? {} : { dataDir: dir });
  } catch (err) {
    releaseDir();
    throw err;
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    prisma,
    kind: 'pglite',
    // PGlite is a single connection, so the instance itself is the session (other queries may run
    // between its statements, never inside its transaction()).
    withSession: (fn) =>
      fn({
        ...pgliteExecutor(pglite),
        transaction: (body) => pglite.transaction((tx) => body(pgliteExecutor(tx))),
      }),
    close: once(async () => {
      try {
        await prisma.$disconnect();
        await pglite.close();
      } finally {
        releaseDir();
      }
    }),
  };
}

function pgliteExecutor(conn: PGlite | PGliteTransaction): SqlExecutor {
  return {
    query: async <Row>(sql: string, params?: unknown[]) => (await conn.query<Row>(sql, params)).rows,
    exec: async (script) => {
      await conn.exec(script);
    },
  };
}

const PID_FILE = 'server.pid';
/** Data directories this process holds, so a second open in the same process is refused too. */
const heldDirs = new Set<string>();

/**
 * PGlite does not notice a second process opening its directory, and two writers corrupt it, so
 * the directory holds DATA_DIR/server.pid while open. Returns the function that releases it.
 */
function lockDataDir(dir: string): () => void {
  if (heldDirs.has(dir)) throw new Error(`The PGlite data directory ${dir} is already open in this process.`);
  mkdirSync(dir, { recursive: true });
  const pidFile = path.join(dir, PID_FILE);
  if (!createPidFile(pidFile)) {
    const owner = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
    // Our own pid in the file is a leftover of an earlier run (containers reuse low pids).
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw dirInUse(dir, pidFile, owner);
    }
    rmSync(pidFile, { force: true });
    // Failing again means another process took over the stale file at the same moment.
    if (!createPidFile(pidFile)) throw dirInUse(dir, pidFile, readFileSync(pidFile, 'utf8').trim());
  }
  heldDirs.add(dir);
  return () => {
    heldDirs.delete(dir);
    rmSync(pidFile, { force: true });
  };
}

function createPidFile(pidFile: string): boolean {
  try {
    writeFileSync(pidFile, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function dirInUse(dir: string, pidFile: string, owner: number | string): Error {
  return new Error(
    `The PGlite data directory ${dir} is in use by process ${owner} (see ${pidFile}). ` +
      'Stop that server or use another DATA_DIR; if no server runs there, delete the file.',
  );
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
