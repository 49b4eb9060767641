// When to send scheduled messages and reminders (and, in a second instance, push notifications:
// src/push/worker.ts): one timer, set for the soonest delivery time the
// work last reported and moved earlier when a new or edited item falls due sooner, never a poll.
// The work itself (actions/scheduled-delivery.ts) reads the database, so nothing is lost across
// a restart: at start it runs once and sends what fell due while the server was down. The timer
// does not keep the process alive, and stop() waits for a delivery in progress.
import { log } from './log.ts';

/** Sends what is due; resolves to when the next item falls due, or null when nothing is left. */
export type DeliveryWork = () => Promise<Date | null>;

/** setTimeout's longest delay (about 24.8 days); a later time is reached in several steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** After the work failed (the database was unreachable, say): the next try. */
const RETRY_MS = 10_000;

export class DeliveryScheduler {
  private work: DeliveryWork | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** When the timer fires (ms since the epoch), if set. */
  private timerAt: number | null = null;
  private running: Promise<void> | null = null;
  /** Something fell due while the work ran: it runs again before setting the timer. */
  private again = false;
  private stopped = false;

  /** `what` names the work in the log when it fails. */
  constructor(private readonly what = 'scheduled delivery') {}

  get stopping(): boolean {
    return this.stopped;
  }

  /** Starts delivering: runs the work now, then whenever the next item falls due. */
  start(work: DeliveryWork): void {
    this.work = work;
    this.run();
  }

  /** An item now falls due at `at` (created or edited): the work runs then if that is sooner than planned. */
  wake(at: Date): void {
    if (!this.work || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timerAt === null || at.getTime() < this.timerAt) this.setTimer(at.getTime());
  }

  /** No new run starts; resolves once the one in progress has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.running;
  }

  private setTimer(at: number): void {
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(() => this.run(), Math.min(Math.max(at - Date.now(), 0), MAX_DELAY_MS));
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = null;
  }

  private run(): void {
    this.clearTimer();
    if (this.running || this.stopped || !this.work) {
      this.again = true;
      return;
    }
    const work = this.work;
    this.running = (async () => {
      let next: Date | null = null;
      do {
        this.again = false;
        try {
          next = await work();
        } catch (err) {
          log.error(`${this.what} failed; trying again later`, { error: err instanceof Error ? err.stack : String(err) });
          next = new Date(Date.now() + RETRY_MS);
        }
      } while (this.again && !this.stopped);
      if (next && !this.stopped) this.setTimer(next.getTime());
    })().finally(() => {
      this.running = null;
    });
  }
}
