// Which writes a register snapshot already contains. Every action publishes its events with the
// id of the transaction that committed the change (PostgreSQL's xid8); POST /register reads its
// state inside one transaction and keeps that transaction's snapshot. A queued event whose
// transaction the snapshot sees is already part of the state, so the queue drops it: nothing that
// happens while the state is read is lost or applied twice, in one process or many.
import type { PrismaClient } from './generated/client.ts';

type Queryable = Pick<PrismaClient, '$queryRawUnsafe'>;
const CURRENT_XID = 'SELECT pg_current_xact_id()::text AS xid';

/** The xid of the transaction `tx` runs in (assigned now if it has written nothing yet). */
export async function transactionId(tx: Queryable): Promise<number> {
  const [row] = await tx.$queryRawUnsafe<{ xid: string }[]>(CURRENT_XID);
  return Number(row!.xid);
}

/**
 * A transaction snapshot as PostgreSQL prints it (`xmin:xmax:xip,xip,...`), or just xmax when no
 * transaction was in progress (then xmin = xmax): the usual case, and a queue keeps it for its
 * whole life, so it costs nothing but a number.
 */
export type Snapshot = number | { xmin: number; xmax: number; inProgress: readonly number[] };

export async function currentSnapshot(tx: Queryable): Promise<Snapshot> {
  const [row] = await tx.$queryRawUnsafe<{ snapshot: string }[]>('SELECT pg_current_snapshot()::text AS snapshot');
  return parseSnapshot(row!.snapshot);
}

/** A snapshot from PostgreSQL's text form (`pg_current_snapshot()::text`). */
export function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, xip] = text.split(':');
  return xip ? { xmin: Number(xmin), xmax: Number(xmax), inProgress: xip.split(',').map(Number) } : Number(xmax);
}

/** Whether the transaction `xid` had committed when the snapshot was taken (aborted ones never publish). */
export function seenBy(snapshot: Snapshot, xid: number): boolean {
  if (typeof snapshot === 'number') return xid < snapshot;
  return xid < snapshot.xmin || (xid < snapshot.xmax && !snapshot.inProgress.includes(xid));
}
