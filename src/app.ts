// The server's services, built once at start (create-app.ts) and handed to every handler:
// configuration, database, caches, bus and rate limiters. Nothing here knows about HTTP. This file
// holds only the shape, so that the floors below it can name it without importing how it is built.
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { PrismaClient } from './db/generated/client.ts';
import type { UserAuthenticator } from './auth/authenticate.ts';
import type { RealmDirectory } from './queries/realms.ts';
import type { EventBus } from './bus/bus.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { Outbox } from './mail/mailer.ts';
import type { QueueRegistry } from '../actors/registry.ts';
import type { ChannelActors } from '../actors/channels.ts';
import type { SerialActors } from '../actors/serial.ts';
import type { DeliveryScheduler } from './scheduler.ts';
import type { TokenSigner } from './auth/signed-tokens.ts';
import type { LdapDirectory } from './auth/ldap.ts';
import type { ClusterNode } from './cluster/node.ts';
import type { QueueDescriptors } from './cluster/queue-descriptors.ts';
import type { Readiness } from './ops/health.ts';
import type { ServerMetrics } from './ops/metrics.ts';

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
  /** Channel traffic counts and backfills of old rows (src/ops/history-upkeep.ts). */
  upkeep: DeliveryScheduler;
  /** Makes the calls to outgoing-webhook bots that messages queued (started by the server). */
  outgoingWebhooks: DeliveryScheduler;
  /** Sends missed-message and digest emails when due (started by the server). */
  notificationEmails: DeliveryScheduler;
  /** `sendsEmail`: mail a visitor makes the server send (sign-up confirmations), per address. */
  limits: { user: RateLimiter; ip: RateLimiter; loginFailures: RateLimiter; sendsEmail: RateLimiter } | null;
  /** Outgoing mail, delivered after the transactions that queue it. */
  mail: Outbox;
  /** The LDAP directory users log in through (LDAP_SERVER_URL), or null. */
  ldap: LdapDirectory | null;
  /** Signs temporary upload URLs and call links with the deployment's shared key. */
  tokens: TokenSigner;
  /** This process as a node of a cluster; null for a single process. */
  cluster: ClusterNode | null;
  /** In a cluster, the rows that let another node rebuild this node's queues if it dies; null for a single process. */
  queueDescriptors: QueueDescriptors | null;
  startedAt: number;
  metrics: ServerMetrics;
  /** What /health/ready checks. */
  readiness: Readiness;
}
