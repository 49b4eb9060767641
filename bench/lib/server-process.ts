// A server child process started by the bench: node + the memory probe, so its PID is the server
// itself (npm or the tsx CLI would fork a second process) and its heap can be read.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = new URL('./memory-probe.mjs', import.meta.url).href;
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LOG_TAIL_CHARS = 4000;
/** The server's last warnings and errors, kept apart from its log's tail, which access lines soon fill. */
const PROBLEM_LINES = 40;
/** pino's level numbers: 40 warn, 50 error, 60 fatal. */
const WARN_LEVEL = 40;

/**
 * How many times longer the bench waits for a server (start, parked polls, answers):
 * BENCH_TIMEOUT_SCALE, for a server run under BENCH_SERVER_WRAPPER such as valgrind, tens of times slower.
 */
export function scaledTimeout(ms: number): number {
  return ms * Number(process.env.BENCH_TIMEOUT_SCALE || 1);
}

/**
 * Turns callgrind's counting on or off in the server process `pid` when the servers run under a
 * BENCH_SERVER_WRAPPER of `valgrind --tool=callgrind --instr-atstart=no`: the profile then counts
 * the measured waves alone, and the setup before them runs uncounted, fast enough for its timeouts.
 */
export function callgrindCounting(pid: number | undefined, on: boolean): void {
  if (pid === undefined || !/--tool=callgrind\b/.test(process.env.BENCH_SERVER_WRAPPER ?? '')) return;
  execFileSync('callgrind_control', ['--instr', on ? 'on' : 'off', String(pid)], { stdio: 'ignore' });
}

const running = new Set<ChildProcess>();
// Never leave a server behind, whatever way the bench ends.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A child process of the bench's own (not a server) killed with the servers, whatever way the bench ends. */
export function killOnExit(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
}

const teardowns: (() => Promise<void>)[] = [];

/**
 * Runs `teardown` should the bench be stopped before it is done (--max-time, Ctrl-C) while it is
 * registered: what killing the servers on exit does not undo (a database, a NATS stream). Returns
 * the function that unregisters it.
 */
export function onEarlyStop(teardown: () => Promise<void>): () => void {
  teardowns.push(teardown);
  return () => {
    const at = teardowns.indexOf(teardown);
    if (at >= 0) teardowns.splice(at, 1);
  };
}

/** Runs what onEarlyStop registered, the latest first, for `withinMs` at most. */
export async function tearDownEarly(withinMs: number): Promise<void> {
  const all = (async () => {
    for (const teardown of teardowns.splice(0).reverse()) await teardown().catch((err: unknown) => console.error(`bench: teardown failed: ${String(err)}`));
  })();
  await Promise.race([all, new Promise((resolve) => setTimeout(resolve, withinMs).unref())]);
}

export interface MemorySnapshot {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** Every server this bench run started, running or not: what they logged explains a failure. */
const started: ServerProcess[] = [];

/**
 * The warnings and errors each server logged (and whatever it wrote that is not a log line: a
 * crash's stack), for a bench that failed: a request answered 500 says nothing of why.
 */
export function serverProblems(): string {
  return started
    .filter((server) => server.problems.length > 0 || (server.exitCode !== null && server.exitCode !== 0))
    .map(
      (server) =>
        `--- ${server.name} (pid ${server.pid}, ${server.exitCode === null ? 'running' : `exit code ${server.exitCode}`}): its warnings and errors\n${server.problems.join('\n')}`,
    )
    .join('\n');
}

/** Whether a line of the server's output is a warning or an error: a pino line of level 40 or more, or no log line at all. */
function isProblem(line: string): boolean {
  if (!line.trim()) return false;
  if (!line.startsWith('{')) return true;
  try {
    return Number((JSON.parse(line) as { level?: unknown }).level) >= WARN_LEVEL;
  } catch {
    return true;
  }
}

export class ServerProcess {
  private log = '';
  private readonly exited: Promise<number | null>;
  /** The last PROBLEM_LINES of its stderr that are warnings, errors or no log line. */
  readonly problems: string[] = [];
  private partialLine = '';

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    running.add(child);
    started.push(this);
    const keep = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-LOG_TAIL_CHARS);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.stderr!.on('data', (chunk: Buffer) => {
      const lines = (this.partialLine + chunk.toString()).split('\n');
      this.partialLine = lines.pop()!;
      for (const line of lines) if (isProblem(line)) this.problems.push(line);
      this.problems.splice(0, this.problems.length - PROBLEM_LINES);
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        running.delete(child);
        resolve(code);
      }),
    );
  }

  /**
   * Starts `node [nodeFlags] --expose-gc --import <probe> <script> ...args` from the project root,
   * under BENCH_SERVER_WRAPPER if set: a command the node command line is appended to, such as
   * `valgrind --tool=callgrind` (scripts/callgrind-longpoll.sh), which runs in the same process.
   */
  static start(name: string, script: string, args: string[], env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = []): ServerProcess {
    const wrapper = (process.env.BENCH_SERVER_WRAPPER ?? '').split(/\s+/).filter(Boolean);
    const command = [...wrapper, process.execPath, ...nodeFlags, '--expose-gc', '--import', PROBE, script, ...args];
    const child = spawn(command[0]!, command.slice(1), {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    return new ServerProcess(name, child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** null while running. */
  get exitCode(): number | null {
    return this.child.exitCode ?? (this.child.signalCode ? -1 : null);
  }

  get logTail(): string {
    return this.log;
  }

  /** Resolves with the first stdout line that is a JSON object; rejects if the process exits first. */
  firstJsonLine(timeoutMs: number): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      let pending = '';
      const timer = setTimeout(() => reject(new Error(`${this.name}: no JSON line within ${timeoutMs} ms\n${this.log}`)), scaledTimeout(timeoutMs));
      const onData = (chunk: Buffer) => {
        pending += chunk.toString();
        for (const line of pending.split('\n').slice(0, -1)) {
          if (!line.trim().startsWith('{')) continue;
          clearTimeout(timer);
          this.child.stdout!.off('data', onData);
          resolve(JSON.parse(line) as Record<string, unknown>);
          return;
        }
      };
      this.child.stdout!.on('data', onData);
      void this.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited with code ${code}\n${this.log}`));
      });
    });
  }

  /** Heap and RSS after a full GC, from the memory probe. */
  memory(timeoutMs = 10_000): Promise<MemorySnapshot> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.child.off('message', onMessage);
        reject(new Error(`${this.name}: memory probe did not answer`));
      }, scaledTimeout(timeoutMs));
      const onMessage = (msg: unknown) => {
        const memory = (msg as { memory?: MemorySnapshot }).memory;
        if (!memory) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(memory);
      };
      this.child.on('message', onMessage);
      this.child.send('memory?');
    });
  }

  async stop(): Promise<void> {
    if (this.exitCode !== null) return;
    this.child.kill('SIGTERM');
    // Under valgrind the process writes its profile as it ends: killing it sooner loses the profile.
    const timer = setTimeout(() => this.child.kill('SIGKILL'), scaledTimeout(5000));
    await this.exited;
    clearTimeout(timer);
  }
}
