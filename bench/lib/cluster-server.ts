// The cluster scenario's servers: N nodes, each the server as `npm start` runs it (self-server.ts)
// with the settings `npm run cluster` gives its nodes (scripts/cluster.ts: a NODE_ID each, one
// database, NATS, uploads directory and external host for all), on a fresh database of one
// PostgreSQL server and the NATS server at `natsUrl`. A fresh database means a fresh cluster id,
// so a fresh NATS stream, which stop() removes once the nodes have stopped.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { removeClusterStream } from '../../src/cluster/node.ts';
import type { ScratchServer } from '../../src/db/scratch.ts';
import { BENCH_SERVER_ENV, initOrganization, startServing } from './self-server.ts';
import { onEarlyStop, type ServerProcess } from './server-process.ts';
import type { Credentials } from './zulip-api.ts';

/**
 * Database connections per node (the default is 24): with up to 8 more for its channel locks,
 * three nodes stay well inside PostgreSQL's default limit of 100, which the machine's other
 * users of that server share.
 */
const POOL_SIZE_PER_NODE = '10';

export interface SelfCluster {
  /** In NODE_ID order: node1, node2, ... */
  nodes: { url: string; process: ServerProcess }[];
  admin: Credentials;
  /** The PostgreSQL backends serving the cluster's database now (its nodes' connections). */
  databaseBackends(): Promise<number[]>;
  stop(): Promise<void>;
}

export async function startSelfCluster(databases: ScratchServer, natsUrl: string, count: number): Promise<SelfCluster> {
  const databaseUrl = await databases.createDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'bench-cluster-'));
  const nodes: SelfCluster['nodes'] = [];
  const monitor = new pg.Client({ connectionString: databaseUrl });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      forget();
      await monitor.end().catch(() => undefined);
      await Promise.all(nodes.map((node) => node.process.stop()));
      await removeClusterStream(natsUrl, databaseUrl);
      await rm(dir, { recursive: true, force: true });
    })());
  const forget = onEarlyStop(stop);
  try {
    await monitor.connect();
    const shared = {
      ...BENCH_SERVER_ENV,
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: POOL_SIZE_PER_NODE,
      NATS_URL: natsUrl,
      UPLOADS_DIR: join(dir, 'uploads'),
      // As behind one balancer; the only organization answers on any host anyway.
      EXTERNAL_HOST: 'localhost',
    };
    process.stderr.write(`cluster of ${count}: creating the organization...\n`);
    const admin = await initOrganization({ ...shared, DATA_DIR: join(dir, 'init'), CLUSTER: 'off' });
    process.stderr.write(`cluster of ${count}: starting the nodes...\n`);
    const start = async (i: number) => {
      const id = `node${i + 1}`;
      nodes[i] = await startServing(id, { ...shared, CLUSTER: 'nats', NODE_ID: id, DATA_DIR: join(dir, id) });
    };
    // The first alone, then the others together, as `npm run cluster` starts them; all settled
    // before a failure stops the rest (a node still starting could make the stream again).
    await start(0);
    const others = await Promise.allSettled(Array.from({ length: count - 1 }, (_, i) => start(i + 1)));
    const failed = others.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    const databaseBackends = async () => {
      const { rows } = await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      return rows.map((row) => row.pid);
    };
    return { nodes, admin, databaseBackends, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
