// Event queues survive a graceful restart, as in Zulip: at shutdown each queue's state (id,
// owner, options, unacknowledged events, counters) is written to the database; at start it is
// read back, and every restored queue gets a `restart` event, so a client that keeps polling the
// same queue loses nothing.
//
// Thousands of queues may hold the same events, so each event is stored once per save and the
// queues refer to it by position. The save goes in small batches, each in its own transaction
// with the events its queues are the first to need, until a deadline: a saved queue is always
// whole, and one the deadline left out is simply gone (its client re-registers).
import { randomUUID } from 'node:crypto';
import { QueuedEvent, type EventQueue, type SavedQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import type { Prisma } from '../db/generated/client.ts';
import { positionPlace } from '../bus/nats.ts';
import { log } from '../log.ts';
import { FEATURE_LEVEL, SERVER_GENERATION, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version.ts';

/** About this much data per transaction, so neither side ever holds a whole save at once. */
const BATCH_BYTES = 1024 * 1024;
/** Saved queues are read back this many at a time. */
const RESTORE_PAGE = 200;

interface Batch {
  queues: EventQueue[];
  states: SavedQueue[];
  /** Events first needed by this batch's queues, by position. */
  events: Map<QueuedEvent, number>;
}

/**
 * Saves queues batch by batch until `deadline` (ms since epoch) and removes them; the rest are
 * dropped. In a cluster the bus stops delivering first, and its position is saved with the
 * queues: restored, they get what was published while their node was down.
 */
export async function saveEventQueues(app: App, deadline: number, batchBytes = BATCH_BYTES): Promise<{ saved: number; dropped: number }> {
  const saveId = randomUUID();
  const busPosition = await app.bus.pause();
  const stored = new Map<QueuedEvent, number>();
  let nextPosition = 0;
  let saved = 0;
  const queues = app.queues.all();
  let next = 0;
  while (next < queues.length && Date.now() < deadline) {
    const batch: Batch = { queues: [], states: [], events: new Map() };
    let bytes = 0;
    const positionOf = (event: QueuedEvent) => {
      let position = stored.get(event) ?? batch.events.get(event);
      if (position === undefined) {
        position = nextPosition++;
        batch.events.set(event, position);
        bytes += event.bytes;
      }
      return position;
    };
    while (next < queues.length && bytes < batchBytes) {
      const queue = queues[next++]!;
      if (queue.ended) continue;
      const state = queue.save(positionOf);
      bytes += 200 + 4 * state.events.length;
      batch.queues.push(queue);
      batch.states.push(state);
    }
    try {
      await writeBatch(app, saveId, batch, batchBytes, busPosition);
    } catch (err) {
      log.error('could not save event queues', { count: batch.queues.length, error: String(err) });
      continue;
    }
    for (const [event, position] of batch.events) stored.set(event, position);
    for (const queue of batch.queues) app.queues.delete(queue, 'saved');
    saved += batch.queues.length;
  }
  const dropped = app.queues.all();
  for (const queue of dropped) app.queues.delete(queue, 'shutdown');
  if (dropped.length) log.warn('event queues not saved before the shutdown deadline', { count: dropped.length });
  return { saved, dropped: dropped.length };
}

async function writeBatch(app: App, saveId: string, batch: Batch, batchBytes: number, busPosition: string | null): Promise<void> {
  const writes: Prisma.PrismaPromise<unknown>[] = [];
  let rows: { saveId: string; position: number; json: string }[] = [];
  let bytes = 0;
  for (const [event, position] of batch.events) {
    rows.push({ saveId, position, json: event.tail });
    bytes += event.bytes;
    if (bytes >= batchBytes) {
      writes.push(app.prisma.savedQueueEvent.createMany({ data: rows }));
      rows = [];
      bytes = 0;
    }
  }
  if (rows.length) writes.push(app.prisma.savedQueueEvent.createMany({ data: rows }));
  const data = batch.states.map((state) => ({
    id: state.id,
    userId: state.userId,
    saveId,
    state: { ...state, busPosition } as unknown as Prisma.InputJsonObject,
  }));
  writes.push(app.prisma.savedEventQueue.createMany({ data, skipDuplicates: true }));
  // A batch transaction, not `atomic`: plain writes with no checks and no events, sent at once at shutdown.
  await app.prisma.$transaction(writes);
}

class MissingEvent extends Error {}
const missing = (): never => {
  throw new MissingEvent();
};

/** The event a queue restored after a restart gets (also where a takeover puts it back). */
export function restartEvent(): Record<string, unknown> {
  return {
    type: 'restart',
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    zulip_feature_level: FEATURE_LEVEL,
    server_generation: SERVER_GENERATION,
    immediate: false,
  };
}

/**
 * Brings back the saved queues and returns where the bus should resume for them (null: from now).
 * A node of a cluster takes back only the queues it saved (their ids start with its id), less
 * those another node took over while it was away (their rows name that node), and checkpoints them
 * again.
 */
export async function restoreEventQueues(app: App): Promise<string | null> {
  const prefix = app.cluster ? `${app.cluster.id}:` : undefined;
  let busPosition: string | null = null;
  const saves = new Map<string, Map<number, QueuedEvent>>();
  const restored: EventQueue[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await app.prisma.savedEventQueue.findMany({
      orderBy: { id: 'asc' },
      take: RESTORE_PAGE,
      where: { id: { ...(after === undefined ? {} : { gt: after }), ...(prefix === undefined ? {} : { startsWith: prefix }) } },
    });
    if (rows.length === 0) break;
    after = rows.at(-1)!.id;
    for (const row of rows) {
      busPosition ??= (row.state as { busPosition?: string | null }).busPosition ?? null;
      let events = saves.get(row.saveId);
      if (!events) {
        const eventRows = await app.prisma.savedQueueEvent.findMany({ where: { saveId: row.saveId } });
        events = new Map(eventRows.map((e) => [e.position, new QueuedEvent(e.json)]));
        saves.set(row.saveId, events);
      }
      const found = events;
      const eventAt = (position: number) => found.get(position) ?? missing();
      try {
        restored.push(app.queues.restore(row.state as unknown as SavedQueue, eventAt));
      } catch (err) {
        if (!(err instanceof MissingEvent)) throw err;
        log.error('saved event queue refers to events that were not saved', { userId: row.userId });
      }
    }
  }
  if (saves.size === 0) return null;
  const saveIds = [...saves.keys()];
  const deletes = [
    app.prisma.savedEventQueue.deleteMany({ where: { saveId: { in: saveIds } } }),
    app.prisma.savedQueueEvent.deleteMany({ where: { saveId: { in: saveIds } } }),
  ];
  // A batch transaction, as the save's (no checks, no events). In a cluster, the rows note where
  // each queue's restart event sits, in the same transaction: if that fails, nothing is deleted,
  // the start fails, and the next start restores the queues.
  const descriptors = app.queueDescriptors;
  let back = restored;
  if (descriptors) {
    const [moved] = await app.prisma
      .$transaction([
        descriptors.takeBack(
          restored.map((queue) => queue.id),
          restored.map((queue) => queue.nextEventId),
          // Before the frames the bus completes once it reads again.
          busPosition === null ? -1 : positionPlace(busPosition).deliveredThrough,
        ),
        ...deletes,
      ])
      .catch((err: unknown) => {
        log.error('could not take back the saved event queues; they stay saved for the next start', { error: String(err) });
        throw err;
      });
    const movedIds = new Set(moved.map((row) => row.id));
    for (const queue of restored) if (movedIds.has(queue.id)) app.queues.delete(queue);
    back = restored.filter((queue) => !movedIds.has(queue.id));
    descriptors.restored(back);
  } else {
    await app.prisma.$transaction(deletes);
  }
  for (const queue of back) app.queues.pushTo(queue, [restartEvent()]);
  log.info('restored event queues', { count: back.length });
  return busPosition;
}
