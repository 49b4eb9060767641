// Rate limits count across the nodes: each node passes the requests it counted to the others
// every GOSSIP_MS (one NATS message per interval at most, never on the request's path), and
// counts theirs in its own logs. A client spread over several nodes therefore gets at most a few
// intervals' worth of requests past the limit, where counting per node would give it N times the
// limit. Counts lost while NATS is down are simply not shared: the limits go per node meanwhile.
import type { RateLimiter } from '../http/rate-limit.ts';
import type { ClusterNode } from './node.ts';

const GOSSIP_MS = 50;

/** [limiter name, key, time (s)] */
type Hit = [string, string, number];

export function shareRateLimits(cluster: ClusterNode, limiters: Record<string, RateLimiter>): void {
  let pending: Hit[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    cluster.broadcast('rate-limits', JSON.stringify(pending));
    pending = [];
  };
  for (const [name, limiter] of Object.entries(limiters)) {
    limiter.onCounted = (key, time) => {
      pending.push([name, key, time]);
      if (!timer) {
        timer = setTimeout(flush, GOSSIP_MS);
        timer.unref();
      }
    };
  }
  cluster.onBroadcast('rate-limits', (text) => {
    for (const [name, key, time] of JSON.parse(text) as Hit[]) limiters[name]?.record(key, time);
  });
}
