// The queue placement contract (gateway/placement.ts), one suite for both versions: one process,
// where every queue is the server's own, and a cluster of two nodes (node b a server process),
// where a queue made on one node is used through the other. Both answer alike: a queue is
// registered, long-polled, acknowledged, read over a WebSocket and deleted with the same bodies
// and the same errors wherever the request lands.
import { randomUUID } from 'node:crypto';
import { suite, test as skipped } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import type { RunningServer } from '../../src/server.ts';
import { errorBody, makeChannel } from '../messages/messages-helpers.ts';
import { eventually, register, startCluster, via, type TestCluster } from '../helpers/cluster.ts';
import { NATS_URL } from '../helpers/nats.ts';
import { newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';

// No heartbeat answers a parked poll while a test waits for its message.
const SETTINGS = { HEARTBEAT_SECONDS: '30' };

interface World {
  /** The port a queue is registered through, and the one it is then used through. */
  home: number;
  away: number;
  /** An organization every node knows. */
  realm(): Promise<TestRealm>;
  close(): Promise<void>;
}

async function singleProcess(): Promise<World> {
  const server: RunningServer = await startTestServer(SETTINGS);
  return { home: server.port, away: server.port, realm: () => newRealm(server), close: () => server.stop() };
}

async function twoNodes(natsUrl: string): Promise<World> {
  const cluster: TestCluster = await startCluster(natsUrl, ['b'], SETTINGS);
  const home = cluster.nodes[0]!.port;
  return {
    home,
    away: cluster.a.port,
    async realm() {
      const realm = await newRealm(cluster.a);
      await eventually('node b to know the new organization', async () => (await via(home, realm.owner).get('/users/me')).status === 200);
      return realm;
    },
    close: () => cluster.close(),
  };
}

const badQueue = (queueId: string) => errorBody(`Bad event queue ID: ${queueId}`, 'BAD_EVENT_QUEUE_ID', { queue_id: queueId });

function contract(name: string, makeWorld: () => Promise<World>): void {
  const test = suite(name);
  let world: World;
  let realm: TestRealm;
  let reader: TestUser;
  let port = { home: 0, away: 0 };

  test.before(async () => {
    world = await makeWorld();
    port = { home: world.home, away: world.away };
    realm = await world.realm();
    reader = await realm.addUser();
    await makeChannel(realm, 'placement', [realm.owner, reader]);
  });

  test.after(async () => {
    await world?.close();
  });

  async function sendHome(content: string): Promise<number> {
    const r = await via(port.home, realm.owner).post('/messages', { type: 'stream', to: 'placement', topic: 't', content });
    assert.is(r.status, 200, r.text);
    return r.body.id as number;
  }

  test(`${name}: a parked long-poll is answered when an event comes, and what it acknowledged is not given again`, async () => {
    const { queueId } = await register(via(port.home, reader));
    const parked = via(port.away, reader).get('/events', { queue_id: queueId, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 300));
    const sent = await sendHome('one');
    const polled = await parked;
    assert.is(polled.status, 200, polled.text);
    assert.equal(Object.keys(polled.body).sort(), ['events', 'msg', 'queue_id', 'result']);
    assert.is(polled.body.queue_id, queueId);
    assert.equal(
      polled.body.events.map((e: any) => [e.id, e.type, e.message.id]),
      [[0, 'message', sent]],
    );
    for (const at of [port.away, port.home]) {
      const again = await via(at, reader).get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
      assert.equal([again.status, again.body], [200, { result: 'success', msg: '', events: [] }]);
    }
  });

  test(`${name}: a poll that makes its queue (dont_block, no queue id) gives the id, and the queue is read through the other node`, async () => {
    const made = await via(port.away, reader).get('/events', { dont_block: true, event_types: JSON.stringify(['message']) });
    assert.is(made.status, 200, made.text);
    assert.equal(made.body.events, []);
    const queueId = made.body.queue_id as string;
    const sent = await sendHome('made by a poll');
    const read = await eventually('the message in the queue', async () => {
      const r = await via(port.home, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.is(r.status, 200, r.text);
      return r.body.events.length > 0 && r.body.events;
    });
    assert.equal(
      read.map((e: any) => [e.id, e.message.id]),
      [[0, sent]],
    );
  });

  test(`${name}: another user's queue, an unknown queue and acknowledgments that make no sense get Zulip's errors`, async () => {
    const { queueId } = await register(via(port.home, reader));
    const other = await via(port.away, realm.owner).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal([other.status, other.body], [400, badQueue(queueId)]);
    // Same node prefix (a cluster asks the same node), no such queue.
    const unknown = `${queueId.slice(0, queueId.lastIndexOf(':') + 1)}${randomUUID()}`;
    const missing = await via(port.away, reader).get('/events', { queue_id: unknown, last_event_id: -1, dont_block: true });
    assert.equal([missing.status, missing.body], [400, badQueue(unknown)]);
    await sendHome('to acknowledge');
    await eventually('the event', async () => {
      const r = await via(port.away, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      return r.body.events?.length > 0;
    });
    const ahead = await via(port.away, reader).get('/events', { queue_id: queueId, last_event_id: 5, dont_block: true });
    assert.equal([ahead.status, ahead.body], [400, errorBody('Event 5 was not in this queue')]);
    const taken = await via(port.away, reader).get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
    assert.is(taken.status, 200, taken.text);
    const behind = await via(port.away, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal([behind.status, behind.body], [400, errorBody('An event newer than 0 has already been pruned!')]);
  });

  test(`${name}: a WebSocket through the other node resumes after its last id, gets what comes next and has a bad acknowledgment refused`, async () => {
    const { queueId } = await register(via(port.home, reader));
    await sendHome('before the socket');
    // The send's answer comes before its event reaches the queue (through the stream): a socket
    // acknowledging event 0 sooner would be refused with "Event 0 was not in this queue".
    await eventually('the event in the queue', async () => {
      const r = await via(port.home, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      return r.body.events?.length > 0;
    });
    const auth = `Basic ${Buffer.from(`${reader.email}:${reader.apiKey}`).toString('base64')}`;
    const ws = new WebSocket(`ws://127.0.0.1:${port.away}/api/v1/events/socket?queue_id=${encodeURIComponent(queueId)}&last_event_id=0`, {
      headers: { Authorization: auth, Host: reader.client.host },
    });
    try {
      const frames: any[] = [];
      ws.on('message', (data) => frames.push(JSON.parse(String(data))));
      await new Promise((resolve, reject) => {
        ws.once('open', resolve).once('error', reject);
        // A refused upgrade names its error, so a failure here says which (it was a bare 400 once in CI).
        ws.once('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk)).on('end', () => reject(new Error(`upgrade refused: ${res.statusCode} ${body}`)));
        });
      });
      const sent = await sendHome('over the socket');
      await eventually('the pushed event', async () => frames.length >= 1);
      assert.equal([frames[0].id, frames[0].message.id], [1, sent]);
      ws.send(JSON.stringify({ last_event_id: 1 }));
      ws.send(JSON.stringify({ last_event_id: 0 }));
      await eventually('the refused acknowledgment', async () => frames.length >= 2);
      assert.equal(frames[1], { result: 'error', msg: 'An event newer than 1 has already been pruned!', code: 'BAD_REQUEST' });
    } finally {
      ws.close();
    }
    // Another user's socket on the queue is refused before the upgrade.
    const refused = await new Promise<number>((resolve) => {
      const other = new WebSocket(`ws://127.0.0.1:${port.away}/api/v1/events/socket?queue_id=${encodeURIComponent(queueId)}`, {
        headers: { Authorization: `Basic ${Buffer.from(`${realm.owner.email}:${realm.owner.apiKey}`).toString('base64')}`, Host: reader.client.host },
      });
      other.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      other.on('open', () => resolve(101));
    });
    assert.is(refused, 400);
  });

  test(`${name}: a queue deleted through the other node is gone through both`, async () => {
    const { queueId } = await register(via(port.home, reader));
    const deleted = await via(port.away, reader).delete('/events', { queue_id: queueId });
    assert.equal([deleted.status, deleted.body], [200, { result: 'success', msg: '' }]);
    for (const at of [port.home, port.away]) {
      const r = await via(at, reader).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.equal([r.status, r.body], [400, badQueue(queueId)]);
    }
    const again = await via(port.away, reader).delete('/events', { queue_id: queueId });
    assert.equal([again.status, again.body], [400, badQueue(queueId)]);
  });

  test.run();
}

contract('one process', singleProcess);
if (NATS_URL) contract('two nodes over NATS', () => twoNodes(NATS_URL!));
else {
  skipped.skip('two nodes over NATS (NATS_URL is not set)');
  skipped.run();
}
