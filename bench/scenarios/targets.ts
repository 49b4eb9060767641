// Starting and stopping what a scenario measures. The baseline and the server never run at the
// same time: each gets the machine to itself.
import type { ScratchServer } from '../../src/db/scratch.ts';
import { BaselineTarget } from '../lib/baseline-target.ts';
import { startSelfCluster } from '../lib/cluster-server.ts';
import type { ServerHandle } from '../lib/measure.ts';
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

export interface ClusterTarget {
  /** What is measured: every node, and the database's backends. */
  handle: ServerHandle;
  /** Each node as a server of its own, for the clients it takes. */
  nodes: ZulipTarget[];
}

/** A cluster of `count` nodes on a fresh database of `databases` and the NATS at `natsUrl`, for the time of `fn`. */
export async function withCluster<R>(databases: ScratchServer, natsUrl: string, count: number, fn: (cluster: ClusterTarget) => Promise<R>): Promise<R> {
  const self = await startSelfCluster(databases, natsUrl, count);
  const nodes: ZulipTarget[] = [];
  try {
    const nodePids = self.nodes.map((node) => node.process.pid);
    const handle: ServerHandle = { target: 'server', url: self.nodes[0]!.url, cluster: { nodePids, databaseBackends: () => self.databaseBackends() } };
    // One after the other: the first makes the bench channel, the others find it.
    for (const node of self.nodes) nodes.push(await ZulipTarget.connect({ target: 'server', url: node.url, pid: node.process.pid }, self.admin));
    return await fn({ handle, nodes });
  } finally {
    for (const node of nodes) node.close();
    await self.stop();
  }
}

/** Users the queues are registered by: --users, else one per ten queues (as the issue asks). */
export function userCount(opts: BenchOptions, queues: number): number {
  return opts.users ?? Math.max(1, Math.ceil(queues / 10));
}
