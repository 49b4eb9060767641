// mixed: a busy server's day at once. Idle registered queues nobody reads, parked long-polls and
// WebSockets, and messages at a steady rate into channels every bench user follows, for
// --duration s: publish→delivered latency per delivery, and errors. The baseline (raw uWS) fans
// the same messages out to the same number of long-polls and sockets, without queues: a poll
// that is not parked when a message is published misses it there, so only the server must
// deliver everything.
import { mixedLoad, type MixedOptions } from '../lib/measure.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import type { Queue } from '../lib/zulip-api.ts';
import { withBaseline, withServer } from './targets.ts';

/** Publishing connections: enough that a slow answer does not hold back the next message. */
const PUBLISHERS = 16;

export async function mixedScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const [idle, polls, sockets] = opts.counts as [number, number, number];
  const load = (expectAll: boolean): MixedOptions => ({ rate: opts.rate, durationMs: opts.durationS * 1000, drainMs: opts.waveTimeoutS * 1000, expectAll });
  const baseline = await withBaseline((b) =>
    mixedLoad(b.handle, b.endpoint, { longPolls: b.longPolls(polls), sockets: b.webSockets(sockets), publishers: b.senders(PUBLISHERS) }, load(false)),
  );
  const server = await withServer(opts, async (s) => {
    const users = await s.ensureUsers(opts.users ?? 1000);
    const channels = await s.ensureChannels(users, opts.channels);
    const queues: Queue[] = [];
    try {
      queues.push(...(await s.registerQueues(users, idle + polls + sockets)));
      const clients = {
        longPolls: s.longPolls(queues.slice(idle, idle + polls)),
        sockets: s.webSockets(queues.slice(idle + polls)),
        publishers: s.senders(users.slice(0, 1), PUBLISHERS, channels),
      };
      return await mixedLoad(s.handle, s.endpoint, clients, load(true));
    } finally {
      await s.deleteQueues(queues);
    }
  });
  return [baseline, server];
}
