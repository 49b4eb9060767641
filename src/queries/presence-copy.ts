// Each organization's slim presence (POST /users/me/presence with slim_presence), kept in this
// process: every person pings once a minute and the answer lists everyone who pinged since, so
// reading and serializing those rows on every ping was most of its CPU. The copy holds each
// shown user's serialized entry and is brought up to date on each read by one statement for the
// rows written since its newest update id, which the readers that arrive meanwhile share. That is enough because the ids are drawn from the
// organization's PresenceSequence row under its lock, held until the write commits
// (actions/presence.ts): a write that gets a larger id commits after the one that got a smaller
// one, so a snapshot that sees an id sees every smaller one. Every node of a cluster refreshes
// from the database the same way, so no node needs to hear of another's pings.
//
// What decides whether and how an entry is shown (the user active, not a bot, sharing their
// presence; the organization's settings) changes without a presence write, so those changes drop
// the copy: the events that report them, as they leave and as they reach every other process
// (cluster/cache-sync.ts), and an organization's reload.
import type { App } from '../app.ts';
import { rawQuery } from '../db/transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';

interface Entry {
  userId: number;
  /** `"<id>":{"active_timestamp":…,"idle_timestamp":…}`, as the answer lists it. */
  json: string;
  lastUpdateId: number;
  /** lastConnectedTime in ms (null: never set), which a first fetch filters by. */
  connected: number | null;
}

interface Copy {
  /** Shown users' entries in user id order, the order of the answer. */
  entries: Entry[];
  /** Everything written up to this update id is in the copy. */
  newest: number;
  lastRead: number;
  /** The refresh in flight, and the one that follows it for readers who came after it started. */
  refreshing?: Promise<void>;
  next?: Promise<void>;
}

/** A copy not read for this long is dropped: an organization where nobody pings keeps no memory. */
const IDLE_MS = 10 * 60_000;
const SWEEP_INTERVAL_MS = 60_000;

interface Copies {
  byRealm: Map<number, Copy>;
  lastSweep: number;
}

// By the bus, which is one per server: tests run several servers, with their own databases, in one process.
const servers = new WeakMap<object, Copies>();

function copiesOf(app: App): Copies {
  let copies = servers.get(app.bus);
  if (!copies) servers.set(app.bus, (copies = { byRealm: new Map(), lastSweep: Date.now() }));
  return copies;
}

function copyOf(app: App, realmId: number, now: number): Copy {
  const copies = copiesOf(app);
  if (now - copies.lastSweep > SWEEP_INTERVAL_MS) {
    copies.lastSweep = now;
    for (const [id, copy] of copies.byRealm) if (now - copy.lastRead > IDLE_MS) copies.byRealm.delete(id);
  }
  let copy = copies.byRealm.get(realmId);
  if (!copy) copies.byRealm.set(realmId, (copy = { entries: [], newest: -1, lastRead: now }));
  copy.lastRead = now;
  return copy;
}

/** Drops the organization's copy: who is shown, or how, changed. */
export function forgetPresenceCopy(app: App, realmId: number): void {
  copiesOf(app).byRealm.delete(realmId);
}

/** Whether an event reports a change to who is shown: a user (de)activated, a bot changed, presence sharing turned on or off. */
export function changesPresence(event: ChatEvent): boolean {
  return (
    (event.type === 'realm_user' && 'person' in event && 'is_active' in event.person) ||
    event.type === 'realm_bot' ||
    (event.type === 'user_settings' && 'property' in event && event.property === 'presence_enabled')
  );
}

interface ChangedRow {
  userId: number;
  active: string;
  idle: string;
  connected: string | null;
  lastUpdateId: number;
  shown: boolean;
}

/**
 * The organization's presence rows written after update id `$2`, with whether they are shown.
 * PostgreSQL gives the seconds (and the exact milliseconds of the connection time, from
 * extract's numeric); hidden users' rows come too, so the copy's newest id passes them.
 */
const CHANGED_ROWS = `
  SELECT p."userId",
         floor(date_part('epoch', coalesce(p."lastActiveTime", u."dateJoined")))::bigint AS active,
         floor(date_part('epoch', coalesce(p."lastConnectedTime", u."dateJoined")))::bigint AS idle,
         (extract(epoch FROM p."lastConnectedTime") * 1000)::bigint AS connected,
         p."lastUpdateId",
         (u."isActive" AND NOT u."isBot" AND (u.settings -> 'presence_enabled') IS DISTINCT FROM 'false'::jsonb) AS shown
    FROM "Presence" p JOIN "User" u ON u.id = p."userId"
   WHERE u."realmId" = $1 AND p."lastUpdateId" > $2
   ORDER BY p."userId"`;

/** Index of `userId`'s entry, or where it would go. */
function position(entries: Entry[], userId: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.userId < userId) low = mid + 1;
    else high = mid;
  }
  return low;
}

function apply(copy: Copy, rows: ChangedRow[]): void {
  for (const r of rows) {
    if (r.lastUpdateId > copy.newest) copy.newest = r.lastUpdateId;
    const at = position(copy.entries, r.userId);
    const old = copy.entries[at]?.userId === r.userId ? copy.entries[at] : undefined;
    // A concurrent refresh may have brought a newer write of the user already.
    if (old && old.lastUpdateId >= r.lastUpdateId) continue;
    if (!r.shown) {
      if (old) copy.entries.splice(at, 1);
      continue;
    }
    const entry: Entry = {
      userId: r.userId,
      json: `"${r.userId}":{"active_timestamp":${r.active},"idle_timestamp":${r.idle}}`,
      lastUpdateId: r.lastUpdateId,
      connected: r.connected === null ? null : Number(r.connected),
    };
    if (old) copy.entries[at] = entry;
    else copy.entries.splice(at, 0, entry);
  }
}

function startRefresh(app: App, realmId: number, copy: Copy): Promise<void> {
  const run: Promise<void> = rawQuery<ChangedRow>(app, CHANGED_ROWS, realmId, copy.newest)
    .then((rows) => apply(copy, rows))
    .finally(() => {
      if (copy.refreshing === run) copy.refreshing = undefined;
    });
  copy.refreshing = run;
  return run;
}

/**
 * Resolves once a refresh that started after the call has run: every reader sees the writes that
 * committed before it came, as with a statement of its own, but the realm's readers share one
 * refresh at a time (every person pings once a minute, and each refresh reads the realm's rows).
 */
function refreshed(app: App, realmId: number, copy: Copy): Promise<void> {
  if (copy.next) return copy.next;
  if (!copy.refreshing) return startRefresh(app, realmId, copy);
  const next = copy.refreshing
    .catch(() => undefined)
    .then(() => {
      copy.next = undefined;
      return startRefresh(app, realmId, copy);
    });
  copy.next = next;
  return next;
}

export interface SlimPresenceQuery {
  /** Only entries written after this update id. */
  after: number | null;
  /** Only entries connected at or after this time (ms): a first fetch. */
  connectedSince: number | null;
}

/**
 * The organization's slim presence as a JSON object's members, in user id order, and the newest
 * update id among them (-1 for none): the copy, brought up to date first.
 */
export async function slimPresenceEntries(app: App, realmId: number, q: SlimPresenceQuery): Promise<{ json: string; newest: number }> {
  const copy = copyOf(app, realmId, Date.now());
  await refreshed(app, realmId, copy);
  let json = '';
  let newest = -1;
  for (const e of copy.entries) {
    if (q.after !== null && e.lastUpdateId <= q.after) continue;
    if (q.connectedSince !== null && (e.connected === null || e.connected < q.connectedSince)) continue;
    json += json ? `,${e.json}` : e.json;
    if (e.lastUpdateId > newest) newest = e.lastUpdateId;
  }
  return { json, newest };
}
