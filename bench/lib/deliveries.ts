// Publish→delivered latency: the publisher stamps each message with a per-run token and a
// sequence number; clients report every event they receive with its arrival time.

export interface BenchEvent {
  id?: unknown;
  type?: unknown;
  message?: { content?: unknown };
}

/** Events of a Zulip events response or WebSocket frame: `{events: [...]}` or one event with `id`. */
export function eventsOf(frame: unknown): BenchEvent[] {
  if (typeof frame !== 'object' || frame === null) return [];
  const events = (frame as { events?: unknown }).events;
  if (Array.isArray(events)) return events as BenchEvent[];
  return 'id' in frame ? [frame as BenchEvent] : [];
}

export class DeliveryTracker {
  readonly latenciesMs: number[] = [];
  private readonly publishedAt: number[] = [];
  private readonly delivered: number[] = [];
  private readonly lastDeliveryAt: number[] = [];
  private readonly pattern: RegExp;

  constructor(readonly token: string) {
    this.pattern = new RegExp(`${token}(\\d+)`);
  }

  content(seq: number): string {
    return `${this.token}${seq}`;
  }

  markPublished(seq: number): void {
    this.publishedAt[seq] = performance.now();
    this.delivered[seq] = 0;
  }

  /** Records the bench messages among `events`; returns the highest event id seen (or -1). */
  record(events: BenchEvent[], at: number): number {
    let maxId = -1;
    for (const event of events) {
      if (typeof event.id === 'number' && event.id > maxId) maxId = event.id;
      const content = event.message?.content;
      if (typeof content !== 'string') continue;
      const match = this.pattern.exec(content);
      if (!match) continue;
      const seq = Number(match[1]);
      const start = this.publishedAt[seq];
      if (start === undefined) continue;
      this.latenciesMs.push(at - start);
      this.delivered[seq]! += 1;
      this.lastDeliveryAt[seq] = at;
    }
    return maxId;
  }

  deliveredCount(seq: number): number {
    return this.delivered[seq] ?? 0;
  }

  /** Milliseconds from publishing `seq` to its last delivery. */
  waveMs(seq: number): number {
    const start = this.publishedAt[seq];
    const end = this.lastDeliveryAt[seq];
    return start === undefined || end === undefined ? 0 : end - start;
  }
}

export class ErrorLog {
  count = 0;
  readonly samples: string[] = [];

  add(what: unknown): void {
    this.count++;
    if (this.samples.length < 5) this.samples.push(what instanceof Error ? what.message : String(what));
  }
}
