// Events outlive the node that committed them (src/cluster/outbox.ts): a node process is killed
// (SIGKILL, from inside: TEST_DIE_AFTER_COMMIT) right after it committed a message and before it
// published the message's events. The queues on the surviving nodes still get that message, and
// every other, exactly once and in the channel's commit order: published by the next node that
// writes to the channel, or, when nobody does, by the survivors once they notice the node is gone.
// A node killed after NATS stored the events but before it deleted their outbox row
// (TEST_DIE_AFTER_PUBLISH) has them published again, and the queues drop the repeat.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel } from '../messages/messages-helpers.ts';
import { collect, DIE, eventually, register, sendDying, startCluster, via, type NodeProcess, type TestCluster } from '../helpers/cluster.ts';
import { NATS_URL } from '../helpers/nats.ts';
import { newRealm, type TestRealm } from '../helpers/server.ts';

if (!NATS_URL) {
  test.skip('cluster outbox (NATS_URL is not set: the cluster tests need a NATS server with JetStream)');
} else {
  const natsUrl = NATS_URL;
  let cluster: TestCluster;
  let A = 0;
  let B = 0;
  let C = 0;

  test.before(async () => {
    cluster = await startCluster(natsUrl, ['b', 'c']);
    A = cluster.a.port;
    [B, C] = ['b', 'c'].map((id) => cluster.nodes.find((n) => n.id === id)!.port) as [number, number];
  });

  test.after(async () => {
    await cluster?.close();
  });

  /** A node that dies right after committing a message containing DIE, once it knows the organization. */
  async function doomedNode(
    id: string,
    realm: TestRealm,
    when: 'TEST_DIE_AFTER_COMMIT' | 'TEST_DIE_AFTER_PUBLISH' = 'TEST_DIE_AFTER_COMMIT',
  ): Promise<NodeProcess> {
    const node = await cluster.start(id, { [when]: DIE });
    await eventually(`node ${id} to know the organization`, async () => (await via(node.port, realm.owner).get('/users/me')).status === 200);
    return node;
  }

  async function channelMessageIds(realm: TestRealm, channel: string): Promise<number[]> {
    const rows = await cluster.a.app.prisma.message.findMany({
      where: { realmId: realm.id, channel: { name: channel } },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    return rows.map((r) => r.id);
  }

  async function outboxRealm(): Promise<TestRealm> {
    const realm = await newRealm(cluster.a);
    for (const port of [B, C])
      await eventually(`node on ${port} to know the organization`, async () => (await via(port, realm.owner).get('/users/me')).status === 200);
    return realm;
  }

  test('a node killed right after a commit, under load: queues on the other nodes get its message and all others once each, in order', async () => {
    const realm = await outboxRealm();
    const [u1, u2, u3] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
    await makeChannel(realm, 'outbox', [realm.owner, u1, u2, u3]);
    const k = await doomedNode('k', realm);
    const queues = [
      [A, u2, await register(via(A, u2))],
      [B, u2, await register(via(B, u2))],
      [C, u3, await register(via(C, u3))],
    ] as const;
    let sending = true;
    const senders = [A, B, C].map(async (port) => {
      for (let n = 0; sending; n++) {
        const r = await via(port, u1).post('/messages', { type: 'stream', to: 'outbox', topic: 't', content: `${port}-${n}` });
        assert.is(r.status, 200, r.text);
      }
    });
    await new Promise((r) => setTimeout(r, 700));
    const r = await via(k.port, u1).post('/messages', { type: 'stream', to: 'outbox', topic: 't', content: 'from k' });
    assert.is(r.status, 200, r.text);
    await sendDying(k, u1, 'outbox');
    await new Promise((r) => setTimeout(r, 1_000));
    sending = false;
    await Promise.all(senders);
    const stored = await channelMessageIds(realm, 'outbox');
    const last = await cluster.a.app.prisma.message.findFirstOrThrow({ where: { realmId: realm.id, content: `${DIE} now` } });
    assert.ok(stored.includes(last.id), 'the message k died after is committed');
    for (const [port, user, { queueId }] of queues) {
      const ids = (await collect(via(port, user), queueId, 'message', stored.length)).map((e) => e.message.id as number);
      assert.equal(ids, stored, `queue ${queueId}: every message once, in commit order`);
      const more = await via(port, user).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.is(more.status, 200, `queue ${queueId} on ${port}: ${more.text}`);
      assert.equal(more.body.events.filter((e: any) => e.type === 'message').length, stored.length, 'and nothing more');
    }
    await eventually('the outbox to be empty', async () => (await cluster.a.app.prisma.eventOutbox.count()) === 0);
  });

  test('a node killed right after a commit, then silence: the survivors publish its events once they notice it is gone', async () => {
    const realm = await outboxRealm();
    const u1 = await realm.addUser();
    await makeChannel(realm, 'quiet', [realm.owner, u1]);
    const k = await doomedNode('k2', realm);
    const { queueId } = await register(via(B, u1));
    const before = (await via(C, realm.owner).post('/messages', { type: 'stream', to: 'quiet', topic: 't', content: 'before' })).body.id as number;
    await sendDying(k, realm.owner, 'quiet');
    const stored = await channelMessageIds(realm, 'quiet');
    assert.is(stored.length, 2);
    assert.is(stored[0], before);
    const ids = (await collect(via(B, u1), queueId, 'message', 2)).map((e) => e.message.id as number);
    assert.equal(ids, stored);
    await eventually('the outbox to be empty', async () => (await cluster.a.app.prisma.eventOutbox.count()) === 0);
  });

  test('a node killed after NATS stored its events but before it deleted their outbox row: they are published again and each queue keeps one copy', async () => {
    const realm = await outboxRealm();
    const u1 = await realm.addUser();
    await makeChannel(realm, 'twice', [realm.owner, u1]);
    const k = await doomedNode('k3', realm, 'TEST_DIE_AFTER_PUBLISH');
    const queues = [
      [B, await register(via(B, u1))],
      [C, await register(via(C, u1))],
    ] as const;
    await sendDying(k, realm.owner, 'twice');
    // The next writer of the channel finds the row and publishes it again before its own message.
    const after = (await via(C, realm.owner).post('/messages', { type: 'stream', to: 'twice', topic: 't', content: 'after' })).body.id as number;
    const stored = await channelMessageIds(realm, 'twice');
    assert.equal(stored.length, 2);
    assert.is(stored[1], after);
    for (const [port, { queueId }] of queues) {
      const ids = (await collect(via(port, u1), queueId, 'message', 2)).map((e) => e.message.id as number);
      assert.equal(ids, stored);
      const all = await via(port, u1).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.equal(
        all.body.events.filter((e: any) => e.type === 'message').map((e: any) => e.message.id),
        stored,
        'the repeat was dropped',
      );
    }
    // Rows are deleted in batches after their publish: the last may still be on its way.
    await eventually('the outbox to be empty', async () => (await cluster.a.app.prisma.eventOutbox.count()) === 0);
  });
}

test.run();
