// Rate limits with Zulip's rules (N requests per window) implemented as GCRA: one number per key
// (the theoretical arrival time), so a million keys cost a million numbers, and the window slides.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix time (s) when the key is fully replenished. */
  reset: number;
  /** Seconds until the next request would be allowed (0 when allowed). */
  retryAfter: number;
}

export class RateLimiter {
  private readonly tat = new Map<string, number>();
  private readonly interval: number;
  private sweepAt = 0;

  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {
    this.interval = windowSeconds / limit;
  }

  /** Counts one request for `key` (when allowed) and tells whether it may proceed. */
  hit(key: string): RateDecision {
    const now = this.now();
    this.sweep(now);
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const next = tat + this.interval;
    const burst = this.windowSeconds;
    if (next - now > burst + 1e-9) {
      const retryAfter = next - now - burst;
      return { allowed: false, limit: this.limit, remaining: 0, reset: Math.ceil(tat), retryAfter };
    }
    this.tat.set(key, next);
    const remaining = Math.max(0, Math.floor((burst - (next - now)) / this.interval + 1e-9));
    return { allowed: true, limit: this.limit, remaining, reset: Math.ceil(next), retryAfter: 0 };
  }

  /** Whether `key` has no capacity left, without counting anything. */
  isExhausted(key: string): RateDecision {
    const now = this.now();
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const retryAfter = tat + this.interval - now - this.windowSeconds;
    return retryAfter > 1e-9
      ? { allowed: false, limit: this.limit, remaining: 0, reset: Math.ceil(tat), retryAfter }
      : { allowed: true, limit: this.limit, remaining: Math.floor((this.windowSeconds - (tat - now)) / this.interval), reset: Math.ceil(tat), retryAfter: 0 };
  }

  /** Forgets keys whose bucket is full again, at most once a window, so memory tracks active keys. */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + this.windowSeconds;
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key);
  }
}
