// What clients can make the server hold in memory through their event queues: the options they
// register with, and the events they leave unread. Measured on the registry itself (heap after a
// full GC), since no HTTP-level test can see the process's memory.
import v8 from 'node:v8';
import vm from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueueRegistry, type RegistrySettings } from '../../actors/registry.ts';
import type { Consumer, EventQueue } from '../../actors/queue.ts';
import { MemoryBus } from '../../src/bus/memory.ts';
import { setLogLevel } from '../../src/log.ts';
import { newRealm } from '../helpers/server.ts';
import { partialMessage, plainQueueOptions as base } from '../helpers/events.ts';
import type { EventEnvelope } from '../../src/bus/bus.ts';

setLogLevel('silent');
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const settings: RegistrySettings = { heartbeatSeconds: 60, heartbeatJitterSeconds: 0, tickMs: 600_000, maxEvents: 100_000, maxBytes: 1 << 30 };

function messageTo(userIds: number[], n: number, content: string): EventEnvelope {
  const perUser = Object.fromEntries(userIds.map((u) => [u, { flags: u % 10 === 0 ? ['mentioned'] : [] }]));
  return {
    realmId: 1,
    userIds,
    perUser,
    event: {
      type: 'message',
      message: partialMessage({ id: n, type: 'stream', display_recipient: 'general', subject: 't', content: `${content}${n}`, raw_content: content }),
    },
  };
}

test('100,000 registrations with distinct narrows leave nothing behind once their queues are gone', () => {
  const registry = new QueueRegistry(new MemoryBus(), settings);
  const before = heapAfterGc();
  const live: EventQueue[] = [];
  for (let i = 0; i < 100_000; i++) {
    const queue = registry.create(1, 1, { ...base, narrow: [['topic', `${'t'.repeat(200)}${i}`]], eventTypes: [`type${i}`] });
    if (i % 10_000 === 0) live.push(queue);
    else registry.delete(queue);
  }
  assert.is(registry.optionsPool.size, live.length, 'one shared options object per live distinct registration');
  for (const queue of live) registry.delete(queue);
  assert.is(registry.optionsPool.size, 0);
  // Kept, 100,000 option sets of ~250 bytes would hold tens of megabytes.
  assert.ok(heapAfterGc() - before < 5_000_000, `heap grew by ${heapAfterGc() - before} bytes`);
  registry.stop();
});

test('alike registrations share one options object, released with the last of them', () => {
  const registry = new QueueRegistry(new MemoryBus(), settings);
  const a = registry.create(1, 1, { ...base, capabilities: ['empty_topic_name', 'bulk_message_deletion'] });
  const b = registry.create(2, 1, { ...base, capabilities: ['bulk_message_deletion', 'empty_topic_name'] });
  assert.ok(a.options === b.options);
  registry.delete(a);
  assert.is(registry.optionsPool.size, 1);
  registry.delete(b);
  assert.is(registry.optionsPool.size, 0);
  registry.stop();
});

test('a pending event costs an unread queue a few tens of bytes, not a copy of the event', () => {
  const bus = new MemoryBus();
  const registry = new QueueRegistry(bus, settings);
  const users = Array.from({ length: 500 }, (_, i) => i + 1);
  for (const u of users) registry.create(u, 1, base);
  const before = heapAfterGc();
  const content = 'x'.repeat(2000);
  for (let n = 0; n < 400; n++) bus.publish(messageTo(users, n, content));
  const perEvent = (heapAfterGc() - before) / (users.length * 400);
  // 200,000 pending events of 2 KB messages; each cost about 217 bytes when queues held their own copy.
  assert.ok(perEvent < 40, `${perEvent.toFixed(1)} bytes per pending event`);
  registry.stop();
});

test('a queue past its bound of events or bytes is discarded once its client read nothing for a heartbeat interval, and its reader told so', () => {
  const bus = new MemoryBus();
  let clock = 1_000_000;
  const registry = new QueueRegistry(bus, { ...settings, maxEvents: 5, maxBytes: 10_000, now: () => clock });
  const byCount = registry.create(1, 1, base);
  const closed: string[] = [];
  const reader: Consumer = { kind: 'socket', flush: () => false, heartbeat: () => false, close: (_q, reason) => closed.push(reason) };
  registry.attach(byCount, reader);
  const byBytes = registry.create(2, 1, base);
  // Read lately: a burst over the bound is kept for the client's next read.
  for (let n = 0; n < 8; n++) bus.publish(messageTo([1], n, 'hi'));
  assert.is(registry.get(byCount.id, 1)?.size, 8);
  byCount.prune(7, clock);
  clock += 60_001;
  for (let n = 8; n < 13; n++) bus.publish(messageTo([1], n, 'hi'));
  assert.ok(registry.get(byCount.id, 1), 'five events are within the bound');
  bus.publish(messageTo([1], 13, 'hi'));
  assert.is(registry.get(byCount.id, 1), undefined);
  assert.equal(closed, ['deleted']);
  bus.publish(messageTo([2], 0, 'x'.repeat(9_000)));
  assert.ok(registry.get(byBytes.id, 2));
  bus.publish(messageTo([2], 1, 'x'.repeat(2_000)));
  assert.is(registry.get(byBytes.id, 2), undefined);
  registry.stop();
});

test('acknowledged events free their bytes: a queue read as it goes stays within its bound', () => {
  const bus = new MemoryBus();
  const registry = new QueueRegistry(bus, { ...settings, maxEvents: 5 });
  const queue = registry.create(1, 1, base);
  for (let n = 0; n < 100; n++) {
    bus.publish(messageTo([1], n, 'hi'));
    queue.prune(n);
  }
  assert.ok(registry.get(queue.id, 1));
  assert.is(queue.size, 0);
  assert.is(queue.bytes, 0);
  registry.stop();
});

test('over HTTP: an unread queue past QUEUE_MAX_EVENTS gets BAD_EVENT_QUEUE_ID, one read as it goes keeps working', async () => {
  const realm = await newRealm();
  const bounds = realm.server.app.queues.settings;
  const { maxEvents, heartbeatSeconds } = bounds;
  bounds.maxEvents = 20;
  // A client that read nothing since the last heartbeat interval is gone: here, at once.
  bounds.heartbeatSeconds = 0;
  try {
    const bob = await realm.addUser();
    const unread = (await bob.client.post('/register', { event_types: ['message'] })).body.queue_id as string;
    const read = (await bob.client.post('/register', { event_types: ['message'] })).body.queue_id as string;
    let lastRead = -1;
    for (let n = 0; n < 30; n++) {
      const sent = await realm.owner.client.post('/messages', { type: 'direct', to: [bob.id], content: `m${n}` });
      assert.is(sent.status, 200, sent.text);
      if (n % 10 === 9) {
        const r = await bob.client.get('/events', { queue_id: read, last_event_id: lastRead, dont_block: true });
        assert.is(r.body.events.length, 10);
        lastRead = r.body.events.at(-1).id;
      }
    }
    const gone = await bob.client.get('/events', { queue_id: unread, last_event_id: -1, dont_block: true });
    assert.equal([gone.status, gone.body], [400, { result: 'error', msg: `Bad event queue ID: ${unread}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: unread }]);
    const kept = await bob.client.get('/events', { queue_id: read, last_event_id: lastRead, dont_block: true });
    assert.equal([kept.status, kept.body.events], [200, []]);
  } finally {
    bounds.maxEvents = maxEvents;
    bounds.heartbeatSeconds = heartbeatSeconds;
  }
});

test.run();
