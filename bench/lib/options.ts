import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { ACTIONS, DEFAULT_MIX, type Mix } from './people.ts';

export const SCENARIOS = [
  'longpoll-fanout',
  'ws-fanout',
  'send',
  'react',
  'flags',
  'mixed',
  'cluster',
  'idle',
  'baseline',
  'render',
  'history',
  'capacity',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface BenchOptions {
  scenario: Scenario;
  /** Absent with --self: the bench starts the server. */
  remote?: { url: string; email: string; apiKey: string; pid?: number };
  /** Client counts to measure, one case each (queues, sockets). */
  counts: number[];
  /** Users the queues are spread over (default: a tenth of the largest count). */
  users?: number;
  messages: number;
  senders: number;
  /** Channels the messages go to, round robin (send, mixed). */
  channels: number;
  /** Messages per second (mixed). */
  rate: number;
  /** Cluster sizes to measure in turn (cluster). */
  nodes: number[];
  /** Messages of history to measure in turn (history). */
  sizes: number[];
  /** history: keep each seeded database and reuse it on later runs (DATABASE_URL's server only). */
  reuseSeeded: boolean;
  /** cluster: instead of its cases, kill a node and restart NATS under load (scenarios/cluster-kill.ts). */
  kill: boolean;
  durationS: number;
  waveTimeoutS: number;
  maxTimeS: number;
  smoke: boolean;
  outDir: string;
  /** The capacity scenario's people (bench/lib/people.ts). */
  capacity: CapacityOptions;
}

export interface CapacityOptions {
  /** Weight of each action between a person's idle pauses. */
  mix: Mix;
  /** Average pause between a person's actions, s. */
  thinkS: number;
  /** Share of people on a WebSocket (the others long-poll). */
  wsShare: number;
  /** Accounts per team; a team follows its own 5 channels. */
  team: number;
  /** People (devices, each with its own queue) per account. */
  devices: number;
  /** People joining per second at each step. */
  joinRate: number;
  /** Keep-alive connections the people's requests share. */
  pool: number;
  /** Accounts to use instead of creating them (`email,api_key` a line). */
  usersFile?: string;
}

export const USAGE = `usage: npm run bench -- <scenario> [--self | --url URL --email E --api-key K [--pid PID]] [options]
scenarios: ${SCENARIOS.join(', ')}
  --self             start the server on a fresh embedded database (default)
  --url URL          any Zulip-API server instead (needs an account; --users > 1 needs an admin)
  --pid PID          that server's process id on this machine, for CPU and memory figures
  --queues LIST      client counts, comma-separated (default: fan-out 10000; idle 10000,50000; baseline 1000,10000;
                     mixed: idle queues,long-polls,WebSockets = 10000,1000,500; cluster 1000)
  --nodes LIST       cluster: the cluster sizes to measure in turn (default 1,2,3)
  --kill             cluster: instead of its cases, SIGKILL one node under load, then restart NATS under load (a NATS
                     server of the bench's own); reports events lost, duplicated, out of order and re-registrations
                     (default --nodes 3, --senders 8, --duration 12, --queues 200: long-polls and as many WebSockets)
  --sizes LIST       history: messages of history to seed and measure in turn, 10000 or 10k, 1M (default 10k,1M,10M)
  --reuse-seeded     history: keep each seeded database (history_bench_<size>, on DATABASE_URL's server) and measure
                     it again on later runs instead of seeding anew (seeding 10M messages takes about 15 minutes)
  --users N          users the queues are registered by (default: largest count / 10; mixed 1000)
  --channels N       channels the messages go to, round robin, each followed by every bench user (default 1; mixed 4;
                     cluster: its many-channel send case, 24)
  --rate R           messages per second for mixed (default 100)
  --messages M       messages per fan-out case (default 20; cluster 10); cap on requests for send, react, flags (default 1000000)
  --senders K        concurrent senders for send, react (one user each) and flags (one user's connections) (default 8; cluster 12)
  --duration S       seconds of sending for send, react, flags, mixed and cluster (default 10; mixed 60; cluster 3), of rendering per case for render,
                     of each request for history (default 5)
  --wave-timeout S   how long one message may take to reach every client (default 30)
  --max-time S       hard limit for the whole run (default 1800, history 7200; with --smoke 60, cluster and capacity 180, history 300)
  --smoke            a tiny run of about 10 s (cluster: about a minute)
capacity (people as team-chat clients, ramped until p99 > 500 ms or an error; bench/README.md "The capacity scenario"):
  --people LIST      steps of the ramp (default 1000,2000,5000,10000,15000; above the file limit left out);
                     --duration S is each step's hold after its people joined (default 40)
  --mix LIST         action weights, e.g. narrow=10.68,read=1.32,send=1,react=0.13,reconnect=0.144 (the default)
  --think S          average pause between a person's actions (default 20)
  --ws-share F       share of people on a WebSocket, 0-1 (default 0.5; 0 for Zulip, which has no WebSocket API)
  --team N           accounts per team, each team following 5 channels of its own (default 50)
  --devices N        people per account, each a device with its own queue (default 2: creating accounts is setup's slow part)
  --join-rate R      people joining per second (default 200)
  --pool N           connections the people's requests share (default 64)
  --users-file F     accounts to use, one \`email,api_key\` a line, instead of creating them (--url without an admin)
  --out DIR          results directory (default bench/results)`;

const DEFAULT_COUNTS: Record<Scenario, number[]> = {
  'longpoll-fanout': [10_000],
  'ws-fanout': [10_000],
  send: [],
  react: [],
  flags: [],
  mixed: [10_000, 1000, 500],
  cluster: [1000],
  idle: [10_000, 50_000],
  baseline: [1000, 10_000],
  render: [],
  history: [],
  capacity: [1000, 2000, 5000, 10_000, 15_000],
};
const SMOKE_COUNTS: Record<Scenario, number[]> = {
  'longpoll-fanout': [100],
  'ws-fanout': [100],
  send: [],
  react: [],
  flags: [],
  mixed: [100, 20, 10],
  cluster: [60],
  idle: [200],
  baseline: [100],
  render: [],
  history: [],
  capacity: [20, 60],
};

function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} needs a positive integer, got "${value}"`);
  return n;
}

/** "10k" and "1M" as "10000" and "1000000". */
function withMultiplier(value: string): string {
  const match = /^(\d+)([kM])$/.exec(value);
  return match ? String(Number(match[1]) * (match[2] === 'k' ? 1000 : 1_000_000)) : value;
}

function positiveNumber(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} needs a positive number, got "${value}"`);
  return n;
}

function share(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new Error(`--ws-share needs a number from 0 to 1, got "${value}"`);
  return n;
}

/** `narrow=10,send=1`: the actions named get these weights, the others none. */
function parseMix(value: string): Mix {
  const mix = Object.fromEntries(ACTIONS.map((a) => [a, 0])) as Mix;
  for (const part of value.split(',')) {
    const [name, weight] = part.split('=').map((x) => x.trim()) as [string, string | undefined];
    if (!(ACTIONS as readonly string[]).includes(name) || weight === undefined || !(Number(weight) >= 0)) {
      throw new Error(`--mix: "${part}" is not ACTION=WEIGHT with ACTION one of ${ACTIONS.join(', ')}`);
    }
    mix[name as keyof Mix] = Number(weight);
  }
  if (Object.values(mix).every((w) => w === 0)) throw new Error('--mix: every weight is 0');
  return mix;
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      self: { type: 'boolean' },
      url: { type: 'string' },
      email: { type: 'string' },
      'api-key': { type: 'string' },
      pid: { type: 'string' },
      queues: { type: 'string' },
      users: { type: 'string' },
      messages: { type: 'string' },
      senders: { type: 'string' },
      channels: { type: 'string' },
      rate: { type: 'string' },
      nodes: { type: 'string' },
      sizes: { type: 'string' },
      'reuse-seeded': { type: 'boolean' },
      kill: { type: 'boolean' },
      duration: { type: 'string' },
      'wave-timeout': { type: 'string' },
      'max-time': { type: 'string' },
      smoke: { type: 'boolean' },
      out: { type: 'string' },
      people: { type: 'string' },
      mix: { type: 'string' },
      think: { type: 'string' },
      'ws-share': { type: 'string' },
      team: { type: 'string' },
      devices: { type: 'string' },
      'join-rate': { type: 'string' },
      pool: { type: 'string' },
      'users-file': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) throw new Error(USAGE);
  const scenario = positionals[0] as Scenario;
  if (positionals.length !== 1 || !SCENARIOS.includes(scenario)) throw new Error(`one scenario expected\n${USAGE}`);
  if (values.self && values.url) throw new Error('--self and --url exclude each other');
  let remote: BenchOptions['remote'];
  if (values.url) {
    if (!values.email || !values['api-key']) throw new Error('--url needs --email and --api-key');
    remote = { url: values.url, email: values.email, apiKey: values['api-key'], pid: values.pid ? positiveInt('pid', values.pid) : undefined };
  }
  const smoke = Boolean(values.smoke);
  const int = (name: keyof typeof values, fallback: number, smokeValue: number) => {
    const v = values[name];
    return typeof v === 'string' ? positiveInt(name, v) : smoke ? smokeValue : fallback;
  };
  const kill = Boolean(values.kill);
  if (kill && scenario !== 'cluster') throw new Error('--kill: cluster only');
  const list = values.people ?? values.queues;
  const counts = list
    ? list.split(',').map((c) => positiveInt(values.people ? 'people' : 'queues', c.trim()))
    : kill
      ? [smoke ? 20 : 200]
      : (smoke ? SMOKE_COUNTS : DEFAULT_COUNTS)[scenario];
  if (scenario === 'mixed' && counts.length !== 3) throw new Error('mixed: --queues IDLE,LONGPOLLS,WEBSOCKETS');
  const mixed = scenario === 'mixed';
  const cluster = scenario === 'cluster';
  const history = scenario === 'history';
  const capacity = scenario === 'capacity';
  if (values['users-file'] && !remote) throw new Error('--users-file needs --url');
  if ((cluster || history) && remote) throw new Error(`${scenario} starts its own servers: no --url`);
  if (values['reuse-seeded'] && (!history || !process.env.DATABASE_URL)) throw new Error("--reuse-seeded: history only, on DATABASE_URL's server");
  return {
    scenario,
    remote,
    counts,
    users: values.users ? positiveInt('users', values.users) : mixed ? (smoke ? 20 : 1000) : undefined,
    messages: ['send', 'react', 'flags', 'history'].includes(scenario) ? int('messages', 1_000_000, 5000) : int('messages', cluster ? 10 : 20, 3),
    senders: int('senders', cluster && !kill ? 12 : 8, 2),
    channels: int('channels', mixed ? 4 : cluster ? 24 : 1, mixed || cluster ? 2 : 1),
    rate: int('rate', 100, 20),
    nodes: values.nodes ? values.nodes.split(',').map((n) => positiveInt('nodes', n.trim())) : kill ? [smoke ? 2 : 3] : smoke ? [1, 2] : [1, 2, 3],
    sizes: values.sizes
      ? values.sizes.split(',').map((n) => positiveInt('sizes', withMultiplier(n.trim())))
      : smoke
        ? [2000, 20_000]
        : [10_000, 1_000_000, 10_000_000],
    reuseSeeded: Boolean(values['reuse-seeded']),
    kill,
    durationS: int('duration', mixed ? 60 : kill ? 12 : cluster ? 3 : history ? 5 : capacity ? 40 : 10, kill ? 8 : mixed || capacity ? 5 : history ? 1 : 2),
    waveTimeoutS: int('wave-timeout', 30, 5),
    maxTimeS: int('max-time', history ? 7200 : 1800, cluster || capacity ? 180 : history ? 300 : 60),
    smoke,
    outDir: values.out ?? 'bench/results',
    capacity: {
      mix: values.mix ? parseMix(values.mix) : DEFAULT_MIX,
      thinkS: values.think ? positiveNumber('think', values.think) : smoke ? 2 : 20,
      wsShare: values['ws-share'] ? share(values['ws-share']) : 0.5,
      team: int('team', 50, 10),
      devices: int('devices', 2, 1),
      joinRate: int('join-rate', 200, 50),
      pool: int('pool', 64, 8),
      usersFile: values['users-file'],
    },
  };
}

/** File descriptors kept for setup and control connections beyond the measured clients. */
export const FD_MARGIN = 200;

/** Soft limit on open files of this process: each client connection takes one. */
export function openFileLimit(): number {
  const match = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'));
  return match ? Number(match[1]) : 1024;
}
