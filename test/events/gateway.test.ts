// The WebSocket gateway: push delivery, acknowledgement, resume without gap or duplicate,
// takeover between long-poll and socket, slow consumers, and many clients at once.
import { test } from 'uvu';
import http from 'node:http';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { runCheck } from '../helpers/openapi-check.ts';
import { partialMessage } from '../helpers/events.ts';

type Event = { id: number; type: string; message?: { id: number; stream_id?: number; content: string } };

class SocketClient {
  readonly events: Event[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | null = null;
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      runCheck.inspectFrame(String(data));
      this.events.push(JSON.parse(String(data)));
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      for (const w of this.waiters.splice(0)) w();
    });
  }
  async waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out; have ${this.events.length} events, closed=${JSON.stringify(this.closed)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
  ack(id: number): void {
    this.ws.send(JSON.stringify({ last_event_id: id }));
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

function connect(realm: TestRealm, user: TestUser | null, query: Record<string, string | number>): Promise<SocketClient | { status: number; body: any }> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  const headers: Record<string, string> = { Host: realm.host };
  if (user) headers.Authorization = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`;
  const ws = new WebSocket(`ws://127.0.0.1:${realm.server.port}/api/v1/events/socket?${qs}`, { headers });
  return new Promise((resolve, reject) => {
    const client = new SocketClient(ws);
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once('error', reject);
  });
}

async function open(realm: TestRealm, user: TestUser | null, query: Record<string, string | number>): Promise<SocketClient> {
  const c = await connect(realm, user, query);
  if (!(c instanceof SocketClient)) throw new Error(`upgrade refused: ${JSON.stringify(c)}`);
  return c;
}

/** One upgrade request as written; an accepted upgrade comes back as status 101 with no body. */
function rawHandshake(
  realm: TestRealm,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: realm.server.port, path, headers: { Host: realm.host, ...headers } });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: null });
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const register = async (user: TestUser, params: Record<string, unknown> = {}) => {
  const r = await user.client.post('/register', { event_types: ['message'], ...params });
  assert.is(r.status, 200, r.text);
  return r.body.queue_id as string;
};

test('events are pushed as JSON frames as soon as they are queued', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const queueId = await register(bob, { apply_markdown: true });
  const socket = await open(realm, bob, { queue_id: queueId });
  const id = await sendDm(realm.owner, [bob.id], 'hi **bob**');
  await socket.waitFor(() => socket.events.length === 1);
  const [event] = socket.events;
  assert.is(event!.id, 0);
  assert.is(event!.type, 'message');
  assert.is(event!.message!.id, id);
  assert.is(event!.message!.content, '<p>hi <strong>bob</strong></p>');
  await socket.close();
});

test("a socket's heartbeat carries the id of the newest event it was sent, and takes none (test server beats every 2 s)", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const queueId = await register(bob);
  const socket = await open(realm, bob, { queue_id: queueId });
  await socket.waitFor(() => socket.events.length === 1);
  await sendDm(realm.owner, [bob.id], 'one');
  await socket.waitFor(() => socket.events.length === 3);
  await sendDm(realm.owner, [bob.id], 'two');
  await socket.waitFor(() => socket.events.length === 4);
  assert.equal(
    socket.events.map((e) => [e.id, e.type]),
    [
      [-1, 'heartbeat'],
      [0, 'message'],
      [0, 'heartbeat'],
      [1, 'message'],
    ],
  );
  await socket.close();
});

test('acknowledgements prune; a reconnect resumes after the last received id', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const queueId = await register(bob);
  let socket = await open(realm, bob, { queue_id: queueId });
  for (let i = 0; i < 3; i++) await sendDm(realm.owner, [bob.id], `m${i}`);
  await socket.waitFor(() => socket.events.length === 3);
  socket.ack(0);
  await socket.close();
  for (let i = 3; i < 5; i++) await sendDm(realm.owner, [bob.id], `m${i}`);
  const pending = await bob.client.get('/events', { queue_id: queueId, last_event_id: 0, dont_block: true });
  assert.equal(
    pending.body.events.map((e: Event) => e.id),
    [1, 2, 3, 4],
    'ack 0 pruned only event 0',
  );
  socket = await open(realm, bob, { queue_id: queueId, last_event_id: 2 });
  await socket.waitFor(() => socket.events.length === 2);
  assert.equal(
    socket.events.map((e) => e.id),
    [3, 4],
  );
  assert.equal(
    socket.events.map((e) => e.message!.content),
    ['m3', 'm4'],
  );
  await new Promise((r) => setTimeout(r, 100));
  assert.is(socket.events.length, 2, 'no duplicates');
  await socket.close();
});

test('the queue id alone authenticates; unknown or foreign queues are refused', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const queueId = await register(bob);
  const anonymous = await open(realm, null, { queue_id: queueId });
  await sendDm(realm.owner, [bob.id], 'x');
  await anonymous.waitFor(() => anonymous.events.length === 1);
  await anonymous.close();
  const unknown = await connect(realm, bob, { queue_id: 'nope' });
  assert.equal(unknown, { status: 400, body: { result: 'error', msg: 'Bad event queue ID: nope', code: 'BAD_EVENT_QUEUE_ID', queue_id: 'nope' } });
  const foreign = await connect(realm, realm.owner, { queue_id: queueId });
  assert.equal((foreign as { status: number }).status, 400);
  const missing = await connect(realm, bob, {});
  assert.equal((missing as { body: { code: string } }).body.code, 'REQUEST_VARIABLE_MISSING');
  const badKey = await connect(realm, { ...bob, apiKey: 'x'.repeat(32) }, { queue_id: queueId });
  assert.equal((badKey as { status: number }).status, 401);
});

test('a client frame over 16 KiB closes the socket with 1009 and a close frame; one at the limit is answered', async () => {
  const realm = await newRealm();
  const queueId = await register(realm.owner);
  const client = await open(realm, realm.owner, { queue_id: queueId });
  client.ws.send('x'.repeat(16 * 1024));
  await client.waitFor(() => client.events.length === 1);
  assert.equal(client.events[0], { result: 'error', msg: 'Expected {"last_event_id": <integer>}', code: 'BAD_REQUEST' } as never);
  client.ws.send(JSON.stringify({ last_event_id: -1, padding: 'x'.repeat(20_000) }));
  await client.waitFor(() => client.closed !== null);
  assert.equal(client.closed, { code: 1009, reason: 'message too big' });
  const again = await open(realm, realm.owner, { queue_id: queueId });
  await sendDm(realm.owner, [realm.owner.id], 'still there');
  await again.waitFor(() => again.events.length === 1);
  await again.close();
});

test('the handshake follows RFC 6455: an unsupported version gets 426 naming 13, a missing or malformed key 400', async () => {
  const realm = await newRealm();
  const queueId = await register(realm.owner);
  const handshake = (headers: Record<string, string>) =>
    rawHandshake(realm, `/api/v1/events/socket?queue_id=${queueId}`, { Connection: 'Upgrade', Upgrade: 'websocket', ...headers });
  const key = 'dGhlIHNhbXBsZSBub25jZQ==';
  for (const version of ['8', '', '14']) {
    const r = await handshake({ 'Sec-WebSocket-Version': version, 'Sec-WebSocket-Key': key });
    assert.equal(
      [r.status, r.headers['sec-websocket-version'], r.headers.upgrade, r.body],
      [
        426,
        '13',
        'websocket',
        {
          result: 'error',
          msg: 'Unsupported WebSocket version; this server speaks version 13',
          code: 'BAD_REQUEST',
        },
      ],
      `version '${version}'`,
    );
  }
  // 15 bytes, 17 bytes, not base64, absent.
  for (const badKey of ['dGhlIHNhbXBsZSBub25jZQ=', 'dGhlIHNhbXBsZSBub25jZSEh', 'not a key at all!!!!!!==', '']) {
    const r = await handshake({ 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': badKey });
    assert.equal([r.status, r.body], [400, { result: 'error', msg: 'Missing or malformed Sec-WebSocket-Key', code: 'BAD_REQUEST' }], `key '${badKey}'`);
  }
  const plain = await rawHandshake(realm, `/api/v1/events/socket?queue_id=${queueId}`, { 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key });
  assert.equal([plain.status, plain.headers.upgrade, plain.body.msg], [426, 'websocket', 'This endpoint speaks WebSocket only'], 'no Upgrade header');
  assert.is(realm.server.app.queues.peek(queueId)?.state, 'registered', 'no refused handshake touched the queue');
});

test('long-poll and socket never read a queue at once: the newcomer takes over', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const queueId = await register(bob);
  const socket = await open(realm, bob, { queue_id: queueId });
  const poll = bob.client.get('/events', { queue_id: queueId, last_event_id: -1 });
  await socket.waitFor(() => socket.closed !== null);
  assert.equal(socket.closed, { code: 4001, reason: 'another client took over this queue' });
  const id = await sendDm(realm.owner, [bob.id], 'to the poller');
  const r = await poll;
  assert.equal(
    r.body.events.map((e: Event) => e.message!.id),
    [id],
  );
});

test('a slow consumer is disconnected with 4008 and its queue keeps the events', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const queueId = await register(bob);
  const app = realm.server.app;
  const limit = app.config.WS_MAX_BUFFERED_BYTES;
  app.config.WS_MAX_BUFFERED_BYTES = 1;
  try {
    const socket = await open(realm, bob, { queue_id: queueId });
    // Stop reading, so the kernel buffers fill and uWS has to buffer.
    (socket.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // Kernel socket buffers hold megabytes on loopback, so publish big events straight to the bus.
    const blob = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 40 && socket.closed === null; i++) {
      app.bus.publish({
        realmId: realm.id,
        userIds: [bob.id],
        event: { type: 'message', message: partialMessage({ id: i, type: 'private', content: blob, raw_content: blob, display_recipient: [] }) },
      });
      await new Promise((r) => setTimeout(r, 5));
    }
    (socket.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await socket.waitFor(() => socket.closed !== null, 10_000);
    assert.is(socket.closed!.code, 4008);
  } finally {
    app.config.WS_MAX_BUFFERED_BYTES = limit;
  }
  const r = await bob.client.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.is(r.status, 200);
  assert.ok(r.body.events.length > 0);
});

test('20 clients, 500 messages from several senders: each gets each event once, in channel order', async () => {
  const realm = await newRealm();
  const users: TestUser[] = [];
  for (let i = 0; i < 10; i++) users.push(await realm.addUser());
  const channels = [await makeChannel(realm, 'one', [realm.owner, ...users]), await makeChannel(realm, 'two', [realm.owner, ...users])];
  // Half the clients long-poll, half hold a socket.
  const sockets: SocketClient[] = [];
  const pollers: { user: TestUser; queueId: string; events: Event[]; stop: boolean }[] = [];
  for (const [i, user] of users.entries()) {
    for (let k = 0; k < 2; k++) {
      const queueId = await register(user);
      if ((i + k) % 2 === 0) sockets.push(await open(realm, user, { queue_id: queueId }));
      else pollers.push({ user, queueId, events: [], stop: false });
    }
  }
  const loops = pollers.map(async (p) => {
    let last = -1;
    while (!p.stop) {
      const r = await p.user.client.get('/events', { queue_id: p.queueId, last_event_id: last }, { timeoutMs: 60_000 });
      assert.is(r.status, 200, r.text);
      for (const e of r.body.events as Event[]) {
        if (e.type === 'message' && e.message!.stream_id !== undefined) p.events.push(e);
        last = e.id;
      }
    }
  });
  const senders = [realm.owner, users[0]!, users[1]!, users[2]!];
  const total = 500;
  await Promise.all(
    senders.map(async (sender, s) => {
      for (let i = s; i < total; i += senders.length) await send(sender, channels[i % 2]!, 'load', `n${i}`);
    }),
  );
  const received = (events: Event[]) => events.filter((e) => e.type === 'message' && e.message!.stream_id !== undefined);
  const done = () => sockets.every((s) => received(s.events).length >= total) && pollers.every((p) => p.events.length >= total);
  const deadline = Date.now() + 60_000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const p of pollers) p.stop = true;
  await Promise.all(users.map((u) => sendDm(realm.owner, [u.id], 'wake up')));
  await Promise.all(loops);
  const ordered = (events: Event[]) => {
    const ids = events.map((e) => e.message!.id);
    assert.is(ids.length, total, `got ${ids.length} messages`);
    assert.is(new Set(ids).size, total, 'no duplicates');
    for (const channel of channels) {
      const inChannel = events.filter((e) => e.message!.stream_id === channel).map((e) => e.message!.id);
      assert.equal(
        inChannel,
        [...inChannel].sort((a, b) => a - b),
        'per-channel order',
      );
    }
  };
  for (const s of sockets) ordered(received(s.events));
  for (const p of pollers) ordered(p.events);
  await Promise.all(sockets.map((s) => s.close()));
});

test.run();
