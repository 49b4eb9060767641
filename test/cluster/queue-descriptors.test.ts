// The rows that let another node rebuild a queue whose node died (cluster/queue-descriptors.ts):
// written by register in its own transaction, checkpointed by the node as the queue moves (where
// replaying the stream starts and the id it starts at), and deleted with the queue.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel } from '../messages/messages-helpers.ts';
import { eventually, register, startCluster, via, type TestCluster } from '../helpers/cluster.ts';
import { NATS_URL } from '../helpers/nats.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

interface Row {
  node: string;
  userId: number;
  realmId: number;
  options: { eventTypes: string[] | null; idleTimeoutSecs: number };
  snapshot: string;
  afterSeq: bigint;
  nextEventId: number;
  newestPrunedId: number;
}

if (!NATS_URL) {
  test.skip('queue descriptors (NATS_URL is not set: the cluster tests need a NATS server with JetStream)');
} else {
  const natsUrl = NATS_URL;
  let cluster: TestCluster;
  let realm: TestRealm;
  let reader: TestUser;
  let A = 0;

  test.before(async () => {
    // A heartbeat would answer the polls below with no events.
    cluster = await startCluster(natsUrl, [], { HEARTBEAT_SECONDS: '60' });
    A = cluster.a.port;
    realm = await newRealm(cluster.a);
    reader = await realm.addUser();
    await makeChannel(realm, 'rows', [realm.owner, reader]);
  });

  test.after(async () => {
    await cluster?.close();
  });

  const row = async (queueId: string): Promise<Row | undefined> =>
    (
      await cluster.a.app.prisma.$queryRawUnsafe<Row[]>(
        'SELECT "node", "userId", "realmId", "options", "snapshot", "afterSeq", "nextEventId", "newestPrunedId" FROM "QueueDescriptor" WHERE "id" = $1',
        queueId,
      )
    )[0];

  const send = async (content: string) => {
    const r = await via(A, realm.owner).post('/messages', { type: 'stream', to: 'rows', topic: 't', content });
    assert.is(r.status, 200, r.text);
  };

  /** The stream's last sequence: what a queue with nothing pending checkpoints. */
  const readPosition = () => cluster.a.app.cluster!.bus.readPosition().afterSeq;

  test('register writes the row in its transaction; checkpoints follow what the queue holds and what its client acknowledged', async () => {
    const before = readPosition();
    const { queueId } = await register(via(A, reader), { event_types: ['message'], idle_queue_timeout: 300 });
    const made = await row(queueId);
    assert.ok(made, 'the row is there when register answers');
    const { snapshot, ...described } = made;
    assert.match(snapshot, /^\d+:\d+:[\d,]*$/, "the register transaction's snapshot");
    assert.equal(
      { ...described, afterSeq: Number(made.afterSeq), options: { eventTypes: made.options.eventTypes, idleTimeoutSecs: made.options.idleTimeoutSecs } },
      {
        node: 'a',
        userId: reader.id,
        realmId: realm.id,
        options: { eventTypes: ['message'], idleTimeoutSecs: 300 },
        afterSeq: before,
        nextEventId: 0,
        newestPrunedId: -1,
      },
    );

    for (const content of ['one', 'two', 'three']) await send(content);
    // The sends' events reach the queue through the stream after their answers: wait for all three.
    const ids = await eventually('the three events in the queue', async () => {
      const got = await via(A, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      const seen = got.body.events.map((e: { id: number }) => e.id);
      return seen.length === 3 && seen;
    });
    assert.equal(ids, [0, 1, 2]);
    const third = readPosition();
    // Two acknowledged, the third pending: replay starts before the third's frame, at id 2.
    await via(A, reader).get('/events', { queue_id: queueId, last_event_id: 1, dont_block: true });
    const pending = await eventually('a checkpoint with the acknowledgement', async () => {
      const r = await row(queueId);
      return r?.newestPrunedId === 1 && r;
    });
    assert.is(pending.nextEventId, 2);
    assert.ok(Number(pending.afterSeq) > before && Number(pending.afterSeq) < third, `between ${before} and ${third}: ${pending.afterSeq}`);

    // All acknowledged: replay starts after what the node has read, at id 3.
    await via(A, reader).get('/events', { queue_id: queueId, last_event_id: 2, dont_block: true });
    const done = await eventually('a checkpoint with everything acknowledged', async () => {
      const r = await row(queueId);
      return r?.newestPrunedId === 2 && r;
    });
    assert.is(done.nextEventId, 3);
    assert.ok(Number(done.afterSeq) >= third, `after ${third}: ${done.afterSeq}`);
  });

  test('a deleted queue loses its row; a queue nobody reads keeps its place', async () => {
    const gone = await register(via(A, reader));
    const idle = await register(via(A, reader));
    const idleRow = await row(idle.queueId);
    await send('while idle');
    const r = await via(A, reader).delete('/events', { queue_id: gone.queueId });
    assert.is(r.status, 200, r.text);
    await eventually('the deleted queue to lose its row', async () => (await row(gone.queueId)) === undefined);
    // Its events wait in its user's log: replaying from where it started gives them.
    assert.equal(await row(idle.queueId), idleRow);
  });

  test.run();
}
