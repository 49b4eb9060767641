// Steps of a re-parked GET /events, each run alone N times, for instruction counts under callgrind
// (scripts/callgrind-step.sh): the machine's load does not change them, unlike wall time.
// Usage: node longpoll-steps.js <step> <N>; N = 0 runs the same process doing none.
// `node --expose-gc --max-semi-space-size=256 longpoll-steps.js <step> <N> alloc` prints the bytes
// of heap each call allocates instead (the young generation is made large enough that no GC runs).
import type uWS from 'uWebSockets.js';
import { authenticateBasic } from '../../src/http/credentials.ts';
import type { Gate } from '../../src/http/route.ts';
import { parseUrlEncoded } from '../../src/http/params.ts';
import { openExchange, requestOrigin, type ObservedRequest } from '../../src/http/exchange.ts';
import { TrustedProxies } from '../../src/http/client-address.ts';
import { UserAuthenticator } from '../../src/auth/authenticate.ts';
import type { PrismaClient, User } from '../../src/db/generated/client.ts';
import type { RealmInfo } from '../../src/queries/realms.ts';
import { requestObservers } from '../../src/ops/requests.ts';
import { ServerMetrics } from '../../src/ops/metrics.ts';
import { EventQueue, QueuedEvent } from '../../actors/queue.ts';
import type { QueueOptions } from '../../actors/queue-options.ts';
import { pollAnswer } from '../../src/gateway/long-poll.ts';
import { fieldsBody } from '../../src/http/server.ts';

const USER = { id: 7, email: 'user7@example.com' };
const KEY = 'abcdefghijklmnopqrstuvwxyz012345';
const HEADER = `Basic ${Buffer.from(`${USER.email}:${KEY}`).toString('base64')}`;
// The query a Zulip client sends to re-park (the queue id's colon escaped, as URLSearchParams does).
const QUERY = 'queue_id=1764340000%3A12&last_event_id=41&dont_block=false';

// The user cache's answer for a known user, as UserAuthenticator gives it: no query, a key compared.
const gate = {
  authenticate: (_scope: unknown, email: string, apiKey: string) => {
    if (email !== USER.email || apiKey.length !== KEY.length) throw new Error('unexpected credentials');
    return USER;
  },
} as unknown as Gate<unknown, typeof USER>;

// The user cache itself, filled once as the first request of a user fills it.
const REALM = { id: 2, deactivated: false } as RealmInfo;
const row = { id: USER.id, realmId: REALM.id, deliveryEmail: USER.email, apiKey: KEY, isActive: true } as User;
const users = new UserAuthenticator({ user: { findFirst: async () => row } } as unknown as PrismaClient);
await users.findByEmail(REALM, USER.email);

// What uWS hands a request: the peer's address as text in a new ArrayBuffer each time, and the headers.
const PEER = new TextEncoder().encode('127.0.0.1');
const HEADERS: Record<string, string> = { host: 'bench.example.com', authorization: HEADER, 'user-agent': 'ZulipMobile/27.0', 'accept-encoding': 'gzip' };
const res = { getRemoteAddressAsText: () => PEER.slice().buffer } as unknown as uWS.HttpResponse;
const req = { getHeader: (name: string) => HEADERS[name] ?? '', forEach: () => {} } as unknown as uWS.HttpRequest;
const proxies = new TrustedProxies([]);
/** The client's address as the router hands it to authentication: asked only for wrong credentials. */
const PEER_IP = () => '127.0.0.1';

// A request's observer as the server makes it per route: the metrics cell and the access line
// (written to pino's destination, stderr: the script sends it to /dev/null).
const observer = requestObservers(new ServerMetrics()).route('GET', '/api/v1/events');
const observed: ObservedRequest = { startedAt: performance.now(), seq: 1, userId: USER.id };

// One queue with one pending message event of the size a short message has, as the fan-out left it.
const queue = new EventQueue('1764340000:12', USER.id, REALM.id, {} as QueueOptions, Date.now());
const EVENT = new QueuedEvent(
  `"type":"message","message":{"id":1041,"sender_id":9,"content":"<p>bench message 41, a few words long</p>","recipient_id":3,"timestamp":1764340000,"client":"bench","subject":"bench","topic_links":[],"is_me_message":false,"reactions":[],"submessages":[],"sender_full_name":"Bench Sender","sender_email":"user9@example.com","sender_realm_str":"bench","display_recipient":"bench","type":"stream","stream_id":3,"avatar_url":null,"content_type":"text/html"},"flags":[]}`,
);

const POLL = { kind: 'poll', flush: () => true, heartbeat: () => true, close: () => {} } as const;

const STEPS: Record<string, () => unknown> = {
  auth: () => authenticateBasic(gate, null, HEADER, PEER_IP, null),
  params: () => parseUrlEncoded(QUERY),
  user: () => users.authenticate(REALM, USER.email, KEY),
  // The socket's address, read from uWS: since the exchange reads it only when asked (without
  // trusted proxies), a re-parked poll of a known user does not pay this.
  peer: () => requestOrigin(res, req, proxies),
  exchange: () => openExchange(res, req, proxies, observer),
  observe: () => observer.answered(observed, 200),
  // The answer of a parked poll to its one new event: the event's id and the envelope written
  // around the JSON shared by every queue that got it; acknowledged after, as the client's next poll does.
  serialize: () => {
    queue.push([EVENT]);
    const body = fieldsBody(pollAnswer(queue, queue.pendingJson()), []);
    queue.prune(queue.nextEventId - 1);
    return body;
  },
  // The queue's life around one poll: parked by the request, idle again once it is answered.
  repark: () => {
    queue.attach(POLL, 0, 0);
    queue.detach(POLL, 0);
    return queue.state;
  },
};

const [step = '', count = '0', mode] = process.argv.slice(2);
const run = STEPS[step];
if (!run) throw new Error(`step: one of ${Object.keys(STEPS).join(', ')}`);
let kept: unknown;
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const before = process.memoryUsage().heapUsed;
for (let i = Number(count); i > 0; i--) kept = run();
if (kept === undefined && Number(count) > 0 && step !== 'observe') throw new Error('no result');
if (mode === 'alloc') console.log(`${step}: ${Math.round((process.memoryUsage().heapUsed - before) / Number(count))} bytes allocated per call`);
