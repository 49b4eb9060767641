// Register's member lists (realm_users, realm_non_active_users) as JSON, serialized once per
// organization and kind of viewer and spliced into every register answer: in an organization of
// 10,000 users, reading, formatting and serializing them was nearly all of a register's CPU.
//
// What a viewer sees of others depends only on their role (which addresses they may see:
// canSeeEmail), on client_gravatar, and on whether profile data is listed (not for spectators);
// their own entry, where they always see their address, is formatted per request. Guests limited
// to the users they can access (user-access.ts) are not served from here.
//
// The inputs are the organization's users and their custom profile field values (and the
// organization's own row, for the stand-in addresses). Every change to them publishes a
// `realm_user` or `custom_profile_fields` event (or reloads the organization), so the cache is
// dropped by the events themselves: where they are published (actions/transaction.ts) and
// where every other process of a cluster receives them (cluster/cache-sync.ts). Those events are
// always delivered, whatever the register snapshot saw, so a register that read a list made just
// before a change still gets the change's event (applying it twice changes nothing).
import type { App } from '../app.ts';
import type { PermissionSubject } from '../auth/permissions.ts';
import type { User } from '../db/generated/client.ts';
import type { ChatEvent } from '../events/schemas.ts';
import { type JsonPiece, RawJson } from '../http/route.ts';
import { realmCache } from './realm-cache.ts';
import type { RealmInfo } from './realms.ts';
import { formatUser, type FormatOptions, type Viewer } from './users.ts';

type ProfileData = NonNullable<FormatOptions['profileData']>;

/** The organization's users (system bots aside) by id, with their profile data, as read once. */
interface Members {
  rows: User[];
  /** The active ones, as permissions and system groups read them. */
  active: User[];
  profiles: Map<number, ProfileData>;
  /** Serialized lists by variant (viewerKey). */
  lists: Map<string, Lists>;
}

/** The two lists as JSON arrays in UTF-8, written into every answer as they are, and where each user's entry is in them. */
interface Lists {
  json: [active: Buffer, inactive: Buffer];
  /** User id -> [which list (0 active, 1 inactive), start, end] of their entry, in bytes. */
  spans: Map<number, [number, number, number]>;
}

export interface MemberListOptions {
  clientGravatar: boolean;
  /** Listed with profile data (not for spectators, as in Zulip). */
  withProfiles: boolean;
}

async function load(app: App, realmId: number): Promise<Members> {
  const [rows, values] = await Promise.all([
    app.db.query<User>('SELECT * FROM "User" WHERE "realmId" = $1 AND NOT "isSystemBot" ORDER BY id', [realmId]),
    app.db.query<{ userId: number; fieldId: number; value: string; renderedValue: string | null }>(
      `SELECT v."userId", v."fieldId", v.value, v."renderedValue"
         FROM "CustomProfileFieldValue" v JOIN "User" u ON u.id = v."userId"
        WHERE u."realmId" = $1`,
      [realmId],
    ),
  ]);
  const profiles = new Map<number, ProfileData>(rows.map((u) => [u.id, {}]));
  for (const v of values) {
    const data = profiles.get(v.userId);
    if (data) data[String(v.fieldId)] = v.renderedValue === null ? { value: v.value } : { value: v.value, rendered_value: v.renderedValue };
  }
  return { rows, active: rows.filter((u) => u.isActive), profiles, lists: new Map() };
}

// By the bus, which is one per server: register hands queries a copy of App per request.
const cache = realmCache(load, (app) => app.bus);

/**
 * Fills the cache from the pool. Register calls it before its snapshot transaction: a list read
 * in the snapshot could be older than an invalidation that came meanwhile, so the cache is only
 * ever filled from here, and reading from the pool while holding the snapshot's connection could
 * wait for a connection that never comes.
 */
export async function warmMemberLists(app: App, realmId: number): Promise<void> {
  await cache.get(app, realmId);
}

/** The cached members, or (dropped since the warm-up) read in the caller's snapshot for it alone. */
const members = (app: App, realmId: number) => cache.peek(app, realmId) ?? load(app, realmId);

/** An entry of the lists: the user as `viewer` sees them, without is_active (the list says it). */
function entryJson(app: App, realm: RealmInfo, m: Members, user: User, viewer: Viewer | null, o: MemberListOptions): string {
  const { is_active: _, ...entry } = formatUser(app, realm, user, viewer, {
    clientGravatar: o.clientGravatar,
    profileData: o.withProfiles ? m.profiles.get(user.id) : undefined,
  });
  return JSON.stringify(entry);
}

function serialize(app: App, realm: RealmInfo, m: Members, viewer: Viewer | null, o: MemberListOptions): Lists {
  const parts: [string[], string[]] = [[], []];
  const lengths = [1, 1];
  const spans = new Map<number, [number, number, number]>();
  for (const user of m.rows) {
    const list = user.isActive ? 0 : 1;
    const json = entryJson(app, realm, m, user, viewer, o);
    const bytes = Buffer.byteLength(json);
    if (parts[list].length > 0) lengths[list]! += 1;
    spans.set(user.id, [list, lengths[list]!, lengths[list]! + bytes]);
    parts[list].push(json);
    lengths[list]! += bytes;
  }
  return { json: [Buffer.from(`[${parts[0].join(',')}]`), Buffer.from(`[${parts[1].join(',')}]`)], spans };
}

/**
 * realm_users and realm_non_active_users as `viewer` (null: a spectator) sees them, serialized:
 * the organization's lists for the viewer's role, with the viewer's own entry as they see it
 * (the shared bytes around it are not copied).
 */
export async function memberLists(app: App, realm: RealmInfo, viewer: User | null, o: MemberListOptions): Promise<[RawJson, RawJson]> {
  const m = await members(app, realm.id);
  // The viewer's role is all canSeeEmail asks of anyone but the user themselves; id 0 is nobody.
  const asRole: Viewer | null = viewer && { id: 0, role: viewer.role };
  const key = `${asRole?.role ?? 'spectator'}:${o.clientGravatar}:${o.withProfiles}`;
  let lists = m.lists.get(key);
  if (!lists) m.lists.set(key, (lists = serialize(app, realm, m, asRole, o)));
  const pieces: JsonPiece[][] = [[lists.json[0]], [lists.json[1]]];
  const span = viewer && lists.spans.get(viewer.id);
  const own = viewer && m.rows.find((u) => u.id === viewer.id);
  if (span && own) {
    const [list, start, end] = span;
    const json = lists.json[list]!;
    pieces[list] = [json.subarray(0, start), entryJson(app, realm, m, own, viewer, o), json.subarray(end)];
  }
  return [new RawJson(...pieces[0]!), new RawJson(...pieces[1]!)];
}

/**
 * The organization's active users (system bots aside) in id order, from the same cache: what
 * register's realm_user_groups lists system groups' members from.
 */
export async function activeMembers(app: App, realmId: number): Promise<readonly PermissionSubject[]> {
  return (await members(app, realmId)).active;
}

/**
 * The organization's users (system bots aside) in id order, inactive ones too, when the cache holds
 * them (as register's snapshot may read them: what changed since comes as events); else undefined.
 */
export async function cachedMemberRows(app: App, realmId: number): Promise<readonly User[] | undefined> {
  return (await cache.peek(app, realmId))?.rows;
}

/** Drops the organization's lists: its users, their profile data or its own row changed. */
export function forgetMemberLists(app: App, realmId: number): void {
  cache.forget(app, realmId);
}

/** Whether an event reports a change to what the member lists are made of. */
export function changesMemberLists(event: ChatEvent): boolean {
  return (
    event.type === 'realm_user' ||
    event.type === 'custom_profile_fields' ||
    event.type === 'realm_bot' ||
    (event.type === 'user_settings' && 'property' in event && event.property === 'email_address_visibility')
  );
}
