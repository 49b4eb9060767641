// cluster: the server as 1, then 2, then 3 nodes (--nodes) on one PostgreSQL (DATABASE_URL, else
// an embedded one) and one NATS (NATS_URL, default nats://127.0.0.1:4222), a fresh database and
// so a fresh stream for each size, with the clients dealt evenly over the nodes. For each size:
// send throughput into one channel and round robin over --channels, then long-poll and WebSocket
// fan-out to --queues queues, each queue read on the node that holds it and the messages
// published through each node in turn. The raw-uWS baseline measures the same once; the report
// gives each figure against the baseline and against the same case on one node.
import { scratchServer } from '../../src/db/scratch.ts';
import { evenShares, spread } from '../lib/concurrency.ts';
import { longPollFanout, sendThroughput, wsFanout, type FanoutOptions, type Publisher, type SendOptions } from '../lib/measure.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import { onEarlyStop } from '../lib/server-process.ts';
import { CHANNEL } from '../lib/zulip-target.ts';
import type { Queue } from '../lib/zulip-api.ts';
import { baselineScenario } from './fanout.ts';
import { userCount, withBaseline, withCluster, type ClusterTarget } from './targets.ts';

/** Sending is bounded by --duration alone. */
const SEND_CAP = 1_000_000;

export async function clusterScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const send: SendOptions = { maxMessages: SEND_CAP, durationMs: opts.durationS * 1000 };
  const results = [await withBaseline((b) => sendThroughput(b.handle, b.endpoint, b.senders(opts.senders), send)), ...(await baselineScenario(opts))];
  const natsUrl = process.env.NATS_URL || 'nats://127.0.0.1:4222';
  const databases = await scratchServer(process.env.DATABASE_URL || undefined);
  const forget = onEarlyStop(() => databases.close());
  try {
    for (const nodes of opts.nodes) {
      const measured = await withCluster(databases, natsUrl, nodes, (cluster) => measureCluster(cluster, opts, send));
      results.push(...measured.map((r) => ({ ...r, nodes })));
    }
  } finally {
    forget();
    await databases.close();
  }
  return results;
}

async function measureCluster({ handle, nodes }: ClusterTarget, opts: BenchOptions, send: SendOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const first = nodes[0]!;
  // Sender k posts as user k through node k mod N.
  const senders = await first.ensureUsers(opts.senders);
  const sendersOver = (channels: string[]) => spread(senders, nodes.length).flatMap((users, i) => nodes[i]!.senders(users, users.length, channels));
  results.push(await sendThroughput(handle, first.endpoint, sendersOver([CHANNEL]), send));
  const channels = await first.ensureChannels(senders, opts.channels);
  results.push({ ...(await sendThroughput(handle, first.endpoint, sendersOver(channels), send)), channels: channels.length });

  const fanout: FanoutOptions = { messages: opts.messages, waveTimeoutMs: opts.waveTimeoutS * 1000 };
  let turn = 0;
  const publisher: Publisher = { publish: (content) => nodes[turn++ % nodes.length]!.publisher.publish(content) };
  for (const count of opts.counts) {
    // Each user's queues on one node; every node holds an even share.
    const usersByNode = spread(await first.ensureUsers(Math.max(nodes.length, userCount(opts, count))), nodes.length);
    const shares = evenShares(count, nodes.length);
    for (const transport of ['longpoll', 'ws'] as const) {
      const queues: Queue[][] = [];
      for (const [i, node] of nodes.entries()) queues.push(await node.registerQueues(usersByNode[i]!, shares[i]!));
      try {
        results.push(
          transport === 'longpoll'
            ? await longPollFanout(
                handle,
                first.endpoint,
                nodes.flatMap((node, i) => node.longPolls(queues[i]!)),
                publisher,
                fanout,
              )
            : await wsFanout(
                handle,
                nodes.flatMap((node, i) => node.webSockets(queues[i]!)),
                publisher,
                fanout,
              ),
        );
      } finally {
        await Promise.all(nodes.map((node, i) => node.deleteQueues(queues[i]!)));
      }
    }
  }
  return results;
}
