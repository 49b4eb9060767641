// Readiness for load balancers and orchestrators: a list of named checks (the database answers,
// its migrations are applied, the event bus is connected, the server is not stopping), each one
// a small function, so a new dependency adds a check rather than a branch here.
import type { EventBus } from '../bus/bus.ts';
import type { Database } from '../db/client.ts';
import { readMigrations, unappliedMigrations } from '../db/migrate.ts';
import { log } from '../log.ts';

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency is usable; rejects, or outlasts the timeout, when it is not. */
  run(): Promise<void>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | 'failed'>;
}

const CHECK_TIMEOUT_MS = 3000;
/** Probes closer together than this share one run, so a busy prober cannot load the database. */
const REUSE_MS = 1000;

export class Readiness {
  private last: { at: number; report: Promise<ReadinessReport> } | null = null;
  /** Checks failing at the last run: a failure is logged when it starts and when it ends, not at every probe. */
  private readonly failing = new Set<string>();

  constructor(private readonly checks: ReadinessCheck[]) {}

  add(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  report(): Promise<ReadinessReport> {
    const now = Date.now();
    if (this.last && now - this.last.at < REUSE_MS) return this.last.report;
    const report = this.runAll();
    this.last = { at: now, report };
    return report;
  }

  private async runAll(): Promise<ReadinessReport> {
    const outcomes = await Promise.all(
      this.checks.map((c) =>
        withTimeout(c.run(), CHECK_TIMEOUT_MS).then(
          () => null,
          (err: unknown) => err,
        ),
      ),
    );
    const checks: ReadinessReport['checks'] = {};
    this.checks.forEach((check, i) => {
      const error = outcomes[i];
      checks[check.name] = error === null ? 'ok' : 'failed';
      if (error !== null && !this.failing.has(check.name)) {
        this.failing.add(check.name);
        log.warn('readiness check failed', { check: check.name, error: error instanceof Error ? error.message : String(error) });
      } else if (error === null && this.failing.delete(check.name)) {
        log.info('readiness check passes again', { check: check.name });
      }
    });
    return { ready: outcomes.every((error) => error === null), checks };
  }
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function databaseCheck(db: Database): ReadinessCheck {
  return { name: 'database', run: () => db.ping() };
}

/** Every migration this release ships is applied (at start the server applies them; a database restored or replaced since may lack some). */
export async function migrationsCheck(db: Database): Promise<ReadinessCheck> {
  const names = (await readMigrations()).map((m) => m.name);
  return {
    name: 'migrations',
    async run() {
      const missing = await unappliedMigrations(db, names);
      if (missing.length) throw new Error(`not applied: ${missing.join(', ')}`);
    },
  };
}

export function busCheck(bus: EventBus): ReadinessCheck {
  return {
    name: 'bus',
    async run() {
      if (!bus.connected()) throw new Error('the event bus is not connected');
    },
  };
}
