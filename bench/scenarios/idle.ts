// idle: memory per idle registered queue (server only: the baseline has no queues), per idle parked
// long-poll and per idle WebSocket (both).
import { ErrorLog } from '../lib/deliveries.ts';
import { idleConnections, idleResult, memoryPoint, openIdleLongPolls, openIdleWebSockets } from '../lib/measure.ts';
import { FD_MARGIN, openFileLimit, type BenchOptions } from '../lib/options.ts';
import type { CaseResult } from '../lib/results.ts';
import type { Queue } from '../lib/zulip-api.ts';
import { userCount, withBaseline, withServer } from './targets.ts';

/**
 * Idle long-polls and WebSockets are held open together (see idleConnections), each set taking
 * one file descriptor per connection here: each gets half of what the limit leaves.
 */
function idleConnectionCount(counts: number[]): number {
  return Math.min(Math.max(...counts), Math.floor((openFileLimit() - FD_MARGIN) / 2));
}

export async function idleScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const counts = [...opts.counts].sort((a, b) => a - b);
  const connections = idleConnectionCount(counts);
  await withBaseline(async (b) => {
    const polls = await idleConnections('idle-longpoll', b.handle, connections, () =>
      openIdleLongPolls(b.endpoint, b.longPolls(connections), 'baseline idle long-polls', b.publisher.parked),
    );
    try {
      const sockets = await idleConnections('idle-ws', b.handle, connections, () => openIdleWebSockets(b.webSockets(connections), 'baseline idle websockets'));
      sockets.release();
      results.push(polls.result, sockets.result);
    } finally {
      polls.release();
    }
  });
  await withServer(opts, async (s) => {
    const users = await s.ensureUsers(userCount(opts, counts[counts.length - 1]!));
    const empty = await memoryPoint(s.handle);
    const queues: Queue[] = [];
    try {
      // Queues accumulate: each count is measured against the state with no queue at all.
      for (const count of counts) {
        const startedAt = performance.now();
        queues.push(...(await s.registerQueues(users, count - queues.length)));
        results.push(idleResult('idle-queue', s.handle, count, empty, await memoryPoint(s.handle), new ErrorLog(), startedAt));
      }
      // Long-polls and WebSockets on different queues: the gateway allows one reader per queue.
      if (queues.length < 2 * connections) queues.push(...(await s.registerQueues(users, 2 * connections - queues.length)));
      const pollQueues = queues.slice(0, connections);
      const wsQueues = queues.slice(connections, 2 * connections);
      const polls = await idleConnections('idle-longpoll', s.handle, connections, () =>
        openIdleLongPolls(s.endpoint, s.longPolls(pollQueues), 'server idle long-polls'),
      );
      try {
        const sockets = await idleConnections('idle-ws', s.handle, connections, () => openIdleWebSockets(s.webSockets(wsQueues), 'server idle websockets'));
        sockets.release();
        results.push(polls.result, sockets.result);
      } finally {
        polls.release();
      }
    } finally {
      await s.deleteQueues(queues);
    }
  });
  return results;
}
