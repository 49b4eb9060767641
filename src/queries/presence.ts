// Presence as clients read it (spec 4.20; Zulip's zerver/lib/presence.py): the realm's presence in
// the legacy form (by API email, `website` + `aggregated`) or the modern one (by user id, two
// timestamps), and one user's presence for GET /users/{user_id_or_email}/presence.
import type { App } from '../app.ts';
import type { Presence, User } from '../db/generated/client.ts';
import { rawQuery } from '../db/transaction.ts';
import { badRequest } from '../errors.ts';
import { RawJson } from '../http/route.ts';
import { slimPresenceEntries } from './presence-copy.ts';
import type { RealmInfo } from './realms.ts';
import { apiEmail, userByEmail, userById } from './users.ts';

/** Zulip's OFFLINE_THRESHOLD_SECS: older than this, a user counts as offline. */
export const OFFLINE_THRESHOLD_SECONDS = 200;
/** Active within this long before the last connection still reads as active in the legacy form. */
const LEGACY_ACTIVE_OFFSET_SECONDS = 70;
/** Without history_limit_days, presence older than two weeks is left out. */
const DEFAULT_HISTORY_DAYS = 14;

const seconds = (ms: number) => Math.floor(ms / 1000);

/** Both times of a presence row; a time never set reads as the user's join date, as in Zulip. */
export interface PresenceTimes {
  active: number;
  connected: number;
}

export function presenceTimes(row: Pick<Presence, 'lastActiveTime' | 'lastConnectedTime'>, dateJoined: Date): PresenceTimes {
  return {
    active: (row.lastActiveTime ?? dateJoined).getTime(),
    connected: (row.lastConnectedTime ?? dateJoined).getTime(),
  };
}

export function modernPresence(t: PresenceTimes): { active_timestamp: number; idle_timestamp: number } {
  return { active_timestamp: seconds(t.active), idle_timestamp: seconds(t.connected) };
}

/** One client's entry of the legacy form; the server no longer tracks clients, so always `website`. */
export function legacyPresence(t: PresenceTimes): { client: 'website'; status: 'active' | 'idle'; timestamp: number; pushable: false } {
  const active = t.active + LEGACY_ACTIVE_OFFSET_SECONDS * 1000 >= t.connected;
  return { client: 'website', status: active ? 'active' : 'idle', timestamp: seconds(active ? t.active : t.connected), pushable: false };
}

function legacyEntry(t: PresenceTimes) {
  const website = legacyPresence(t);
  return { website, aggregated: { client: website.client, status: website.status, timestamp: website.timestamp } };
}

/** Users who turned off sharing their presence (invisible mode) are never shown. */
export const sharesPresence = (user: Pick<User, 'settings'>) => (user.settings as { presence_enabled?: unknown } | null)?.presence_enabled !== false;

export interface RealmPresenceQuery {
  slim: boolean;
  /** The newest update the client has; only newer ones are returned. */
  lastUpdateId?: number;
  historyLimitDays?: number;
}

/** A presence row with what is shown of its user. */
type PresenceRow = Presence & Pick<User, 'id' | 'dateJoined' | 'deliveryEmail' | 'isBot' | 'settings'>;

export interface RealmPresence {
  presences: Record<string, unknown>;
  presence_last_update_id: number;
}

/** The rows a query shows: the realm's active humans, changed since `$2` if given, connected since `$3` if given. */
const SHOWN_PRESENCE = `
       FROM "Presence" p JOIN "User" u ON u.id = p."userId"
      WHERE u."realmId" = $1 AND u."isActive" AND NOT u."isBot"
        AND ($2::int IS NULL OR p."lastUpdateId" > $2::int) AND ($3::timestamp(3) IS NULL OR p."lastConnectedTime" >= $3::timestamp(3))`;

/** What a query is asked for: no data at all, or the parameters of SHOWN_PRESENCE. */
function presenceQuery(realm: RealmInfo, q: RealmPresenceQuery): RealmPresence | [number, number | null, string | null] {
  if (realm.settings.presence_disabled) return { presences: {}, presence_last_update_id: -1 };
  if (q.historyLimitDays === 0) return { presences: {}, presence_last_update_id: q.lastUpdateId ?? -1 };
  // A client that already has data gets what changed since; only a first fetch is limited by age.
  const firstFetch = q.lastUpdateId === undefined || q.lastUpdateId <= 0;
  const since = new Date(Date.now() - (q.historyLimitDays ?? DEFAULT_HISTORY_DAYS) * 86400_000);
  // An ISO time read as timestamp(3) (without time zone, as Prisma stores it) keeps its UTC digits.
  return [realm.id, q.lastUpdateId ?? null, firstFetch ? since.toISOString() : null];
}

/**
 * The slim form (by user id), as a ping answers it, from this process's copy of the realm's
 * presence (queries/presence-copy.ts), in user id order as JSON.stringify orders integer keys.
 */
export async function slimRealmPresenceJson(
  app: App,
  realm: RealmInfo,
  q: Omit<RealmPresenceQuery, 'slim'>,
): Promise<{ presences: RawJson; presence_last_update_id: number }> {
  const query = presenceQuery(realm, { ...q, slim: true });
  if (!Array.isArray(query)) return { presences: new RawJson('{}'), presence_last_update_id: query.presence_last_update_id };
  const [, after, since] = query;
  const { json, newest } = await slimPresenceEntries(app, realm.id, { after, connectedSince: since === null ? null : Date.parse(since) });
  if (!json) return { presences: new RawJson('{}'), presence_last_update_id: q.lastUpdateId ?? -1 };
  return { presences: new RawJson(`{${json}}`), presence_last_update_id: newest };
}

/** Presence of the realm's active humans, as POST /users/me/presence, GET /realm/presence and register show it. */
export async function realmPresence(app: App, realm: RealmInfo, q: RealmPresenceQuery): Promise<RealmPresence> {
  const query = presenceQuery(realm, q);
  if (!Array.isArray(query)) return query;
  const noData = { presences: {}, presence_last_update_id: q.lastUpdateId ?? -1 };
  // One statement straight on the pool (or in register's transaction).
  const rows = await rawQuery<PresenceRow>(
    app,
    `SELECT p."userId", p."lastActiveTime", p."lastConnectedTime", p."lastUpdateId", u.id, u."dateJoined", u."deliveryEmail", u."isBot", u.settings
     ${SHOWN_PRESENCE}`,
    ...query,
  );
  const shown = rows.filter((p) => sharesPresence(p));
  if (shown.length === 0) return noData;
  const presences: Record<string, unknown> = {};
  for (const p of shown) {
    const times = presenceTimes(p, p.dateJoined);
    if (q.slim) presences[String(p.userId)] = modernPresence(times);
    else presences[apiEmail(app, realm, p)] = legacyEntry(times);
  }
  return { presences, presence_last_update_id: Math.max(...shown.map((p) => p.lastUpdateId)) };
}

/** A user named by id or API email, active, in the realm; anything else is Zulip's "No such user". */
async function presenceTarget(app: App, realm: RealmInfo, viewer: User, idOrEmail: number | string): Promise<User> {
  const target = typeof idOrEmail === 'number' ? await userById(app, realm, idOrEmail) : await userByEmail(app, realm, idOrEmail, viewer);
  if (!target.isActive) throw badRequest('No such user');
  return target;
}

/** GET /users/{user_id_or_email}/presence: the legacy form says `offline` once the data is stale. */
export async function userPresence(app: App, realm: RealmInfo, viewer: User, idOrEmail: number | string, slim: boolean): Promise<Record<string, unknown>> {
  const target = await presenceTarget(app, realm, viewer, idOrEmail);
  if (target.isBot) throw badRequest('Presence is not supported for bot users.');
  const row = await app.prisma.presence.findUnique({ where: { userId: target.id } });
  if (!row) throw badRequest(`No presence data for ${idOrEmail}`);
  const times = presenceTimes(row, target.dateJoined);
  if (slim) return modernPresence(times);
  const { status, timestamp } = legacyPresence(times);
  const stale = seconds(Date.now()) - timestamp > OFFLINE_THRESHOLD_SECONDS;
  return { website: { status, timestamp }, aggregated: { status: stale ? 'offline' : status, timestamp } };
}
