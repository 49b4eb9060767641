// Rate limits with Zulip's rules: at most N requests in any window of W seconds (a sliding log,
// as Zulip's backends keep). Each active key holds the times of its last N requests in a ring;
// keys idle for a whole window are swept, so memory follows the active keys. In a cluster every
// node also counts the requests the others counted (cluster/rate-gossip.ts).
import { rateLimitHit } from '../errors.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix time (s) when the oldest counted request leaves the window. */
  reset: number;
  /** Seconds until the next request would be allowed (0 when allowed). */
  retryAfter: number;
}

interface Log {
  times: Float64Array;
  /** Index of the oldest entry. */
  head: number;
  count: number;
}

export class RateLimiter {
  private readonly logs = new Map<string, Log>();
  private sweepAt = 0;
  /** Told of each request this limiter counts (a cluster passes them on to the other nodes). */
  onCounted: ((key: string, time: number) => void) | null = null;

  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  /** Counts one request for `key` (when allowed) and tells whether it may proceed. */
  hit(key: string): RateDecision {
    const now = this.now();
    this.sweep(now);
    const log = this.logOf(key);
    this.expire(log, now);
    if (log.count >= this.limit) return this.refusal(log, now);
    log.times[(log.head + log.count) % this.limit] = now;
    log.count++;
    this.onCounted?.(key, now);
    return { allowed: true, limit: this.limit, remaining: this.limit - log.count, reset: this.resetOf(log), retryAfter: 0 };
  }

  /**
   * Counts a request another node counted at `time`, in its place by time (it may be older than
   * requests counted here since); when the log is full the oldest entry makes room.
   */
  record(key: string, time: number): void {
    const now = this.now();
    if (time <= now - this.windowSeconds) return;
    this.sweep(now);
    const log = this.logOf(key);
    this.expire(log, now);
    if (log.count === this.limit) {
      if (time <= log.times[log.head]!) return;
      log.head = (log.head + 1) % this.limit;
      log.count--;
    }
    let at = log.count;
    while (at > 0 && log.times[(log.head + at - 1) % this.limit]! > time) {
      log.times[(log.head + at) % this.limit] = log.times[(log.head + at - 1) % this.limit]!;
      at--;
    }
    log.times[(log.head + at) % this.limit] = time;
    log.count++;
  }

  private logOf(key: string): Log {
    let log = this.logs.get(key);
    if (!log) {
      log = { times: new Float64Array(this.limit), head: 0, count: 0 };
      this.logs.set(key, log);
    }
    return log;
  }

  /** Whether `key` has no capacity left, without counting anything. */
  isExhausted(key: string): RateDecision {
    const now = this.now();
    const log = this.logs.get(key);
    if (log) this.expire(log, now);
    if (!log || log.count === 0) return { allowed: true, limit: this.limit, remaining: this.limit, reset: Math.ceil(now), retryAfter: 0 };
    if (log.count >= this.limit) return this.refusal(log, now);
    return { allowed: true, limit: this.limit, remaining: this.limit - log.count, reset: this.resetOf(log), retryAfter: 0 };
  }

  private refusal(log: Log, now: number): RateDecision {
    return { allowed: false, limit: this.limit, remaining: 0, reset: this.resetOf(log), retryAfter: log.times[log.head]! + this.windowSeconds - now };
  }

  private resetOf(log: Log): number {
    return Math.ceil(log.times[log.head]! + this.windowSeconds);
  }

  /** Drops the requests that have left the window. */
  private expire(log: Log, now: number): void {
    while (log.count > 0 && log.times[log.head]! <= now - this.windowSeconds) {
      log.head = (log.head + 1) % this.limit;
      log.count--;
    }
  }

  /** Forgets keys with nothing in the window, at most once a window. */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + this.windowSeconds;
    for (const [key, log] of this.logs) {
      this.expire(log, now);
      if (log.count === 0) this.logs.delete(key);
    }
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return { 'X-RateLimit-Limit': String(d.limit), 'X-RateLimit-Remaining': String(d.remaining), 'X-RateLimit-Reset': String(d.reset) };
}

export const refusal = (d: RateDecision) => rateLimitHit(d.retryAfter, rateLimitHeaders(d));
