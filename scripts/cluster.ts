// `npm run cluster -- --nodes 3 [--port 9991]`: a cluster on one machine, for trying it. N server
// nodes (the bundle `npm start` runs) on the ports after --port, one PostgreSQL (DATABASE_URL, or
// else an embedded one in DATA_DIR/postgres), the NATS server at NATS_URL (default
// nats://127.0.0.1:4222, with JetStream), and in front of them on --port a round-robin TCP
// balancer without stickiness, as a load balancer would be. The first node makes the first
// organization on an empty database and prints how to log in. Ctrl-C stops everything.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.ts';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '3' }, port: { type: 'string', default: '9991' } } });
const count = Number(values.nodes);
const port = Number(values.port);
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(port)) {
  process.stderr.write('usage: npm run cluster -- [--nodes N] [--port P]\n');
  process.exit(2);
}
const dataDir = path.resolve(process.env.DATA_DIR || './data');
const natsUrl = process.env.NATS_URL || 'nats://127.0.0.1:4222';

if (spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);

let embedded: EmbeddedPostgres | null = null;
const databaseUrl = process.env.DATABASE_URL || (embedded = await startEmbeddedPostgres(dataDir)).url;

const nodes: { id: string; port: number; child: ChildProcess }[] = [];

function startNode(i: number): Promise<void> {
  const id = `node${i}`;
  const child = spawn(process.execPath, ['--max-semi-space-size=64', 'build/main.mjs', 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      NODE_ID: id,
      HOST: '127.0.0.1',
      PORT: String(port + i),
      // Clients reach every node through the balancer; uploads are shared.
      EXTERNAL_HOST: process.env.EXTERNAL_HOST || `localhost:${port}`,
      TRUSTED_PROXIES: '127.0.0.1',
      DATA_DIR: path.join(dataDir, id),
      UPLOADS_DIR: process.env.UPLOADS_DIR || path.join(dataDir, 'uploads'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  nodes.push({ id, port: port + i, child });
  return new Promise((resolve, reject) => {
    let started = false;
    const relay = (stream: NodeJS.WritableStream) => (chunk: Buffer) => {
      const text = String(chunk);
      if (!started && text.includes('Chat server listening')) {
        started = true;
        resolve();
      }
      stream.write(text.replace(/^(?=.)/gm, `[${id}] `));
    };
    child.stdout!.on('data', relay(process.stdout));
    child.stderr!.on('data', relay(process.stderr));
    child.once('exit', (code) => {
      if (!started) reject(new Error(`${id} exited with code ${code}`));
      else process.stderr.write(`[${id}] exited with code ${code}\n`);
    });
  });
}

/** Each connection goes to the next node that accepts it. */
function balance(): net.Server {
  let next = 0;
  return net.createServer((client) => {
    client.pause();
    const attempt = (tries: number) => {
      const node = nodes[next++ % nodes.length]!;
      let connected = false;
      const upstream = net.connect(node.port, '127.0.0.1', () => {
        connected = true;
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.once('error', () => {
        // A node that is down: the next one.
        if (!connected && tries > 1) return attempt(tries - 1);
        client.destroy();
      });
      client.once('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    };
    attempt(nodes.length);
  });
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  balancer.close();
  await Promise.all(
    nodes.map(async ({ child }) => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }),
  );
  await embedded?.stop();
  process.exit(0);
}

process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

const balancer = balance();
try {
  // The first node alone: on an empty database it makes the first organization.
  await startNode(1);
  await Promise.all(Array.from({ length: count - 1 }, (_, i) => startNode(i + 2)));
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  await stop();
}
balancer.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `\nCluster of ${count} nodes (ports ${port + 1}-${port + count}) behind http://localhost:${port} (round robin, no stickiness). Ctrl-C stops it.\n`,
  );
});
