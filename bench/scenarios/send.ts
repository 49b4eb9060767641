// send: messages/s accepted by POST /messages with K concurrent senders, into one channel or round
// robin over --channels (baseline: POST /publish).
import { sendThroughput, type SendOptions } from '../lib/measure.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import { withBaseline, withServer } from './targets.ts';

export async function sendScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const send: SendOptions = { maxMessages: opts.messages, durationMs: opts.durationS * 1000 };
  const k = opts.senders;
  const baseline = await withBaseline((b) => sendThroughput(b.handle, b.endpoint, b.senders(k), send));
  const server = await withServer(opts, async (s) => {
    const users = await s.ensureUsers(opts.users ?? k);
    const channels = await s.ensureChannels(users, opts.channels);
    return sendThroughput(s.handle, s.endpoint, s.senders(users, k, channels), send);
  });
  return [baseline, server];
}
