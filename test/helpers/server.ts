// One real server per test run, on a free port with a fresh database; each test makes its own
// organization (subdomain) so tests do not see each other's data. The databases live on one
// PostgreSQL per run: DATABASE_URL's server (CI), or else an embedded one in a temporary directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRealm, createUser } from '../../src/actions/users.ts';
import { loadConfig } from '../../src/config.ts';
import { scratchServer, type ScratchServer } from '../../src/db/scratch.ts';
import { setLogLevel } from '../../src/log.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { Client } from './client.ts';
import { runCheck } from './openapi-check.ts';

export const TEST_ENV = {
  HOST: '127.0.0.1',
  PORT: '0',
  RATE_LIMIT: 'off',
  PASSWORD_HASH_COST: '1024',
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  HEARTBEAT_SECONDS: '2',
  HEARTBEAT_JITTER_SECONDS: '0',
  EVENT_SCHEMA_CHECK: 'strict',
  // Many test servers share one PostgreSQL (max_connections 100 by default): each keeps pg's 10.
  DATABASE_POOL_SIZE: '10',
};

let shared: Promise<RunningServer> | undefined;
let databases: Promise<ScratchServer> | undefined;
const tempDirs: string[] = [];

/** The run's PostgreSQL server. */
export function testDatabaseServer(): Promise<ScratchServer> {
  return (databases ??= scratchServer(process.env.DATABASE_URL));
}

/** A new empty database, dropped when the run ends; returns its connection string. */
export async function freshDatabase(): Promise<string> {
  return (await testDatabaseServer()).createDatabase();
}

/** A new temporary directory, removed when the run ends. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'chat-test-'));
  tempDirs.push(dir);
  return dir;
}

/** Starts a server with the given settings (by default a fresh database and data directory); the caller stops it. */
export async function startTestServer(env: Record<string, string | undefined> = {}): Promise<RunningServer> {
  const config = loadConfig({ ...TEST_ENV, DATA_DIR: tempDir(), ...env, DATABASE_URL: env.DATABASE_URL ?? (await freshDatabase()) });
  setLogLevel(config.LOG_LEVEL);
  return startServer(config, { inspectAnswer: runCheck.inspect });
}

export function sharedServer(): Promise<RunningServer> {
  return (shared ??= startTestServer());
}

/** Stops the shared server, drops the run's databases, stops the embedded PostgreSQL, removes the directories. */
export async function endTestRun(): Promise<void> {
  try {
    // The databases go even when the shared server fails to stop.
    try {
      if (shared) await (await shared).stop();
    } finally {
      if (databases) await (await databases).close();
    }
  } finally {
    shared = undefined;
    databases = undefined;
    for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

let realmCounter = 0;

export interface TestUser {
  id: number;
  email: string;
  apiKey: string;
  password: string;
  client: Client;
}

export interface TestRealm {
  server: RunningServer;
  id: number;
  subdomain: string;
  host: string;
  owner: TestUser;
  anonymous: Client;
  addUser(opts?: { name?: string; role?: number; bot?: boolean; botOwnerId?: number; email?: string }): Promise<TestUser>;
}

/** A fresh organization on `server` (the shared one by default) with its owner. */
export async function newRealm(server?: RunningServer, opts: { subdomain?: string } = {}): Promise<TestRealm> {
  const srv = server ?? (await sharedServer());
  const subdomain = opts.subdomain ?? `r${++realmCounter}x${process.pid}`;
  const password = 'owner-password';
  const { realm, owner } = await createRealm(srv.app, {
    subdomain,
    name: `Realm ${realmCounter}`,
    owner: { email: `owner@${subdomain}.test`, fullName: 'Olivia Owner', password },
  });
  const host = srv.app.realms.host(realm);
  const client = (email: string, apiKey?: string) => new Client(srv.port, host, apiKey ? { email, apiKey } : undefined);
  let userCounter = 0;
  return {
    server: srv,
    id: realm.id,
    subdomain,
    host,
    owner: { id: owner.id, email: owner.deliveryEmail, apiKey: owner.apiKey, password, client: client(owner.deliveryEmail, owner.apiKey) },
    anonymous: client(''),
    async addUser(opts = {}) {
      const n = ++userCounter;
      const email = opts.email ?? `user${n}-${opts.role ?? 400}@${subdomain}.test`;
      const userPassword = `password-${n}`;
      const user = await createUser(srv.app, srv.app.realms.byId(realm.id)!, {
        email,
        fullName: opts.name ?? `User ${n}`,
        role: opts.role,
        isBot: opts.bot,
        botOwnerId: opts.botOwnerId,
        password: userPassword,
      });
      return { id: user.id, email, apiKey: user.apiKey, password: userPassword, client: client(email, user.apiKey) };
    },
  };
}
