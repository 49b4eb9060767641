// Many thousands of simulated people each wait for their next action: one timer a person (or a
// setInterval each) would keep thousands of timers in libuv's heap and wake the loop for each.
// A wheel of slots, turned by one interval, runs everything due in a slot in one pass.

type Task = () => void;

export class TimerWheel {
  private readonly slots: { task: Task; rounds: number }[][];
  private cursor = 0;
  private readonly ticker: NodeJS.Timeout;

  /** `tickMs`: the wheel's resolution; `slotCount` × `tickMs` is one turn (longer waits take rounds). */
  constructor(
    private readonly tickMs = 50,
    slotCount = 2048,
  ) {
    this.slots = Array.from({ length: slotCount }, () => []);
    this.ticker = setInterval(() => this.turn(), tickMs);
  }

  /** Runs `task` in about `delayMs` (rounded up to the next tick). */
  schedule(delayMs: number, task: Task): void {
    const ticks = Math.max(1, Math.ceil(delayMs / this.tickMs));
    const slot = (this.cursor + ticks) % this.slots.length;
    this.slots[slot]!.push({ task, rounds: Math.floor((ticks - 1) / this.slots.length) });
  }

  private turn(): void {
    this.cursor = (this.cursor + 1) % this.slots.length;
    const due = this.slots[this.cursor]!;
    if (due.length === 0) return;
    const later: { task: Task; rounds: number }[] = [];
    this.slots[this.cursor] = later;
    for (const entry of due) {
      if (entry.rounds > 0) {
        entry.rounds--;
        later.push(entry);
      } else {
        entry.task();
      }
    }
  }

  stop(): void {
    clearInterval(this.ticker);
    for (let i = 0; i < this.slots.length; i++) this.slots[i] = [];
  }
}
