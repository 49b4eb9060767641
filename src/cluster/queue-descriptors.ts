// What another node needs to rebuild a queue whose node died (docs/cluster.md, "Queues that
// outlive their node"): a row per queue, written in register's own transaction (who, which
// options, the snapshot its state was read in, the stream sequence it starts after), then a
// checkpoint every few seconds, one statement for all the node's queues that moved: where in the
// stream replaying it starts, the id its first replayed event gets, what its client acknowledged,
// and when the client was last there. Rows of queues the node ended go in the same pass.
import type { EventQueue } from '../../actors/queue.ts';
import type { QueueRegistry } from '../../actors/registry.ts';
import type { NatsBus } from '../bus/nats.ts';
import { parseSnapshot, type Snapshot } from '../db/commits.ts';
import { rawQuery, type RawQueryTarget } from '../db/transaction.ts';
import { log } from '../log.ts';

/** How often a node writes its queues' checkpoints. */
export const CHECKPOINT_EVERY_MS = 3_000;

/** What a row says of a queue, as last written. */
interface Written {
  afterSeq: number;
  nextId: number;
  prunedId: number;
  activity: number;
}

export class QueueDescriptors {
  private readonly written = new Map<string, Written>();
  private readonly timer: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: RawQueryTarget,
    private readonly bus: NatsBus,
    private readonly queues: QueueRegistry,
    /** This node's NODE_ID. */
    readonly node: string,
  ) {
    this.timer = setInterval(() => void this.checkpoint(), CHECKPOINT_EVERY_MS);
    this.timer.unref();
  }

  /** The stream sequence a queue made now starts after. */
  position(): number {
    return this.bus.readPosition();
  }

  /**
   * The row of a queue being registered, as the first statement of register's transaction `tx`:
   * it also takes the transaction's snapshot, which it stores and returns, so the row costs
   * register no statement of its own.
   */
  async record(tx: RawQueryTarget['prisma'], queue: EventQueue, afterSeq: number): Promise<Snapshot> {
    const activity = queue.lastConnection;
    const [row] = await tx.$queryRawUnsafe<{ snapshot: string }[]>(
      `INSERT INTO "QueueDescriptor" ("id", "userId", "realmId", "node", "options", "snapshot", "afterSeq", "nextEventId", "newestPrunedId", "lastActivity")
       VALUES ($1, $2, $3, $4, $5::jsonb, pg_current_snapshot()::text, $6, 0, -1, to_timestamp($7 / 1000.0))
       RETURNING "snapshot"`,
      queue.id,
      queue.userId,
      queue.realmId,
      this.node,
      JSON.stringify(queue.options),
      afterSeq,
      activity,
    );
    this.written.set(queue.id, { afterSeq, nextId: 0, prunedId: -1, activity });
    return parseSnapshot(row!.snapshot);
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
    const ids: string[] = [];
    const seqs: number[] = [];
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
      // A queue that neither took events nor was read since its row needs no new one: replaying
      // from the old place gives it the same.
      if (at === null || (at.nextId === was.nextId && queue.newestPrunedId === was.prunedId && queue.lastConnection === was.activity)) continue;
      const now = { afterSeq: at.afterSeq, nextId: at.nextId, prunedId: queue.newestPrunedId, activity: queue.lastConnection };
      ids.push(id);
      seqs.push(now.afterSeq);
      nextIds.push(now.nextId);
      prunedIds.push(now.prunedId);
      activities.push(now.activity);
      this.written.set(id, now);
    }
    if (ids.length) {
      await rawQuery(
        this.db,
        `UPDATE "QueueDescriptor" d SET "afterSeq" = c.seq, "nextEventId" = c.next, "newestPrunedId" = c.pruned, "lastActivity" = to_timestamp(c.at / 1000.0)
         FROM unnest($1::text[], $2::bigint[], $3::int[], $4::int[], $5::bigint[]) AS c(id, seq, next, pruned, at)
         WHERE d."id" = c.id AND d."node" = $6`,
        ids,
        seqs,
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
    await this.writing;
  }
}
