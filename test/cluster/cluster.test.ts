// Three nodes on one PostgreSQL and one NATS, as behind a load balancer without stickiness:
// node a in this process, b and c as server processes. Messages and edits from every node reach
// queues on every node once each and in each channel's commit order; a queue is read and deleted
// through any node; caches follow changes made on other nodes; scheduled messages go out once;
// and when a node is killed under load its queues go on through the others (taken over) with every
// message that was acknowledged, once each.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { makeChannel } from '../messages/messages-helpers.ts';
import { Client } from '../helpers/client.ts';
import { collect, eventually, register, startCluster, via, type TestCluster } from '../helpers/cluster.ts';
import { hasNatsServer, NATS_URL, PrivateNats } from '../helpers/nats.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const natsUrl = NATS_URL;

if (!natsUrl) {
  test.skip('cluster (NATS_URL is not set: the cluster tests need a NATS server with JetStream)');
} else {
  let cluster: TestCluster;
  let A = 0;
  let B = 0;
  let C = 0;

  test.before(async () => {
    // Rate limits on, with only failed logins low enough to reach.
    cluster = await startCluster(natsUrl, ['b', 'c'], {
      RATE_LIMIT: 'on',
      RATE_LIMIT_USER_PER_MINUTE: '100000',
      RATE_LIMIT_IP_PER_MINUTE: '100000',
      RATE_LIMIT_LOGIN_FAILURES: '5',
    });
    A = cluster.a.port;
    [B, C] = ['b', 'c'].map((id) => cluster.nodes.find((n) => n.id === id)!.port) as [number, number];
  });

  test.after(async () => {
    await cluster?.close();
  });

  /** An organization made on node a, once the other nodes know it (its creation crossed the bus). */
  async function clusterRealm(): Promise<TestRealm> {
    const realm = await newRealm(cluster.a);
    for (const port of [B, C])
      await eventually(`node on ${port} to know the new organization`, async () => (await via(port, realm.owner).get('/users/me')).status === 200);
    return realm;
  }

  async function sendVia(port: number, user: TestUser, to: string, content: string, topic = 't'): Promise<number> {
    const r = await via(port, user).post('/messages', { type: 'stream', to, topic, content });
    assert.is(r.status, 200, r.text);
    return r.body.id as number;
  }

  test('queues name their node; messages sent through every node reach queues on the others once each, in commit order', async () => {
    const realm = await clusterRealm();
    const [u1, u2, u3] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
    await makeChannel(realm, 'general', [realm.owner, u1!, u2!, u3!]);
    const onB = await register(via(B, u2!));
    const onC = await register(via(C, u3!));
    assert.ok(onB.queueId.startsWith('b:'), onB.queueId);
    assert.ok(onC.queueId.startsWith('c:'), onC.queueId);
    // Three senders, one per node, at the same time into one channel.
    const sent = (
      await Promise.all(
        [A, B, C].map(async (port, i) => {
          const ids: number[] = [];
          for (let k = 0; k < 15; k++) ids.push(await sendVia(port, u1!, 'general', `${i}-${k}`));
          return ids;
        }),
      )
    ).flat();
    const inCommitOrder = [...sent].sort((x, y) => x - y);
    // b's queue read through node a (passed on to b), c's through c itself.
    for (const [client, queueId] of [
      [via(A, u2!), onB.queueId],
      [via(C, u3!), onC.queueId],
    ] as const) {
      const ids = (await collect(client, queueId, 'message', 45)).map((e) => e.message.id as number);
      assert.equal(ids, inCommitOrder, 'every message once, in the order the channel committed them');
      const more = await client.get('/events', { queue_id: queueId, last_event_id: 1_000, dont_block: true });
      assert.is(more.status, 400, 'pruned past the end');
    }
  });

  test('edits and topic moves of one message made at once through two nodes reach every queue in commit order', async () => {
    const realm = await clusterRealm();
    const u1 = await realm.addUser();
    await makeChannel(realm, 'edits', [realm.owner, u1]);
    const queues = [await register(via(A, u1), { event_types: ['update_message'] }), await register(via(C, u1), { event_types: ['update_message'] })];
    const id = await sendVia(A, realm.owner, 'edits', 'v0', 'topic-0');
    const rounds = 8;
    const statuses = await Promise.all([
      (async () => {
        const s: number[] = [];
        for (let k = 1; k <= rounds; k++) s.push((await via(B, realm.owner).patch(`/messages/${id}`, { content: `b-${k}` })).status);
        return s;
      })(),
      (async () => {
        const s: number[] = [];
        for (let k = 1; k <= rounds; k++) s.push((await via(C, realm.owner).patch(`/messages/${id}`, { content: `c-${k}` })).status);
        return s;
      })(),
      (async () => {
        const s: number[] = [];
        for (let k = 1; k <= rounds; k++)
          s.push((await via(B, realm.owner).patch(`/messages/${id}`, { topic: `topic-${k}`, propagate_mode: 'change_one' })).status);
        return s;
      })(),
    ]);
    assert.equal(statuses.flat(), Array(3 * rounds).fill(200));
    const stored = await cluster.a.app.prisma.message.findUniqueOrThrow({ where: { id } });
    for (const q of queues) {
      const events = await collect(via(A, u1), q.queueId, 'update_message', 3 * rounds);
      // Each event starts from what the one before it left: no event overtook another.
      const contents = events.filter((e) => 'content' in e);
      const topics = events.filter((e) => 'subject' in e);
      assert.is(contents[0]!.orig_content, 'v0');
      for (let i = 1; i < contents.length; i++) assert.is(contents[i]!.orig_content, contents[i - 1]!.content);
      assert.is(contents.at(-1)!.content, stored.content);
      assert.is(topics[0]!.orig_subject, 'topic-0');
      for (let i = 1; i < topics.length; i++) assert.is(topics[i]!.orig_subject, topics[i - 1]!.subject);
      assert.is(topics.at(-1)!.subject, stored.topic);
    }
  });

  test('a queue is read, read over a WebSocket, and deleted through any node', async () => {
    const realm = await clusterRealm();
    const u1 = await realm.addUser();
    await makeChannel(realm, 'proxy', [realm.owner, u1]);
    const { queueId } = await register(via(B, u1));
    // A long-poll parked through c on b's queue completes when a message sent through a arrives.
    const parked = via(C, u1).get('/events', { queue_id: queueId, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 300));
    const first = await sendVia(A, realm.owner, 'proxy', 'one');
    const polled = await parked;
    assert.is(polled.status, 200, polled.text);
    assert.equal(
      polled.body.events.map((e: any) => e.message.id),
      [first],
    );
    assert.is(polled.body.queue_id, queueId);
    // Another user's queue id is as good as none, wherever it is used.
    const other = await via(C, realm.owner).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.is(other.status, 400);
    assert.is(other.body.code, 'BAD_EVENT_QUEUE_ID');
    // Over a WebSocket through a: resumes after event 0, pushes what comes next, takes acks.
    const auth = `Basic ${Buffer.from(`${u1.email}:${u1.apiKey}`).toString('base64')}`;
    const ws = new WebSocket(`ws://127.0.0.1:${A}/api/v1/events/socket?queue_id=${encodeURIComponent(queueId)}&last_event_id=0`, {
      headers: { Authorization: auth, Host: u1.client.host },
    });
    const frames: any[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const second = await sendVia(C, realm.owner, 'proxy', 'two');
    await eventually('the pushed event', async () => frames.length >= 1);
    assert.is(frames[0].id, 1);
    assert.is(frames[0].message.id, second);
    ws.send(JSON.stringify({ last_event_id: 1 }));
    ws.send(JSON.stringify({ last_event_id: 0 }));
    await eventually('the refused acknowledgment', async () => frames.length >= 2);
    assert.is(frames[1].result, 'error');
    ws.close();
    // Deleted through c; then gone everywhere.
    const deleted = await via(C, u1).delete('/events', { queue_id: queueId });
    assert.is(deleted.status, 200, deleted.text);
    for (const port of [A, B, C]) {
      const r = await via(port, u1).get('/events', { queue_id: queueId, last_event_id: 1, dont_block: true });
      assert.is(r.body.code, 'BAD_EVENT_QUEUE_ID', `through ${port}`);
    }
  });

  test('caches follow changes made on another node: a renamed channel, a new subscriber, a new organization', async () => {
    const realm = await clusterRealm();
    const [u1, u2] = [await realm.addUser(), await realm.addUser()];
    const channelId = await makeChannel(realm, 'old-name', [realm.owner, u1]);
    // Node b caches the channel's row under its old name, and its subscriber set.
    await sendVia(B, u1, 'old-name', 'cached');
    const watcher = await register(via(B, realm.owner), { event_types: ['stream', 'subscription', 'message'] });
    const renamed = await via(A, realm.owner).patch(`/streams/${channelId}`, { new_name: 'new-name' });
    assert.is(renamed.status, 200, renamed.text);
    // Once b delivered the rename, b's cache has forgotten the old row.
    await collect(via(B, realm.owner), watcher.queueId, 'stream', 1);
    await sendVia(B, u1, 'new-name', 'by the new name');
    const byOld = await via(B, u1).post('/messages', { type: 'stream', to: 'old-name', topic: 't', content: 'x' });
    assert.is(byOld.status, 400, byOld.text);
    // u2 joins through a; a message sent through b reaches u2's queue on c.
    const q2 = await register(via(C, u2));
    const joined = await via(A, realm.owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'new-name' }], principals: [u2.id] });
    assert.is(joined.status, 200, joined.text);
    await eventually('b to hear of the subscription', async () => {
      const events = await via(B, realm.owner).get('/events', { queue_id: watcher.queueId, last_event_id: -1, dont_block: true });
      return events.body.events.some((e: any) => e.type === 'subscription' && e.op === 'peer_add');
    });
    const id = await sendVia(B, u1, 'new-name', 'to the new member');
    const got = await collect(via(C, u2), q2.queueId, 'message', 1);
    assert.is(got[0]!.message.id, id);
    assert.is(got[0]!.message.display_recipient, 'new-name');
  });

  test("register's member lists follow changes to users made on another node", async () => {
    const realm = await clusterRealm();
    const u1 = await realm.addUser({ name: 'Before' });
    const fetch = { event_types: ['realm_user'], fetch_event_types: ['realm_user'] };
    const person = (state: Record<string, any>, id: number) =>
      [...state.realm_users, ...state.realm_non_active_users].find((p: Record<string, unknown>) => p.user_id === id);
    const listed = async (port: number, id: number) => person((await register(via(port, realm.owner), fetch)).state, id);
    // Every node has made its lists; b and c watch for the changes.
    for (const port of [A, B, C]) assert.is((await listed(port, u1.id))?.full_name, 'Before');
    const onB = await register(via(B, realm.owner), { event_types: ['realm_user'] });
    const onC = await register(via(C, realm.owner), { event_types: ['realm_user'] });

    assert.is((await via(A, realm.owner).patch(`/users/${u1.id}`, { full_name: 'After' })).status, 200);
    // The node that made the change at once; a register on another node right away has the change
    // either in its state or in its queue.
    assert.is((await listed(A, u1.id))?.full_name, 'After');
    const early = await register(via(C, realm.owner), fetch);
    if (person(early.state, u1.id)?.full_name !== 'After') await collect(via(C, realm.owner), early.queueId, 'realm_user', 1);
    // Once b delivered the event, its next register has it.
    await collect(via(B, realm.owner), onB.queueId, 'realm_user', 1);
    assert.is((await listed(B, u1.id))?.full_name, 'After');

    // A new user (made on a) and a deactivation (through b), seen from the others.
    const u2 = await realm.addUser({ name: 'Newcomer' });
    await collect(via(B, realm.owner), onB.queueId, 'realm_user', 1, 0);
    assert.is((await listed(B, u2.id))?.full_name, 'Newcomer');
    assert.is((await via(B, realm.owner).delete(`/users/${u1.id}`)).status, 200);
    await eventually('c to deliver the deactivation', async () => {
      const events = await via(C, realm.owner).get('/events', { queue_id: onC.queueId, last_event_id: -1, dont_block: true });
      return events.body.events.some((e: any) => e.type === 'realm_user' && e.person?.is_active === false);
    });
    const onC2 = (await register(via(C, realm.owner), fetch)).state;
    assert.ok(onC2.realm_non_active_users.some((p: Record<string, unknown>) => p.user_id === u1.id));
    assert.not.ok(onC2.realm_users.some((p: Record<string, unknown>) => p.user_id === u1.id));
    assert.ok(onC2.realm_users.some((p: Record<string, unknown>) => p.user_id === u2.id));
  });

  test('a scheduled message goes out once, whichever node scheduled it and however many are awake', async () => {
    const realm = await clusterRealm();
    const channelId = await makeChannel(realm, 'later', [realm.owner]);
    const due = Math.floor(Date.now() / 1000) + 2;
    const r = await via(B, realm.owner).post('/scheduled_messages', {
      type: 'stream',
      to: channelId,
      topic: 't',
      content: 'scheduled',
      scheduled_delivery_timestamp: due,
    });
    assert.is(r.status, 200, r.text);
    const sent = await eventually('the delivery', async () => {
      const row = await cluster.a.app.prisma.scheduledMessage.findUniqueOrThrow({ where: { id: r.body.scheduled_message_id } });
      return row.delivered && row;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const copies = await cluster.a.app.prisma.message.count({ where: { realmId: realm.id, content: 'scheduled' } });
    assert.is(copies, 1);
    assert.ok(sent.deliveredMessageId);
  });

  test("presence update ids, upload URL signatures and failed-login limits are the cluster's, not each node's", async () => {
    const realm = await clusterRealm();
    const users = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
    // One ping per node: one sequence of update ids, and every node answers with all of them.
    for (const [i, port] of [A, B, C].entries()) {
      const r = await via(port, users[i]!).post('/users/me/presence', { status: 'active', last_update_id: -1 });
      assert.is(r.status, 200, r.text);
    }
    const rows = await cluster.a.app.prisma.presence.findMany({ where: { userId: { in: users.map((u) => u.id) } }, orderBy: { lastUpdateId: 'asc' } });
    const ids = rows.map((r) => r.lastUpdateId);
    assert.equal(ids, [ids[0]!, ids[0]! + 1, ids[0]! + 2]);
    assert.equal(
      rows.map((r) => r.userId),
      users.map((u) => u.id),
      'ids in the order the pings committed',
    );
    for (const port of [A, B, C]) {
      const r = await via(port, realm.owner).post('/users/me/presence', { status: 'idle', last_update_id: ids[0]! - 1, ping_only: false });
      assert.equal(
        Object.keys(r.body.presences)
          .map(Number)
          .filter((id) => users.some((u) => u.id === id))
          .sort(),
        users.map((u) => u.id).sort(),
      );
    }
    // A temporary upload URL made by one node is honored by another.
    const up = await via(A, realm.owner).postMultipart('/user_uploads', {}, [
      { field: 'file', filename: 'n.txt', contentType: 'text/plain', data: Buffer.from('shared') },
    ]);
    assert.is(up.status, 200, up.text);
    const temporary = await via(B, realm.owner).request('GET', `/api/v1${up.body.url}`);
    assert.is(temporary.status, 200, temporary.text);
    const fetched = await realm.anonymous.request('GET', temporary.body.url);
    const onC = await new Client(C, realm.host).request('GET', temporary.body.url);
    assert.equal([fetched.status, onC.status, onC.text], [200, 200, 'shared']);
    // Five failed logins spread over the nodes use up the username's allowance on all of them.
    const login = (port: number, password: string) => new Client(port, realm.host).post('/fetch_api_key', { username: users[0]!.email, password });
    for (const port of [A, A, B, B, C]) assert.is((await login(port, 'wrong')).status, 401);
    await new Promise((r) => setTimeout(r, 300));
    for (const port of [A, B, C]) assert.is((await login(port, users[0]!.password)).status, 429, `through ${port}`);
  });

  test('a node stopped and started again takes its queues back, with what was sent while it was down', async () => {
    const realm = await clusterRealm();
    const u1 = await realm.addUser();
    await makeChannel(realm, 'restart', [realm.owner, u1]);
    const { queueId } = await register(via(B, u1));
    const before = await sendVia(A, realm.owner, 'restart', 'before');
    const seen = await collect(via(B, u1), queueId, 'message', 1);
    assert.equal(
      seen.map((e) => e.message.id),
      [before],
    );
    // Acknowledged, so it is not kept for the client.
    await via(B, u1).get('/events', { queue_id: queueId, last_event_id: seen[0]!.id, dont_block: true });
    await cluster.nodes.find((n) => n.id === 'b')!.kill('SIGTERM');
    const whileDown = [await sendVia(A, realm.owner, 'restart', 'down 1'), await sendVia(C, realm.owner, 'restart', 'down 2')];
    B = (await cluster.start('b')).port;
    const after = await sendVia(C, realm.owner, 'restart', 'after');
    const events = await collect(via(A, u1), queueId, 'message', 3, seen[0]!.id);
    assert.equal(
      events.map((e) => e.message.id),
      [...whileDown, after],
    );
  });

  test('a node whose NODE_ID is in use refuses to start', async () => {
    const refused = await cluster.start('c').catch((err: Error) => err);
    assert.instance(refused, Error);
    assert.match(String(refused), 'another node of this cluster runs as NODE_ID=c');
  });

  test('a node held up longer than the liveness window is slow, not gone: a socket and a poll through another node wait for it', async () => {
    const realm = await clusterRealm();
    const user = await realm.addUser();
    await makeChannel(realm, 'held', [realm.owner, user]);
    const socketQueue = await register(via(B, user));
    const pollQueue = await register(via(B, user));
    const b = cluster.nodes.filter((n) => n.id === 'b').at(-1)!;
    const auth = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`;
    let ws: WebSocket | undefined;
    const frames: any[] = [];
    // Node b stops (as a starved process would) for longer than the others wait to hear from it.
    b.child.kill('SIGSTOP');
    let stopped = true;
    try {
      const opened = new Promise<number>((resolve) => {
        ws = new WebSocket(`ws://127.0.0.1:${A}/api/v1/events/socket?queue_id=${encodeURIComponent(socketQueue.queueId)}&last_event_id=-1`, {
          headers: { Authorization: auth, Host: user.client.host },
        });
        ws.on('message', (data) => frames.push(JSON.parse(String(data))));
        ws.on('open', () => resolve(101));
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('error', () => resolve(0));
      });
      const poll = via(A, user).get('/events', { queue_id: pollQueue.queueId, last_event_id: -1, dont_block: true });
      await new Promise((r) => setTimeout(r, 5_500));
      b.child.kill('SIGCONT');
      stopped = false;
      assert.is(await opened, 101, 'the socket through node a was attached once node b answered');
      const polled = await poll;
      assert.equal([polled.status, polled.body.result], [200, 'success'], polled.text);
      const sent = await sendVia(A, realm.owner, 'held', 'after the hold-up');
      await eventually('the message over the socket', async () => frames.some((f) => f.message?.id === sent));
    } finally {
      if (stopped) b.child.kill('SIGCONT');
      ws?.close();
    }
  });

  test('a node killed under load: its queue goes on through both survivors at once, and nothing acknowledged is lost or repeated', async () => {
    const realm = await clusterRealm();
    const [u1, u2, u3] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
    await makeChannel(realm, 'load', [realm.owner, u1, u2, u3]);
    const onB = await register(via(B, u2));
    const onC = await register(via(C, u3));
    const acknowledged: number[] = [];
    let sending = true;
    const senders = [A, B, C].map(async (port) => {
      for (let k = 0; sending; k++) {
        try {
          const r = await via(port, u1).post('/messages', { type: 'stream', to: 'load', topic: 't', content: `${port}-${k}` });
          if (r.status === 200) acknowledged.push(r.body.id);
        } catch {
          // Node c died under this request: not acknowledged.
          if (port === C) return;
        }
      }
    });
    await new Promise((r) => setTimeout(r, 1_500));
    const killed = Date.now();
    await cluster.nodes.find((n) => n.id === 'c')!.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1_500));
    sending = false;
    await Promise.all(senders);
    // c's queue, asked for through both survivors at once: one takes it over, the other passes the poll to it.
    const first = await Promise.all([A, B].map((port) => via(port, u3).get('/events', { queue_id: onC.queueId, last_event_id: -1, dont_block: true })));
    for (const r of first) assert.is(r.status, 200, r.text);
    assert.ok(Date.now() - killed < 15_000, 'the survivors took the queue over within seconds');
    // Both queues get every acknowledged message, once, in order (and maybe those c committed but did not answer).
    const expected = [...acknowledged].sort((x, y) => x - y);
    for (const [port, user, queueId] of [
      [A, u2, onB.queueId],
      [B, u3, onC.queueId],
    ] as const) {
      const ids: number[] = [];
      let last = -1;
      await eventually(
        `every acknowledged message in ${queueId}`,
        async () => {
          const r = await via(port, user).get('/events', { queue_id: queueId, last_event_id: last, dont_block: true });
          assert.is(r.status, 200, r.text);
          for (const e of r.body.events) {
            assert.is(e.id, last + 1, 'ids follow on');
            last = e.id;
            if (e.type === 'message') ids.push(e.message.id);
          }
          return expected.every((id) => ids.includes(id));
        },
        30_000,
      );
      assert.equal(
        ids.filter((id) => expected.includes(id)),
        expected,
      );
      assert.equal([...new Set(ids)], ids, 'no duplicates');
    }
    const history = await via(B, u3).get('/messages', {
      anchor: 'newest',
      num_before: 5_000,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: 'load' }],
    });
    assert.is(history.status, 200, history.text);
    const found = new Set(history.body.messages.map((m: any) => m.id as number));
    assert.equal(
      expected.filter((id) => !found.has(id)),
      [],
      'every acknowledged message is in the history',
    );
  });
}

if (!hasNatsServer()) {
  test.skip('cluster across a NATS restart (nats-server is not installed)');
} else {
  test('NATS killed and restarted under load: every acknowledged message reaches the queues on both nodes once, in order', async () => {
    const nats = await PrivateNats.start();
    const small = await startCluster(nats.url, ['d']);
    try {
      const [A, D] = [small.a.port, small.nodes[0]!.port];
      const realm = await newRealm(small.a);
      await eventually('node d to know the organization', async () => (await via(D, realm.owner).get('/users/me')).status === 200);
      const [u1, u2, u3] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
      await makeChannel(realm, 'outage', [realm.owner, u1, u2, u3]);
      const queues = [
        [via(A, u2), (await register(via(A, u2))).queueId],
        [via(D, u3), (await register(via(D, u3))).queueId],
      ] as const;
      const acknowledged: number[] = [];
      let sending = true;
      const senders = [A, D].map(async (port) => {
        for (let k = 0; sending; k++) {
          const r = await via(port, u1).post('/messages', { type: 'stream', to: 'outage', topic: 't', content: `${port}-${k}` });
          assert.is(r.status, 200, r.text);
          acknowledged.push(r.body.id);
        }
      });
      await new Promise((r) => setTimeout(r, 1_000));
      await nats.stop('SIGKILL');
      await new Promise((r) => setTimeout(r, 1_500));
      await nats.start();
      await new Promise((r) => setTimeout(r, 1_500));
      sending = false;
      await Promise.all(senders);
      const expected = [...acknowledged].sort((x, y) => x - y);
      for (const [client, queueId] of queues) {
        const ids = (await collect(client, queueId, 'message', expected.length)).map((e) => e.message.id as number);
        assert.equal(ids, expected, 'every acknowledged message once, in commit order, on a queue that outlived the outage');
      }
    } finally {
      await small.close();
      await nats.stop();
    }
  });

  test("a long-poll and a WebSocket passed on to their queue's node across a NATS restart go on as soon as NATS is back", async () => {
    const nats = await PrivateNats.start();
    // A passed-on poll whose answer NATS lost would otherwise wait for heartbeat + 10 s: 40 s here.
    const small = await startCluster(nats.url, ['d'], { HEARTBEAT_SECONDS: '30' });
    try {
      const [A, D] = [small.a.port, small.nodes[0]!.port];
      const realm = await newRealm(small.a);
      await eventually('node d to know the organization', async () => (await via(D, realm.owner).get('/users/me')).status === 200);
      const [u1, u2] = [await realm.addUser(), await realm.addUser()];
      await makeChannel(realm, 'relayed', [realm.owner, u1, u2]);
      const { queueId, state } = await register(via(D, u2));
      const socketQueue = await register(via(D, u2));
      assert.ok(queueId.startsWith('d:') && socketQueue.queueId.startsWith('d:'), 'the queues live on node d');
      const parked = via(A, u2).get('/events', { queue_id: queueId, last_event_id: state.last_event_id }, { timeoutMs: 70_000 });
      await new Promise((r) => setTimeout(r, 500));
      await nats.stop('SIGKILL');
      await new Promise((r) => setTimeout(r, 1_000));
      // A WebSocket on the other queue through node a, opened while NATS is down.
      const auth = `Basic ${Buffer.from(`${u2.email}:${u2.apiKey}`).toString('base64')}`;
      const ws = new WebSocket(
        `ws://127.0.0.1:${A}/api/v1/events/socket?queue_id=${encodeURIComponent(socketQueue.queueId)}&last_event_id=${socketQueue.state.last_event_id}`,
        { headers: { Authorization: auth, Host: u2.client.host } },
      );
      const frames: any[] = [];
      ws.on('message', (data) => frames.push(JSON.parse(String(data))));
      ws.on('error', () => {});
      const opened = new Promise((resolve, reject) =>
        ws.once('open', resolve).once('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c)).on('end', () => reject(new Error(`HTTP ${res.statusCode} ${body}`)));
        }),
      );
      await new Promise((r) => setTimeout(r, 500));
      await nats.start();
      try {
        await opened;
        await eventually(
          'node a to publish through NATS again',
          async () => (await via(A, u1).post('/messages', { type: 'stream', to: 'relayed', topic: 't', content: 'after the outage' })).status === 200,
        );
        const answered = await Promise.race([parked, new Promise<null>((r) => setTimeout(() => r(null), 15_000))]);
        assert.ok(answered, 'the passed-on poll was answered within 15 s of NATS coming back, not at its 40 s timeout');
        assert.is(answered.status, 200, answered.text);
        assert.equal(
          answered.body.events.map((e: any) => e.message?.content),
          ['after the outage'],
        );
        await eventually('the message over the passed-on WebSocket', async () => frames.some((f) => f.message?.content === 'after the outage'), 15_000);
      } finally {
        ws.close();
      }
    } finally {
      await small.close();
      await nats.stop();
    }
  });
}

test.run();
