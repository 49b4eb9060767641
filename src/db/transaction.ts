// The ambient transaction (as Django's connection is): inside `runInTransaction`, `app.prisma` is
// the open transaction, so every query an action makes on its way (checks, cache loads,
// recipients) reads what the transaction sees, waits on the rows it locked, and never needs a
// second connection. actions/transaction.ts builds the actions' `atomic` on it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Prisma, PrismaClient } from './generated/client.ts';

export interface OpenTransaction {
  tx: Prisma.TransactionClient;
  /** Work that outlives the body (a timer, an actor's next job) must not reach a finished transaction. */
  open: boolean;
  /** The functions that opened it, when the pool's holders are tracked (db/holds.ts). */
  opener?: string;
}

const ambient = new AsyncLocalStorage<OpenTransaction | undefined>();
/**
 * Transactions open now. On Node 20 an AsyncLocalStorage in use turns on async hooks for every
 * promise of the process (measured: ~15% of the CPU of a 10,000-poll fan-out), so the storage is
 * switched off whenever no transaction is open; the next `run` switches it on again.
 */
let openTransactions = 0;

export function currentTransaction(): OpenTransaction | undefined {
  const t = ambient.getStore();
  return t?.open ? t : undefined;
}

/** Whether the caller runs inside a transaction (then reads must not come from caches it may be changing). */
export const inTransaction = (): boolean => currentTransaction() !== undefined;

/**
 * `fn`, to be called later from any async context, running in the caller's transaction (or in
 * none if the caller is in none): AsyncLocalStorage.bind's effect for the one storage in use here,
 * without the AsyncResource bind makes per call (with no transaction open it is a plain call).
 */
export function inCallersTransaction<T>(fn: () => T): () => T {
  const store = ambient.getStore();
  return () => ambient.run(store, fn);
}

/** What `rawQuery` runs a statement on: Prisma (the open transaction, if any) and the pool beside it (db/client.ts). */
export interface RawQueryTarget {
  prisma: Pick<PrismaClient, '$queryRawUnsafe'>;
  db: { query<Row>(sql: string, params: unknown[]): Promise<Row[]>; queryPlannedPerCall<Row>(sql: string, params: unknown[]): Promise<Row[]> };
}

/**
 * A hot raw statement: in the open transaction if there is one, else straight on the pool, where
 * it skips Prisma's own work (db/client.ts `query`).
 */
export function rawQuery<Row>(target: RawQueryTarget, sql: string, ...params: unknown[]): Promise<Row[]> {
  return currentTransaction() ? target.prisma.$queryRawUnsafe<Row[]>(sql, ...params) : target.db.query<Row>(sql, params);
}

/** rawQuery for a statement planned for its values at each call (db/client.ts queryPlannedPerCall). */
export function rawQueryPlannedPerCall<Row>(target: RawQueryTarget, sql: string, ...params: unknown[]): Promise<Row[]> {
  return currentTransaction() ? target.prisma.$queryRawUnsafe<Row[]>(sql, ...params) : target.db.queryPlannedPerCall<Row>(sql, params);
}

/**
 * The database as seen from inside `tx`, a transaction not made by `runInTransaction` (register's
 * snapshot): its pooled statements run in `tx` too, so they read the snapshot, and a reader holding
 * the transaction's connection never waits for a second one (with the pool's every connection so
 * held, none would come).
 */
export function databaseWithin<D extends RawQueryTarget['db']>(db: D, tx: RawQueryTarget['prisma']): D {
  const inTx = <Row>(sql: string, params: unknown[]) => tx.$queryRawUnsafe<Row[]>(sql, ...params);
  return { ...db, query: inTx, queryPlannedPerCall: inTx };
}

let nameOpeners = false;

/** From now on each transaction knows the functions that opened it (db/holds.ts charges its connection to them). */
export function nameTransactionOpeners(): void {
  nameOpeners = true;
}

/** The first two named callers on the stack that are not the transaction's own plumbing. */
function openerOf(stack: string | undefined): string {
  const names: string[] = [];
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const name = /^\s*at (?:async )?([\w$.<>]+) /.exec(line)?.[1];
    if (!name || /^(runInTransaction|atomic|Proxy\.|Object\.|process\.|new )/.test(name)) continue;
    names.push(name);
    if (names.length === 2) break;
  }
  return names.join(' < ') || 'unknown';
}

// Prisma's 2 s / 5 s defaults are short for checks that render Markdown on a busy machine.
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 30_000 };

/** Runs `body` in a new transaction that the code it calls sees as `app.prisma`. */
export async function runInTransaction<T>(base: PrismaClient, body: (t: OpenTransaction) => Promise<T>): Promise<T> {
  let current: OpenTransaction | undefined;
  const opener = nameOpeners ? openerOf(new Error().stack) : undefined;
  openTransactions++;
  try {
    return await base.$transaction(async (tx) => {
      current = { tx, open: true, opener };
      return ambient.run(current, () => body(current!));
    }, TRANSACTION_OPTIONS);
  } finally {
    if (current) current.open = false;
    if (--openTransactions === 0) ambient.disable();
  }
}

/** The client `app.prisma` is: the base client, or inside `runInTransaction` the open transaction. */
export function transactionAware(base: PrismaClient): PrismaClient {
  return new Proxy(base, {
    get(target, prop) {
      const tx = currentTransaction()?.tx;
      const client: object = tx ?? target;
      // Inside a transaction a nested one joins it, as Django's inner atomic(savepoint=False) does.
      if (tx && prop === '$transaction') return joinTransaction(tx);
      const value = Reflect.get(client, prop);
      return typeof value === 'function' ? value.bind(client) : value;
    },
  });
}

function joinTransaction(tx: Prisma.TransactionClient) {
  return async (arg: unknown) => {
    if (typeof arg === 'function') return arg(tx);
    const results: unknown[] = [];
    for (const query of arg as Promise<unknown>[]) results.push(await query);
    return results;
  };
}

/**
 * `tx` making its requests one after another. Prisma joins the requests an interactive transaction
 * gets in one tick into a batch, which it runs one statement after another anyway, but compiles as
 * a whole unless the same batch was seen before, and never caches one that starts with a raw
 * statement (register made three batches, two of them compiled anew every time: 30 % of the main
 * thread's time). One at a time, each statement's plan comes from Prisma's cache of single
 * statements, and a raw one needs none; on the one connection of the transaction they ran one
 * after another anyway.
 */
export function oneAtATime<T extends object>(tx: T): T {
  let last: Promise<unknown> = Promise.resolve();
  const queued =
    (call: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): Promise<unknown> => {
      const result = last.then(() => call(...args));
      last = result.catch(() => undefined);
      return result;
    };
  const methods = <O extends object>(target: O, wrapDelegates: boolean): O =>
    new Proxy(target, {
      get(t, prop) {
        const value = Reflect.get(t, prop);
        if (typeof value === 'function') return queued(value.bind(t));
        if (wrapDelegates && typeof prop === 'string' && !prop.startsWith('$') && value && typeof value === 'object') return methods(value, false);
        return value;
      },
    });
  return methods(tx, true);
}
