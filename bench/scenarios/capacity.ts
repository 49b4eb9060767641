// capacity: how many simulated people (bench/lib/people.ts) the server holds. People join in steps
// (--people); at each step they all live their usual minute for --hold s, and the step is healthy
// when no request kind and no delivery has a p99 over 500 ms and nothing failed. The ramp stops at
// the first unhealthy step. Joining (register, connect) is measured apart: a morning's logins are
// not the steady load the health threshold is about.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseEndpoint } from '../lib/http-client.ts';
import { HttpPool } from '../lib/http-pool.ts';
import { mapLimit, sleep } from '../lib/concurrency.ts';
import { memoryPoint, sampleServer, type MemoryPoint } from '../lib/measure.ts';
import { Crowd, REQUEST_KINDS, type Channel, type Window } from '../lib/people.ts';
import { FD_MARGIN, openFileLimit, type BenchOptions } from '../lib/options.ts';
import { SelfCpu } from '../lib/proc-sampler.ts';
import { Progress } from '../lib/progress.ts';
import { percentiles } from '../lib/stats.ts';
import type { CapacityFigures, CaseResult, RequestFigures } from '../lib/results.ts';
import { TimerWheel } from '../lib/timer-wheel.ts';
import { ZulipClient, type Credentials } from '../lib/zulip-api.ts';
import type { ZulipTarget } from '../lib/zulip-target.ts';
import { withServer } from './targets.ts';

/** The health threshold: p99 of any request kind or of deliveries, in ms. */
export const HEALTH_P99_MS = 500;
const CHANNELS_PER_TEAM = 5;
const SETUP_CONCURRENCY = 16;

/** People the file-descriptor limit lets this process hold: one connection each, beside the pool's. */
export function peopleLimit(poolSize: number): number {
  return openFileLimit() - FD_MARGIN - poolSize;
}

/** `--users-file`: one account a line, `email,api_key` (or `email api_key`); `#` starts a comment. */
function readUsersFile(path: string): Credentials[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((line) => {
      const [email, apiKey] = line.split(/[,\s]+/);
      if (!email || !apiKey) throw new Error(`${path}: "${line}" is not "email,api_key"`);
      return { email, apiKey };
    });
}

/**
 * Accounts and their channels: accounts come in teams of `team`, each team following its own
 * CHANNELS_PER_TEAM channels, so every message reaches the same number of people at every step.
 */
class Accounts {
  readonly list: Credentials[] = [];
  private readonly channels = new Map<number, Promise<Channel[]>>();
  private readonly runTag = randomBytes(3).toString('hex');

  constructor(
    private readonly server: ZulipTarget,
    private readonly team: number,
    private readonly given?: Credentials[],
  ) {}

  /** At least `n` accounts, each subscribed to its team's channels. */
  async ensure(n: number): Promise<void> {
    if (n <= this.list.length) return;
    const from = this.list.length;
    if (!this.given) {
      // ensureUsers counts the given admin as account 0: the people's accounts come after it.
      this.list.push(...(await this.server.ensureUsers(n + 1, (index) => this.channelNames(this.teamOf(index - 1)))).slice(from + 1, n + 1));
      return;
    }
    if (n > this.given.length) throw new Error(`--users-file has ${this.given.length} accounts, ${n} needed`);
    this.list.push(...this.given.slice(from, n));
    const progress = new Progress("capacity: subscribe accounts to their teams' channels", n - from);
    await mapLimit(
      this.list.slice(from),
      SETUP_CONCURRENCY,
      async (account, i) => {
        const client = await ZulipClient.open(this.server.endpoint, account);
        try {
          await client.subscribe(this.channelNames(this.teamOf(from + i)));
        } finally {
          client.close();
        }
      },
      () => progress.tick(),
    );
    progress.finish();
  }

  teamOf(account: number): number {
    return Math.floor(account / this.team);
  }

  private channelNames(team: number): string[] {
    return Array.from({ length: CHANNELS_PER_TEAM }, (_, c) => `capacity-${this.runTag}-${team}-${c}`);
  }

  /** A team's channels with their ids, asked once per team (as its first account). */
  channelsOf(team: number): Promise<Channel[]> {
    let channels = this.channels.get(team);
    if (!channels) this.channels.set(team, (channels = this.fetchChannels(team)));
    return channels;
  }

  private async fetchChannels(team: number): Promise<Channel[]> {
    const client = await ZulipClient.open(this.server.endpoint, this.list[team * this.team]!);
    try {
      const subs = (await client.call('GET', '/api/v1/users/me/subscriptions')).subscriptions as { name: string; stream_id: number }[];
      const names = new Set(this.channelNames(team));
      const channels = subs.filter((s) => names.has(s.name)).map((s) => ({ name: s.name, id: s.stream_id }));
      if (channels.length !== CHANNELS_PER_TEAM) throw new Error(`team ${team}: ${channels.length} of ${CHANNELS_PER_TEAM} channels subscribed`);
      return channels;
    } finally {
      client.close();
    }
  }
}

function summarize(
  window: Window,
  seconds: number,
): Pick<CapacityFigures, 'requests' | 'deliveries' | 'requestsPerS' | 'deliveriesPerS' | 'otherEventsPerS' | 'maxPoolWaitMs'> & {
  errors: number;
  errorSamples: string[];
} {
  const requests: RequestFigures[] = REQUEST_KINDS.map((kind) => {
    const samples = window.requests.get(kind)!;
    const p = percentiles(samples);
    return { kind, count: samples.length, errors: window.errorsByKind.get(kind) ?? 0, p50: p?.p50, p99: p?.p99, totalMs: p ? p.mean * p.n : 0 };
  }).filter((r) => r.count > 0 || r.errors > 0);
  const eventErrors = window.errorsByKind.get('events') ?? 0;
  if (eventErrors) requests.push({ kind: 'events', count: 0, errors: eventErrors, p50: undefined, p99: undefined, totalMs: 0 });
  const total = requests.reduce((s, r) => s + r.count, 0);
  return {
    requests,
    deliveries: percentiles(window.deliveries),
    requestsPerS: total / seconds,
    deliveriesPerS: window.deliveries.length / seconds,
    otherEventsPerS: window.otherEvents / seconds,
    maxPoolWaitMs: window.maxPoolWaitMs,
    errors: window.errors.count,
    errorSamples: window.errors.samples,
  };
}

/** What breaks the threshold in a step, or an empty list. */
function healthBreaks(f: Pick<CapacityFigures, 'requests' | 'deliveries'>, errors: number): string[] {
  const broken = f.requests.filter((r) => (r.p99 ?? 0) > HEALTH_P99_MS).map((r) => `${r.kind} p99 ${r.p99!.toFixed(0)} ms`);
  if ((f.deliveries?.p99 ?? 0) > HEALTH_P99_MS) broken.push(`delivery p99 ${f.deliveries!.p99.toFixed(0)} ms`);
  if (errors > 0) broken.push(`${errors} errors`);
  return broken;
}

export async function capacityScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const c = opts.capacity;
  const limit = peopleLimit(c.pool);
  const steps = opts.counts.filter((n) => n <= limit);
  if (steps.length < opts.counts.length)
    process.stderr.write(`capacity: steps above ${limit} people left out: one connection each, the file limit (ulimit -n) is ${openFileLimit()}\n`);
  const results: CaseResult[] = [];
  await withServer(opts, async (server) => {
    const accounts = new Accounts(server, c.team, c.usersFile ? readUsersFile(c.usersFile) : undefined);
    const endpoint = parseEndpoint(server.handle.url);
    const pool = await HttpPool.open(endpoint, c.pool);
    const wheel = new TimerWheel();
    const crowd = new Crowd({
      endpoint,
      pool,
      wheel,
      mix: c.mix,
      thinkMs: c.thinkS * 1000,
      wsShare: c.wsShare,
      runToken: `cap:${randomBytes(3).toString('hex')}:`,
    });
    let empty: MemoryPoint | undefined;
    try {
      empty = server.handle.pid ? await memoryPoint(server.handle) : undefined;
      for (const people of steps) {
        const result = await step(server, accounts, crowd, people, c, opts, empty);
        results.push(result);
        const broken = result.capacity!.broken;
        process.stderr.write(`capacity: ${people} people ${broken.length ? `broke the threshold: ${broken.join(', ')}` : 'held'}\n`);
        if (broken.length) break;
      }
    } finally {
      crowd.close();
      wheel.stop();
      pool.close();
    }
  });
  return results;
}

async function step(
  server: ZulipTarget,
  accounts: Accounts,
  crowd: Crowd,
  people: number,
  c: BenchOptions['capacity'],
  opts: BenchOptions,
  empty: MemoryPoint | undefined,
): Promise<CaseResult> {
  const devices = c.devices;
  await accounts.ensure(Math.ceil(people / devices));
  crowd.nextWindow();
  // Join at --join-rate: person k joins at start + k / rate, on as many connections as that needs.
  const joining = people - crowd.size;
  const progress = new Progress(`capacity: ${people} people, join`, joining);
  const startedAt = performance.now();
  const firstNew = crowd.size;
  await mapLimit(
    Array.from({ length: joining }, (_, k) => firstNew + k),
    64,
    async (index, k) => {
      const wait = startedAt + (k * 1000) / c.joinRate - performance.now();
      if (wait > 0) await sleep(wait);
      const account = Math.floor(index / devices);
      try {
        await crowd.join(accounts.list[account]!, index % devices, await accounts.channelsOf(accounts.teamOf(account)));
      } catch (err) {
        crowd.window.error('join', err);
      }
    },
    () => progress.tick(),
  );
  progress.finish();
  const joinSeconds = (performance.now() - startedAt) / 1000;
  const join = summarize(crowd.nextWindow(), joinSeconds);
  if (join.errors) process.stderr.write(`capacity: ${join.errors} errors while ${joining} people joined: ${join.errorSamples.join('; ')}\n`);
  // The steady state: every person living as usual.
  const endSampling = await sampleServer(server.handle);
  const loaderCpu = new SelfCpu();
  const holdStart = performance.now();
  const hold = new Progress(`capacity: ${people} people, hold`, opts.durationS);
  while (performance.now() - holdStart < opts.durationS * 1000) {
    await sleep(1000);
    hold.tick();
  }
  hold.finish();
  const seconds = (performance.now() - holdStart) / 1000;
  const steady = summarize(crowd.nextWindow(), seconds);
  const usage = await endSampling();
  const loaderCpuPercent = loaderCpu.percent();
  const memory = empty ? await memoryPoint(server.handle) : undefined;
  const perPerson = (after?: number, before?: number) => (after !== undefined && before !== undefined ? ((after - before) * 1024) / people : undefined);
  // A person who could not join is not held either.
  const broken = healthBreaks(steady, steady.errors + join.errors);
  return {
    kind: 'capacity',
    target: 'server',
    count: people,
    latencyMs: steady.deliveries,
    throughput: steady.requestsPerS,
    expected: undefined,
    delivered: steady.deliveries?.n,
    errors: steady.errors,
    errorSamples: steady.errorSamples,
    ...usage,
    loaderCpuPercent,
    seconds,
    capacity: {
      people,
      webSockets: crowd.webSockets,
      accounts: Math.ceil(people / devices),
      healthy: broken.length === 0,
      broken,
      requests: steady.requests,
      deliveries: steady.deliveries,
      requestsPerS: steady.requestsPerS,
      deliveriesPerS: steady.deliveriesPerS,
      otherEventsPerS: steady.otherEventsPerS,
      maxPoolWaitMs: steady.maxPoolWaitMs,
      serverCpuPer1000People: usage.serverCpuPercent !== undefined ? usage.serverCpuPercent / (people / 1000) : undefined,
      memoryPerPersonKB: { rss: perPerson(memory?.rssMB, empty?.rssMB), heap: perPerson(memory?.heapMB, empty?.heapMB) },
      join: { seconds: joinSeconds, requests: join.requests, errors: join.errors, errorSamples: join.errorSamples },
    },
  };
}
