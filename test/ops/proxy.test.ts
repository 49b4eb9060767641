// Behind a reverse proxy: TRUSTED_PROXIES makes the server believe X-Forwarded-For (the client's
// address, for the per-IP rate limit) and X-Forwarded-Proto (the scheme of realm URLs) from those
// peers only; EXTERNAL_URL fixes the scheme and host of every URL the server writes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import type { Reply } from '../helpers/client.ts';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';

const IP_PER_MINUTE = 3;

// Listening on `::`, uWS reports the IPv4 test client as 0000:…:ffff:7f00:0001, which the IPv4
// entry must match.
let proxied: RunningServer;
let direct: RunningServer;

test.before(async () => {
  const limits = { DATABASE_URL: undefined, RATE_LIMIT: 'on', RATE_LIMIT_IP_PER_MINUTE: String(IP_PER_MINUTE) };
  proxied = await startTestServer({ ...limits, HOST: '::', TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1, fd00::/8' });
  direct = await startTestServer({ ...limits, EXTERNAL_URL: 'https://chat.example.test' });
});

test.after(async () => {
  await proxied?.stop();
  await direct?.stop();
});

const forwarded = (forwardedFor: string, proto?: string) => ({
  headers: { 'X-Forwarded-For': forwardedFor, ...(proto ? { 'X-Forwarded-Proto': proto } : {}) },
});

/** Unauthenticated requests (failed logins) until the address's budget is spent; the statuses. */
async function spendAddressBudget(realm: TestRealm, forwardedFor: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i <= IP_PER_MINUTE; i++) {
    const r: Reply = await realm.anonymous.post('/fetch_api_key', { username: `nobody${i}@example.com`, password: 'x' }, forwarded(forwardedFor));
    statuses.push(r.status);
  }
  return statuses;
}

const spent = [...Array<number>(IP_PER_MINUTE).fill(401), 429];

test('behind a trusted proxy, X-Forwarded-For names the client: two clients get separate unauthenticated budgets', async () => {
  const realm = await newRealm(proxied);
  assert.equal(await spendAddressBudget(realm, '203.0.113.1'), spent);
  // A forged entry on the left changes nothing: the right-most untrusted address is the client.
  const forged = await realm.anonymous.post('/fetch_api_key', { username: 'a@example.com', password: 'x' }, forwarded('198.51.100.7, 203.0.113.1'));
  assert.is(forged.status, 429);
  // Trusted hops (the 10/8 range here) are skipped, whatever their number.
  const chained = await realm.anonymous.post('/fetch_api_key', { username: 'a@example.com', password: 'x' }, forwarded('203.0.113.1, 10.1.2.3, 10.4.5.6'));
  assert.is(chained.status, 429);
  const other = await realm.anonymous.post('/fetch_api_key', { username: 'a@example.com', password: 'x' }, forwarded('203.0.113.2'));
  assert.equal([other.status, other.headers['x-ratelimit-remaining']], [401, String(IP_PER_MINUTE - 1)], 'another client has its own budget');
  const ipv6 = await realm.anonymous.post('/fetch_api_key', { username: 'a@example.com', password: 'x' }, forwarded('2001:db8::1, fd00::2'));
  assert.equal([ipv6.status, ipv6.headers['x-ratelimit-remaining']], [401, String(IP_PER_MINUTE - 1)], 'an IPv6 client behind an IPv6 proxy');
});

test("realm URLs follow a trusted proxy's X-Forwarded-Proto, and ignore an untrusted one", async () => {
  const realm = await newRealm(proxied);
  const https = await realm.anonymous.get('/server_settings', {}, forwarded('203.0.113.3', 'https'));
  assert.equal(
    [https.body.realm_url, https.body.realm_uri, https.body.realm_icon],
    [`https://${realm.host}`, `https://${realm.host}`, `https://${realm.host}/static/images/logo/zulip-icon-128x128.png`],
  );
  const registered = await realm.owner.client.post('/register', { fetch_event_types: ['realm'] }, forwarded('203.0.113.3', 'https'));
  assert.equal([registered.body.realm_url, registered.body.realm_uri], [`https://${realm.host}`, `https://${realm.host}`]);
  const plain = await realm.anonymous.get('/server_settings', {}, forwarded('203.0.113.3'));
  assert.is(plain.body.realm_url, `http://${realm.host}`, 'no header: the configured scheme');

  const shared = await newRealm();
  const untrusted = await shared.anonymous.get('/server_settings', {}, forwarded('203.0.113.3', 'https'));
  assert.is(untrusted.body.realm_url, `http://${shared.host}`, 'a server without TRUSTED_PROXIES ignores the header');
});

test("EXTERNAL_URL: realm URLs, register and the Notification Bot's message links use its scheme and host", async () => {
  const realm = await newRealm(direct);
  assert.is(realm.host, `${realm.subdomain}.chat.example.test`);
  const settings = await realm.anonymous.get('/server_settings', {}, forwarded('203.0.113.4', 'http'));
  assert.equal([settings.body.realm_url, settings.body.realm_uri], [`https://${realm.host}`, `https://${realm.host}`]);
  const registered = await realm.owner.client.post('/register', { fetch_event_types: ['realm'] });
  assert.is(registered.body.realm_url, `https://${realm.host}`);

  const channel = await makeChannel(realm, 'moves', [realm.owner]);
  await send(realm.owner, channel, 'before', 'one');
  const moved = await send(realm.owner, channel, 'before', 'two');
  assert.is((await realm.owner.client.patch(`/messages/${moved}`, { topic: 'after' })).status, 200);
  const newest = await realm.owner.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, apply_markdown: false });
  assert.match(
    newest.body.messages[0].content,
    new RegExp(`^\\[A message\\]\\(https://${realm.host.replace(/\./g, '\\.')}/#narrow/channel/${channel}-moves/topic/after/near/${moved}\\)`),
  );
});

// Last on `direct`: it spends the budget of the one address all its requests come from.
test('without TRUSTED_PROXIES the forwarding headers are ignored: a client cannot choose its address', async () => {
  const realm = await newRealm(direct);
  const statuses: number[] = [];
  for (let i = 0; i <= IP_PER_MINUTE; i++) {
    const r = await realm.anonymous.post('/fetch_api_key', { username: 'a@example.com', password: 'x' }, forwarded(`203.0.113.${10 + i}`));
    statuses.push(r.status);
  }
  assert.equal(statuses, spent);
});

test.run();
