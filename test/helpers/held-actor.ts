// Group commit seen from a test: one channel's or user's actor is kept busy while requests queue
// behind it, each let in only once the one before it waits there (so their order is known), and
// what the actor then writes is recorded: each batch's items, and the transactions they open.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as assert from 'uvu/assert';
import type { SerialActors } from '../../actors/serial.ts';
import type { App } from '../../src/app.ts';

export interface HeldActor<T> {
  /** Starts a request and waits until it queues behind the actor (in a batch, or as a write of its own). */
  enqueue(request: () => Promise<T>): Promise<void>;
  /**
   * Lets the actor go, waits for every request, and stops recording. `batches`: the items of each
   * batch written (a batch written again item by item shows as the batches of one); `writes`:
   * writes of their own (`run`) queued meanwhile.
   */
  release(): Promise<{ results: T[]; batches: unknown[][]; writes: number; transactions: number }>;
}

export function holdActor<T>(app: App, actors: SerialActors, id: number): HeldActor<T> {
  let letGo!: () => void;
  const held = actors.run(id, () => new Promise<void>((r) => (letGo = r)));
  const batches: unknown[][] = [];
  const requests: Promise<T>[] = [];
  let queued = 0;
  let writes = 0;
  const [inBatch, run] = [actors.inBatch, actors.run];
  const [queueInBatch, queueRun] = [inBatch.bind(actors), run.bind(actors)];
  actors.inBatch = (batchId, kind, item, writeAll) => {
    if (batchId !== id) return queueInBatch(batchId, kind, item, writeAll);
    queued++;
    return queueInBatch(batchId, kind, item, (items) => (batches.push([...items]), writing.run(true, () => writeAll(items))));
  };
  actors.run = (runId, write) => {
    if (runId === id) queued++, writes++;
    return queueRun(runId, write);
  };
  // The transactions the batches open (and no other work's), counted where transactions begin.
  const writing = new AsyncLocalStorage<boolean>();
  const base = app.db.prisma as unknown as { $transaction: (...args: unknown[]) => Promise<unknown> };
  const transaction = base.$transaction;
  let transactions = 0;
  base.$transaction = function (this: unknown, ...args: unknown[]) {
    if (writing.getStore()) transactions++;
    return transaction.apply(this, args);
  };
  return {
    async enqueue(request) {
      const before = queued;
      requests.push(request());
      for (let i = 0; queued === before; i++) {
        assert.ok(i < 1000, 'the request reaches the actor');
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    async release() {
      letGo();
      await held;
      try {
        return { results: await Promise.all(requests), batches, writes, transactions };
      } finally {
        actors.inBatch = inBatch;
        actors.run = run;
        base.$transaction = transaction;
      }
    },
  };
}
