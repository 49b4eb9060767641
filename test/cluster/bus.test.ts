// The bus contract, one suite for every implementation (the memory bus of one process, the NATS
// bus of a cluster): each publisher's events arrive in order, exactly once, at every subscriber
// of every process; cache changes reach the other processes in order with the events; and, for
// NATS, what happens across a NATS restart and when NATS loses its stream.
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from 'nats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CacheChange, EventBus, EventEnvelope } from '../../src/bus/bus.ts';
import { MemoryBus } from '../../src/bus/memory.ts';
import { NatsBus } from '../../src/bus/nats.ts';
import { connectNats } from '../../src/cluster/connection.ts';
import { setLogLevel } from '../../src/log.ts';
import { hasNatsServer, NATS_URL, PrivateNats } from '../helpers/nats.ts';
import { eventAs } from '../helpers/events.ts';

setLogLevel('silent');

interface World {
  /** `n` processes of one deployment (the memory bus has one process: the same bus n times). */
  processes(n: number): Promise<EventBus[]>;
  /** Whether the processes are distinct (they tell each other of cache changes). */
  distinct: boolean;
  close(): Promise<void>;
}

function memoryWorld(): World {
  return {
    distinct: false,
    async processes(n) {
      const bus = new MemoryBus();
      return Array.from({ length: n }, () => bus);
    },
    async close() {},
  };
}

function natsWorld(url: string): World & { connections: NatsConnection[]; buses: NatsBus[] } {
  const clusterId = `test${randomBytes(4).toString('hex')}`;
  const world = {
    distinct: true,
    connections: [] as NatsConnection[],
    buses: [] as NatsBus[],
    async processes(n: number) {
      for (let i = 0; i < n; i++) {
        const connection = await connectNats(url, `bus-test-${i}`);
        world.connections.push(connection);
        const bus = await NatsBus.open({ connection, clusterId, nodeId: `node${i}` });
        await bus.resume(null);
        world.buses.push(bus);
      }
      return world.buses;
    },
    async close() {
      await world.buses[0]?.destroy();
      for (const bus of world.buses) await bus.close();
      for (const c of world.connections) await c.close();
    },
  };
  return world;
}

const envelope = (publisher: number, n: number, extra: Partial<EventEnvelope> = {}): EventEnvelope => ({
  realmId: 1,
  userIds: [1, 2],
  // Any small event: the bus carries it unread (the publisher and its count ride as a muted user).
  event: { type: 'muted_users', muted_users: [{ id: publisher, timestamp: n }] },
  ...extra,
});

/** Each subscriber's received (publisher, n) pairs, and changes heard. */
function record(bus: EventBus) {
  const got: [number, number][] = [];
  const changes: { change: CacheChange; afterEvents: number }[] = [];
  let lost = 0;
  bus.subscribe((e) => {
    const { id, timestamp } = eventAs(e.event, 'muted_users').muted_users[0]!;
    got.push([id, timestamp]);
  });
  bus.listen({ changed: (change) => changes.push({ change, afterEvents: got.length }), lost: () => lost++ });
  return { got, changes, lost: () => lost };
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ofPublisher = (got: [number, number][], p: number) => got.filter(([q]) => q === p).map(([, n]) => n);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

function contract(name: string, makeWorld: () => World): void {
  test(`${name}: one publisher's events reach every subscriber of every process in order, once`, async () => {
    const world = makeWorld();
    try {
      const [a, b] = await world.processes(2);
      const onA = record(a!);
      const onB = record(b!);
      // In bursts of one tick and across ticks.
      for (let burst = 0; burst < 10; burst++) {
        for (let i = 0; i < 50; i++) a!.publish(envelope(0, burst * 50 + i));
        await new Promise((r) => setImmediate(r));
      }
      await until('500 events on both', () => onA.got.length >= 500 && onB.got.length >= 500);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(ofPublisher(onA.got, 0), range(0, 500));
      assert.equal(ofPublisher(onB.got, 0), range(0, 500));
      assert.is(onA.lost() + onB.lost(), 0);
    } finally {
      await world.close();
    }
  });

  test(`${name}: events of several publishers all reach every process, each publisher's in its order`, async () => {
    const world = makeWorld();
    try {
      const [a, b, c] = await world.processes(3);
      const seen = [a!, b!, c!].map(record);
      for (let i = 0; i < 200; i++) {
        a!.publish(envelope(0, i));
        b!.publish(envelope(1, i));
        if (i % 20 === 0) await new Promise((r) => setImmediate(r));
      }
      await until('400 events everywhere', () => seen.every((s) => s.got.length >= 400));
      for (const s of seen) {
        assert.is(s.got.length, 400);
        assert.equal(ofPublisher(s.got, 0), range(0, 200));
        assert.equal(ofPublisher(s.got, 1), range(0, 200));
      }
    } finally {
      await world.close();
    }
  });

  test(`${name}: a cache change reaches the other processes, not its own, between the events around it`, async () => {
    const world = makeWorld();
    try {
      const [a, b] = await world.processes(2);
      const onA = record(a!);
      const onB = record(b!);
      a!.publish(envelope(0, 0));
      a!.announce({ cache: 'realm', realmId: 7 });
      a!.publish(envelope(0, 1));
      await until('both events', () => onA.got.length >= 2 && onB.got.length >= 2);
      assert.equal(onA.changes, [], 'the announcing process applied it already');
      assert.equal(onB.changes, world.distinct ? [{ change: { cache: 'realm', realmId: 7 }, afterEvents: 1 }] : []);
    } finally {
      await world.close();
    }
  });

  test(`${name}: per-recipient additions and big events arrive intact; settled resolves`, async () => {
    const world = makeWorld();
    try {
      const [a, b] = await world.processes(2);
      const received: EventEnvelope[] = [];
      b!.subscribe((e) => received.push(e));
      const perUser = { 1: { flags: ['read'] }, 2: { flags: [] }, 3: { flags: ['read'] }, 40: { flags: ['mentioned'] } };
      const small = envelope(0, 0, { userIds: [1, 2, 3, 40], perUser, perQueue: { q: { local_message_id: 'x' } }, xid: 12, publicChannelMessage: true });
      // Bigger than NATS's largest message (1 MB by default): it travels in parts.
      const big = envelope(0, 1, { userIds: range(0, 100_000), event: { type: 'alert_words', alert_words: ['x'.repeat(3_000_000)] } });
      a!.publish(small);
      a!.publish(big);
      a!.publish(envelope(0, 2));
      const settled = a!.settled();
      if (world.distinct) assert.ok(settled instanceof Promise);
      await settled;
      assert.is(a!.settled(), null, 'nothing left to wait for');
      await until('three events', () => received.length >= 3);
      // NATS adds where in the stream each envelope starts (a big one's first part) and ends.
      const withoutPlace = ({ seq: _seq, endSeq: _endSeq, ...rest }: EventEnvelope) => rest;
      assert.equal(withoutPlace(received[0]!), small);
      assert.equal(withoutPlace(received[1]!), big);
      assert.equal(received[2]!.event, envelope(0, 2).event);
      if (world.distinct) {
        const [first, second, third] = received.map((e) => e.seq!);
        assert.ok(first! <= second! && second! + 3 <= third!, `sequences ${first}, ${second}, ${third}: the big event took at least three parts`);
        assert.ok(received[1]!.endSeq! >= second! + 2 && received[1]!.endSeq! < third!, `the big event ends at ${received[1]!.endSeq}, its last part`);
      }
    } finally {
      await world.close();
    }
  });
}

contract('memory bus', memoryWorld);

const natsUrl = NATS_URL;
if (natsUrl) contract('NATS bus', () => natsWorld(natsUrl));
else test.skip('NATS bus (NATS_URL is not set)');

/** Two processes on a NATS of the test's own, which it may kill and restart, each recording what it gets. */
async function onPrivateNats(
  check: (c: { nats: PrivateNats; a: EventBus; b: EventBus; onA: ReturnType<typeof record>; onB: ReturnType<typeof record> }) => Promise<void>,
): Promise<void> {
  const nats = await PrivateNats.start();
  const world = natsWorld(nats.url);
  try {
    const [a, b] = await world.processes(2);
    await check({ nats, a: a!, b: b!, onA: record(a!), onB: record(b!) });
  } finally {
    await world.close().catch(() => {});
    await nats.stop();
  }
}

if (hasNatsServer()) {
  test('NATS bus: NATS killed and restarted on its disk: what was published meanwhile arrives after, in order, once; queues keep going', () =>
    onPrivateNats(async ({ nats, a, b, onA, onB }) => {
      for (let i = 0; i < 10; i++) a.publish(envelope(0, i));
      await until('the first events', () => onB.got.length >= 10);
      assert.ok(a.connected(), 'connected (readiness) while NATS is up');
      await nats.stop('SIGKILL');
      await until('readiness sees NATS gone', () => !a.connected());
      // Published while NATS is down: kept in the outbox; settled waits for NATS to be back.
      for (let i = 10; i < 20; i++) a.publish(envelope(0, i));
      for (let i = 0; i < 5; i++) b.publish(envelope(1, i));
      let stored = false;
      const storing = a.settled()!.then(() => (stored = true));
      await new Promise((r) => setTimeout(r, 500));
      assert.is(stored, false, 'not stored while NATS is down');
      await nats.start();
      await storing;
      await until('readiness sees NATS back', () => a.connected());
      for (let i = 20; i < 30; i++) a.publish(envelope(0, i));
      await until('every event on both after the restart', () => onA.got.length >= 35 && onB.got.length >= 35, 20_000);
      await new Promise((r) => setTimeout(r, 200));
      for (const s of [onA, onB]) {
        assert.equal(ofPublisher(s.got, 0), range(0, 30));
        assert.equal(ofPublisher(s.got, 1), range(0, 5));
        assert.is(s.lost(), 0, 'nothing was lost, so no queue has to start over');
      }
    }));

  test('NATS bus: NATS restarted without its disk: every process is told events were lost, then delivery resumes', () =>
    onPrivateNats(async ({ nats, a, b, onA, onB }) => {
      a.publish(envelope(0, 0));
      await until('the first event', () => onB.got.length >= 1);
      await nats.stop('SIGKILL');
      await nats.start(true);
      await until('both told of the loss', () => onA.lost() > 0 && onB.lost() > 0, 20_000);
      a.publish(envelope(0, 1));
      b.publish(envelope(1, 0));
      await until('new events on both', () => onA.got.length >= 3 && onB.got.length >= 3, 20_000);
      assert.equal(ofPublisher(onB.got, 0), [0, 1]);
      assert.equal(ofPublisher(onA.got, 1), [0]);
    }));
} else {
  test.skip('NATS bus restarts (nats-server is not installed)');
}

test.run();
