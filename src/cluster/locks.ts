// Writes that must not interleave (a channel's messages, moves and reactions; a user's read
// flags) take turns across the cluster as they do inside one process (actors/serial.ts): each
// holds a PostgreSQL advisory lock on the channel (or user) from before it writes until its
// events are stored in the stream (the bus's `settled`), so the next writer, on any node,
// publishes after it and every node delivers the channel's events in commit order. Session
// locks on connections of their own: a write holds one while it uses the main pool, and a node
// that dies releases its locks with its connections.
//
// Measured against the alternative, routing each channel's writes to one owner node by
// consistent hashing: a turn costs two round trips to PostgreSQL (lock, unlock) per group-commit
// batch, and needs no membership, no hand-over when nodes come and go, and no second way of
// calling an action; routing would cost a NATS request per write from every other node and a
// serialized form of every channel action. docs/cluster.md has the figures.
//
// The outbox (outbox.ts) rides on the same statements: taking a lock also asks whether a dead
// holder left events unpublished under it (they go out first), and releasing it deletes the
// outbox rows of the events it waited for.
import pg from 'pg';
import { ANSWER_WITHIN_MS, waitAtMost, type EventBus } from '../bus/bus.ts';
import { ApiError } from '../errors.ts';
import { log } from '../log.ts';
import { turnKey, type EventOutbox } from './outbox.ts';

/** The first key of the two-key advisory locks: which kind of thing is locked (SYSTEM_BOTS: per realm, while one is made). */
export const LockSpace = { CHANNEL: 1, USER: 2, SYSTEM_BOTS: 3 } as const;

/** PostgreSQL's lock_not_available: the lock was not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * A writer that waited ANSWER_WITHIN_MS for a lock while NATS is away: its holder waits for NATS
 * to store its events, and would keep this writer waiting for the whole outage.
 */
const streamUnreachable = () => new ApiError('The event stream is unreachable, so this change cannot take its turn now; try again', 'BAD_REQUEST', 503);

const logLockConnectionError = (err: Error) => log.error('advisory lock connection failed', { error: err.message });

/** Returns a client to the pool (`destroy`: closing its connection, and any lock it held with it). */
function giveBack(client: pg.PoolClient, destroy: boolean): void {
  client.off('error', logLockConnectionError);
  client.release(destroy);
}

/** The node's own few connections for locks and the outbox, dropped soon when idle: every node of the cluster keeps its own. */
export function lockPool(databaseUrl: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 8, idleTimeoutMillis: 10_000 });
  pool.on('error', logLockConnectionError);
  return pool;
}

export class ClusterLocks {
  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: EventBus,
    private readonly outbox: EventOutbox,
  ) {}

  /**
   * Runs `write` while holding the lock of (`space`, `id`), which is released once its events are
   * stored, however long NATS takes: the order holds across a NATS outage. The caller has the
   * result as soon as the events are stored, or after ANSWER_WITHIN_MS while NATS is away; the
   * next write of the same channel, on any node, waits for the lock (while NATS is away, not
   * longer than ANSWER_WITHIN_MS: see lock()).
   */
  async turn<T>(space: number, id: number, write: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // While checked out, a client's connection errors go to it, not the pool: unheard, they would
    // end the process; the failing query reports them.
    client.on('error', logLockConnectionError);
    if (!Number.isSafeInteger(space) || !Number.isSafeInteger(id)) throw new Error(`not a lock: ${space}, ${id}`);
    const turn = turnKey(space, id);
    let orphaned: boolean;
    try {
      orphaned = await this.lock(client, space, id, turn);
    } catch (err) {
      giveBack(client, true);
      throw err;
    }
    try {
      if (orphaned) await this.outbox.recover({ turn });
      return await write();
    } finally {
      await waitAtMost(this.release(client, space, id), ANSWER_WITHIN_MS);
    }
  }

  /**
   * Takes the lock, waiting ANSWER_WITHIN_MS at a time (lock_timeout, for this statement only):
   * while NATS is away a writer gives up then rather than wait for the outage to end; with NATS
   * there, it waits on. Whether a dead holder left events unpublished under the lock comes back
   * in the same round trip (it sees what committed before the lock was granted).
   */
  private async lock(client: pg.PoolClient, space: number, id: number, turn: number): Promise<boolean> {
    for (;;) {
      try {
        const [, , check] = (await client.query(
          `SELECT set_config('lock_timeout', '${ANSWER_WITHIN_MS}', true); SELECT pg_advisory_lock(${space}, ${id}); SELECT EXISTS (SELECT 1 FROM "EventOutbox" WHERE turns @> ARRAY[${turn}::bigint]) AS orphaned`,
        )) as unknown as pg.QueryResult<{ orphaned: boolean }>[];
        return check!.rows[0]!.orphaned;
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        if (!this.bus.connected()) throw streamUnreachable();
      }
    }
  }

  private async release(client: pg.PoolClient, space: number, id: number): Promise<void> {
    const stored = this.bus.settled();
    if (stored) await stored;
    try {
      const rows = this.outbox.releasedBy(turnKey(space, id));
      if (rows.length === 0) await client.query('SELECT pg_advisory_unlock($1, $2)', [space, id]);
      else await client.query('WITH stored AS (DELETE FROM "EventOutbox" WHERE id = ANY($3::bigint[])) SELECT pg_advisory_unlock($1, $2)', [space, id, rows]);
      giveBack(client, false);
    } catch (err) {
      // The connection is dropped, and its lock with it.
      log.error('could not release an advisory lock', { space, id, error: String(err) });
      giveBack(client, true);
    }
  }
}
