// Starting and stopping what a scenario measures. The baseline and the server never run at the
// same time: each gets the machine to itself.
import { BaselineTarget } from '../lib/baseline-target.ts';
import { ZulipTarget } from '../lib/zulip-target.ts';
import { startSelfServer } from '../lib/self-server.ts';
import type { BenchOptions } from '../lib/options.ts';

export async function withBaseline<R>(fn: (baseline: BaselineTarget) => Promise<R>): Promise<R> {
  const baseline = await BaselineTarget.start();
  try {
    return await fn(baseline);
  } finally {
    await baseline.stop();
  }
}

export async function withServer<R>(opts: BenchOptions, fn: (server: ZulipTarget) => Promise<R>): Promise<R> {
  if (opts.remote) {
    const { url, email, apiKey, pid } = opts.remote;
    const server = await ZulipTarget.connect({ target: 'server', url, pid }, { email, apiKey });
    try {
      return await fn(server);
    } finally {
      server.close();
    }
  }
  const self = await startSelfServer();
  try {
    const proc = self.process;
    const server = await ZulipTarget.connect({ target: 'server', url: self.url, pid: proc.pid, memory: () => proc.memory() }, self.admin);
    try {
      return await fn(server);
    } finally {
      server.close();
    }
  } finally {
    await self.stop();
  }
}

/** Users the queues are registered by: --users, else one per ten queues (as the issue asks). */
export function userCount(opts: BenchOptions, queues: number): number {
  return opts.users ?? Math.max(1, Math.ceil(queues / 10));
}
