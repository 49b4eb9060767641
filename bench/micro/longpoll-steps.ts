// Steps of a re-parked GET /events, each run alone N times, for instruction counts under callgrind
// (scripts/callgrind-step.sh): the machine's load does not change them, unlike wall time.
// Usage: node longpoll-steps.js <step> <N>; N = 0 runs the same process doing none.
import { authenticateBasic } from '../../src/http/credentials.ts';
import type { Gate } from '../../src/http/route.ts';
import { parseUrlEncoded } from '../../src/http/params.ts';

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

const STEPS: Record<string, () => unknown> = {
  auth: () => authenticateBasic(gate, null, HEADER, '127.0.0.1', null),
  params: () => parseUrlEncoded(QUERY),
};

const [step = '', count = '0'] = process.argv.slice(2);
const run = STEPS[step];
if (!run) throw new Error(`step: one of ${Object.keys(STEPS).join(', ')}`);
let kept: unknown;
for (let i = Number(count); i > 0; i--) kept = run();
if (kept === undefined && Number(count) > 0) throw new Error('no result');
