// A cluster for black-box tests: node `a` runs in this process (so tests can make organizations
// and users with the usual helpers), the others are server processes (`node src/main.ts serve`)
// that a test may kill. All share one fresh database, one NATS, one uploads directory and one
// external host, as the nodes behind a load balancer do.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '../../src/server.ts';
import { Client } from './client.ts';
import { freePort } from './nats.ts';
import { freshDatabase, startTestServer, tempDir, TEST_ENV, type TestUser } from './server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const START_TIMEOUT_MS = 120_000;

export interface NodeProcess {
  id: string;
  port: number;
  child: ChildProcess;
  output: string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface TestCluster {
  a: RunningServer;
  nodes: NodeProcess[];
  env: Record<string, string>;
  /** Starts one more node process, with settings of its own if `extra`. */
  start(id: string, extra?: Record<string, string>): Promise<NodeProcess>;
  close(): Promise<void>;
}

/** The same user talking to another node. */
export const via = (port: number, user: TestUser): Client => new Client(port, user.client.host, user.client.credentials);

export async function startCluster(natsUrl: string, nodeIds: string[], extra: Record<string, string> = {}): Promise<TestCluster> {
  const env = { ...TEST_ENV, DATABASE_URL: await freshDatabase(), NATS_URL: natsUrl, EXTERNAL_HOST: 'localhost', UPLOADS_DIR: tempDir(), ...extra };
  const a = await startTestServer({ ...env, NODE_ID: 'a' });
  const nodes: NodeProcess[] = [];
  const start = async (id: string, extra: Record<string, string> = {}) => {
    const node = await startNode(id, { ...env, ...extra });
    nodes.push(node);
    return node;
  };
  try {
    await Promise.all(nodeIds.map((id) => start(id)));
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill()));
    await a.app.cluster?.bus.destroy();
    await a.stop();
    throw err;
  }
  return {
    a,
    nodes,
    env,
    start,
    async close() {
      await Promise.all(nodes.map((n) => n.kill('SIGTERM')));
      await a.app.cluster?.bus.destroy();
      await a.stop();
    },
  };
}

async function startNode(id: string, clusterEnv: Record<string, string>): Promise<NodeProcess> {
  const port = await freePort();
  const { DATABASE_URL: _d, NATS_URL: _n, ...inherited } = process.env;
  const env = { ...inherited, ...clusterEnv, NODE_ID: id, PORT: String(port), DATA_DIR: tempDir(), LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn' };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const node: NodeProcess = {
    id,
    port,
    child,
    output: '',
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
  child.stdout!.on('data', (c: Buffer) => (node.output += c));
  child.stderr!.on('data', (c: Buffer) => (node.output += c));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!node.output.includes('Chat server listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await node.kill();
      throw new Error(`node ${id} did not start:\n${node.output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return node;
}

/** Content that makes a node started with TEST_DIE_AFTER_COMMIT or TEST_DIE_AFTER_PUBLISH kill itself on sending it. */
export const DIE = 'die-right-after-this-commit';

/** Sends DIE through `node`, which dies before it answers; resolves once it has exited. */
export async function sendDying(node: NodeProcess, user: TestUser, channel: string): Promise<void> {
  const died = await via(node.port, user)
    .post('/messages', { type: 'stream', to: channel, topic: 't', content: `${DIE} now` })
    .then(
      (r) => `answered ${r.status}`,
      (err: Error) => err.message,
    );
  if (!/socket hang up|ECONNRESET/.test(died)) throw new Error(`node ${node.id} did not die before it answered: ${died}`);
  await eventually(`node ${node.id} to exit`, async () => node.child.signalCode === 'SIGKILL');
}

/** Waits until `check` holds (polling), or fails saying what it waited for. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A queue registered through `client`, read through any client (node) the test chooses. */
export async function register(client: Client, params: Record<string, unknown> = { event_types: ['message'] }) {
  const r = await client.post('/register', params);
  if (r.status !== 200) throw new Error(`register failed: ${r.text}`);
  return { queueId: r.body.queue_id as string, state: r.body as Record<string, any> };
}

/** Reads a queue after event `after` until `count` events of `type` arrived (acknowledging as it goes); returns them. */
export async function collect(client: Client, queueId: string, type: string, count: number, after = -1): Promise<Record<string, any>[]> {
  const got: Record<string, any>[] = [];
  let last = after;
  const ms = 30_000;
  const deadline = Date.now() + ms;
  while (got.length < count) {
    if (Date.now() > deadline) throw new Error(`got ${got.length} of ${count} ${type} events`);
    const r = await client.get('/events', { queue_id: queueId, last_event_id: last }, { timeoutMs: 70_000 });
    if (r.status !== 200) throw new Error(`GET /events: ${r.text}`);
    for (const e of r.body.events as Record<string, any>[]) {
      last = e.id;
      if (e.type === type) got.push(e);
    }
  }
  return got;
}
