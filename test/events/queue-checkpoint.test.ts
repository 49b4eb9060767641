// Where replaying the cluster's stream rebuilds a queue (EventQueue.checkpoint): before the frame
// of its oldest pending event (or an earlier frame in parts still incomplete when it came), keeping
// the frames completed from that one on, at the id of that frame's first event for the queue, so
// events of a frame the client acknowledged in part come again under the same ids and are dropped
// by id.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueueRegistry } from '../../actors/registry.ts';
import { MemoryBus } from '../../src/bus/memory.ts';
import type { EventEnvelope } from '../../src/bus/bus.ts';
import { partialMessage, plainQueueOptions } from '../helpers/events.ts';

const settings = { heartbeatSeconds: 60, heartbeatJitterSeconds: 0, tickMs: 600_000, maxEvents: 1000, maxBytes: 1 << 20 };

/** Message `n` from the frame completed at stream sequence `endSeq`, read again from `seq` on. */
const message = (n: number, endSeq: number, seq = endSeq): EventEnvelope => ({
  realmId: 1,
  userIds: [1],
  seq,
  endSeq,
  event: {
    type: 'message',
    message: partialMessage({ id: n, type: 'stream', display_recipient: 'general', subject: 't', content: `m${n}`, raw_content: `m${n}` }),
  },
});

test("a checkpoint starts before the oldest pending event's frame, at the id of the frame's first event", () => {
  const bus = new MemoryBus();
  const registry = new QueueRegistry(bus, settings);
  const queue = registry.create(1, 1, plainQueueOptions);
  const place = (afterSeq: number, deliveredThrough = afterSeq) => ({ afterSeq, deliveredThrough });
  assert.equal(queue.checkpoint(place(9)), { from: place(9), nextId: 0 }, 'nothing queued: after what was read');
  // Frame 10 holds ids 0-2, frame 11 ids 3-4.
  for (const [n, seq] of [
    [0, 10],
    [1, 10],
    [2, 10],
    [3, 11],
    [4, 11],
  ] as const)
    bus.publish(message(n, seq));
  assert.is(queue.checkpoint(place(11)), null, 'what waits in the log is not taken yet');
  assert.is(registry.get(queue.id, 1)?.size, 5);
  assert.equal(queue.checkpoint(place(11)), { from: place(9), nextId: 0 });
  queue.prune(1);
  assert.equal(queue.checkpoint(place(11)), { from: place(9), nextId: 0 }, 'frame 10 acknowledged in part: replayed whole');
  queue.prune(2);
  assert.equal(queue.checkpoint(place(11)), { from: place(10), nextId: 3 });
  queue.prune(3);
  assert.equal(queue.checkpoint(place(11)), { from: place(10), nextId: 3 });
  queue.prune(4);
  assert.equal(queue.checkpoint(place(12)), { from: place(12), nextId: 5 }, 'all acknowledged: after what was read');
  registry.stop();
});

test('a frame in parts with another between them: the checkpoint starts at its first part and keeps the frames completed from the other on', () => {
  const bus = new MemoryBus();
  const registry = new QueueRegistry(bus, settings);
  const queue = registry.create(1, 1, plainQueueOptions);
  // Parts at 10 and 12; the frame at 11 comes first, read again from 10 on.
  bus.publish(message(0, 11, 10));
  bus.publish(message(1, 12, 10));
  bus.publish(message(2, 12, 10));
  assert.is(registry.get(queue.id, 1)?.size, 3);
  assert.equal(queue.checkpoint({ afterSeq: 12, deliveredThrough: 12 }), { from: { afterSeq: 9, deliveredThrough: 10 }, nextId: 0 });
  queue.prune(1);
  assert.equal(queue.checkpoint({ afterSeq: 12, deliveredThrough: 12 }), { from: { afterSeq: 9, deliveredThrough: 11 }, nextId: 1 });
  registry.stop();
});

test.run();
