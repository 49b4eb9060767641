// Heap per idle registered event queue, in the registry alone (no server, no HTTP): N queues of U
// users made as register makes them, measured after a full GC against the registry with none.
// Usage: node --expose-gc idle-queues.js [N=100000] [U=1000]; repeatable where the end-to-end
// `npm run bench -- idle` is not (it counts the whole server's heap).
import type { EventBus } from '../../src/bus/bus.ts';
import type { EventQueue } from '../../actors/queue.ts';
import { plainQueueOptions as options } from '../../test/helpers/events.ts';
import { QueueRegistry } from '../../actors/registry.ts';

const [n = '100000', u = '1000'] = process.argv.slice(2);
const bus = { subscribe: () => () => {}, listen: () => () => {} } as unknown as EventBus;
const registry = new QueueRegistry(bus, { heartbeatSeconds: 55, heartbeatJitterSeconds: 5, tickMs: 3_600_000, maxEvents: 1000, maxBytes: 1 << 20 });
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const heap = () => (gc(), gc(), process.memoryUsage().heapUsed);
// One queue first, so the modules' own first-use allocations are not counted per queue.
registry.delete(registry.create(1, 1, options));
const before = heap();
const queues: EventQueue[] = [];
for (let i = 0; i < Number(n); i++) queues.push(registry.create(1 + (i % Number(u)), 1, options));
const after = heap();
console.log(
  `${n} idle queues of ${u} users: ${((after - before) / Number(n)).toFixed(1)} bytes each (the registry's maps and the queue objects; the list that keeps them alive adds 8)`,
);
registry.stop();
