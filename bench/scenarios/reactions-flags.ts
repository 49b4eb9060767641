// react and flags: requests/s of K concurrent writers that queue behind one actor of the server:
// reactions to messages of one channel from K users (the channel's actor), and read-flag changes
// of one user from K connections (the user's actor). The baseline answers the same number of
// concurrent POST /publish, the machine's ceiling for K clients' requests.
import { sendThroughput, type SendOptions } from '../lib/measure.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import { withBaseline, withServer } from './targets.ts';

/** Messages the writers spread over: few, so that several writers hit the same message at once. */
const TARGET_MESSAGES = 10;

export async function reactScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const run: SendOptions = { maxMessages: opts.messages, durationMs: opts.durationS * 1000 };
  const k = opts.senders;
  const baseline = await withBaseline((b) => sendThroughput(b.handle, b.endpoint, b.senders(k), run, 'react'));
  const server = await withServer(opts, async (s) => {
    const users = await s.ensureUsers(Math.max(opts.users ?? k, k));
    const messages = await s.postMessages(TARGET_MESSAGES);
    return sendThroughput(s.handle, s.endpoint, s.reactors(users, k, messages), run, 'react');
  });
  return [baseline, server];
}

export async function flagsScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const run: SendOptions = { maxMessages: opts.messages, durationMs: opts.durationS * 1000 };
  const k = opts.senders;
  const baseline = await withBaseline((b) => sendThroughput(b.handle, b.endpoint, b.senders(k), run, 'flags'));
  const server = await withServer(opts, async (s) => {
    const [user] = await s.ensureUsers(1);
    const messages = await s.postMessages(TARGET_MESSAGES * k);
    return sendThroughput(s.handle, s.endpoint, s.flaggers(user!, k, messages), run, 'flags');
  });
  return [baseline, server];
}
