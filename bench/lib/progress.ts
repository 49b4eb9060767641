// A dependency-free progress bar on stderr (one line redrawn on a TTY, a line every 2 s otherwise).
const WIDTH = 30;

export class Progress {
  private done = 0;
  private lastDraw = 0;
  private readonly startedAt = performance.now();
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {
    this.draw(true);
  }

  tick(n = 1): void {
    this.done += n;
    this.draw(false);
  }

  finish(note = ''): void {
    this.draw(true, note);
    if (this.tty) process.stderr.write('\n');
  }

  private draw(force: boolean, note = ''): void {
    const now = performance.now();
    if (!force && now - this.lastDraw < (this.tty ? 100 : 2000)) return;
    this.lastDraw = now;
    const ratio = this.total > 0 ? Math.min(1, this.done / this.total) : 1;
    const filled = Math.round(ratio * WIDTH);
    const elapsed = ((now - this.startedAt) / 1000).toFixed(1);
    const line = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${this.done}/${this.total} ${elapsed}s ${note}`;
    process.stderr.write(this.tty ? `\r\x1b[K${line}` : `${line}\n`);
  }
}
