// Opens the one database of a deployment: the PostgreSQL at DATABASE_URL, or else the embedded
// one in DATA_DIR. Either way one pg pool behind Prisma's pg adapter.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { log } from '../log.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import { PrismaClient } from './generated/client.ts';
import { trackHolds } from './holds.ts';
import { timedAdapter, type QueryTimer } from './timed-adapter.ts';
import { nameTransactionOpeners } from './transaction.ts';

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; when set, nothing is embedded. */
  databaseUrl?: string;
  /** Where the embedded PostgreSQL keeps its cluster (DATA_DIR/postgres) when there is no URL. */
  dataDir?: string;
  /** Connections in the pool (pg's default, 10, when absent). */
  poolSize?: number;
  /** Told the duration of every statement Prisma runs (the query-time metric). */
  onQuery?: QueryTimer;
  /** Told of every transaction Prisma opens (with onQuery: its BEGIN is not timed). */
  onTransaction?: () => void;
  /** A file to log who holds the pool's connections to (db/holds.ts); nothing is tracked without it. */
  holdLog?: string;
}

/** The pool's connections at one moment. */
export interface PoolStats {
  /** Open connections, idle or in use. */
  total: number;
  idle: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
  /** The most connections the pool opens. */
  max: number;
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
  /** The connection string (of the embedded server too), for pools of their own such as cluster/locks.ts. */
  url: string;
  /**
   * Runs fn on one connection held for its whole duration, for what Prisma cannot do: session
   * advisory locks and multi-statement scripts (migrations, maintenance). Not for request paths.
   */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * One statement straight on the pool, outside Prisma, for the hottest raw statements: Prisma's
   * own work around a raw query costs more CPU than pg's. Each is prepared once per connection.
   * Timestamps read as UTC, as Prisma reads them; timed like Prisma's statements.
   */
  query<Row>(sql: string, params: unknown[]): Promise<Row[]>;
  /**
   * As `query`, on connections of their own that plan each prepared statement once
   * (plan_cache_mode = force_generic_plan), for a statement whose parameters are arrays of any
   * length: PostgreSQL prices its custom plans by the arrays' lengths, finds them cheaper than the
   * generic one and so plans it anew at every call, a fifth of the message insert's backend CPU
   * (bench/micro/send-statement.ts). The other statements keep the pool and its custom plans.
   */
  queryPlannedOnce<Row>(sql: string, params: unknown[]): Promise<Row[]>;
  /**
   * As `query`, but not prepared: planned for its values at each call, for a statement whose best
   * plan depends on them (a narrow's page: how much of history is the user's, where the anchor
   * is), which a generic plan would not follow, and whose text varies too much to keep prepared.
   */
  queryPlannedPerCall<Row>(sql: string, params: unknown[]): Promise<Row[]>;
  /** Resolves once the database answers a trivial query on a pooled connection. */
  ping(): Promise<void>;
  poolStats(): PoolStats;
  /** Disconnects Prisma, closes the pool and stops the embedded PostgreSQL; safe to call twice. */
  close(): Promise<void>;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts);
  if (opts.dataDir === undefined) throw new Error('openDatabase needs a databaseUrl or a dataDir');
  const embedded = await startEmbeddedPostgres(opts.dataDir);
  try {
    return await openPostgres(embedded.url, opts, embedded.stop);
  } catch (err) {
    await embedded.stop();
    throw err;
  }
}

const TIMESTAMP_OID = 1114;

/** pg's parsers, but `timestamp` (without time zone, as Prisma's DateTime columns are) is UTC, not local time. */
const RAW_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID && format !== 'binary'
      ? (text: string) => new Date(`${text.replace(' ', 'T')}Z`)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const statementNames = new Map<string, string>();

/** Connections for queryPlannedOnce: as many as the message insert has statements in flight (actions/messages-store.ts). */
const PLANNED_ONCE_CONNECTIONS = 2;

/**
 * Hot statements are prepared once per connection (pg keeps them by name): PostgreSQL then skips
 * parsing them, and planning them once it settles on a generic plan.
 */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) statementNames.set(sql, (name = `hot${statementNames.size + 1}`));
  return name;
}

async function openPostgres(
  url: string,
  { poolSize, onQuery, onTransaction, holdLog }: OpenDatabaseOptions,
  afterClose?: () => Promise<void>,
): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  let stopTracking: (() => void) | undefined;
  if (holdLog) {
    stopTracking = trackHolds(pool, holdLog);
    nameTransactionOpeners();
  }
  // An idle connection dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', (err) => log.warn('PostgreSQL connection error', { error: err.message }));
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end();
    throw new Error(`Cannot connect to PostgreSQL at ${redactUrl(url)}: ${(err as Error).message}`, { cause: err });
  }
  // pg connects only when a statement needs it.
  const plannedOnce = new pg.Pool({ connectionString: url, max: PLANNED_ONCE_CONNECTIONS, options: '-c plan_cache_mode=force_generic_plan' });
  plannedOnce.on('error', (err) => log.warn('PostgreSQL connection error', { error: err.message }));
  const adapter = new PrismaPg(pool);
  const prisma = new PrismaClient({ adapter: onQuery ? timedAdapter(adapter, onQuery, onTransaction) : adapter });
  return {
    prisma,
    url,
    ping: async () => {
      await pool.query('SELECT 1');
    },
    query: <Row>(sql: string, params: unknown[]) => pooledQuery<Row>(pool, sql, params, onQuery),
    queryPlannedOnce: <Row>(sql: string, params: unknown[]) => pooledQuery<Row>(plannedOnce, sql, params, onQuery),
    queryPlannedPerCall: <Row>(sql: string, params: unknown[]) => pooledQuery<Row>(pool, sql, params, onQuery, false),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max }),
    withSession: async (fn) => {
      const client = await pool.connect();
      // A checked-out connection that dies emits 'error', which would end the process without a
      // listener (the pool listens only while it is idle); the query in progress fails anyway.
      const lost = (err: Error) => log.warn('PostgreSQL connection lost', { error: err.message });
      client.on('error', lost);
      try {
        const result = await fn(pgSession(client));
        client.off('error', lost);
        client.release();
        return result;
      } catch (err) {
        client.off('error', lost);
        // Destroy rather than reuse the connection: it drops any session lock or state fn left.
        client.release(true);
        throw err;
      }
    },
    close: once(async () => {
      stopTracking?.();
      try {
        await prisma.$disconnect();
        await Promise.all([pool.end(), plannedOnce.end()]);
      } finally {
        await afterClose?.();
      }
    }),
  };
}

/** One statement on `pool` (prepared unless `prepared` is false), timed as Prisma's statements are. */
async function pooledQuery<Row>(pool: pg.Pool, sql: string, params: unknown[], onQuery: QueryTimer | undefined, prepared = true): Promise<Row[]> {
  const start = performance.now();
  try {
    return (await pool.query({ ...(prepared ? { name: statementName(sql) } : {}), text: sql, values: params, types: RAW_TYPES })).rows as Row[];
  } finally {
    onQuery?.((performance.now() - start) / 1000);
  }
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
