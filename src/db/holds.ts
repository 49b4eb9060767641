// Who holds the pool's connections, and for how long: a diagnosis for a pool that runs out
// (docs/operations.md, "The database pool"), on only when DATABASE_HOLD_LOG names a file. Each
// checkout is timed from the pool handing the connection over to its release, and charged to its
// holder: a transaction to the function that opened it (db/transaction.ts names it), a lone
// statement to its verb and tables. Time held but not spent in a statement is the holder's own
// work between round trips (or the event loop's delay in resuming it). Every 10 s a JSON line
// with what the interval's holds and waits came to is appended to the file.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type pg from 'pg';
import { currentTransaction } from './transaction.ts';

const INTERVAL_MS = 10_000;
/** Holders listed per line, the longest held first. */
const LISTED = 25;
/** Characters shown of a holder's first statement: its start, and its last WHERE (Prisma's column lists hide it otherwise). */
const SQL_SHOWN = 100;

interface Hold {
  acquired: number;
  asked: number;
  /** The opener of the transaction it runs, once a statement of it is seen. */
  opener?: string;
  statements: string[];
  firstSql?: string;
  busyMs: number;
}

interface Holder {
  holds: number;
  heldMs: number;
  busyMs: number;
  maxMs: number;
  statements: number;
  /** The statements of its last hold, for a look at what a transaction does. */
  example: string[];
  /** The start of its last hold's first statement, to tell statements of one shape apart. */
  sql: string;
}

interface Interval {
  holders: Map<string, Holder>;
  waits: number;
  waitMs: number;
  maxWaitMs: number;
}

const fresh = (): Interval => ({ holders: new Map(), waits: 0, waitMs: 0, maxWaitMs: 0 });

/** `UPDATE PresenceSequence,Presence`: a statement's verb and the tables it names, in order. */
export function statementShape(sql: string): string {
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '?';
  const tables: string[] = [];
  for (const m of sql.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:"public"\.)?"(\w+)"/gi)) if (!tables.includes(m[1]!)) tables.push(m[1]!);
  return tables.length ? `${verb} ${tables.join(',')}` : verb;
}

function sample(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  const where = text.lastIndexOf(' WHERE ');
  return where > SQL_SHOWN ? `${text.slice(0, SQL_SHOWN)} … ${text.slice(where + 1, where + 1 + SQL_SHOWN)}` : text.slice(0, 2 * SQL_SHOWN);
}

function sqlOf(config: unknown): string {
  return typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '');
}

/** Starts charging `pool`'s checkouts to their holders; returns the function that writes the last interval and stops. */
export function trackHolds(pool: pg.Pool, file: string): () => void {
  const holds = new WeakMap<pg.PoolClient, Hold>();
  let interval = fresh();
  let started = Date.now();
  // A statement's answer waits in the socket while the event loop is busy: that wait is held time too.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();

  const connect = pool.connect.bind(pool) as (cb: (err: Error | undefined, client: pg.PoolClient, done: () => void) => void) => void;
  // pg's pool.query checks out through this.connect too, so both ways in are timed.
  (pool as { connect: unknown }).connect = (cb?: (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => {
    const asked = performance.now();
    const given = (err: Error | undefined, client: pg.PoolClient) => {
      if (client) holds.set(client, { asked, acquired: performance.now(), statements: [], busyMs: 0 });
    };
    if (cb) {
      connect((err, client, done) => {
        given(err, client);
        cb(err, client, done);
      });
      return undefined;
    }
    return new Promise<pg.PoolClient>((resolve, reject) =>
      connect((err, client) => {
        given(err, client);
        if (err) reject(err);
        else resolve(client);
      }),
    );
  };

  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const hold = holds.get(client as pg.PoolClient);
      if (!hold) return query(...args);
      const sql = sqlOf(args[0]);
      hold.statements.push(statementShape(sql));
      if (hold.firstSql === undefined && !/^\s*BEGIN/i.test(sql)) hold.firstSql = sample(sql);
      hold.opener ??= currentTransaction()?.opener;
      const start = performance.now();
      const done = () => (hold.busyMs += performance.now() - start);
      const callback = args.findIndex((a) => typeof a === 'function');
      if (callback >= 0) {
        const cb = args[callback] as (...r: unknown[]) => void;
        args[callback] = (...r: unknown[]) => {
          done();
          cb(...r);
        };
        return query(...args);
      }
      const result = query(...args) as Promise<unknown>;
      result.then(done, done);
      return result;
    };
  });

  pool.on('release', (_err, client) => {
    const hold = holds.get(client as pg.PoolClient);
    if (!hold) return;
    holds.delete(client as pg.PoolClient);
    const heldMs = performance.now() - hold.acquired;
    const waitMs = hold.acquired - hold.asked;
    interval.waits++;
    interval.waitMs += waitMs;
    interval.maxWaitMs = Math.max(interval.maxWaitMs, waitMs);
    const key = hold.opener ? `tx ${hold.opener}` : hold.statements.length === 1 ? hold.statements[0]! : `session ${hold.statements.slice(0, 3).join('; ')}`;
    let holder = interval.holders.get(key);
    if (!holder) interval.holders.set(key, (holder = { holds: 0, heldMs: 0, busyMs: 0, maxMs: 0, statements: 0, example: [], sql: '' }));
    holder.holds++;
    holder.heldMs += heldMs;
    holder.busyMs += hold.busyMs;
    holder.maxMs = Math.max(holder.maxMs, heldMs);
    holder.statements += hold.statements.length;
    holder.example = hold.statements;
    holder.sql = hold.firstSql ?? '';
  });

  const write = () => {
    const now = Date.now();
    const list = [...interval.holders].sort((a, b) => b[1].heldMs - a[1].heldMs).slice(0, LISTED);
    const round = (ms: number) => Math.round(ms * 10) / 10;
    const line = {
      from: new Date(started).toISOString(),
      to: new Date(now).toISOString(),
      pool: { max: pool.options.max, waits: interval.waits, waitMs: round(interval.waitMs), maxWaitMs: round(interval.maxWaitMs) },
      eventLoopDelayMs: { p50: round(loopDelay.percentile(50) / 1e6), p99: round(loopDelay.percentile(99) / 1e6), max: round(loopDelay.max / 1e6) },
      holders: list.map(([key, h]) => ({
        key,
        holds: h.holds,
        heldMs: round(h.heldMs),
        busyMs: round(h.busyMs),
        maxMs: round(h.maxMs),
        statements: h.statements,
        example: h.example.slice(0, 12),
        sql: h.sql,
      })),
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    interval = fresh();
    started = now;
    loopDelay.reset();
  };
  const timer = setInterval(write, INTERVAL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    write();
    loopDelay.disable();
  };
}
