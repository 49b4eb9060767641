// CPU and RSS of a process on this machine, read from /proc (Linux).
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const CLOCK_TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of the process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name, which may itself contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

export function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

export interface ProcUsage {
  /** Percent of one core over the window. */
  cpuPercent: number;
  rssPeakMB: number;
  rssEndMB: number;
}

/** Samples a process between start() and stop(); RSS peak is sampled every `everyMs`. */
export class ProcSampler {
  private startCpu = 0;
  private startAt = 0;
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pid: number, private readonly everyMs = 200) {}

  start(): void {
    this.startCpu = cpuSeconds(this.pid);
    this.startAt = performance.now();
    this.peak = rssMB(this.pid);
    this.timer = setInterval(() => {
      this.peak = Math.max(this.peak, rssMB(this.pid));
    }, this.everyMs);
  }

  stop(): ProcUsage {
    clearInterval(this.timer);
    const seconds = (performance.now() - this.startAt) / 1000;
    const end = rssMB(this.pid);
    return {
      cpuPercent: ((cpuSeconds(this.pid) - this.startCpu) / seconds) * 100,
      rssPeakMB: Math.max(this.peak, end),
      rssEndMB: end,
    };
  }
}

/** CPU of this (load generator) process over a window, percent of one core. */
export class SelfCpu {
  private start = process.cpuUsage();
  private startAt = performance.now();

  percent(): number {
    const used = process.cpuUsage(this.start);
    return ((used.user + used.system) / 1000 / (performance.now() - this.startAt)) * 100;
  }
}
