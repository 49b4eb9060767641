// Starting and stopping the whole server: services, HTTP, and the first-run organization.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { TemplatedApp } from 'uWebSockets.js';
import type { App } from './app.ts';
import { closeApp, createApp } from './create-app.ts';
import { restoreEventQueues, saveEventQueues } from './actions/event-queues.ts';
import { deliverDueMessages } from './actions/scheduled-delivery.ts';
import { drainPushOutbox } from './push/worker.ts';
import { drainOutgoingWebhooks } from './webhooks/outgoing-worker.ts';
import { setUpNewOrganization } from './actions/onboarding.ts';
import { createRealm } from './actions/users.ts';
import { allRoutes } from './api/index.ts';
import { apiGate, type Scope } from './api/route.ts';
import { attachSocketGateway } from './gateway/socket.ts';
import { queuePlacement } from './gateway/placement.ts';
import type { Config } from './config.ts';
import { TrustedProxies } from './http/client-address.ts';
import { startHttpServer, type HttpOptions, type HttpServer } from './http/server.ts';
import type { StartingListener } from './http/starting.ts';
import type { User } from './db/generated/client.ts';
import { log } from './log.ts';
import { attachOperations } from './ops/endpoints.ts';
import { requestObservers } from './ops/requests.ts';
import { historyUpkeep } from './ops/history-upkeep.ts';
import { attachWebClient, loadWebAssets } from './http/static.ts';
import { PROJECT_ROOT } from './paths.ts';
import { sendNotificationEmails } from './mail/missed-messages.ts';

/** Where scripts/build-web.mjs puts the web client. */
const WEB_DIR = path.join(PROJECT_ROOT, 'build', 'web');

export interface RunningServer {
  app: App;
  http: HttpServer;
  port: number;
  url: string;
  stop(): Promise<void>;
}

export interface FirstRunCredentials {
  url: string;
  email: string;
  password: string;
  apiKey: string;
}

export interface ServerHooks {
  /** Mounts routes outside the API router (the CLI's control route) before the catch-all 404. */
  attach?: (uws: TemplatedApp, app: App) => void;
  /** Sees every answer of the API's handlers (the tests' OpenAPI conformance check). */
  inspectAnswer?: HttpOptions<Scope, User>['inspectAnswer'];
  /** Held the port while the server started (answering 503); the server takes its port over. */
  starting?: StartingListener;
}

export async function startServer(config: Config, { attach, inspectAnswer, starting }: ServerHooks = {}): Promise<RunningServer> {
  const app = await createApp(config);
  let http: HttpServer;
  let stopping: Promise<void> | undefined;
  // A stopping server tells load balancers to send nothing more while it drains.
  app.readiness.add({
    name: 'shutdown',
    run: async () => {
      if (stopping) throw new Error('the server is stopping');
    },
  });
  try {
    // Delivery starts once the saved queues are back, where they left the stream.
    await app.bus.resume(await restoreEventQueues(app));
    // In a cluster, from now on this node answers the others' requests for its queues.
    queuePlacement(app);
    const gate = apiGate(app);
    const proxies = new TrustedProxies(config.TRUSTED_PROXIES);
    const observers = requestObservers(app.metrics);
    const webDir = config.WEB_DIR ?? WEB_DIR;
    const webAssets = loadWebAssets(webDir);
    if (!webAssets) log.warn('the web client is not built (npm run build); / explains how', { dir: webDir });
    http = await startHttpServer({
      routes: allRoutes,
      gate,
      config,
      limits: app.limits,
      proxies,
      observers,
      attach: (uws) => {
        attachSocketGateway(app, gate, proxies, uws, observers);
        attachOperations(app, uws);
        attachWebClient(uws, webAssets);
        attach?.(uws, app);
      },
      inspectAnswer,
      takeOver: starting,
    });
  } catch (err) {
    await closeApp(app);
    throw err;
  }
  // Port 0 means "any free port": only now do we know the address clients will use.
  if (!config.EXTERNAL_HOST && !config.EXTERNAL_URL && config.PORT === 0) {
    config.externalHost = config.externalHost.replace(/:0$/, `:${http.port}`);
    app.realms.externalHost = config.externalHost;
  }
  // After the queues are back (they get the events of what fell due while the server was down)
  // and the address is known (reminders link to messages).
  app.scheduler.start(() => deliverDueMessages(app));
  if (config.PUSH_RELAY_URL) app.pushes.start(() => drainPushOutbox(app));
  app.upkeep.start(() => historyUpkeep(app));
  app.outgoingWebhooks.start(() => drainOutgoingWebhooks(app));
  app.notificationEmails.start(() => sendNotificationEmails(app));
  return {
    app,
    http,
    port: http.port,
    url: `${config.externalScheme}://${config.externalHost}`,
    stop: () =>
      (stopping ??= (async () => {
        // Requests in progress (a message being sent) finish and fan out to the queues first, so
        // whatever a client saw acknowledged is in every saved queue; half the deadline at most.
        const deadline = Date.now() + config.SHUTDOWN_DEADLINE_SECONDS * 1000;
        http.stopAccepting();
        // A delivery in progress finishes and reaches the queues before they are saved.
        await app.scheduler.stop();
        await app.pushes.stop();
        await app.upkeep.stop();
        await app.outgoingWebhooks.stop();
        await app.notificationEmails.stop();
        app.queues.closeConsumers();
        await http.drain((deadline - Date.now()) / 2);
        const { saved } = await saveEventQueues(app, deadline);
        if (saved) log.info('saved event queues', { count: saved });
        http.close();
        await closeApp(app);
      })()),
  };
}

/** On an empty database: one organization and its owner, whose credentials are printed once. */
export async function bootstrapFirstRealm(server: RunningServer, env: Record<string, string | undefined>): Promise<FirstRunCredentials | null> {
  const { app } = server;
  if (app.realms.count > 0) return null;
  const password = env.INIT_PASSWORD || randomBytes(12).toString('base64url');
  const email = env.INIT_EMAIL || 'owner@example.com';
  let made: Awaited<ReturnType<typeof createRealm>>;
  try {
    made = await createRealm(app, {
      subdomain: '',
      name: env.INIT_ORG || 'My Organization',
      owner: { email, fullName: env.INIT_NAME || 'Owner', password },
    });
  } catch (err) {
    // Another node of a cluster, starting at the same time, made it first.
    await app.realms.loadAll();
    if (app.realms.count > 0) return null;
    throw err;
  }
  const { realm, owner } = made;
  await setUpNewOrganization(app, realm, owner);
  log.info('created the first organization', { realm: realm.id });
  return { url: app.realms.url(realm), email, password, apiKey: owner.apiKey };
}
