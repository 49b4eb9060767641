// A NATS restart under load on a three-node cluster (node a in this process, b and c as server
// processes, NATS a private nats-server this test kills and starts again): eight senders write
// into one channel through every node while each node's queues are read through another node,
// by long-polls and WebSockets. NATS stays down until every node has seen it go and a request
// was answered without it. Every reader gets every acknowledged message exactly once and in
// commit order, with event ids that never skip; no queue is lost (their bound is set at 50
// unacknowledged events, which the readers' bursts may pass); and the readers have everything
// soon after NATS is back, before a passed-on poll's own timeout would have run out.
// And a channel's writers while NATS is down (cluster/locks.ts): the writer holding the channel's
// lock is answered after 5 s and keeps the lock until NATS has stored its events; writers waiting
// for that lock, on its node and on another, are answered too, with an error and nothing written,
// while NATS is still down (not at the end of the outage); once NATS is back the channel takes
// writes again and its queues get them in commit order.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { makeChannel } from '../messages/messages-helpers.ts';
import { collect, eventually, register, startCluster, via, type TestCluster } from '../helpers/cluster.ts';
import { hasNatsServer, PrivateNats } from '../helpers/nats.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';

/** What one reader saw: message ids in arrival order, whether its event ids ever skipped, and its errors. */
interface Reading {
  label: string;
  ids: number[];
  gaps: string[];
  errors: string[];
  stop: () => void;
}

function newReading(label: string): Omit<Reading, 'stop'> {
  return { label, ids: [], gaps: [], errors: [] };
}

/** Takes a batch of events in, checking that each id follows the previous one. */
function take(reading: Omit<Reading, 'stop'>, last: number, events: Record<string, any>[]): number {
  for (const event of events) {
    if (event.id !== last + 1) reading.gaps.push(`${last} -> ${event.id}`);
    last = event.id;
    if (event.type === 'message') reading.ids.push(event.message.id);
  }
  return last;
}

/** Long-polls `queueId` through `port` until stopped, polling again after network errors. */
function pollReader(label: string, port: number, user: TestUser, queueId: string, first: number): Reading {
  const reading = newReading(label);
  let running = true;
  void (async () => {
    let last = first;
    while (running) {
      const r = await via(port, user)
        .get('/events', { queue_id: queueId, last_event_id: last }, { timeoutMs: 90_000 })
        .catch((err: Error) => ({ status: 0, body: null, text: String(err) }));
      if (r.status === 200) last = take(reading, last, r.body.events);
      else if (r.status !== 0) {
        reading.errors.push(`${r.status} ${r.text}`);
        if (r.body?.code === 'BAD_EVENT_QUEUE_ID') return;
      }
    }
  })();
  return { ...reading, stop: () => (running = false) };
}

/** Reads `queueId` over a WebSocket through `port`, reconnecting from its last event id when the socket ends. */
function socketReader(label: string, port: number, user: TestUser, queueId: string, first: number): Reading {
  const reading = newReading(label);
  let running = true;
  let socket: WebSocket | null = null;
  const auth = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`;
  void (async () => {
    let last = first;
    while (running) {
      const ended = await new Promise<{ code: number; refused?: string }>((resolve) => {
        const ws = (socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/events/socket?queue_id=${encodeURIComponent(queueId)}&last_event_id=${last}`, {
          headers: { Authorization: auth, Host: user.client.host },
        }));
        ws.on('message', (data) => {
          last = take(reading, last, [JSON.parse(String(data))]);
          ws.send(JSON.stringify({ last_event_id: last }));
        });
        ws.on('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c)).on('end', () => resolve({ code: res.statusCode ?? 0, refused: body }));
        });
        ws.on('error', () => resolve({ code: 0 }));
        ws.on('close', (code) => resolve({ code }));
      });
      if (ended.refused !== undefined) {
        reading.errors.push(`${ended.code} ${ended.refused}`);
        if (ended.refused.includes('BAD_EVENT_QUEUE_ID')) return;
        // Refused while the cluster is cut off from NATS: try again shortly.
        await new Promise((r) => setTimeout(r, 100));
      } else if (ended.code === 4004) {
        reading.errors.push('queue deleted');
        return;
      }
    }
  })();
  return {
    ...reading,
    stop: () => {
      running = false;
      socket?.close();
    },
  };
}

if (!hasNatsServer()) {
  test.skip('cluster across a NATS restart under load (nats-server is not installed)');
} else {
  let nats: PrivateNats;
  let cluster: TestCluster;
  /** Set while the test has NATS stopped: a failure then must not leave the nodes without it. */
  let natsDown = false;

  test.before(async () => {
    nats = await PrivateNats.start();
    // A passed-on poll whose answer NATS lost would wait for heartbeat + 10 s (40 s); a queue over
    // 50 events not acknowledged would be discarded.
    cluster = await startCluster(nats.url, ['b', 'c'], { HEARTBEAT_SECONDS: '30', QUEUE_MAX_EVENTS: '50' });
  });

  test.after(async () => {
    if (natsDown) await nats.start();
    await cluster?.close();
    await nats?.stop();
  });

  test('NATS restarted under load: passed-on long-polls and WebSockets on every node get every message once, in order, with no queue lost', async () => {
    const ports = [cluster.a.port, ...cluster.nodes.map((n) => n.port)];
    const realm = await newRealm(cluster.a);
    for (const port of ports)
      await eventually(`node on ${port} to know the organization`, async () => (await via(port, realm.owner).get('/users/me')).status === 200);
    const senders = [await realm.addUser(), await realm.addUser()];
    const readers = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
    await makeChannel(realm, 'load', [realm.owner, ...senders, ...readers]);

    // Each node holds a polled and a socket queue, read through the next node.
    const readings: Reading[] = [];
    for (const [i, port] of ports.entries()) {
      const through = ports[(i + 1) % ports.length]!;
      const user = readers[i]!;
      const polled = await register(via(port, user));
      const socketed = await register(via(port, user));
      readings.push(pollReader(`poll of ${polled.queueId} through ${through}`, through, user, polled.queueId, polled.state.last_event_id));
      readings.push(socketReader(`socket of ${socketed.queueId} through ${through}`, through, user, socketed.queueId, socketed.state.last_event_id));
    }

    const acknowledged: number[] = [];
    const failedSends: string[] = [];
    let sending = true;
    const sent = Array.from({ length: 8 }, async (_, k) => {
      const client = via(ports[k % ports.length]!, senders[k % senders.length]!);
      for (let n = 0; sending; n++) {
        const r = await client
          .post('/messages', { type: 'stream', to: 'load', topic: 't', content: `${k}-${n}` })
          .catch((err: Error) => ({ status: 0, text: String(err), body: null }));
        if (r.status === 200) acknowledged.push(r.body.id);
        else failedSends.push(`${r.status} ${r.text}`);
      }
    });
    await eventually('messages under way', async () => acknowledged.length >= 100, 30_000);
    await nats.stop('SIGKILL');
    natsDown = true;
    // Down until every node knows it and a request that waited for NATS was answered without it
    // (after 5 s: a direct message between the senders, whose writes take no channel's turn).
    for (const port of ports)
      await eventually(`node on ${port} to see NATS gone`, async () => (await via(port, realm.owner).request('GET', '/health/ready')).status === 503);
    const duringOutage = await via(ports[1]!, senders[0]!).post('/messages', { type: 'direct', to: [senders[1]!.id], content: 'while NATS is away' });
    assert.is(duringOutage.status, 200, duringOutage.text);
    await nats.start();
    natsDown = false;
    const back = Date.now();
    const atRestart = acknowledged.length;
    await eventually('messages sent after NATS came back', async () => acknowledged.length >= atRestart + 200, 30_000);
    sending = false;
    await Promise.all(sent);
    // A send that waited 5 s for the channel's lock while NATS was down was refused, and wrote
    // nothing (the readers below get exactly the acknowledged messages); no other send failed.
    const refused = '503 {"result":"error","msg":"The event stream is unreachable, so this change cannot take its turn now; try again","code":"BAD_REQUEST"}';
    assert.equal(
      failedSends.filter((f) => f !== refused),
      [],
      'every other message sent was acknowledged',
    );

    const expected = [...acknowledged].sort((x, y) => x - y);
    try {
      for (const reading of readings) {
        await eventually(
          `${reading.label} to get every message`,
          async () => reading.ids.length >= expected.length || reading.errors.some((e) => e.includes('BAD_EVENT_QUEUE_ID') || e === 'queue deleted'),
          30_000,
        );
      }
    } finally {
      for (const reading of readings) reading.stop();
    }
    const caughtUp = Date.now() - back;
    for (const reading of readings) {
      assert.equal(
        reading.errors.filter((e) => e.includes('BAD_EVENT_QUEUE_ID') || e === 'queue deleted'),
        [],
        `${reading.label}: no queue lost`,
      );
      assert.equal(reading.gaps, [], `${reading.label}: event ids never skip`);
      assert.equal(reading.ids, expected, `${reading.label}: every acknowledged message once, in commit order`);
    }
    // The passed-on polls' own timeout is 40 s: every reader had everything well before.
    assert.ok(caughtUp < 35_000, `every reader caught up ${caughtUp} ms after NATS came back`);
  });

  test("writers waiting for a channel's lock while NATS is down get an error, not a wait for the whole outage", async () => {
    const [A, B] = [cluster.a.port, cluster.nodes[0]!.port];
    const realm = await newRealm(cluster.a);
    await eventually('node b to know the organization', async () => (await via(B, realm.owner).get('/users/me')).status === 200);
    const reader = await realm.addUser();
    await makeChannel(realm, 'turns', [realm.owner, reader]);
    const { queueId, state } = await register(via(B, reader));
    const send = (port: number, content: string) =>
      via(port, realm.owner)
        .post('/messages', { type: 'stream', to: 'turns', topic: 't', content }, { timeoutMs: 30_000 })
        .catch((err: Error) => ({ status: 0, body: null, text: String(err) }));
    const before = await send(A, 'before');
    assert.is(before.status, 200, before.text);
    // Read through the other node: stored in the stream, so its writer let go of the lock (a writer
    // answered after 5 s without NATS's acknowledgment would hold it through the outage).
    const [first] = await collect(via(B, reader), queueId, 'message', 1, state.last_event_id);

    await nats.stop('SIGKILL');
    natsDown = true;
    for (const port of [A, B])
      await eventually(`node on ${port} to see NATS gone`, async () => (await via(port, realm.owner).request('GET', '/health/ready')).status === 503);
    // Answered after 5 s; its lock stays held until NATS has its events.
    const holder = await send(A, 'holder');
    assert.is(holder.status, 200, holder.text);
    const waiters = await Promise.all([send(A, 'waiter on the same node'), send(B, 'waiter on the other node')]);
    for (const waiter of waiters) {
      assert.equal(
        [waiter.status, waiter.body],
        [503, { result: 'error', msg: 'The event stream is unreachable, so this change cannot take its turn now; try again', code: 'BAD_REQUEST' }],
      );
    }

    await nats.start();
    natsDown = false;
    const sent: string[] = [];
    await eventually(
      'a write to the channel once NATS is back',
      async () => {
        const content = `after ${sent.length}`;
        const r = await send(B, content);
        if (r.status === 200) sent.push(content);
        return r.status === 200;
      },
      30_000,
    );
    const events = [first!, ...(await collect(via(B, reader), queueId, 'message', 2, first!.id))];
    assert.equal(
      events.map((e) => e.message.content),
      ['before', 'holder', sent[0]],
    );
    // And nothing of the waiters came after.
    const rest = await via(B, reader).get('/events', { queue_id: queueId, last_event_id: events.at(-1)!.id, dont_block: true });
    assert.equal(
      rest.body.events.filter((e: { type: string }) => e.type === 'message'),
      [],
    );
  });
}

test.run();
