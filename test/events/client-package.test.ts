// The client package (packages/client) against the real server, as a Node client uses it: push
// over the WebSocket gateway, resume after a dropped socket with nothing lost or doubled, the
// long-poll fallback when no socket gets through, and a new queue (a "reset") when the old one is
// gone.
import { test } from 'uvu';
import http from 'node:http';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import {
  basicCall,
  ChatState,
  connect,
  type ClientOptions,
  type Connection,
  type EventClient,
  type ServerEvent,
  type Update,
} from '../../packages/client/src/index.ts';
import { eventually, makeChannel, send } from '../messages/messages-helpers.ts';
import { runCheck } from '../helpers/openapi-check.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

/**
 * fetch over node:http: the test organizations are told apart by the Host header, which Node's
 * own fetch does not let a caller set.
 */
function fetchWithHost(host: string): typeof fetch {
  return (input, init = {}) =>
    new Promise((resolve, reject) => {
      const url = new URL(String(input));
      const body = init.body === undefined || init.body === null ? undefined : String(init.body);
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>), Host: host };
      if (body !== undefined) headers['Content-Type'] = 'application/x-www-form-urlencoded';
      const req = http.request(url, { method: init.method, headers, signal: init.signal ?? undefined }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: res.headers as Record<string, string> })));
      });
      req.on('error', reject);
      req.end(body);
    });
}

interface Harness {
  client: EventClient;
  events: ServerEvent[];
  connections: Connection[];
  resets: string[];
  sockets: { url: string; ws: WebSocket; frames: ServerEvent[] }[];
}

async function open(realm: TestRealm, user: TestUser, options: Partial<ClientOptions> = {}): Promise<Harness> {
  const server = `http://127.0.0.1:${realm.server.port}`;
  const h: Omit<Harness, 'client'> = { events: [], connections: [], resets: [], sockets: [] };
  const client = await connect({
    call: basicCall({ server, credentials: user, fetch: fetchWithHost(realm.host) }),
    server,
    register: { event_types: ['message', 'subscription', 'stream'] },
    createSocket: (url) => {
      const ws = new WebSocket(url, { headers: { Host: realm.host } });
      const record = { url, ws, frames: [] as ServerEvent[] };
      ws.on('message', (data) => {
        runCheck.inspectFrame(String(data));
        record.frames.push(JSON.parse(String(data)));
      });
      h.sockets.push(record);
      return ws;
    },
    onEvents: (events) => h.events.push(...events),
    onConnection: (state) => h.connections.push(state),
    onReset: (snapshot) => h.resets.push(snapshot.queue_id),
    ...options,
  });
  return { client, ...h };
}

const contents = (events: ServerEvent[]) => events.filter((e) => e.type === 'message').map((e) => e.message.content as string);
const settle = <T>(what: string, check: () => T | false) => eventually(async () => check(), Boolean, what);

test('events come over the WebSocket, each once, and are acknowledged', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  const h = await open(realm, bob, { ackDelayMs: 0 });
  await settle('the socket opens', () => h.client.connection === 'socket');
  await send(realm.owner, channel, 'hello', 'one');
  await send(realm.owner, channel, 'hello', 'two');
  await settle('both messages arrive', () => h.events.length >= 2);
  assert.equal(contents(h.events), ['one', 'two']);
  assert.equal(h.connections, ['socket']);
  assert.equal(h.sockets.length, 1);
  // Acknowledged up to the last event: the server has dropped both, and says so to a poll from before them.
  await h.client.close({ keepQueue: true });
  const lastId = h.events.at(-1)!.id;
  const poll = await bob.client.get('/events', { queue_id: h.client.queueId, last_event_id: -1, dont_block: true });
  assert.equal(poll.body, { result: 'error', msg: `An event newer than ${lastId} has already been pruned!`, code: 'BAD_REQUEST' });
});

test('a dropped socket is reopened from the last event received: nothing lost, nothing sent twice', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  // No acknowledgement before the drop: without a resume, the server would send the first event again.
  const h = await open(realm, bob, { ackDelayMs: 60_000 });
  await settle('the socket opens', () => h.client.connection === 'socket');
  await send(realm.owner, channel, 'hello', 'before');
  await settle('the first message arrives', () => h.events.length === 1);
  const firstId = h.events[0]!.id;
  h.sockets[0]!.ws.terminate();
  await send(realm.owner, channel, 'hello', 'during');
  await send(realm.owner, channel, 'hello', 'after');
  await settle('the others arrive', () => h.events.length >= 3);
  assert.equal(contents(h.events), ['before', 'during', 'after']);
  assert.equal(h.sockets.length, 2);
  // The new socket carried only what came after the last event received.
  assert.equal(contents(h.sockets[1]!.frames), ['during', 'after']);
  assert.equal(new URL(h.sockets[1]!.url).searchParams.get('last_event_id'), String(firstId));
  assert.equal(h.connections, ['socket', 'connecting', 'socket']);
  await h.client.close();
});

test('when no WebSocket gets through, the client long-polls', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
  // Port 9 refuses connections on this machine: as a firewall that lets only plain HTTP through.
  const h = await open(realm, bob, { socketUrl: 'ws://127.0.0.1:9/api/v1/events/socket' });
  await settle('long-polling starts', () => h.client.connection === 'polling');
  await send(realm.owner, channel, 'hello', 'polled');
  await settle('the message arrives', () => h.events.length >= 1);
  assert.equal(contents(h.events), ['polled']);
  assert.equal(h.connections.slice(0, 2), ['offline', 'polling']);
  await h.client.close();
  const gone = await bob.client.get('/events', { queue_id: h.client.queueId, last_event_id: -1, dont_block: true });
  assert.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID');
});

for (const transport of ['socket', 'long-poll'] as const) {
  test(`a queue the server no longer has is registered again, with a reset (${transport})`, async () => {
    const realm = await newRealm();
    const bob = await realm.addUser();
    const channel = await makeChannel(realm, 'general', [realm.owner, bob]);
    const h = await open(realm, bob, transport === 'socket' ? {} : { socketUrl: null });
    const updates: Update[] = [];
    void (async () => {
      for await (const update of h.client) updates.push(update);
    })();
    const first = h.client.queueId;
    await settle('the queue is read', () => h.client.connection === (transport === 'socket' ? 'socket' : 'polling'));
    const deleted = await bob.client.delete('/events', { queue_id: first });
    assert.equal(deleted.status, 200);
    await settle('a new queue is registered', () => h.resets.length === 1);
    assert.not.equal(h.client.queueId, first);
    assert.equal(h.resets, [h.client.queueId]);
    await send(realm.owner, channel, 'hello', 'on the new queue');
    await settle('the message arrives', () => h.events.length >= 1);
    assert.equal(contents(h.events), ['on the new queue']);
    assert.equal(
      updates.map((u) => (u.type === 'reset' ? `reset ${u.snapshot.queue_id}` : contents(u.events).join())),
      [`reset ${h.client.queueId}`, 'on the new queue'],
    );
    await h.client.close();
    await settle('the iterator ends', () => true);
  });
}

for (const transport of ['socket', 'long-poll'] as const) {
  test(`an iterator read slowly holds at most its high-water mark; the client reads on from where it stopped (${transport})`, async () => {
    const realm = await newRealm();
    const backlogs: number[] = [];
    const h = await open(realm, realm.owner, {
      iteratorHighWater: 5,
      ...(transport === 'long-poll' ? { socketUrl: null } : {}),
      onEvents: () => backlogs.push(h.client.iteratorBacklog),
    });
    const updates = h.client[Symbol.asyncIterator]();
    await settle('connected', () => h.client.connection === (transport === 'socket' ? 'socket' : 'polling'));
    await makeChannel(realm, 'backlog', [realm.owner]);
    const sent = Array.from({ length: 30 }, (_, i) => `message ${i}`);
    for (const content of sent) await send(realm.owner, 'backlog', 'slow reader', content);
    await settle('the iterator is full', () => h.client.iteratorBacklog === 5);
    const read: string[] = [];
    while (read.length < sent.length) {
      const { value } = await updates.next();
      if (value?.type === 'events') read.push(...contents(value.events));
    }
    assert.equal(read, sent, 'every message once, in order');
    assert.ok(Math.max(...backlogs) <= 5, `backlogs seen: ${backlogs.join(' ')}`);
    await h.client.close();
  });
}

test('the state helper keeps channels and subscriptions as a fresh register has them', async () => {
  const realm = await newRealm();
  const h = await open(realm, realm.owner);
  const state = new ChatState(h.client.snapshot);
  await settle('the socket opens', () => h.client.connection === 'socket');
  const channel = await makeChannel(realm, 'fresh', [realm.owner]);
  await realm.owner.client.patch(`/streams/${channel}`, { description: 'Now described' });
  const fresh = await realm.owner.client.post('/register', { event_types: ['subscription', 'stream'] });
  await settle('the events arrive', () => h.events.some((e) => e.type === 'stream' && e.op === 'update' && e.property === 'description'));
  state.apply(h.events);
  const byId = (rows: { stream_id: number; description: string }[]) => [...rows].sort((a, b) => a.stream_id - b.stream_id);
  assert.equal(
    byId(state.current.subscriptions).map((s) => [s.stream_id, s.description]),
    byId(fresh.body.subscriptions).map((s: any) => [s.stream_id, s.description]),
  );
  assert.equal(
    byId(state.current.streams).map((s) => [s.stream_id, s.description]),
    byId(fresh.body.streams).map((s: any) => [s.stream_id, s.description]),
  );
  await h.client.close();
});

test.run();
