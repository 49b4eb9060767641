// What another node needs to rebuild a queue whose node died (docs/cluster.md, "Queues that
// outlive their node"): a row per queue, written in register's own transaction (who, which
// options, the snapshot its state was read in, the stream sequence it starts after), then a
// checkpoint every few seconds, one statement for all the node's queues that moved: where in the
// stream replaying it starts, the id its first replayed event gets, what its client acknowledged,
// and when the client was last there. Rows of queues the node ended go in the same pass. Another
// node claims the row of a dead node's queue to rebuild it (gateway/queue-takeover.ts), and any node
// deletes the rows of dead nodes' queues idle past their timeout.
import type { QueueOptions } from '../../actors/queue-options.ts';
import type { EventQueue } from '../../actors/queue.ts';
import type { QueueRegistry } from '../../actors/registry.ts';
import type { StreamPlace } from '../bus/bus.ts';
import type { NatsBus } from '../bus/nats.ts';
import { parseSnapshot, type Snapshot } from '../db/commits.ts';
import { rawQuery, type RawQueryTarget } from '../db/transaction.ts';
import { log } from '../log.ts';

/** How often a node writes its queues' checkpoints. */
export const CHECKPOINT_EVERY_MS = 3_000;
/** How often a node deletes the rows of dead nodes' queues idle past their timeout. */
export const SWEEP_EVERY_MS = 10_000;

/** The insert of a queue's row, whose snapshot is `snapshot` (SQL). */
const insertRow = (snapshot: string) =>
  `INSERT INTO "QueueDescriptor" ("id", "userId", "realmId", "node", "options", "snapshot", "afterSeq", "deliveredThrough", "nextEventId", "newestPrunedId", "lastActivity")
   VALUES ($1, $2, $3, $4, $5::jsonb, ${snapshot}, $6, $7, 0, -1, to_timestamp($8 / 1000.0))
   RETURNING "snapshot"`;

/** A dead node's queue as its row describes it, claimed by this node. */
export interface Claimed {
  userId: number;
  realmId: number;
  options: QueueOptions;
  snapshot: string;
  afterSeq: number;
  deliveredThrough: number;
  nextEventId: number;
  newestPrunedId: number;
  /** The `restart` events a graceful restart gave the queue: `[id, afterSeq]`, where each sits. */
  restarts: [number, number][];
}

/** What a row says of a queue, as last written. */
interface Written {
  nextId: number;
  prunedId: number;
  activity: number;
}

export class QueueDescriptors {
  private readonly written = new Map<string, Written>();
  private readonly timer: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: RawQueryTarget,
    private readonly bus: NatsBus,
    private readonly queues: QueueRegistry,
    /** This node's NODE_ID. */
    readonly node: string,
    /** The nodes alive now, this one included; null while this node cannot tell (ClusterNode.liveNodes). */
    private readonly liveNodes: () => string[] | null,
  ) {
    this.timer = setInterval(() => void this.checkpoint(), CHECKPOINT_EVERY_MS);
    this.timer.unref();
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  /** Where in the stream a queue made now starts. */
  position(): StreamPlace {
    return this.bus.readPosition();
  }

  /**
   * The row of a queue being registered, as the first statement of register's transaction `tx`:
   * it also takes the transaction's snapshot, which it stores and returns, so the row costs
   * register no statement of its own.
   */
  async record(tx: RawQueryTarget['prisma'], queue: EventQueue, from: StreamPlace): Promise<Snapshot> {
    const [row] = await tx.$queryRawUnsafe<{ snapshot: string }[]>(insertRow('pg_current_snapshot()::text'), ...this.rowValues(queue, from));
    this.written.set(queue.id, { nextId: 0, prunedId: -1, activity: queue.lastConnection });
    return parseSnapshot(row!.snapshot);
  }

  /**
   * The row of a queue made without a register (GET /events with no queue id), written after the
   * answer: it has no state, so its snapshot (`1:1:`) holds no transaction and replaying filters
   * nothing out. A node dying before the insert loses the queue, as before there were rows.
   */
  async recordStateless(queue: EventQueue, from: StreamPlace): Promise<void> {
    try {
      await rawQuery(this.db, insertRow(`'1:1:'`), ...this.rowValues(queue, from));
      this.written.set(queue.id, { nextId: 0, prunedId: -1, activity: queue.lastConnection });
    } catch (err) {
      log.warn('could not describe an event queue', { error: String(err) });
    }
  }

  private rowValues(queue: EventQueue, from: StreamPlace): unknown[] {
    return [queue.id, queue.userId, queue.realmId, this.node, JSON.stringify(queue.options), from.afterSeq, from.deliveredThrough, queue.lastConnection];
  }

  /**
   * Makes `queueId`, a queue of `dead`, this node's, if it still is `dead`'s (and `userId`'s, when
   * given): of nodes claiming it at once, one gets the row, the others null.
   */
  async claim(queueId: string, userId: number | undefined, dead: string): Promise<Claimed | null> {
    const [row] = await rawQuery<Claimed>(
      this.db,
      `UPDATE "QueueDescriptor" SET "node" = $1 WHERE "id" = $2 AND "node" = $3 AND ($4::int IS NULL OR "userId" = $4)
       RETURNING "userId", "realmId", "options", "snapshot", "afterSeq"::float8 AS "afterSeq",
         "deliveredThrough"::float8 AS "deliveredThrough", "nextEventId", "newestPrunedId", "restarts"`,
      this.node,
      queueId,
      dead,
      userId ?? null,
    );
    return row ?? null;
  }

  /** The node a row names now; null when there is no such queue (of `userId`, when given). */
  async ownerOf(queueId: string, userId: number | undefined): Promise<string | null> {
    const [row] = await rawQuery<{ node: string }>(
      this.db,
      `SELECT "node" FROM "QueueDescriptor" WHERE "id" = $1 AND ($2::int IS NULL OR "userId" = $2)`,
      queueId,
      userId ?? null,
    );
    return row?.node ?? null;
  }

  /** A claimed queue this node could not rebuild: gone for good (`dead` null), or given back to `dead` for another try. */
  async unclaim(queueId: string, dead: string | null): Promise<void> {
    if (dead === null) await rawQuery(this.db, `DELETE FROM "QueueDescriptor" WHERE "id" = $1 AND "node" = $2`, queueId, this.node);
    else await rawQuery(this.db, `UPDATE "QueueDescriptor" SET "node" = $3 WHERE "id" = $1 AND "node" = $2`, queueId, this.node, dead);
  }

  /** Checkpoints a queue rebuilt here from `row` from now on. */
  adopt(queue: EventQueue, row: Claimed): void {
    this.written.set(queue.id, { nextId: row.nextEventId, prunedId: row.newestPrunedId, activity: 0 });
  }

  /**
   * Saved queues this node is taking back after a restart, whose `restart` events get ids
   * `restartIds` and sit after stream sequence `afterSeq`: notes that on the rows that still name
   * this node (the event is not in the stream, so a takeover puts it back there and numbers what
   * follows as the client saw it), keeping the earlier restarts a checkpoint has not passed, and
   * returns the ids of the queues another node took over meanwhile (a statement for the restore's
   * transaction: a queue comes back only with its note written).
   */
  takeBack(ids: readonly string[], restartIds: readonly number[], afterSeq: number) {
    return this.db.prisma.$queryRawUnsafe<{ id: string }[]>(
      `WITH noted AS (
         UPDATE "QueueDescriptor" d SET "restarts" = COALESCE(
             (SELECT jsonb_agg(r) FROM jsonb_array_elements(d."restarts") r WHERE (r->>0)::int >= d."nextEventId"), '[]'::jsonb)
           || jsonb_build_array(jsonb_build_array(c.restart, $3::bigint))
         FROM unnest($1::text[], $2::int[]) AS c(id, restart)
         WHERE d."id" = c.id AND d."node" = $4
         RETURNING d."id")
       SELECT "id" FROM "QueueDescriptor" WHERE "id" = ANY($1::text[]) AND "id" NOT IN (SELECT "id" FROM noted)`,
      ids,
      restartIds,
      afterSeq,
      this.node,
    );
  }

  /** Checkpoints queues restored after a restart (takeBack): their next pass writes them whole. */
  restored(queues: readonly EventQueue[]): void {
    for (const queue of queues) this.written.set(queue.id, { nextId: -1, prunedId: -2, activity: 0 });
  }

  /**
   * Deletes the rows of queues whose node is gone and whose client has not been there for their
   * idle timeout: nobody will take them over. One statement on the whole table, every few seconds.
   */
  async sweep(): Promise<void> {
    const live = this.liveNodes();
    if (live === null) return;
    try {
      const swept = await rawQuery<{ id: string }>(
        this.db,
        `DELETE FROM "QueueDescriptor" WHERE NOT ("node" = ANY($1::text[]))
           AND "lastActivity" < now() - make_interval(secs => ("options"->>'idleTimeoutSecs')::float8) RETURNING "id"`,
        live,
      );
      if (swept.length) log.info('deleted the idle queues of nodes that are gone', { count: swept.length });
    } catch (err) {
      log.warn('could not sweep the queues of nodes that are gone', { error: String(err) });
    }
  }

  /** Writes what moved since the last pass; one pass at a time. */
  checkpoint(): Promise<void> {
    this.writing = this.writing.then(() =>
      this.writeMoved().catch((err: unknown) => log.warn('could not checkpoint the event queues', { error: String(err) })),
    );
    return this.writing;
  }

  private async writeMoved(): Promise<void> {
    const position = this.bus.readPosition();
    const now = Date.now();
    const ids: string[] = [];
    const seqs: number[] = [];
    const delivered: number[] = [];
    const nextIds: number[] = [];
    const prunedIds: number[] = [];
    const activities: number[] = [];
    const ended: string[] = [];
    for (const [id, was] of this.written) {
      const queue = this.queues.peek(id);
      if (!queue) {
        ended.push(id);
        continue;
      }
      const at = queue.checkpoint(position);
      // A client reading now (a parked poll, a socket) is there: said once per half idle timeout,
      // so that if this node dies its queue is not taken for idle before the client comes back.
      const reading = queue.consumer !== null && now - was.activity > queue.options.idleTimeoutSecs * 500 ? now : 0;
      const activity = Math.max(was.activity, queue.lastConnection, reading);
      // A queue that neither took events nor was read since its row needs no new one: replaying
      // from the old place gives it the same.
      if (at === null || (at.nextId === was.nextId && queue.newestPrunedId === was.prunedId && activity === was.activity)) continue;
      const row = { nextId: at.nextId, prunedId: queue.newestPrunedId, activity };
      ids.push(id);
      seqs.push(at.from.afterSeq);
      delivered.push(at.from.deliveredThrough);
      nextIds.push(row.nextId);
      prunedIds.push(row.prunedId);
      activities.push(row.activity);
      this.written.set(id, row);
    }
    if (ids.length) {
      await rawQuery(
        this.db,
        `UPDATE "QueueDescriptor" d SET "afterSeq" = c.seq, "deliveredThrough" = c.delivered, "nextEventId" = c.next, "newestPrunedId" = c.pruned,
           "lastActivity" = to_timestamp(c.at / 1000.0)
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[], $5::int[], $6::bigint[]) AS c(id, seq, delivered, next, pruned, at)
         WHERE d."id" = c.id AND d."node" = $7`,
        ids,
        seqs,
        delivered,
        nextIds,
        prunedIds,
        activities,
        this.node,
      );
    }
    if (ended.length) {
      await rawQuery(this.db, `DELETE FROM "QueueDescriptor" WHERE "id" = ANY($1::text[]) AND "node" = $2`, ended, this.node);
      for (const id of ended) this.written.delete(id);
    }
  }

  /** Stops checkpointing; the rows stay (a graceful stop saves its queues under the same ids). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    await this.writing;
  }
}
