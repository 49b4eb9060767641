// The real-time API: POST /register creates a queue and returns the state to start from;
// GET /events long-polls it; DELETE /events ends it. Queues live in actors/, and where a queue
// lives and how a request reaches it is gateway/placement.ts's; this module only parses the
// requests and answers.
import { z } from 'zod';
import { CAPABILITIES, type Capability, hasCapability, type QueueOptions } from '../../actors/queue-options.ts';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { userSettingsSchema } from '../domain/realm-settings.ts';
import { badRequest, missingArgument, notLoggedIn } from '../errors.ts';
import { bool, int, json, str, type ParamsOf } from '../http/params.ts';
import { type HandlerOutcome, type JsonFields, jsonFields } from '../http/route.ts';
import type { Log } from '../log.ts';
import { registerResponse } from './register-state.ts';
import { optionalUserRoute, userRoute } from './route.ts';
import { deliveredEvent, pollQueue } from '../gateway/long-poll.ts';
import { queuePlacement } from '../gateway/placement.ts';
import { warmMemberLists } from '../queries/member-list.ts';
import { fetchInitialState, needsMemberLists, type SnapshotOptions } from '../queries/register.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version.ts';
import { isGuest } from '../auth/policy.ts';
import { databaseWithin, oneAtATime } from '../db/transaction.ts';

export const DEFAULT_IDLE_QUEUE_TIMEOUT = 600;
export const MAX_IDLE_QUEUE_TIMEOUT = 7 * 86400;

const narrowSchema = z.array(
  z.union([
    z.tuple([z.string(), z.union([z.string(), z.number()])]),
    z.object({ operator: z.string(), operand: z.union([z.string(), z.number()]), negated: z.boolean().optional() }),
  ]),
);

const queueParams = {
  event_types: json(z.array(z.string())).optional(),
  apply_markdown: bool().default(false),
  client_gravatar: bool().optional(),
  all_public_streams: bool().optional(),
  narrow: json(narrowSchema).default([]),
  client_capabilities: json(z.record(z.string(), z.unknown())).default({}),
  idle_queue_timeout: json(z.number().int().min(1).max(MAX_IDLE_QUEUE_TIMEOUT)).optional(),
  queue_lifespan_secs: json(z.number().int().min(0)).optional(),
};

const registerParams = {
  ...queueParams,
  fetch_event_types: json(z.array(z.string())).optional(),
  include_subscribers: str(
    z
      .string()
      .transform((v) => v.replace(/^"(.*)"$/, '$1'))
      .pipe(z.enum(['true', 'false', 'partial'])) as z.ZodType<string>,
  ).default('false'),
  slim_presence: bool().default(false),
  presence_history_limit_days: json(z.number().int().min(0)).optional(),
  include_streams: bool().default(true),
};

function queueOptions(user: User | null, p: ParamsOf<typeof queueParams>): QueueOptions {
  // A bot's own default when the client does not say (Zulip's _default_all_public_streams).
  const allPublicStreams = p.all_public_streams ?? (user?.isBot === true && userSettingsSchema.parse(user.settings ?? {}).default_all_public_streams);
  if (allPublicStreams && user && isGuest(user)) throw badRequest('User not authorized for this query');
  const caps = p.client_capabilities;
  return {
    eventTypes: p.event_types ?? null,
    narrow: p.narrow.map((t) => {
      const [op, operand] = Array.isArray(t) ? t : [t.operator, t.operand];
      const operator = op.toLowerCase();
      return [operator === 'stream' ? 'channel' : operator, String(operand)] as const;
    }),
    allPublicStreams,
    applyMarkdown: p.apply_markdown,
    clientGravatar: p.client_gravatar ?? user !== null,
    capabilities: CAPABILITIES.filter((c: Capability) => caps[c] === true),
    idleTimeoutSecs: p.idle_queue_timeout ?? (p.queue_lifespan_secs ? Math.min(p.queue_lifespan_secs, MAX_IDLE_QUEUE_TIMEOUT) : DEFAULT_IDLE_QUEUE_TIMEOUT),
  };
}

function versionFields() {
  return { zulip_version: ZULIP_VERSION, zulip_feature_level: FEATURE_LEVEL, zulip_merge_base: ZULIP_MERGE_BASE };
}

/** A bot registering without a narrow gets its default_events_register_stream's (Zulip's _default_narrow). */
async function withDefaultNarrow<P extends ParamsOf<typeof queueParams>>(app: App, user: User | null, p: P): Promise<P> {
  if (!user?.isBot || p.narrow.length > 0 || user.defaultEventsRegisterChannelId === null) return p;
  const channel = await app.prisma.channel.findUnique({ where: { id: user.defaultEventsRegisterChannelId }, select: { name: true } });
  return channel ? { ...p, narrow: [['channel', channel.name]] } : p;
}

async function register(app: App, realm: RealmInfo, user: User | null, p: ParamsOf<typeof registerParams>) {
  if (!user) {
    if (!realm.settings.enable_spectator_access) throw notLoggedIn();
    if (p.client_gravatar) throw badRequest("Invalid 'client_gravatar' parameter for anonymous request");
    if (p.include_subscribers === 'true') throw badRequest("Invalid 'include_subscribers' parameter for anonymous request");
  }
  const options = queueOptions(user, await withDefaultNarrow(app, user, p));
  const snapshot: SnapshotOptions = {
    fetchEventTypes: p.fetch_event_types ?? p.event_types ?? null,
    queue: options,
    includeSubscribers: p.include_subscribers as SnapshotOptions['includeSubscribers'],
    // Clients of the simplified presence events key presence by user id (Zulip's fetch_initial_state_data).
    slimPresence: p.slim_presence || hasCapability(options, 'simplified_presence_events'),
    presenceHistoryLimitDays: p.presence_history_limit_days ?? 14,
    includeStreams: p.include_streams,
  };
  if (needsMemberLists(snapshot)) await warmMemberLists(app, realm.id);
  const { queue, state } = await queuePlacement(app).register(user && { userId: user.id, realmId: realm.id }, options, (prisma) => {
    const inSnapshot = oneAtATime(prisma);
    return fetchInitialState(
      { ...app, prisma: inSnapshot, db: databaseWithin(app.db, inSnapshot), realms: app.realms.within(inSnapshot) },
      realm,
      user,
      snapshot,
    );
  });
  // Written in pieces: the member lists come serialized in UTF-8 already (queries/member-list.ts).
  return jsonFields({
    queue_id: queue?.id ?? null,
    last_event_id: -1,
    ...versionFields(),
    idle_queue_timeout_secs: options.idleTimeoutSecs,
    ...state,
  });
}

/** Synchronous unless the queue is another node's: a re-parked poll costs no promise. */
function getEvents(
  app: App,
  realm: RealmInfo,
  user: User,
  p: ParamsOf<typeof eventsParams>,
  onAbort: (cb: () => void) => void,
  answer: (result: JsonFields) => void,
  log: Log,
): HandlerOutcome {
  if (p.queue_id === undefined) {
    if (!p.dont_block) throw missingArgument('queue_id');
    const queue = queuePlacement(app).create(user.id, realm.id, queueOptions(user, p));
    return pollQueue(app, queue, { dontBlock: true, created: true });
  }
  if (p.last_event_id === undefined) throw missingArgument('last_event_id');
  return queuePlacement(app).poll({ queueId: p.queue_id, userId: user.id, lastEventId: p.last_event_id, dontBlock: p.dont_block }, { onAbort, answer }, log);
}

const eventsParams = {
  ...queueParams,
  queue_id: str().optional(),
  last_event_id: int().optional(),
  dont_block: bool().default(false),
};

export const routes = [
  optionalUserRoute({
    method: 'POST',
    path: '/api/v1/register',
    params: registerParams,
    response: registerResponse,
    handler: ({ app, realm, user, params }) => register(app, realm, user, params),
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/events',
    params: eventsParams,
    // queue_id comes back when the call made the queue (dont_block without queue_id).
    response: z.object({ events: z.array(deliveredEvent), queue_id: z.string().optional() }),
    handler: ({ app, realm, user, params, onAbort, answer, log }) => getEvents(app, realm, user, params, onAbort, answer, log),
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/events',
    params: { queue_id: str() },
    response: z.object({}),
    async handler({ app, user, params }) {
      await queuePlacement(app).delete({ queueId: params.queue_id, userId: user.id });
      return {};
    },
  }),
];
