// The server's services, built once at start and handed to every handler: configuration,
// database, caches, bus and rate limiters. Nothing here knows about HTTP.
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { applyMigrations } from './db/migrate.ts';
import type { PrismaClient } from './db/generated/client.ts';
import { UserAuthenticator } from './auth/authenticate.ts';
import { RealmDirectory } from './queries/realms.ts';
import type { EventBus } from './bus/bus.ts';
import { MemoryBus } from './bus/memory.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { log } from './log.ts';
import { QueueRegistry } from '../actors/registry.ts';
import { ChannelActors } from '../actors/channels.ts';
import { SerialActors, type Turn } from '../actors/serial.ts';
import { transactionAware } from './db/transaction.ts';
import { DeliveryScheduler } from './scheduler.ts';
import { TokenSigner } from './auth/signed-tokens.ts';
import { serverSecret } from './db/server-secrets.ts';
import type { ClusterNode } from './cluster/node.ts';
import { LockSpace } from './cluster/locks.ts';
import { followCacheChanges } from './cluster/cache-sync.ts';
import { shareRateLimits } from './cluster/rate-gossip.ts';

export interface App {
  config: Config;
  db: Database;
  prisma: PrismaClient;
  realms: RealmDirectory;
  auth: UserAuthenticator;
  bus: EventBus;
  queues: QueueRegistry;
  /** Serialize each channel's writes (messages, moves, reactions), holding its subscribers, and each user's (read flags). */
  channels: ChannelActors;
  users: SerialActors;
  /** Sends scheduled messages and reminders when they fall due (started by the server). */
  scheduler: DeliveryScheduler;
  limits: { user: RateLimiter; ip: RateLimiter; loginFailures: RateLimiter } | null;
  /** Signs temporary upload URLs and call links with the deployment's shared key. */
  tokens: TokenSigner;
  /** This process as a node of a cluster; null for a single process. */
  cluster: ClusterNode | null;
  startedAt: number;
}

export async function createApp(config: Config): Promise<App> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    const applied = await applyMigrations(db);
    if (applied.length) log.info('applied migrations', { applied });
    // Inside an action's transaction app.prisma is that transaction (actions/transaction.ts).
    const prisma = transactionAware(db.prisma);
    const realms = new RealmDirectory(prisma, config.externalHost, config.externalScheme);
    await realms.loadAll();
    const tokens = new TokenSigner(Buffer.from(await serverSecret(db.prisma, 'token_key', 32), 'hex'));
    // NATS's client is loaded only by a node of a cluster.
    const cluster = config.cluster ? await (await import('./cluster/node.ts')).ClusterNode.join(config.cluster, await serverSecret(db.prisma, 'cluster_id', 6), db.url) : null;
    const bus: EventBus = cluster?.bus ?? new MemoryBus();
    const limits = config.RATE_LIMIT
      ? {
          user: new RateLimiter(config.RATE_LIMIT_USER_PER_MINUTE, 60),
          ip: new RateLimiter(config.RATE_LIMIT_IP_PER_MINUTE, 60),
          loginFailures: new RateLimiter(config.RATE_LIMIT_LOGIN_FAILURES, config.RATE_LIMIT_LOGIN_WINDOW_SECONDS),
        }
      : null;
    if (cluster && limits) shareRateLimits(cluster, limits);
    const turnsOf = (space: number): Turn | null => cluster && ((id, write) => cluster.locks.turn(space, id, write));
    const app: App = {
      config,
      db,
      prisma,
      realms,
      auth: new UserAuthenticator(prisma),
      bus,
      channels: new ChannelActors(undefined, turnsOf(LockSpace.CHANNEL)),
      users: new SerialActors(undefined, turnsOf(LockSpace.USER)),
      scheduler: new DeliveryScheduler(),
      queues: new QueueRegistry(bus, { heartbeatSeconds: config.HEARTBEAT_SECONDS, heartbeatJitterSeconds: config.HEARTBEAT_JITTER_SECONDS, tickMs: 1000, maxEvents: config.QUEUE_MAX_EVENTS, maxBytes: config.QUEUE_MAX_BYTES, idPrefix: cluster ? `${cluster.id}:` : '' }),
      limits,
      tokens,
      cluster,
      startedAt: Math.floor(Date.now() / 1000),
    };
    followCacheChanges(app);
    return app;
  } catch (err) {
    await db.close();
    throw err;
  }
}

export async function closeApp(app: App): Promise<void> {
  await app.scheduler.stop();
  app.queues.stop();
  app.channels.stop();
  app.users.stop();
  await app.bus.close();
  await app.cluster?.leave();
  await app.db.close();
}
