// Work queues kept in PostgreSQL tables (PushOutbox for the push worker, OutgoingWebhookCall for
// outgoing webhooks): rows are written in the transaction of the change that causes them, so the
// work exists exactly when the change committed, and survives a restart. Workers claim due rows
// with FOR UPDATE SKIP LOCKED and a lease (their next attempt moved past the longest a call may
// take), so several processes can drain one table without making a call twice at once, and a
// process that dies mid-call leaves its rows to be claimed again when the lease ends.
import type { PrismaClient } from './generated/client.ts';

/** What the queue functions need of the server's services (App has it). */
interface OutboxDatabase {
  prisma: PrismaClient;
}

/** The tables drained this way; every one has `id`, `attempts`, `nextAttemptAt` and `createdAt`. */
export type OutboxTable = 'PushOutbox' | 'OutgoingWebhookCall';

/**
 * Claims up to `limit` due rows, in the order they were queued, counting an attempt on each;
 * returns the `columns` asked for. The times are compared in UTC, as the rows are written.
 */
export function claimDue<Row>(app: OutboxDatabase, table: OutboxTable, columns: string, limit: number, leaseMs: number): Promise<Row[]> {
  return app.prisma.$queryRawUnsafe<Row[]>(
    `UPDATE "${table}" SET "nextAttemptAt" = (now() AT TIME ZONE 'UTC') + $1 * interval '1 millisecond', attempts = attempts + 1
      WHERE id IN (SELECT id FROM "${table}" WHERE "nextAttemptAt" <= (now() AT TIME ZONE 'UTC') ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING ${columns}`,
    leaseMs,
  );
}

/** The rows wait `delayMs` before their next attempt. */
export async function retryLater(app: OutboxDatabase, table: OutboxTable, ids: number[], delayMs: number): Promise<void> {
  if (ids.length === 0) return;
  await app.prisma.$executeRawUnsafe(
    `UPDATE "${table}" SET "nextAttemptAt" = (now() AT TIME ZONE 'UTC') + $2 * interval '1 millisecond' WHERE id = ANY($1::int[])`,
    ids,
    delayMs,
  );
}

export async function removeDone(app: OutboxDatabase, table: OutboxTable, ids: number[]): Promise<void> {
  if (ids.length > 0) await app.prisma.$executeRawUnsafe(`DELETE FROM "${table}" WHERE id = ANY($1::int[])`, ids);
}

/** When the worker should look again: the soonest row's next attempt, or after `pollMs` for rows another process queues. */
export async function nextLook(app: OutboxDatabase, table: OutboxTable, pollMs: number): Promise<Date> {
  // The column holds UTC without a zone; epoch reads it as such.
  const [next] = await app.prisma.$queryRawUnsafe<{ at: number | null }[]>(
    `SELECT (extract(epoch FROM min("nextAttemptAt")) * 1000)::float8 AS at FROM "${table}"`,
  );
  const poll = Date.now() + pollMs;
  return new Date(next?.at != null ? Math.min(next.at, poll) : poll);
}

/** Exponential backoff from `firstMs` after the first failed attempt, capped at `maxMs`. */
export const backoff = (attempts: number, firstMs: number, maxMs: number): number => Math.min(firstMs * 2 ** Math.max(attempts - 1, 0), maxMs);
