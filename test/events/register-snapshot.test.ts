// The register snapshot filter on its own (actors/queue.ts, src/db/commits.ts): which published
// changes a queue drops because its register state already holds them, including the orders
// that black-box tests cannot force (a commit published only after register answered).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryBus } from '../../src/bus/memory.ts';
import { seenBy, type Snapshot } from '../../src/db/commits.ts';
import { QueueRegistry } from '../../actors/registry.ts';
import { plainQueueOptions as options } from '../helpers/events.ts';

// Transactions 100-104 had committed when the snapshot was taken, except 102 (still running);
// 105 and later started after it.
const snapshot: Snapshot = { xmin: 102, xmax: 105, inProgress: [102] };

test('seenBy: committed before the snapshot, not in progress, not started after', () => {
  assert.equal(
    [99, 101, 102, 103, 104, 105, 200].map((xid) => seenBy(snapshot, xid)),
    [true, true, false, true, true, false, false],
  );
  // Nothing in progress: PostgreSQL's xmin = xmax, kept as the one number.
  assert.equal(
    [99, 104, 105, 200].map((xid) => seenBy(105, xid)),
    [true, true, false, false],
  );
});

test('a queue keeps only changes its state lacks, whether published before or after register answered', () => {
  const bus = new MemoryBus();
  const registry = new QueueRegistry(bus, { heartbeatSeconds: 60, heartbeatJitterSeconds: 0, tickMs: 60_000, maxEvents: 1000, maxBytes: 1 << 20 });
  const queue = registry.create(1, 1, options);
  const publish = (n: number, xid?: number) => bus.publish({ realmId: 1, userIds: [1], event: { type: 'drafts', op: 'remove', draft_id: n }, xid });
  // While the state is read: a change it holds, one it does not, one with no transaction (typing-like).
  publish(1, 101);
  publish(2, 102);
  publish(3);
  queue.applySnapshot(snapshot);
  // After register answered: a late publish of a change the state holds, then newer changes.
  publish(4, 103);
  publish(5, 105);
  publish(6, 102);
  const drafts = (JSON.parse(queue.pendingJson()) as { id: number; draft_id: number }[]).map((e) => [e.id, e.draft_id]);
  // Nobody has read the queue before register answers, so the events kept are numbered from 0.
  assert.equal(drafts, [
    [0, 2],
    [1, 3],
    [2, 5],
    [3, 6],
  ]);
  registry.stop();
});

test.run();
