// Builds the server's services (App, app.ts) at start and closes them at the end: the one place
// that knows every service's concrete class.
import type { App } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/client.ts';
import { applyMigrations } from './db/migrate.ts';
import { UserAuthenticator } from './auth/authenticate.ts';
import { RealmDirectory } from './queries/realms.ts';
import type { EventBus } from './bus/bus.ts';
import { MemoryBus } from './bus/memory.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { log } from './log.ts';
import { Outbox } from './mail/mailer.ts';
import { QueueRegistry } from '../actors/registry.ts';
import { ChannelActors } from '../actors/channels.ts';
import { SerialActors, type Turn } from '../actors/serial.ts';
import { transactionAware } from './db/transaction.ts';
import { DeliveryScheduler } from './scheduler.ts';
import { TokenSigner } from './auth/signed-tokens.ts';
import { LdapDirectory } from './auth/ldap.ts';
import { CLUSTER_ID_SECRET, serverSecret } from './db/server-secrets.ts';
import { LockSpace } from './cluster/locks.ts';
import { followCacheChanges } from './cluster/cache-sync.ts';
import { storedMessageEvents } from './actions/messages-events.ts';
import { shareRateLimits } from './cluster/rate-gossip.ts';
import { QueueDescriptors } from './cluster/queue-descriptors.ts';
import { busCheck, databaseCheck, migrationsCheck, Readiness } from './ops/health.ts';
import { ServerMetrics } from './ops/metrics.ts';

export async function createApp(config: Config): Promise<App> {
  const metrics = new ServerMetrics();
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    holdLog: config.DATABASE_HOLD_LOG,
    onQuery: (seconds) => metrics.queryDuration.observe(seconds),
    onTransaction: () => metrics.transactions.inc(),
  });
  try {
    const applied = await applyMigrations(db);
    if (applied.length) log.info('applied migrations', { applied });
    // Inside an action's transaction app.prisma is that transaction (actions/transaction.ts).
    const prisma = transactionAware(db.prisma);
    const realms = new RealmDirectory(prisma, config.externalHost, config.externalScheme, config.FAKE_EMAIL_DOMAIN);
    await realms.loadAll();
    const tokens = new TokenSigner(Buffer.from(await serverSecret(db.prisma, 'token_key', 32), 'hex'));
    // NATS's client is loaded only by a node of a cluster.
    const cluster = config.cluster
      ? await (await import('./cluster/node.ts')).ClusterNode.join(config.cluster, await serverSecret(db.prisma, CLUSTER_ID_SECRET, 6), db.url)
      : null;
    const bus: EventBus = cluster?.bus ?? new MemoryBus();
    const limits = config.RATE_LIMIT
      ? {
          user: new RateLimiter(config.RATE_LIMIT_USER_PER_MINUTE, 60),
          ip: new RateLimiter(config.RATE_LIMIT_IP_PER_MINUTE, 60),
          loginFailures: new RateLimiter(config.RATE_LIMIT_LOGIN_FAILURES, config.RATE_LIMIT_LOGIN_WINDOW_SECONDS),
          // Zulip's sends_email_by_ip: five a day.
          sendsEmail: new RateLimiter(5, 86400),
        }
      : null;
    if (cluster && limits) shareRateLimits(cluster, limits);
    const turnsOf = (space: number): Turn | null => cluster && ((id, write) => cluster.locks.turn(space, id, write));
    const queues = new QueueRegistry(bus, {
      heartbeatSeconds: config.HEARTBEAT_SECONDS,
      heartbeatJitterSeconds: config.HEARTBEAT_JITTER_SECONDS,
      tickMs: 1000,
      maxEvents: config.QUEUE_MAX_EVENTS,
      maxBytes: config.QUEUE_MAX_BYTES,
      idPrefix: cluster ? `${cluster.id}:` : '',
    });
    metrics.watch({ queues, db });
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
      pushes: new DeliveryScheduler('push notification delivery'),
      upkeep: new DeliveryScheduler('history upkeep'),
      outgoingWebhooks: new DeliveryScheduler('outgoing webhook calls'),
      notificationEmails: new DeliveryScheduler('notification emails'),
      queues,
      limits,
      mail: new Outbox(config),
      ldap: LdapDirectory.from(config),
      tokens,
      cluster,
      queueDescriptors: cluster && new QueueDescriptors({ prisma: db.prisma, db }, cluster.bus, queues, cluster.id, () => cluster.liveNodes()),
      startedAt: Math.floor(Date.now() / 1000),
      metrics,
      readiness: new Readiness([databaseCheck(db), await migrationsCheck(db), busCheck(bus)]),
    };
    followCacheChanges(app);
    if (cluster) {
      // Events a dead node committed but did not publish (cluster/outbox.ts): this node's own from before it restarted, and a departed node's.
      await cluster.outbox.start((ids, xid) => storedMessageEvents(app, ids, xid));
      cluster.onDeparture(
        (node) =>
          void cluster.outbox
            .recover({ node })
            .catch((err: unknown) => log.error('could not publish the events a departed node left', { node, error: String(err) })),
      );
    }
    return app;
  } catch (err) {
    await db.close();
    throw err;
  }
}

export async function closeApp(app: App): Promise<void> {
  await app.scheduler.stop();
  await app.pushes.stop();
  await app.upkeep.stop();
  await app.outgoingWebhooks.stop();
  await app.notificationEmails.stop();
  app.queues.stop();
  await app.queueDescriptors?.stop();
  app.channels.stop();
  app.users.stop();
  await app.mail.close();
  await app.bus.close();
  await app.cluster?.leave();
  await app.db.close();
}
