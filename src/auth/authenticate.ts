// Resolves HTTP Basic credentials to a user. Users are cached by (realm, email) so GET /events and
// other hot requests authenticate without a query; actions that change a user call `forget`.
import type { PrismaClient, User } from '../db/generated/client.ts';
import { realmDeactivated, unauthorized, userDeactivated } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { API_KEY_PATTERN, apiKeysEqual, generateApiKey } from './api-keys.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';

const DUMMY_EMAIL = /^user(\d+)@/i;
// Compared against when the email is unknown, so a miss takes as long as a wrong key.
const DECOY_KEY = generateApiKey();
const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="zulip"' };

export class UserAuthenticator {
  /**
   * By organization, then lower-cased address: looked up with the address as the client sent it
   * first, the same string on every request of that client (its hash kept in it), so a known user
   * costs no new string.
   */
  private readonly cache = new Map<number, Map<string, User>>();
  /** The (organization, address) entries of each user, for `forget`. */
  private readonly keysByUser = new Map<number, [realmId: number, email: string][]>();
  /** Bumped by every `forget`, so a read that started before a change does not cache the old row. */
  private generation = 0;

  constructor(private readonly prisma: PrismaClient) {}

  /** The user of these credentials; at once, without a promise, when the address was seen before. */
  authenticate(realm: RealmInfo, email: string, apiKey: string): User | Promise<User> {
    if (!API_KEY_PATTERN.test(apiKey)) throw unauthorized('Malformed API key');
    const cached = this.cached(realm, email);
    if (cached) return this.check(realm, cached, apiKey);
    return this.findByEmail(realm, email).then((user) => this.check(realm, user, apiKey));
  }

  private check(realm: RealmInfo, user: User | undefined, apiKey: string): User {
    if (!apiKeysEqual(apiKey, user?.apiKey ?? DECOY_KEY) || !user) throw unauthorized('Invalid API key');
    // As Zulip's validate_account_and_subdomain: the organization first, then the account.
    if (realm.deactivated) throw realmDeactivated(BASIC_CHALLENGE);
    if (!user.isActive) throw userDeactivated(BASIC_CHALLENGE);
    return user;
  }

  private cached(realm: RealmInfo, email: string): User | undefined {
    const users = this.cache.get(realm.id);
    return users === undefined ? undefined : (users.get(email) ?? users.get(email.toLowerCase()));
  }

  /** By real address, or by the dummy API address `user{id}@...` that clients may hold. */
  async findByEmail(realm: RealmInfo, email: string): Promise<User | undefined> {
    const cached = this.cached(realm, email);
    if (cached) return cached;
    const dummy = DUMMY_EMAIL.exec(email);
    const generation = this.generation;
    const user =
      (await this.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: equalsIgnoringCase(email) } })) ??
      (dummy ? await this.prisma.user.findFirst({ where: { realmId: realm.id, id: Number(dummy[1]) } }) : null);
    if (!user || generation !== this.generation) return user ?? undefined;
    const key = email.toLowerCase();
    let users = this.cache.get(realm.id);
    if (users === undefined) this.cache.set(realm.id, (users = new Map()));
    users.set(key, user);
    const keys = this.keysByUser.get(user.id);
    if (keys) keys.push([realm.id, key]);
    else this.keysByUser.set(user.id, [[realm.id, key]]);
    return user;
  }

  /** Drops every cached entry of a user after it changed (role, key, email, deactivation). */
  forget(userId: number): void {
    this.generation++;
    for (const [realmId, email] of this.keysByUser.get(userId) ?? []) this.cache.get(realmId)?.delete(email);
    this.keysByUser.delete(userId);
  }
}
