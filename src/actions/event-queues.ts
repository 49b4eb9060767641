// Event queues survive a graceful restart, as in Zulip: at shutdown each queue's state (id,
// owner, options, unacknowledged events, counters) is written to the database; at start it is
// read back, and every restored queue gets a `restart` event, so a client that keeps polling the
// same queue loses nothing.
import type { SavedQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import { log } from '../log.ts';
import { FEATURE_LEVEL, SERVER_GENERATION, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version.ts';

const BATCH = 500;

export async function saveEventQueues(app: App): Promise<number> {
  const saved = app.queues.saveAll();
  for (let i = 0; i < saved.length; i += BATCH) {
    await app.prisma.savedEventQueue.createMany({
      data: saved.slice(i, i + BATCH).map((q) => ({ id: q.id, userId: q.userId, state: JSON.parse(JSON.stringify(q)) })),
      skipDuplicates: true,
    });
  }
  return saved.length;
}

export async function restoreEventQueues(app: App): Promise<number> {
  const rows = await app.prisma.savedEventQueue.findMany();
  if (rows.length === 0) return 0;
  const restored = app.queues.restore(rows.map((r) => r.state as unknown as SavedQueue));
  await app.prisma.savedEventQueue.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
  const restart = { type: 'restart', zulip_version: ZULIP_VERSION, zulip_merge_base: ZULIP_MERGE_BASE, zulip_feature_level: FEATURE_LEVEL, server_generation: SERVER_GENERATION, immediate: false };
  for (const queue of restored) app.queues.pushTo(queue, [restart]);
  log.info('restored event queues', { count: restored.length });
  return restored.length;
}
