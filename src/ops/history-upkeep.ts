// Keeps what reads of a long history need and no request should compute: channel traffic per day
// (count_channel_traffic(), Zulip's analytics counts behind stream_weekly_traffic and
// is_recently_active), and the fill-in of rows older than a migration (HistoryBackfill: the search
// vector, the is_private flag bit, unread rows' conversation). Small batches, each its own statement, so no lock is held for
// long; every node may run it, the row locks let one of them work at a time.
import type { App } from '../app.ts';
import { FLAG_BITS, IS_PRIVATE } from '../domain/message-flags.ts';

/** Message ids per batch: a statement of well under a second on a 2-core machine. */
const BATCH_IDS = 20_000;
/** How often traffic is counted (Zulip's analytics run every few minutes to hours). */
const TRAFFIC_INTERVAL_MS = 10 * 60_000;

/** The UPDATE filling one kind of backfill for message ids $1..$2. */
const BACKFILLS: Record<string, string> = {
  search_vector: `UPDATE "Message" SET "searchVector" = message_search_vector(topic, "renderedContent")
    WHERE id BETWEEN $1 AND $2 AND "searchVector" IS NULL`,
  is_private: `UPDATE "UserMessage" um SET flags = um.flags | ${IS_PRIVATE} FROM "Message" m
    WHERE m.id BETWEEN $1 AND $2 AND m."directGroupId" IS NOT NULL AND um."messageId" = m.id AND (um.flags & ${IS_PRIVATE}) = 0`,
  unread_conversation: `UPDATE "UserMessage" um SET "channelId" = m."channelId", topic = m.topic, "directGroupId" = m."directGroupId" FROM "Message" m
    WHERE m.id BETWEEN $1 AND $2 AND um."messageId" = m.id AND (um.flags & ${FLAG_BITS.read}) = 0 AND um."channelId" IS NULL AND um."directGroupId" IS NULL`,
};

/**
 * Tables a backfill rewrote rows of that an index-only scan reads (register's unread section):
 * vacuumed once it is done, so the scan skips their heap again; autovacuum would wait until a
 * fifth of the table had changed.
 */
const VACUUM_AFTER: Record<string, string> = { unread_conversation: '"UserMessage"' };

/** One batch of one backfill: the job and whether it is done; undefined once none is left (or another node holds them). */
async function backfillBatch(app: App): Promise<{ name: string; done: boolean } | undefined> {
  return app.prisma.$transaction(async (tx) => {
    // Only the kinds this release knows: a newer node of the cluster may have added others.
    const [job] = await tx.$queryRaw<{ name: string; nextId: number; untilId: number }[]>`
      SELECT name, "nextId", "untilId" FROM "HistoryBackfill" WHERE name = ANY(${Object.keys(BACKFILLS)}::text[])
       ORDER BY name LIMIT 1 FOR UPDATE SKIP LOCKED`;
    if (!job) return undefined;
    const to = Math.min(job.nextId + BATCH_IDS - 1, job.untilId);
    await tx.$executeRawUnsafe(BACKFILLS[job.name]!, job.nextId, to);
    if (to >= job.untilId) await tx.$executeRaw`DELETE FROM "HistoryBackfill" WHERE name = ${job.name}`;
    else await tx.$executeRaw`UPDATE "HistoryBackfill" SET "nextId" = ${to + 1} WHERE name = ${job.name}`;
    return { name: job.name, done: to >= job.untilId };
  });
}

/** Backfills until none is left or the server stops. */
async function backfill(app: App, stopping: () => boolean): Promise<void> {
  while (!stopping()) {
    const batch = await backfillBatch(app);
    if (!batch) return;
    const table = VACUUM_AFTER[batch.name];
    if (batch.done && table) await app.prisma.$executeRawUnsafe(`VACUUM ${table}`);
  }
}

/** Counts the channel messages sent since the last run, a batch at a time. */
export async function countChannelTraffic(app: App, shouldStop: () => boolean = () => false): Promise<void> {
  for (;;) {
    const [row] = await app.prisma.$queryRaw<{ counted: number }[]>`SELECT count_channel_traffic(${BATCH_IDS}::int) AS counted`;
    if (!row || row.counted === 0 || shouldStop()) return;
  }
}

/** The scheduler's work: backfills until done, then traffic; resolves to the next run. */
export async function historyUpkeep(app: App): Promise<Date> {
  const stopping = () => app.upkeep.stopping;
  await backfill(app, stopping);
  await countChannelTraffic(app, stopping);
  return new Date(Date.now() + TRAFFIC_INTERVAL_MS);
}
