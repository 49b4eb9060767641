// Where replaying the cluster's stream rebuilds a queue (EventQueue.checkpoint): before the frame
// of its oldest pending event, at the id of that frame's first event for the queue, so events of
// a frame the client acknowledged in part come again under the same ids and are dropped by id.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueueRegistry } from '../../actors/registry.ts';
import { MemoryBus } from '../../src/bus/memory.ts';
import type { EventEnvelope } from '../../src/bus/bus.ts';
import { partialMessage, plainQueueOptions } from '../helpers/events.ts';

const settings = { heartbeatSeconds: 60, heartbeatJitterSeconds: 0, tickMs: 600_000, maxEvents: 1000, maxBytes: 1 << 20 };

const message = (n: number, seq: number): EventEnvelope => ({
  realmId: 1,
  userIds: [1],
  seq,
  event: {
    type: 'message',
    message: partialMessage({ id: n, type: 'stream', display_recipient: 'general', subject: 't', content: `m${n}`, raw_content: `m${n}` }),
  },
});

test("a checkpoint starts before the oldest pending event's frame, at the id of the frame's first event", () => {
  const bus = new MemoryBus();
  const registry = new QueueRegistry(bus, settings);
  const queue = registry.create(1, 1, plainQueueOptions);
  assert.equal(queue.checkpoint(9), { afterSeq: 9, nextId: 0 }, 'nothing queued: after what was read');
  // Frame 10 holds ids 0-2, frame 11 ids 3-4.
  for (const [n, seq] of [
    [0, 10],
    [1, 10],
    [2, 10],
    [3, 11],
    [4, 11],
  ] as const)
    bus.publish(message(n, seq));
  assert.is(queue.checkpoint(11), null, 'what waits in the log is not taken yet');
  assert.is(registry.get(queue.id, 1)?.size, 5);
  assert.equal(queue.checkpoint(11), { afterSeq: 9, nextId: 0 });
  queue.prune(1);
  assert.equal(queue.checkpoint(11), { afterSeq: 9, nextId: 0 }, 'frame 10 acknowledged in part: replayed whole');
  queue.prune(2);
  assert.equal(queue.checkpoint(11), { afterSeq: 10, nextId: 3 });
  queue.prune(3);
  assert.equal(queue.checkpoint(11), { afterSeq: 10, nextId: 3 });
  queue.prune(4);
  assert.equal(queue.checkpoint(12), { afterSeq: 12, nextId: 5 }, 'all acknowledged: after what was read');
  registry.stop();
});

test.run();
