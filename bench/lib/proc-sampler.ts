// CPU and RSS of a process on this machine, read from /proc (Linux).
import { readdirSync, readFileSync } from 'node:fs';
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

/** The process's children, grandchildren, ... (the embedded PostgreSQL runs as the server's child). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let i = -1; i < found.length; i++) found.push(...(children.get(i < 0 ? pid : found[i]!) ?? []));
  return found;
}

/**
 * Proportional set size of the process's descendants together, in MB: PostgreSQL's backends
 * share their buffers, which summed RSS would count once per backend. Undefined without any.
 */
export function descendantsPssMB(pid: number): number | undefined {
  let kb = 0;
  const pids = descendants(pid);
  for (const child of pids) {
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return pids.length ? kb / 1024 : undefined;
}

export interface ProcUsage {
  /** Percent of one core over the window. */
  cpuPercent: number;
  rssPeakMB: number;
  rssEndMB: number;
  /** The server's child processes (its embedded PostgreSQL), peak PSS; undefined without any. */
  childrenPssPeakMB?: number;
}

/** Samples a process between start() and stop(); RSS peak is sampled every `everyMs`. */
export class ProcSampler {
  private startCpu = 0;
  private startAt = 0;
  private peak = 0;
  private childrenPeak: number | undefined;
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 200,
  ) {}

  start(): void {
    this.startCpu = cpuSeconds(this.pid);
    this.startAt = performance.now();
    this.peak = rssMB(this.pid);
    this.timer = setInterval(() => {
      try {
        this.peak = Math.max(this.peak, rssMB(this.pid));
      } catch {
        return; // the process ended (a bench stopped early stops its servers)
      }
      // Reading every child's memory map costs more: every fifth sample.
      if (this.samples++ % 5 === 0) this.sampleChildren();
    }, this.everyMs);
  }

  private sampleChildren(): void {
    const mb = descendantsPssMB(this.pid);
    if (mb !== undefined) this.childrenPeak = Math.max(this.childrenPeak ?? 0, mb);
  }

  stop(): ProcUsage {
    clearInterval(this.timer);
    this.sampleChildren();
    const seconds = (performance.now() - this.startAt) / 1000;
    const end = rssMB(this.pid);
    return {
      cpuPercent: ((cpuSeconds(this.pid) - this.startCpu) / seconds) * 100,
      rssPeakMB: Math.max(this.peak, end),
      rssEndMB: end,
      childrenPssPeakMB: this.childrenPeak,
    };
  }
}

/**
 * CPU used between start() and stop() by a set of processes listed anew at each end (a database's
 * backends), percent of one core. One that ended meanwhile is missed; one that began counts whole.
 */
export class ProcessSetCpu {
  private before = new Map<number, number>();
  private startAt = 0;

  constructor(private readonly list: () => Promise<number[]>) {}

  async start(): Promise<void> {
    this.before = new Map(
      (await this.list()).flatMap((pid) => {
        const used = cpuSecondsIfAny(pid);
        return used === undefined ? [] : [[pid, used] as const];
      }),
    );
    this.startAt = performance.now();
  }

  /** Undefined when no process of the set could be read (a database on another machine). */
  async stop(): Promise<number | undefined> {
    const seconds = (performance.now() - this.startAt) / 1000;
    let used = 0;
    let seen = 0;
    for (const pid of await this.list()) {
      const now = cpuSecondsIfAny(pid);
      if (now === undefined) continue;
      used += now - (this.before.get(pid) ?? 0);
      seen++;
    }
    return seen ? (used / seconds) * 100 : undefined;
  }
}

/** A process that is gone (or not ours to read) used nothing we can see. */
function cpuSecondsIfAny(pid: number): number | undefined {
  try {
    return cpuSeconds(pid);
  } catch {
    return undefined;
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
