// Presence pings (POST /users/me/presence; Zulip's do_update_user_presence), the busiest write of
// a chat server: each connected client pings about once a minute. So a ping reads this process's
// copy of the user's presence, writes at most one upsert (none when both times are still fresh),
// and publishes a `presence` event only when the user comes online: first ping ever, or active
// after being away long enough that others would soon show them offline.
//
// The update ids (`last_update_id`) count per realm in its PresenceSequence row (Zulip's), taken
// in the transaction that writes the presence and held until it commits, so ids grow in commit
// order on every node of a cluster: a client that asks for updates after id N misses none.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { legacyPresence, modernPresence, OFFLINE_THRESHOLD_SECONDS, sharesPresence } from '../queries/presence.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail, realmViewers } from '../queries/users.ts';
import { atomic, rawQuery, sendCommitted, sendOnCommit } from './transaction.ts';
import { inTransaction } from '../db/transaction.ts';

export type PresenceStatus = 'active' | 'idle';

/** A time newer than the stored one by less than this is not written (Zulip's PRESENCE_UPDATE_MIN_FREQ_SECONDS). */
const MIN_WRITE_INTERVAL_MS = 55_000;
/** Zulip's PRESENCE_PING_INTERVAL_SECS. */
const PING_INTERVAL_SECONDS = 60;
/** Active again after this long away: others would show the user offline before the next ping. */
const BACK_ONLINE_MS = (OFFLINE_THRESHOLD_SECONDS - PING_INTERVAL_SECONDS - 10) * 1000;
/** Above this many users, immediate presence events cost more than they help (Zulip's limit). */
const MAX_USERS_FOR_PRESENCE_EVENTS = 100;

interface StoredPresence {
  active: number | null;
  connected: number | null;
}

/** A realm's presence writes: the one in flight, and the pings waiting for the next. */
interface PresenceWriter {
  writing: boolean;
  waiting: Map<number, StoredPresence>;
  settle: { resolve: () => void; reject: (err: unknown) => void }[];
}

interface PresenceCache {
  /** Each user's stored times (ms), or null for no row yet. */
  users: Map<number, Promise<StoredPresence | null>>;
  writers: Map<number, PresenceWriter>;
}

// Keyed by app: tests run several servers (with their own databases) in one process.
const caches = new WeakMap<App, PresenceCache>();

function cacheOf(app: App): PresenceCache {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = { users: new Map(), writers: new Map() }));
  return cache;
}

/** Memoizes `load` under `key`; a failed load is dropped so the next call retries. */
function remembered<K, V>(map: Map<K, Promise<V>>, key: K, load: () => Promise<V>): Promise<V> {
  let entry = map.get(key);
  if (!entry) {
    entry = load();
    map.set(key, entry);
    entry.catch(() => map.delete(key));
  }
  return entry;
}

/** For writes outside a ping (a setting that hides or backdates presence): drop the copy here. */
export function forgetPresence(app: App, userId: number): void {
  cacheOf(app).users.delete(userId);
}

async function storedPresence(app: App, userId: number): Promise<StoredPresence | null> {
  return remembered(cacheOf(app).users, userId, async () => {
    const [row] = await rawQuery<{ lastActiveTime: Date | null; lastConnectedTime: Date | null }>(
      app,
      'SELECT "lastActiveTime", "lastConnectedTime" FROM "Presence" WHERE "userId" = $1',
      userId,
    );
    return row && { active: row.lastActiveTime?.getTime() ?? null, connected: row.lastConnectedTime?.getTime() ?? null };
  });
}

/**
 * Stores pings' times under the realm's next update ids, in one statement (its own transaction
 * outside an action's): the realm's sequence row is bumped by the number of pings and stays locked
 * until the statement commits, and each ping takes the next id in the order given. A realm without
 * a row yet (new, or imported) starts after its stored presences; that scan of the realm's
 * presence runs only then (the planner's one-time filter skips it once the row exists): run on
 * every ping, it made each write cost time in proportion to the realm's users.
 */
const WRITE_PRESENCES = `
  WITH input AS (
    SELECT * FROM unnest($2::int[], $3::timestamp(3)[], $4::timestamp(3)[]) WITH ORDINALITY AS t("userId", active, connected, n)),
  bumped AS (
    UPDATE "PresenceSequence" SET "lastUpdateId" = "lastUpdateId" + cardinality($2::int[]) WHERE "realmId" = $1 RETURNING "lastUpdateId"),
  created AS (
    INSERT INTO "PresenceSequence" ("realmId", "lastUpdateId")
    SELECT $1, (SELECT coalesce(max(p."lastUpdateId"), 0) + cardinality($2::int[]) FROM "Presence" p JOIN "User" u ON u.id = p."userId" WHERE u."realmId" = $1)
     WHERE NOT EXISTS (SELECT FROM bumped)
    ON CONFLICT ("realmId") DO UPDATE SET "lastUpdateId" = "PresenceSequence"."lastUpdateId" + cardinality($2::int[])
    RETURNING "lastUpdateId"),
  seq AS (SELECT "lastUpdateId" FROM bumped UNION ALL SELECT "lastUpdateId" FROM created)
  INSERT INTO "Presence" ("userId", "lastActiveTime", "lastConnectedTime", "lastUpdateId")
  SELECT input."userId", input.active, input.connected, seq."lastUpdateId" - cardinality($2::int[]) + input.n FROM input, seq
  ON CONFLICT ("userId") DO UPDATE
    SET "lastActiveTime" = EXCLUDED."lastActiveTime", "lastConnectedTime" = EXCLUDED."lastConnectedTime", "lastUpdateId" = EXCLUDED."lastUpdateId"`;

// An ISO time read as timestamp(3) (without time zone, as Prisma stores it) keeps its UTC digits.
const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Each user's times, one entry a user. */
async function writePresences(app: App, realmId: number, writes: Map<number, StoredPresence>): Promise<void> {
  const times = [...writes.values()];
  await rawQuery(
    app,
    WRITE_PRESENCES,
    realmId,
    [...writes.keys()],
    times.map((t) => isoOrNull(t.active)),
    times.map((t) => isoOrNull(t.connected)),
  );
}

/**
 * A ping's write, in its realm's batch: while a realm's write is in flight the pings that come
 * wait and go together in the next one, so a realm's pings take the sequence row's lock, a
 * connection and a commit once a batch rather than once each (they queued on that lock anyway).
 */
function writePresence(app: App, realmId: number, userId: number, times: StoredPresence): Promise<void> {
  const writers = cacheOf(app).writers;
  let writer = writers.get(realmId);
  if (!writer) writers.set(realmId, (writer = { writing: false, waiting: new Map(), settle: [] }));
  const done = new Promise<void>((resolve, reject) => writer.settle.push({ resolve, reject }));
  // A user's later times replace earlier ones still waiting: both are this process's, the later is newer.
  writer.waiting.set(userId, times);
  if (!writer.writing) void flush(app, realmId, writer);
  return done;
}

async function flush(app: App, realmId: number, writer: PresenceWriter): Promise<void> {
  writer.writing = true;
  while (writer.waiting.size) {
    const batch = writer.waiting;
    const settle = writer.settle;
    writer.waiting = new Map();
    writer.settle = [];
    try {
      await writePresences(app, realmId, batch);
      for (const s of settle) s.resolve();
    } catch (err) {
      for (const s of settle) s.reject(err);
    }
  }
  writer.writing = false;
}

/** The times to store after a ping at `now`, or null when the stored ones are fresh enough. */
function updatedTimes(old: StoredPresence | null, status: PresenceStatus, now: number): StoredPresence | null {
  if (!old) return { active: status === 'active' ? now : null, connected: now };
  const next = { ...old };
  if (old.connected === null || now - old.connected > MIN_WRITE_INTERVAL_MS) next.connected = now;
  if (status === 'active' && (old.active === null || now - old.active > MIN_WRITE_INTERVAL_MS)) {
    next.active = now;
    // last_connected_time >= last_active_time always holds.
    next.connected = Math.max(next.connected ?? now, now);
  }
  return next.active === old.active && next.connected === old.connected ? null : next;
}

/** Records a ping; users who turned off sharing their presence leave no trace. */
export async function updatePresence(app: App, realm: RealmInfo, user: User, status: PresenceStatus): Promise<void> {
  if (!sharesPresence(user)) return;
  const now = Date.now();
  const old = await storedPresence(app, user.id);
  const next = updatedTimes(old, status, now);
  if (!next) return;
  const cache = cacheOf(app).users;
  // Taken before the write, so a concurrent ping of the same user sees it and writes nothing.
  cache.set(user.id, Promise.resolve(next));
  const backOnline = status === 'active' && (old?.active == null || now - old.active > BACK_ONLINE_MS);
  const announce = !realm.settings.presence_disabled && (old === null || backOnline);
  // A ping stores its times in its realm's next batch, one statement with no transaction around it. One that comes online
  // then publishes: its event reaches queues without the snapshot filter (the register reads
  // presence from its cache), so it needs no xid, only to leave after the commit. On a node of a
  // cluster it commits with the write instead (the outbox, cluster/outbox.ts): in one transaction,
  // the write last, so the realm's sequence row is held only for it and the commit.
  const written =
    announce && app.cluster
      ? atomic(app, async () => {
          await announcePresence(app, realm, user, next);
          await writePresences(app, realm.id, new Map([[user.id, next]]));
        })
      : writePresence(app, realm.id, user.id, next);
  await written.catch((err: unknown) => {
    cache.delete(user.id);
    throw err;
  });
  if (announce && !app.cluster) await announcePresence(app, realm, user, next);
}

/**
 * Published in both forms; each queue keeps the one its client understands (`presences` for
 * simplified_presence_events, the rest otherwise).
 */
async function announcePresence(app: App, realm: RealmInfo, user: User, stored: StoredPresence): Promise<void> {
  const userIds = (await realmViewers(app, realm.id)).map((u) => u.id);
  if (userIds.length > MAX_USERS_FOR_PRESENCE_EVENTS) return;
  const joined = user.dateJoined.getTime();
  const times = { active: stored.active ?? joined, connected: stored.connected ?? joined };
  // Presence reaches the register state through its cache: without the snapshot filter.
  const envelope = {
    realmId: realm.id,
    userIds,
    event: {
      type: 'presence',
      user_id: user.id,
      email: apiEmail(app, realm, user),
      server_timestamp: Date.now() / 1000,
      presence: { website: legacyPresence(times) },
      presences: { [String(user.id)]: modernPresence(times) },
    },
  } as const;
  if (inTransaction()) sendOnCommit(envelope, { alwaysDeliver: true });
  else sendCommitted(app, [envelope]);
}
