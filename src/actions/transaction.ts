// The one way actions write and announce (Zulip's transaction.atomic with send_event_on_commit):
// `atomic` runs an action's checks and writes in one transaction (the ambient one of
// db/transaction.ts), and the events the action records with `sendOnCommit` go to the bus once it
// committed, in the order recorded, carrying its xid (db/commits.ts); never when it rolled back.
// Every event is checked against its schema (src/events/schemas.ts) on the way.
import type { App } from '../app.ts';
import { storedOrLater, type EventEnvelope } from '../bus/bus.ts';
import { transactionId } from '../db/commits.ts';
import { currentTransaction, runInTransaction, type OpenTransaction } from '../db/transaction.ts';
import { checkEvent, schemaKey } from '../events/schemas.ts';
import { log } from '../log.ts';
import { eventsLeaving } from '../cluster/cache-sync.ts';
import { changesMemberLists } from '../queries/member-list.ts';

type Envelope = Omit<EventEnvelope, 'xid'>;

interface PendingEvent {
  envelope: Envelope;
  /** The register state holding this change comes from a cache, not the transaction's snapshot. */
  alwaysDeliver: boolean;
}

interface Pending {
  app: App;
  events: PendingEvent[];
  afterCommit: (() => void | Promise<void>)[];
}

const pending = new WeakMap<OpenTransaction, Pending>();

export { rawQuery } from '../db/transaction.ts';

/**
 * Runs `body` in one transaction (or as part of the one already open) and publishes the events it
 * recorded after the commit, before resolving: an action run by a channel's actor has published
 * before the channel's next write starts.
 */
export async function atomic<T>(app: App, body: () => Promise<T>): Promise<T> {
  if (currentTransaction()) return body();
  const scope: Pending = { app, events: [], afterCommit: [] };
  const { result, events, outboxRow } = await runInTransaction(app.db.prisma, async (t) => {
    pending.set(t, scope);
    const result = await body();
    const xid = scope.events.some((e) => !e.alwaysDeliver) ? await transactionId(t.tx) : undefined;
    const events: EventEnvelope[] = scope.events.map((e) => (e.alwaysDeliver ? e.envelope : { ...e.envelope, xid }));
    // On a node of a cluster the events commit with the change (cluster/outbox.ts).
    const outbox = events.length > 0 ? app.cluster?.outbox : undefined;
    return { result, events, outboxRow: outbox ? await outbox.save(app, events) : undefined };
  });
  eventsLeaving(app, events);
  try {
    for (const work of scope.afterCommit) await work();
  } finally {
    app.bus.publishAll(events, outboxRow);
    if (outboxRow !== undefined) app.cluster!.outbox.published(outboxRow, []);
  }
  // In a cluster, answered once the events are on their way to every node: what the client does
  // next, on any node, comes after them (unless NATS is away: then after a while anyway).
  const stored = storedOrLater(app.bus);
  if (stored) await stored;
  return result;
}

function currentScope(what: string): Pending {
  const t = currentTransaction();
  const scope = t && pending.get(t);
  if (!scope) throw new Error(`${what} outside an action's transaction`);
  return scope;
}

/**
 * The one way an action locks users: holds their rows until the commit, so that the checks on
 * them (role, last owner, active; a setting unique ignoring case, a size limit, a word not yet
 * there) hold against concurrent requests. NO KEY UPDATE conflicts with itself and with any
 * update of the rows, while foreign-key checks on them (a new message's sender) still pass.
 */
export async function lockUsers(app: App, userIds: number[]): Promise<void> {
  if (userIds.length) await app.prisma.$queryRawUnsafe('SELECT 1 FROM "User" WHERE id = ANY($1::int[]) ORDER BY id FOR NO KEY UPDATE', userIds);
}

export const lockUser = (app: App, id: number): Promise<void> => lockUsers(app, [id]);

/**
 * Inside an action's transaction: waits for, then holds, the message's row until the commit, so
 * the checks that follow read it as no concurrent change can make it stale (Zulip's
 * access_message(lock_message=True)).
 */
export async function lockMessage(app: App, id: number): Promise<void> {
  await app.prisma.$queryRaw`SELECT id FROM "Message" WHERE id = ${id} FOR UPDATE`;
}

/** Work for after the commit, before the events leave: dropping caches the transaction made stale. */
export function onCommit(work: () => void | Promise<void>): void {
  currentScope('onCommit').afterCommit.push(work);
}

function check(app: App, envelope: Envelope): void {
  const problem = checkEvent(envelope.event);
  if (problem === null) return;
  const what = `event ${schemaKey(envelope.event)} does not match its schema: ${problem}`;
  // Tests and development fail loudly; a running server keeps going and says so.
  if (app.config.EVENT_SCHEMA_CHECK === 'strict') throw new Error(what);
  log.error(what);
}

/**
 * Records an event of the current transaction; it leaves after the commit. `alwaysDeliver`: the
 * register state it changes is read from a cache (or is not in the register state at all), so a
 * queue gets it even when its snapshot already saw the transaction (applying it twice changes
 * nothing). The default: only for events that change register's member lists.
 */
export function sendOnCommit(envelope: Envelope, opts: { alwaysDeliver?: boolean } = {}): void {
  const scope = currentScope(`sendOnCommit (event ${String(envelope.event.type)})`);
  if (envelope.userIds.length === 0) return;
  check(scope.app, envelope);
  // Register reads the member lists from a cache (queries/member-list.ts): the events that change them always go.
  scope.events.push({ envelope, alwaysDeliver: opts.alwaysDeliver ?? changesMemberLists(envelope.event) });
}

/**
 * The events of a change one statement made on its own and already committed, with that
 * statement's xid: the hot path of channel messages, which skips the round trips of BEGIN/COMMIT.
 * `outbox`: the statement saved them in that row, held by those locks (cluster/outbox.ts).
 */
export function sendCommitted(app: App, envelopes: readonly EventEnvelope[], outbox?: { row: number; turns: number[] }): void {
  if (currentTransaction()) throw new Error('sendCommitted inside a transaction: use sendOnCommit');
  const events = envelopes.filter((e) => e.userIds.length > 0);
  for (const e of events) check(app, e);
  eventsLeaving(app, events);
  app.bus.publishAll(events, outbox?.row);
  if (outbox) app.cluster!.outbox.published(outbox.row, outbox.turns);
}

/** An event about something never stored (typing): nothing to wait for. */
export function sendUnstored(app: App, envelope: Envelope): void {
  if (envelope.userIds.length === 0) return;
  check(app, envelope);
  eventsLeaving(app, [envelope]);
  app.bus.publish(envelope);
}
