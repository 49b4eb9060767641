// The README's two commands, run by root from a clone inside a private directory (mode 0700, as a
// clone under /root is): the postgres user, which runs PostgreSQL for root, can reach neither the
// binaries in node_modules nor DATA_DIR there. Skipped unless the suite runs as root. The clone is
// made of hard links (node_modules included), without build/, which `npm start` then makes. About 30 s.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isRunning } from '../../src/db/embedded.ts';
import { freePort } from '../helpers/nats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const asRoot = process.getuid?.() === 0;
const START_TIMEOUT_MS = 120_000;
// Where root's server keeps what the postgres user must reach (src/db/embedded.ts).
const ROOT_STATE_DIR = '/var/lib/team-chat-server';

let privateDir = '';
let clone = '';
// The machine's services stay out: the embedded PostgreSQL, one process.
const { DATABASE_URL: _db, NATS_URL: _nats, ...ENV } = process.env;

test.before(() => {
  if (!asRoot) return;
  privateDir = mkdtempSync(path.join(tmpdir(), 'chat-private-'));
  chmodSync(privateDir, 0o700);
  clone = path.join(privateDir, 'team-chat');
  mkdirSync(clone);
  const entries = readdirSync(ROOT).filter((name) => !['.git', 'build', 'data'].includes(name));
  const copied = spawnSync('cp', ['-al', ...entries.map((name) => path.join(ROOT, name)), clone]);
  assert.is(copied.status, 0, String(copied.stderr));
});

test.after(() => {
  if (!privateDir) return;
  const link = path.join(clone, 'data', 'postgres');
  try {
    if (lstatSync(link).isSymbolicLink()) rmSync(realpathSync(link), { recursive: true, force: true });
  } catch {
    // No cluster was made.
  }
  rmSync(privateDir, { recursive: true, force: true });
});

// Only root runs PostgreSQL as another user; others skip these, and say so in the totals.
const rootTest = asRoot ? test : test.skip;

rootTest('root, private directory: npm start serves, its PostgreSQL runs as postgres from reachable copies, SIGTERM stops both', async () => {
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    cwd: clone,
    env: { ...ENV, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout!.on('data', (c: Buffer) => (output += c));
  npm.stderr!.on('data', (c: Buffer) => (output += c));
  const exited = once(npm, 'exit');
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${port}/api/v1/server_settings`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (npm.exitCode !== null || Date.now() > deadline) {
      process.kill(-npm.pid!, 'SIGKILL');
      assert.unreachable(`npm start did not serve:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // The server listens (503, then its answers) while it makes the first organization: the
  // credentials are printed once that is done.
  while (!/API key:/.test(output) && Date.now() < deadline && npm.exitCode === null) await new Promise((r) => setTimeout(r, 100));
  assert.match(output, /A new organization was created/);
  const link = path.join(clone, 'data', 'postgres');
  assert.ok(readlinkSync(link).startsWith(`${ROOT_STATE_DIR}/clusters/`), 'the cluster lives where postgres reaches it');
  const postmaster = Number.parseInt(readFileSync(path.join(link, 'postmaster.pid'), 'utf8'), 10);
  assert.ok(readlinkSync(`/proc/${postmaster}/exe`).startsWith(`${ROOT_STATE_DIR}/postgres-`), 'PostgreSQL runs from the copy');
  assert.is.not(lstatSync(`/proc/${postmaster}`).uid, 0);
  process.kill(-npm.pid!, 'SIGTERM');
  assert.is((await exited)[0], 0, output);
  assert.not.ok(isRunning(postmaster), 'PostgreSQL stopped with the server');
});

rootTest('root, private directory: npm test runs the database tests on an embedded PostgreSQL', async () => {
  const run = spawn('npm', ['test', '--', '/db\\.test'], { cwd: clone, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  run.stdout!.on('data', (c: Buffer) => (output += c));
  run.stderr!.on('data', (c: Buffer) => (output += c));
  const [code] = await once(run, 'exit');
  assert.is(code, 0, output);
  assert.match(output, /\n[1-9]\d* passed, 0 failed, \d+ skipped\n/);
});

test.run();
