// Queues outlive their node (src/gateway/queue-takeover.ts): a client whose queue's node was killed
// (SIGKILL, also right after a commit) goes on through another node with the same queue_id and
// last_event_id, and gets every message once, in order, with the ids it would have had: no
// BAD_EVENT_QUEUE_ID, no register again. Another node then relays to the one that took it over.
// A dead node's queue nobody comes back for is deleted once it has been idle for its timeout.
import { randomUUID } from 'node:crypto';
import { connect, headers } from 'nats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { parseAdminCommand, runAdminCommand } from '../../src/cli/commands.ts';
import { makeChannel } from '../messages/messages-helpers.ts';
import { collect, DIE, eventually, register, sendDying, startCluster, via, type NodeProcess, type TestCluster } from '../helpers/cluster.ts';
import { NATS_URL } from '../helpers/nats.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

if (!NATS_URL) {
  test.skip('queue takeover (NATS_URL is not set: the cluster tests need a NATS server with JetStream)');
} else {
  const natsUrl = NATS_URL;
  let cluster: TestCluster;
  let realm: TestRealm;
  let A = 0;
  let C = 0;

  test.before(async () => {
    // Heartbeats would answer the parked polls with no events; they take no ids either way.
    cluster = await startCluster(natsUrl, ['c'], { HEARTBEAT_SECONDS: '60' });
    A = cluster.a.port;
    C = cluster.nodes[0]!.port;
    realm = await newRealm(cluster.a);
  });

  test.after(async () => {
    await cluster?.close();
  });

  async function startNode(id: string, extra: Record<string, string> = {}): Promise<NodeProcess> {
    const node = await cluster.start(id, extra);
    await eventually(`node ${id} to know the organization`, async () => (await via(node.port, realm.owner).get('/users/me')).status === 200);
    return node;
  }

  const row = async (queueId: string) =>
    (await cluster.a.app.prisma.queueDescriptor.findUnique({ where: { id: queueId }, select: { node: true, newestPrunedId: true } })) ?? undefined;

  async function send(port: number, user: TestUser, channel: string, content: string): Promise<number> {
    const r = await via(port, user).post('/messages', { type: 'stream', to: channel, topic: 't', content });
    assert.is(r.status, 200, r.text);
    return r.body.id as number;
  }

  /** Reads `count` messages after `after` through `port`, checking their ids follow on; returns their message ids. */
  async function read(port: number, user: TestUser, queueId: string, count: number, after: number): Promise<number[]> {
    const events = await collect(via(port, user), queueId, 'message', count, after);
    assert.equal(
      events.map((e) => e.id),
      events.map((_, i) => after + 1 + i),
      'the ids go on from what the client had',
    );
    return events.map((e) => e.message.id as number);
  }

  /** Nothing more than `count` messages waits after `after`. */
  async function nothingMore(port: number, user: TestUser, queueId: string, after: number): Promise<void> {
    const r = await via(port, user).get('/events', { queue_id: queueId, last_event_id: after, dont_block: true });
    assert.is(r.status, 200, r.text);
    assert.equal(r.body.events, [], 'no event twice');
  }

  /** The events after `after` a poll through `port` answers at once (acknowledging up to `after`). */
  async function pending(port: number, user: TestUser, queueId: string, after: number): Promise<Record<string, any>[]> {
    const r = await via(port, user).get('/events', { queue_id: queueId, last_event_id: after, dont_block: true });
    assert.is(r.status, 200, r.text);
    return r.body.events;
  }

  /** Polls through `port` until `count` events after `after` wait; returns them as [id, message id or status text]. */
  const pendingNow = (port: number, user: TestUser, queueId: string, after: number, count: number) =>
    eventually(`${count} events after ${after}`, async () => {
      const events = await pending(port, user, queueId, after);
      return events.length >= count && events.map((e) => [e.id, e.type === 'message' ? e.message.id : e.status_text]);
    });

  /**
   * A frame of three `user_status` events for `user` (status texts `${text} 1` to 3) in two parts,
   * as a node sends an item too big for one NATS message, from an origin of the test's own:
   * `send(0)`, then `send(1)`.
   */
  async function frameInParts(user: TestUser, text: string): Promise<{ send(part: 0 | 1): Promise<void> }> {
    const items = [1, 2, 3].map((n) => ({
      e: { realmId: realm.id, userIds: [user.id], event: { type: 'user_status', user_id: user.id, status_text: `${text} ${n}` } },
    }));
    const data = Buffer.from(JSON.stringify(items));
    const parts = [data.subarray(0, data.length >> 1), data.subarray(data.length >> 1)];
    const origin = `test.${randomUUID()}`;
    return {
      async send(part) {
        const nc = await connect({ servers: natsUrl });
        try {
          const h = headers();
          h.set('Chat-Origin', origin);
          h.set('Chat-Frame', String(part));
          if (part === 0) h.set('Chat-More', '1');
          await nc.jetstream().publish(`chat.${cluster.a.app.cluster!.clusterId}.events`, parts[part]!, { msgID: `${origin}.${part}`, headers: h });
        } finally {
          await nc.close();
        }
      },
    };
  }

  /**
   * A reader's queue on a new node `id` that read one message there and was then stopped
   * gracefully (saving the queue), and a second message sent meanwhile to `channel`.
   */
  async function stoppedWithAQueue(id: string, channel: string) {
    const reader = await realm.addUser();
    await makeChannel(realm, channel, [realm.owner, reader]);
    const node = await startNode(id);
    const { queueId } = await register(via(node.port, reader));
    const sent = [await send(A, realm.owner, channel, 'one')];
    assert.equal(await read(node.port, reader, queueId, 1, -1), sent);
    await node.kill('SIGTERM');
    sent.push(await send(A, realm.owner, channel, 'two'));
    return { reader, queueId, sent };
  }

  const messageIn = async (channel: string, content: string) =>
    (await cluster.a.app.prisma.message.findFirstOrThrow({ where: { realmId: realm.id, channel: { name: channel }, content } })).id;

  test('a long-polled queue whose node is killed goes on through another node, then a third relays to it', async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'killed', [realm.owner, reader]);
    const b = await startNode('b');
    const { queueId } = await register(via(b.port, reader));
    const sent: number[] = [];
    for (let n = 0; n < 5; n++) sent.push(await send(A, realm.owner, 'killed', `m${n}`));
    assert.equal(await read(b.port, reader, queueId, 5, -1), sent);
    // A checkpoint with the acknowledgment, then two more read but not acknowledged to the row.
    const parked = via(b.port, reader).get('/events', { queue_id: queueId, last_event_id: 4 }, { timeoutMs: 70_000 });
    await eventually('a checkpoint with the acknowledgment', async () => (await row(queueId))?.newestPrunedId === 4);
    for (let n = 5; n < 7; n++) sent.push(await send(A, realm.owner, 'killed', `m${n}`));
    const got = await parked;
    assert.is(got.status, 200, got.text);
    let last = 4;
    const early: number[] = [];
    for (const e of got.body.events) {
      early.push(e.message.id);
      last = e.id;
    }
    // A poll parked on b when it dies: its answer is lost; the client polls again elsewhere.
    const lost = via(b.port, reader)
      .get('/events', { queue_id: queueId, last_event_id: last }, { timeoutMs: 70_000 })
      .then(
        () => 'answered',
        () => 'lost',
      );
    await b.kill('SIGKILL');
    assert.is(await lost, 'lost');
    for (let n = 7; n < 10; n++) sent.push(await send(A, realm.owner, 'killed', `m${n}`));
    const rest = await read(C, reader, queueId, 9 - last, last);
    assert.equal([...early, ...rest], sent.slice(5), 'every message once, in order');
    assert.is((await row(queueId))?.node, 'c', 'the row names the node that took it over');
    // Node a passes the client's polls to c now.
    sent.push(await send(C, realm.owner, 'killed', 'm10'));
    assert.equal(await read(A, reader, queueId, 1, 9), [sent[10]!]);
    await nothingMore(C, reader, queueId, 10);
  });

  test('a node killed right after a commit, before it published: its queue gets that message once, through another node', async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'commit', [realm.owner, reader]);
    const d = await startNode('d', { TEST_DIE_AFTER_COMMIT: DIE });
    const { queueId } = await register(via(d.port, reader));
    const before = await send(d.port, realm.owner, 'commit', 'before');
    assert.equal(await read(d.port, reader, queueId, 1, -1), [before]);
    await sendDying(d, realm.owner, 'commit');
    const dying = await messageIn('commit', `${DIE} now`);
    const after = await send(A, realm.owner, 'commit', 'after');
    assert.equal(await read(C, reader, queueId, 2, 0), [dying, after]);
    await nothingMore(A, reader, queueId, 2);
  });

  test('a node killed after NATS stored its events but before it deleted their outbox row: the queue keeps one copy', async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'stored', [realm.owner, reader]);
    const p = await startNode('p', { TEST_DIE_AFTER_PUBLISH: DIE });
    const { queueId } = await register(via(p.port, reader));
    await sendDying(p, realm.owner, 'stored');
    const dying = await messageIn('stored', `${DIE} now`);
    // The next writer of the channel publishes the row again before its own message.
    const after = await send(C, realm.owner, 'stored', 'after');
    assert.equal(await read(A, reader, queueId, 2, -1), [dying, after]);
    await nothingMore(C, reader, queueId, 1);
  });

  test("a WebSocket whose queue's node was killed resumes through another node, on the same queue", async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'socket', [realm.owner, reader]);
    const w = await startNode('w');
    const { queueId } = await register(via(w.port, reader));
    const sent = [await send(A, realm.owner, 'socket', 'one'), await send(A, realm.owner, 'socket', 'two')];
    assert.equal(await read(w.port, reader, queueId, 2, -1), sent);
    await w.kill('SIGKILL');
    sent.push(await send(A, realm.owner, 'socket', 'three'));
    const auth = `Basic ${Buffer.from(`${reader.email}:${reader.apiKey}`).toString('base64')}`;
    const ws = new WebSocket(`ws://127.0.0.1:${C}/api/v1/events/socket?queue_id=${encodeURIComponent(queueId)}&last_event_id=1`, {
      headers: { Authorization: auth, Host: reader.client.host },
    });
    const frames: any[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data))));
    try {
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      sent.push(await send(A, realm.owner, 'socket', 'four'));
      const events = await eventually('the two events over the socket', async () => {
        const got = frames.filter((f) => f.type === 'message');
        return got.length >= 2 && got;
      });
      assert.equal(
        events.map((e) => [e.id, e.message.id]),
        [
          [2, sent[2]],
          [3, sent[3]],
        ],
      );
    } finally {
      ws.close();
    }
  });

  test('a queue made by a poll without a queue id is taken over too', async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'made', [realm.owner, reader]);
    const g = await startNode('g');
    const made = await via(g.port, reader).get('/events', { dont_block: true, event_types: JSON.stringify(['message']) });
    assert.is(made.status, 200, made.text);
    const queueId = made.body.queue_id as string;
    await eventually('its row', async () => (await row(queueId)) !== undefined);
    const sent = [await send(A, realm.owner, 'made', 'one'), await send(A, realm.owner, 'made', 'two')];
    assert.equal(await read(g.port, reader, queueId, 2, -1), sent);
    await g.kill('SIGKILL');
    sent.push(await send(A, realm.owner, 'made', 'three'));
    assert.equal(await read(C, reader, queueId, 1, 1), [sent[2]!]);
  });

  test('a queue taken over while its node was stopped stays with the taker when the node starts again', async () => {
    // Stopped gracefully, h saves the queue; a poll meanwhile has another node take it over.
    const { reader, queueId, sent } = await stoppedWithAQueue('h', 'away');
    assert.equal(await read(C, reader, queueId, 1, 0), [sent[1]!]);
    const again = await startNode('h');
    sent.push(await send(A, realm.owner, 'away', 'three'));
    // h did not take back the saved copy: it passes the poll to c, which the row names.
    assert.equal(await read(again.port, reader, queueId, 1, 1), [sent[2]!]);
    assert.is((await row(queueId))?.node, 'c');
    await nothingMore(C, reader, queueId, 2);
  });

  test('a queue restored by a graceful restart whose node is killed before its restart event is acknowledged goes on through another node', async () => {
    const { reader, queueId, sent } = await stoppedWithAQueue('r', 'restarted');
    const again = await startNode('r');
    // The restored queue: the restart event (not in the stream), then what was sent meanwhile.
    const got = await via(again.port, reader).get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
    assert.is(got.status, 200, got.text);
    assert.equal(
      got.body.events.map((e: any) => [e.id, e.type, e.message?.id]),
      [
        [1, 'restart', undefined],
        [2, 'message', sent[1]],
      ],
    );
    // Killed before the client acknowledged them: the row still replays from before the restart.
    await again.kill('SIGKILL');
    sent.push(await send(A, realm.owner, 'restarted', 'three'), await send(A, realm.owner, 'restarted', 'four'));
    assert.equal(await read(C, reader, queueId, 2, 2), sent.slice(2), 'the ids go on from the ones the restarted node gave');
    await nothingMore(C, reader, queueId, 4);
  });

  test("a frame sent in parts with another node's frame between them: the queue taken over gets both, once, in the order they came", async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'parts', [realm.owner, reader]);
    const f = await startNode('f');
    const { queueId } = await register(via(f.port, reader), { event_types: ['message', 'user_status'] });
    const m0 = await send(A, realm.owner, 'parts', 'zero');
    // A frame of three events in two parts, with node a's message stored between them: the frame
    // reaches the queue when its last part does, after the message.
    const frame = await frameInParts(reader, 'part');
    await frame.send(0);
    const m1 = await send(A, realm.owner, 'parts', 'one');
    await pendingNow(f.port, reader, queueId, -1, 2);
    await frame.send(1);
    const all = [
      [1, m1],
      [2, 'part 1'],
      [3, 'part 2'],
      [4, 'part 3'],
    ];
    assert.equal(await pendingNow(f.port, reader, queueId, -1, 5), [[0, m0], ...all]);
    // Acknowledged: the first message only. The checkpoint then holds the rest.
    await pending(f.port, reader, queueId, 0);
    await eventually('a checkpoint with the acknowledgment', async () => (await row(queueId))?.newestPrunedId === 0);
    await f.kill('SIGKILL');
    const m2 = await send(A, realm.owner, 'parts', 'two');
    assert.equal(await pendingNow(C, reader, queueId, 0, 5), [...all, [5, m2]]);
  });

  test('a node stopped gracefully between the parts of a frame gets the whole frame once it is back, and so does a takeover after it', async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'between', [realm.owner, reader]);
    const v = await startNode('v');
    const { queueId } = await register(via(v.port, reader), { event_types: ['message', 'user_status'] });
    const frame = await frameInParts(reader, 'saved');
    const m0 = await send(A, realm.owner, 'between', 'zero');
    await frame.send(0);
    // Read by v after the first part: v saves its queue in the middle of the frame.
    const m1 = await send(A, realm.owner, 'between', 'one');
    await pendingNow(v.port, reader, queueId, -1, 2);
    await v.kill('SIGTERM');
    await frame.send(1);
    const again = await startNode('v');
    const all = [
      [0, m0],
      [1, m1],
      [2, undefined],
      [3, 'saved 1'],
      [4, 'saved 2'],
      [5, 'saved 3'],
    ];
    assert.equal(await pendingNow(again.port, reader, queueId, -1, 6), all, 'the restart event, then the frame');
    // Nothing acknowledged: a takeover replays from before the stop and puts the restart event back where it was.
    await again.kill('SIGKILL');
    const m2 = await send(A, realm.owner, 'between', 'two');
    assert.equal(await pendingNow(C, reader, queueId, -1, 7), [...all, [6, m2]]);
  });

  test("an organization deactivated while its queue's node is dead: the queue has ended, as a live one has", async () => {
    const org = await newRealm(cluster.a);
    const reader = await org.addUser();
    const k = await startNode('k');
    const taken = await register(via(k.port, reader));
    const live = await register(via(C, reader));
    await k.kill('SIGKILL');
    const off = await via(A, org.owner).post('/realm/deactivate');
    assert.is(off.status, 200, off.text);
    // Node c learns of the deactivation through the bus, a moment after node a's answer.
    await eventually('node c to know the organization is deactivated', async () => (await via(C, reader).get('/users/me')).status === 401);
    const refused = await via(C, reader).get('/events', { queue_id: taken.queueId, last_event_id: -1, dont_block: true });
    assert.equal([refused.status, refused.body.code], [401, 'REALM_DEACTIVATED']);
    await runAdminCommand(cluster.a.app, parseAdminCommand('reactivate-realm', ['--subdomain', org.subdomain]));
    await eventually('node c to know the organization is back', async () => (await via(C, reader).get('/users/me')).status === 200);
    // Both answer as Zulip does for a queue that has gone.
    const answers = [];
    for (const { queueId } of [live, taken]) {
      const r = await via(C, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      answers.push([r.status, JSON.stringify(r.body).replaceAll(queueId, 'ID')]);
    }
    assert.is(answers[0]![0], 400);
    assert.match(String(answers[0]![1]), 'BAD_EVENT_QUEUE_ID');
    assert.equal(answers[1], answers[0]);
    assert.is(await row(taken.queueId), undefined, "the taken queue's row is gone");
  });

  test('a restart whose note of the restart events cannot be written does not serve the queues: the next start does, and a takeover numbers as the client saw', async () => {
    const { reader, queueId, sent } = await stoppedWithAQueue('q', 'noted');
    // The database refuses to note where the queue's restart event sits.
    const db = cluster.a.app.prisma;
    await db.$executeRawUnsafe(`CREATE FUNCTION test_refuse_restarts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW."restarts" IS DISTINCT FROM OLD."restarts" THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await db.$executeRawUnsafe(
      `CREATE TRIGGER test_refuse_restarts BEFORE UPDATE ON "QueueDescriptor" FOR EACH ROW WHEN (NEW."id" = '${queueId}') EXECUTE FUNCTION test_refuse_restarts()`,
    );
    let refused: NodeProcess | null;
    try {
      refused = await cluster.start('q').catch(() => null);
    } finally {
      await db.$executeRawUnsafe(`DROP TRIGGER test_refuse_restarts ON "QueueDescriptor"`);
      await db.$executeRawUnsafe(`DROP FUNCTION test_refuse_restarts()`);
    }
    const again = refused ?? (await startNode('q'));
    assert.equal(await pendingNow(again.port, reader, queueId, 0, 2), [
      [1, undefined],
      [2, sent[1]],
    ]);
    await again.kill('SIGKILL');
    sent.push(await send(A, realm.owner, 'noted', 'three'));
    assert.equal(await read(C, reader, queueId, 1, 2), [sent[2]!], 'the ids go on from the ones the restarted node gave');
    await nothingMore(C, reader, queueId, 3);
    assert.is(refused, null, 'the start the database refused failed');
  });

  test('the queues of a dead node nobody comes back for are deleted after their idle timeout, not before', async () => {
    const reader = await realm.addUser();
    const s = await startNode('s');
    const idle = await register(via(s.port, reader), { event_types: ['message'], idle_queue_timeout: 2 });
    const kept = await register(via(s.port, reader), { event_types: ['message'] });
    await s.kill('SIGKILL');
    await eventually('the idle queue to be deleted', async () => (await row(idle.queueId)) === undefined, 30_000);
    assert.ok(await row(kept.queueId), 'a queue within its idle timeout stays');
    const r = await via(C, reader).get('/events', { queue_id: idle.queueId, last_event_id: -1, dont_block: true });
    assert.is(r.status, 400, r.text);
    assert.is(r.body.code, 'BAD_EVENT_QUEUE_ID');
    const k = await via(C, reader).get('/events', { queue_id: kept.queueId, last_event_id: -1, dont_block: true });
    assert.is(k.status, 200, k.text);
    assert.equal(k.body.events, []);
  });
  test('a queue taken over whose new node dies too is deleted after its idle timeout, then answers as an expired queue', async () => {
    const reader = await realm.addUser();
    await makeChannel(realm, 'twice', [realm.owner, reader]);
    const [e, t] = await Promise.all([startNode('e'), startNode('t')]);
    // Long enough that the sweep cannot delete the row before the takeover, on a busy machine too.
    const { queueId } = await register(via(e.port, reader), { event_types: ['message'], idle_queue_timeout: 15 });
    await e.kill('SIGKILL');
    const sent = [await send(A, realm.owner, 'twice', 'one')];
    assert.equal(await read(t.port, reader, queueId, 1, -1), sent);
    await t.kill('SIGKILL');
    await eventually('the idle queue to be deleted', async () => (await row(queueId)) === undefined, 60_000);
    for (const port of [A, C]) {
      const r = await via(port, reader).get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
      assert.equal([r.status, r.body], [400, { result: 'error', msg: `Bad event queue ID: ${queueId}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: queueId }]);
    }
  });
}

test.run();
