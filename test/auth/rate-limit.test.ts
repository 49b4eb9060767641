// Rate limits: the sliding-window limiter on an injected clock, then one server started with small limits
// (per user, per IP, failed logins per username, wrong API keys per IP) and the shared server, which
// runs with them off. The limited server trusts the test client as a proxy, so each test speaks from
// addresses of its own (X-Forwarded-For) and no test spends another's budget. That server holds a
// single organization, so it also shows Zulip's rule that such a server serves it on any host (each
// extra server costs seconds to start).
import http from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RateLimiter } from '../../src/http/rate-limit.ts';
import type { RunningServer } from '../../src/server.ts';
import { Client, type Reply } from '../helpers/client.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';

const USER_PER_MINUTE = 4;
const IP_PER_MINUTE = 12;

function clock(start: number) {
  const c = { now: start, limiter: (limit: number, windowSeconds: number) => new RateLimiter(limit, windowSeconds, () => c.now) };
  return c;
}

const headersOf = (r: Reply) => [r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining'], r.headers['x-ratelimit-reset']];

function assertRateLimited(r: Reply, maxRetryAfter: number): void {
  assert.is(r.status, 429, r.text);
  assert.equal(Object.keys(r.body).sort(), ['code', 'msg', 'result', 'retry-after']);
  assert.equal([r.body.result, r.body.msg, r.body.code], ['error', 'API usage exceeded rate limit', 'RATE_LIMIT_HIT']);
  const retryAfter = r.body['retry-after'];
  assert.ok(typeof retryAfter === 'number' && retryAfter > 0 && retryAfter <= maxRetryAfter, String(retryAfter));
  // The header is whole seconds (RFC 9110 delay-seconds), rounded up so a client never retries early.
  assert.is(r.headers['retry-after'], String(Math.ceil(retryAfter)));
}

/** Request options that make the limited server see the request as coming from `ip`. */
const from = (ip: string) => ({ headers: { 'X-Forwarded-For': ip } });

test('limiter: requests other nodes counted take capacity in time order, and leave the window at their time', () => {
  const c = clock(1000);
  const limiter = c.limiter(3, 60);
  const counted: [string, number][] = [];
  limiter.onCounted = (key, time) => counted.push([key, time]);
  limiter.hit('a');
  c.now = 1010;
  // Counted elsewhere before the local one and after it; a request older than the window is ignored.
  limiter.record('a', 995);
  limiter.record('a', 1005);
  limiter.record('a', 900);
  assert.equal(counted, [['a', 1000]], 'only what this limiter counted is passed on');
  const refused = limiter.hit('a');
  assert.is(refused.allowed, false);
  // The oldest (995) leaves first.
  assert.is(refused.reset, 995 + 60);
  c.now = 1056;
  assert.is(limiter.hit('a').allowed, true);
  assert.is(limiter.hit('a').allowed, false);
  // A full log keeps the newest three: a remote request older than all of them changes nothing,
  // a newer one pushes the oldest out.
  limiter.record('a', 999);
  assert.is(limiter.isExhausted('a').reset, 1000 + 60);
  limiter.record('a', 1001);
  assert.is(limiter.isExhausted('a').reset, 1001 + 60);
});

test('limiter: at most N requests in any window, with exact Remaining, Reset and Retry-After', () => {
  const c = clock(1000);
  const limiter = c.limiter(3, 60);
  const first = [limiter.hit('a')];
  c.now = 1010;
  first.push(limiter.hit('a'));
  c.now = 1020;
  first.push(limiter.hit('a'));
  assert.equal(
    first.map((d) => [d.allowed, d.limit, d.remaining, d.reset, d.retryAfter]),
    [
      [true, 3, 2, 1060, 0],
      [true, 3, 1, 1060, 0],
      [true, 3, 0, 1060, 0],
    ],
  );
  c.now = 1030;
  assert.equal(limiter.hit('a'), { allowed: false, limit: 3, remaining: 0, reset: 1060, retryAfter: 30 });
  assert.is(limiter.hit('b').remaining, 2, 'keys are independent');
  c.now = 1050;
  assert.equal(limiter.hit('a'), { allowed: false, limit: 3, remaining: 0, reset: 1060, retryAfter: 10 }, 'a refusal costs nothing');
  c.now = 1060;
  assert.equal(limiter.hit('a'), { allowed: true, limit: 3, remaining: 0, reset: 1070, retryAfter: 0 }, 'the oldest request left the window');
  assert.equal(limiter.hit('a').retryAfter, 10, 'the next slot frees when the second request leaves');
  c.now = 1200;
  assert.equal(limiter.hit('a'), { allowed: true, limit: 3, remaining: 2, reset: 1260, retryAfter: 0 }, 'idle for a window: full again');
});

test('limiter: isExhausted reads without counting', () => {
  const c = clock(5000);
  const limiter = c.limiter(5, 1800);
  assert.equal(limiter.isExhausted('u'), { allowed: true, limit: 5, remaining: 5, reset: 5000, retryAfter: 0 });
  for (let i = 0; i < 4; i++) limiter.hit('u');
  assert.equal(limiter.isExhausted('u'), { allowed: true, limit: 5, remaining: 1, reset: 6800, retryAfter: 0 });
  assert.equal(limiter.isExhausted('u').remaining, 1, 'still one left after asking twice');
  c.now = 5100;
  limiter.hit('u');
  assert.equal(limiter.isExhausted('u'), { allowed: false, limit: 5, remaining: 0, reset: 6800, retryAfter: 1700 });
  c.now = 6800;
  assert.is(limiter.isExhausted('u').allowed, true, 'a full window after the first failure');
});

test('limiter: exactly the limit at a real clock value (no floating-point drift)', () => {
  const limiter = clock(1_763_771_234.567).limiter(200, 60);
  const decisions = Array.from({ length: 201 }, () => limiter.hit('k'));
  assert.equal(decisions.filter((d) => d.allowed).length, 200);
  assert.equal(
    decisions.slice(0, 200).map((d) => d.remaining),
    Array.from({ length: 200 }, (_, i) => 199 - i),
  );
});

let limited: RunningServer;
let realm: TestRealm;

test.before(async () => {
  limited = await startTestServer({
    DATABASE_URL: undefined,
    RATE_LIMIT: 'on',
    RATE_LIMIT_USER_PER_MINUTE: String(USER_PER_MINUTE),
    RATE_LIMIT_IP_PER_MINUTE: String(IP_PER_MINUTE),
    TRUSTED_PROXIES: '127.0.0.1',
  });
  realm = await newRealm(limited);
});

test.after(async () => {
  await limited?.stop();
});

test('per user: X-RateLimit-* on every answer (errors too), then 429 with Retry-After', async () => {
  const user = await realm.addUser();
  const before = Math.floor(Date.now() / 1000);
  const replies = [await user.client.get('/users', { client_gravatar: 'maybe' })];
  for (let i = 1; i < USER_PER_MINUTE; i++) replies.push(await user.client.get('/users/me'));
  assert.equal(
    replies.map((r) => r.status),
    [400, 200, 200, 200],
  );
  assert.equal(
    replies.map((r) => headersOf(r).slice(0, 2)),
    [
      ['4', '3'],
      ['4', '2'],
      ['4', '1'],
      ['4', '0'],
    ],
  );
  // Reset: when the oldest request in the window leaves it, a minute after the first.
  replies.forEach((r) => {
    const reset = Number(r.headers['x-ratelimit-reset']);
    assert.ok(reset >= before + 60 && reset <= before + 65, `reset ${reset}`);
  });

  const refused = await user.client.get('/users/me');
  assertRateLimited(refused, 60);
  assert.equal(headersOf(refused).slice(0, 2), ['4', '0']);
  const other = await realm.owner.client.get('/users/me');
  assert.equal([other.status, other.headers['x-ratelimit-remaining']], [200, '3'], 'another user has their own budget');
});

test('failed logins: 5 per username, then 429 even with the right password; other usernames unaffected', async () => {
  const user = await realm.addUser();
  for (let i = 0; i < 5; i++) {
    const wrong = await realm.anonymous.post('/fetch_api_key', { username: user.email, password: 'wrong' }, from('198.51.100.10'));
    assert.equal([wrong.status, wrong.body.code], [401, 'AUTHENTICATION_FAILED']);
    assert.is(wrong.headers['x-ratelimit-limit'], String(IP_PER_MINUTE), 'the per-IP limit applies to logins');
  }
  const right = await realm.anonymous.post('/fetch_api_key', { username: user.email.toUpperCase(), password: user.password }, from('198.51.100.10'));
  assertRateLimited(right, 1800);
  const owner = await realm.anonymous.post('/fetch_api_key', { username: realm.owner.email, password: realm.owner.password }, from('198.51.100.10'));
  assert.equal([owner.status, owner.body.api_key], [200, realm.owner.apiKey]);
});

test('per IP: unauthenticated requests share the address budget; authenticated ones do not use it', async () => {
  const user = await realm.addUser();
  const me = await user.client.get('/users/me', {}, from('198.51.100.20'));
  assert.equal([me.status, me.headers['x-ratelimit-limit']], [200, String(USER_PER_MINUTE)], 'the per-user budget, not the address');
  const replies: Reply[] = [];
  for (let n = 0; n <= IP_PER_MINUTE; n++) {
    replies.push(await realm.anonymous.post('/fetch_api_key', { username: `nobody${n}@example.com`, password: 'x' }, from('198.51.100.20')));
  }
  const refused = replies.pop()!;
  assertRateLimited(refused, 60);
  assert.equal(headersOf(refused).slice(0, 2), [String(IP_PER_MINUTE), '0']);
  assert.equal(
    replies.map((r) => Number(r.headers['x-ratelimit-remaining'])),
    Array.from({ length: IP_PER_MINUTE }, (_, i) => IP_PER_MINUTE - 1 - i),
  );
  assert.is((await realm.anonymous.get('/server_settings', {}, from('198.51.100.20'))).status, 200, 'server_settings is not rate limited');
});

test('wrong API keys count against the address budget: a bad client gets 429, a right key from the same address still passes', async () => {
  const user = await realm.addUser();
  const guesser = realm.anonymous.withCredentials(user.email, 'x'.repeat(32));
  const guesses: Reply[] = [];
  for (let i = 0; i <= IP_PER_MINUTE; i++) guesses.push(await guesser.get('/users/me', {}, from('198.51.100.30')));
  const refused = guesses.pop()!;
  assert.equal(
    guesses.map((r) => [r.status, r.body.msg]),
    Array.from({ length: IP_PER_MINUTE }, () => [401, 'Invalid API key']),
  );
  assertRateLimited(refused, 60);
  assertRateLimited(await guesser.request('GET', '/user_uploads/1/x/y.txt', from('198.51.100.30')), 60);
  // As in Zulip, a valid key is never refused for someone else's failures behind the same NAT.
  const neighbour = await user.client.get('/users/me', {}, from('198.51.100.30'));
  assert.equal([neighbour.status, neighbour.body.user_id], [200, user.id]);
  const other = await realm.addUser();
  assert.is((await other.client.get('/users/me', {}, from('198.51.100.30'))).status, 200);
  assertRateLimited(await guesser.get('/users/me', {}, from('198.51.100.30')), 60);
});

test('the WebSocket gateway counts wrong keys against the same address budget; right keys pass', async () => {
  const user = await realm.addUser();
  const queueId = (await user.client.post('/register', {}, from('198.51.100.40'))).body.queue_id;
  const guesser = realm.anonymous.withCredentials(user.email, 'y'.repeat(32));
  const handshake = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' };
  const statuses: number[] = [];
  for (let i = 0; i <= IP_PER_MINUTE; i++) {
    const r = await guesser.request('GET', `/api/v1/events/socket?queue_id=${queueId}`, { headers: { ...handshake, ...from('198.51.100.40').headers } });
    statuses.push(r.status);
  }
  assert.equal(statuses, [...Array<number>(IP_PER_MINUTE).fill(401), 429]);
  const authorization = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}`;
  const upgraded = await new Promise<number>((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port: limited.port,
      path: `/api/v1/events/socket?queue_id=${queueId}`,
      headers: { Host: realm.host, Authorization: authorization, ...handshake, ...from('198.51.100.40').headers },
    });
    req.on('upgrade', (res, socket) => (socket.destroy(), resolve(res.statusCode ?? 0)));
    req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
    req.on('error', reject);
    req.end();
  });
  assert.is(upgraded, 101, 'the right key still upgrades from that address');
});

test("incoming webhooks: a key in the URL spends its bot's budget, from whatever address the requests come", async () => {
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  const hook = (i: number) =>
    realm.anonymous.request('POST', `/api/v1/external/json?api_key=${bot.apiKey}`, {
      body: '{"n": 1}',
      contentType: 'application/json',
      headers: from(`198.51.100.${60 + i}`).headers,
    });
  const statuses = [];
  for (let i = 0; i < USER_PER_MINUTE; i++) statuses.push((await hook(i)).status);
  assert.equal(statuses, [200, 200, 200, 200]);
  assertRateLimited(await hook(USER_PER_MINUTE), 60);
});

test('a server with one organization serves it on any host', async () => {
  const user = await realm.addUser();
  for (const host of [`localhost:${limited.port}`, `elsewhere.localhost:${limited.port}`, 'chat.example.com']) {
    const me = await new Client(limited.port, host, { email: user.email, apiKey: user.apiKey }).get('/users/me');
    assert.equal([me.status, me.body.user_id], [200, user.id], host);
    const settings = await new Client(limited.port, host).get('/server_settings');
    assert.equal([settings.status, settings.body.realm_url], [200, `http://${realm.host}`], host);
  }
});

test('RATE_LIMIT=off (the shared test server): no rate-limit headers and no 429', async () => {
  const { owner } = await newRealm();
  for (let i = 0; i < 5; i++) {
    const r = await owner.client.get('/users/me');
    assert.is(r.status, 200);
    assert.equal(headersOf(r), [undefined, undefined, undefined]);
  }
});

test.run();
