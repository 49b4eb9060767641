// longpoll-fanout and ws-fanout: Q clients on one channel, one sender, M messages; the baseline does
// the same with raw uWS first.
import { longPollFanout, wsFanout, type FanoutOptions } from '../lib/measure.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import { userCount, withBaseline, withServer } from './targets.ts';

export async function fanoutScenario(opts: BenchOptions, transport: 'longpoll' | 'ws'): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const fanout: FanoutOptions = { messages: opts.messages, waveTimeoutMs: opts.waveTimeoutS * 1000 };
  await withBaseline(async (b) => {
    for (const n of opts.counts) {
      results.push(
        transport === 'longpoll'
          ? await longPollFanout(b.handle, b.endpoint, b.longPolls(n), b.publisher, fanout)
          : await wsFanout(b.handle, b.webSockets(n), b.publisher, fanout),
      );
    }
  });
  await withServer(opts, async (s) => {
    const users = await s.ensureUsers(userCount(opts, Math.max(...opts.counts)));
    for (const n of opts.counts) {
      const queues = await s.registerQueues(users, n);
      try {
        results.push(
          transport === 'longpoll'
            ? await longPollFanout(s.handle, s.endpoint, s.longPolls(queues), s.publisher, fanout)
            : await wsFanout(s.handle, s.webSockets(queues), s.publisher, fanout),
        );
      } finally {
        await s.deleteQueues(queues);
      }
    }
  });
  return results;
}

/** The baseline scenario: the machine's limit for both transports, nothing else. */
export async function baselineScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const fanout: FanoutOptions = { messages: opts.messages, waveTimeoutMs: opts.waveTimeoutS * 1000 };
  await withBaseline(async (b) => {
    for (const n of opts.counts) {
      results.push(await longPollFanout(b.handle, b.endpoint, b.longPolls(n), b.publisher, fanout));
      results.push(await wsFanout(b.handle, b.webSockets(n), b.publisher, fanout));
    }
  });
  return results;
}
