// Throwaway databases, for the schema engine and the tests: on the server at a given URL, or else
// on an embedded PostgreSQL in a temporary directory that goes away with them.
// On a shared server each database carries a comment naming the process that made it (machine,
// boot, pid namespace, pid, start time): they are dropped when it closes them, when it exits (process.exit
// included), and, for a process that died without either (killed, crashed), by the next scratch
// server of that machine, which drops those whose process is gone and never those of a live one.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { isAlive, startEmbeddedPostgres } from './embedded.ts';

export interface ScratchServer {
  /** The server's own connection string, on which createDatabase() makes its databases. */
  url: string;
  /** A new empty database; returns its connection string. */
  createDatabase(): Promise<string>;
  /** Drops every database made here and stops the embedded server, if one was started. */
  close(): Promise<void>;
}

export async function scratchServer(serverUrl?: string): Promise<ScratchServer> {
  let url = serverUrl;
  let stopEmbedded = async () => {};
  if (!url) {
    const dir = await mkdtemp(path.join(tmpdir(), 'chat-scratch-pg-'));
    try {
      const embedded = await startEmbeddedPostgres(dir, { durable: false });
      url = embedded.url;
      stopEmbedded = async () => {
        await embedded.stop();
        await rm(dir, { recursive: true, force: true });
      };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  const serverAt = url;
  const created = new Set<string>();
  const onServer = async <Row>(sql: string): Promise<Row[]> => {
    const admin = new pg.Client({ connectionString: serverAt });
    await admin.connect();
    try {
      return (await admin.query(sql)).rows as Row[];
    } finally {
      await admin.end();
    }
  };
  const mark = serverUrl ? processMark(process.pid) : null;
  if (mark) await dropStale(onServer);
  const dropAtExit = () => dropSync(serverAt, [...created]);
  if (serverUrl) process.on('exit', dropAtExit);
  return {
    url: serverAt,
    async createDatabase() {
      const name = `${PREFIX}${randomBytes(8).toString('hex')}`;
      await onServer(`CREATE DATABASE ${name}`);
      created.add(name);
      if (mark) await onServer(`COMMENT ON DATABASE ${name} IS '${JSON.stringify(mark)}'`);
      const dbUrl = new URL(serverAt);
      dbUrl.pathname = `/${name}`;
      return dbUrl.toString();
    },
    async close() {
      process.off('exit', dropAtExit);
      const failures: unknown[] = [];
      try {
        // One failure does not keep the others.
        for (const name of created) {
          await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(
            () => created.delete(name),
            (err: unknown) => failures.push(err),
          );
        }
      } finally {
        await stopEmbedded();
      }
      if (failures.length) throw new AggregateError(failures, `could not drop ${[...created].join(', ')}`);
    },
  };
}

const PREFIX = 'chat_scratch_';

/** What names a process across the machines and boots sharing one PostgreSQL; null where /proc cannot tell. */
interface ProcessMark {
  host: string;
  boot: string;
  /** The pid namespace: containers sharing a host name and kernel see other pids. */
  pids: string;
  pid: number;
  /** Clock ticks from boot: a pid used again belongs to a later process. */
  start: string;
}

function processMark(pid: number): ProcessMark | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pids = readlinkSync('/proc/self/ns/pid');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    return { host: hostname(), boot, pids, pid, start };
  } catch {
    return null;
  }
}

/** Scratch databases whose process, on this machine, has ended. */
async function dropStale(onServer: <Row>(sql: string) => Promise<Row[]>): Promise<void> {
  const rows = await onServer<{ name: string; comment: string | null }>(
    `SELECT datname AS name, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname LIKE '${PREFIX}%'`,
  );
  const here = processMark(process.pid)!;
  for (const { name, comment } of rows) {
    let owner: ProcessMark;
    try {
      owner = JSON.parse(comment ?? '') as ProcessMark;
    } catch {
      continue;
    }
    if (owner.host !== here.host || owner.boot !== here.boot || owner.pids !== here.pids) continue;
    const live = isAlive(owner.pid) && processMark(owner.pid)?.start === owner.start;
    if (!live) await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  }
}

/** At exit, where nothing asynchronous runs any more: a child process drops them. */
function dropSync(serverUrl: string, names: string[]): void {
  if (!names.length) return;
  const script = `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1] });
c.connect().then(async () => { for (const n of process.argv.slice(2)) await c.query('DROP DATABASE IF EXISTS ' + n + ' WITH (FORCE)'); await c.end(); });`;
  spawnSync(process.execPath, ['-e', script, serverUrl, ...names], { cwd: path.dirname(new URL(import.meta.url).pathname), stdio: 'ignore', timeout: 30_000 });
}
