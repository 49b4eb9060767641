// Events that survive their node: a node of a cluster saves the events of a change in an outbox
// row in the change's own transaction, publishes them once it committed, and deletes the row once
// NATS stored them. If the node dies in between, the row is still there and another node
// publishes it, rebuilt if need be (docs/ARCHITECTURE.md, "Events that outlive their node"):
// - at once, in order: a row names the locks (locks.ts) its writer held until its events were
//   stored, and deleted it before letting go of them; so a row found by the next holder of one of
//   them is a dead writer's, and the holder publishes it before its own write;
// - rows under no lock: when the other nodes notice the writer is gone, or it starts again.
// Readers drop a row they had already (the writer died after NATS stored it): bus/nats.ts.
import type pg from 'pg';
import type { EventEnvelope } from '../bus/bus.ts';
import type { NatsBus } from '../bus/nats.ts';
import type { RawQueryTarget } from '../db/transaction.ts';
import { rawQuery } from '../db/transaction.ts';
import { log } from '../log.ts';

/** One lock as a row names it: its two advisory-lock keys in one number. */
export const turnKey = (space: number, id: number): number => space * 2 ** 32 + id;

/** Rows under no lock are deleted in batches, this often. */
const DELETE_EVERY_MS = 100;

/** Rebuilds the `message` events of the messages a hot-path row names (actions/messages.ts). */
export type MessageEvents = (messageIds: number[], xid: number) => Promise<EventEnvelope[]>;

/** Which dead writer's rows to publish. */
export type Orphans = { turn: number } | { node: string } | { earlierRunsOf: string; run: string };

interface OutboxRow {
  id: string;
  events: string | null;
  messageIds: number[];
  xid: string | null;
}

export class EventOutbox {
  /** Rows published but not deleted, by id, with the locks whose release deletes them. */
  private readonly held = new Map<number, Set<number>>();
  private stored: number[] = [];
  private deleting: NodeJS.Timeout | null = null;
  private messageEvents: MessageEvents | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: NatsBus,
    readonly node: string,
  ) {}

  get origin(): string {
    return this.bus.origin;
  }

  /** Starts publishing dead writers' rows: those of this node's earlier runs at once. */
  async start(messageEvents: MessageEvents): Promise<void> {
    this.messageEvents = messageEvents;
    await this.recover({ earlierRunsOf: this.node, run: this.origin });
  }

  /** Saves the events of the open transaction in a row; returns its id. */
  async save(target: RawQueryTarget, envelopes: readonly EventEnvelope[]): Promise<number> {
    const [row] = await rawQuery<{ id: string }>(
      target,
      'INSERT INTO "EventOutbox" (node, origin, turns, events, "messageIds") VALUES ($1, $2, $3::bigint[], $4, $5::int[]) RETURNING id',
      this.node,
      this.origin,
      [],
      JSON.stringify(envelopes),
      [],
    );
    return Number(row!.id);
  }

  /** The row's events are published: it is deleted once they are stored (by the release of `turns`, if any). */
  published(row: number, turns: readonly number[]): void {
    if (turns.length > 0) return void this.held.set(row, new Set(turns));
    const stored = this.bus.settled() ?? Promise.resolve();
    void stored.then(() => {
      this.stored.push(row);
      this.deleting ??= setTimeout(() => void this.deleteStored(), DELETE_EVERY_MS);
    });
  }

  /** The rows to delete as `turn` is released (its events are stored by then); each is deleted with the first of its locks. */
  releasedBy(turn: number): number[] {
    const rows: number[] = [];
    for (const [row, turns] of this.held) {
      if (!turns.has(turn)) continue;
      rows.push(row);
      this.held.delete(row);
    }
    return rows;
  }

  /**
   * Publishes dead writers' rows, in the order written, and deletes them once NATS stored them.
   * Rows stay locked meanwhile: another node recovering the same ones waits and finds them gone.
   */
  async recover(which: Orphans): Promise<void> {
    const client = await this.pool.connect();
    let failed = false;
    try {
      await client.query('BEGIN');
      const [where, params] =
        'turn' in which
          ? ['turns @> ARRAY[$1::bigint]', [which.turn]]
          : 'node' in which
            ? ['node = $1', [which.node]]
            : ['node = $1 AND origin <> $2', [which.earlierRunsOf, which.run]];
      const { rows } = await client.query<OutboxRow>(`SELECT id, events, "messageIds", xid FROM "EventOutbox" WHERE ${where} ORDER BY id FOR UPDATE`, params);
      for (const row of rows) {
        const events = row.events !== null ? (JSON.parse(row.events) as EventEnvelope[]) : await this.messageEvents!(row.messageIds, Number(row.xid));
        this.bus.publishAll(events, Number(row.id));
      }
      const stored = this.bus.settled();
      if (stored) await stored;
      if (rows.length > 0) {
        await client.query('DELETE FROM "EventOutbox" WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
        log.warn('published the events of changes whose node died before it could', { rows: rows.length, ...which });
      }
      await client.query('COMMIT');
    } catch (err) {
      failed = true;
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release(failed);
    }
  }

  private async deleteStored(): Promise<void> {
    this.deleting = null;
    const rows = this.stored;
    this.stored = [];
    if (rows.length === 0) return;
    await this.pool.query('DELETE FROM "EventOutbox" WHERE id = ANY($1::bigint[])', [rows]).catch((err: unknown) => {
      // Left in place, they are published again when this node is gone or restarts, and dropped by readers as seen.
      log.warn('could not delete stored outbox rows', { rows: rows.length, error: String(err) });
    });
  }

  /** Deletes what is stored and due; later rows wait for the next start. */
  async close(): Promise<void> {
    if (this.deleting) clearTimeout(this.deleting);
    await this.deleteStored();
  }
}
