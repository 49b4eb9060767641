// Times every statement Prisma sends, for the query-time metric, and counts the transactions it
// opens (their BEGIN is sent before the wrapping, so a request's statements are the timed ones
// plus its transactions): the pg adapter's connection and each transaction it opens get their
// query methods wrapped, so exactly Prisma's statements count
// (migrations and maintenance sessions go around Prisma and are not timed). A transaction's
// statements also run one after another: actions read in parallel (Promise.all) inside a
// transaction, and pg only queues statements on a busy connection as a deprecated courtesy that
// pg 9 removes.
import type { SqlDriverAdapterFactory, SqlQueryable } from '@prisma/driver-adapter-utils';

/** Told each statement's duration in seconds. */
export type QueryTimer = (seconds: number) => void;

function timed<A, R>(run: (arg: A) => Promise<R>, onQuery: QueryTimer): (arg: A) => Promise<R> {
  return async (arg) => {
    const start = performance.now();
    try {
      return await run(arg);
    } finally {
      onQuery((performance.now() - start) / 1000);
    }
  };
}

/** Runs the calls of each function it wraps one at a time, in the order made. */
function oneAtATime(): <A, R>(run: (arg: A) => Promise<R>) => (arg: A) => Promise<R> {
  let last: Promise<unknown> = Promise.resolve();
  return (run) => (arg) => {
    const result = last.then(() => run(arg));
    last = result.catch(() => undefined);
    return result;
  };
}

function timeQueries<T extends SqlQueryable>(target: T, onQuery: QueryTimer, serialize = false): T {
  const wrap = serialize ? oneAtATime() : <A, R>(run: (arg: A) => Promise<R>) => run;
  target.queryRaw = wrap(timed(target.queryRaw.bind(target), onQuery));
  target.executeRaw = wrap(timed(target.executeRaw.bind(target), onQuery));
  return target;
}

/**
 * The factory Prisma is given: connects through `inner`, times what the connection and its
 * transactions run, and tells `onTransaction` of each transaction it opens.
 */
export function timedAdapter(inner: SqlDriverAdapterFactory, onQuery: QueryTimer, onTransaction?: () => void): SqlDriverAdapterFactory {
  return {
    provider: inner.provider,
    adapterName: inner.adapterName,
    async connect() {
      const adapter = timeQueries(await inner.connect(), onQuery);
      const startTransaction = adapter.startTransaction.bind(adapter);
      adapter.startTransaction = async (isolationLevel) => {
        onTransaction?.();
        return timeQueries(await startTransaction(isolationLevel), onQuery, true);
      };
      return adapter;
    },
  };
}
