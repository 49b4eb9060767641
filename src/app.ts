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
import { Outbox } from './mail/mailer.ts';
import { QueueRegistry } from '../actors/registry.ts';
import { ChannelActors } from '../actors/channels.ts';
import { SerialActors } from '../actors/serial.ts';
import { transactionAware } from './db/transaction.ts';
import { DeliveryScheduler } from './scheduler.ts';

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
  /** Drains the push outbox to the push relay (started by the server when PUSH_RELAY_URL is set). */
  pushes: DeliveryScheduler;
  /** `sendsEmail`: mail a visitor makes the server send (sign-up confirmations), per address. */
  limits: { user: RateLimiter; ip: RateLimiter; loginFailures: RateLimiter; sendsEmail: RateLimiter } | null;
  /** Outgoing mail, delivered after the transactions that queue it. */
  mail: Outbox;
  startedAt: number;
}

export async function createApp(config: Config): Promise<App> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: config.DATABASE_POOL_SIZE });
  try {
    const applied = await applyMigrations(db);
    if (applied.length) log.info('applied migrations', { applied });
    // Inside an action's transaction app.prisma is that transaction (actions/transaction.ts).
    const prisma = transactionAware(db.prisma);
    const realms = new RealmDirectory(prisma, config.externalHost, config.externalScheme);
    await realms.loadAll();
    const bus = new MemoryBus();
    return {
      config,
      db,
      prisma,
      realms,
      auth: new UserAuthenticator(prisma),
      bus,
      channels: new ChannelActors(),
      users: new SerialActors(),
      scheduler: new DeliveryScheduler(),
      pushes: new DeliveryScheduler('push notification delivery'),
      queues: new QueueRegistry(bus, { heartbeatSeconds: config.HEARTBEAT_SECONDS, heartbeatJitterSeconds: config.HEARTBEAT_JITTER_SECONDS, tickMs: 1000, maxEvents: config.QUEUE_MAX_EVENTS, maxBytes: config.QUEUE_MAX_BYTES }),
      limits: config.RATE_LIMIT
        ? {
            user: new RateLimiter(config.RATE_LIMIT_USER_PER_MINUTE, 60),
            ip: new RateLimiter(config.RATE_LIMIT_IP_PER_MINUTE, 60),
            loginFailures: new RateLimiter(config.RATE_LIMIT_LOGIN_FAILURES, config.RATE_LIMIT_LOGIN_WINDOW_SECONDS),
            // Zulip's sends_email_by_ip: five a day.
            sendsEmail: new RateLimiter(5, 86400),
          }
        : null,
      mail: new Outbox(config),
      startedAt: Math.floor(Date.now() / 1000),
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}

export async function closeApp(app: App): Promise<void> {
  await app.scheduler.stop();
  await app.pushes.stop();
  app.queues.stop();
  app.channels.stop();
  app.users.stop();
  await app.mail.close();
  await app.bus.close();
  await app.db.close();
}
