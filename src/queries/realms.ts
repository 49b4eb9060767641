// Organizations and their groups, cached in memory: every request resolves its realm from the Host
// header and most permission checks read group membership, so neither may cost a query.
import { isValidEmail } from '../domain/email-address.ts';
import type { Scheme } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { currentTransaction, type OpenTransaction } from '../db/transaction.ts';
import { REALM_PERMISSION_DEFAULTS, type GroupSettingValue, type RealmPermission, type RealmSettings, realmSettingsSchema } from '../domain/realm-settings.ts';
import type { SystemGroupName } from '../domain/roles.ts';
import type { UserSettings } from '../domain/user-settings.ts';

export interface RealmInfo {
  id: number;
  subdomain: string;
  name: string;
  description: string;
  dateCreated: Date;
  deactivated: boolean;
  settings: RealmSettings;
  permissions: Record<RealmPermission, GroupSettingValue>;
  systemGroups: Record<SystemGroupName, number>;
  /** The personal settings new users start with, as stored: only those the organization changed. */
  userSettingsDefaults: Partial<UserSettings>;
  /** The scheme of this request's URLs, when a trusted proxy says it differs from the configured one. */
  scheme?: Scheme;
}

export interface GroupInfo {
  id: number;
  name: string | null;
  description: string;
  isSystemGroup: boolean;
  deactivated: boolean;
  dateCreated: Date;
  creatorId: number | null;
  members: Set<number>;
  subgroups: number[];
  permissions: Record<string, GroupSettingValue>;
}

export class RealmDirectory {
  private readonly byIdCache = new Map<number, RealmInfo>();
  private readonly bySubdomain = new Map<string, RealmInfo>();
  private readonly groupCache = new Map<number, Promise<Map<number, GroupInfo>>>();
  /** Each organization as seen through a proxy that reports the other scheme, made once per load. */
  private readonly otherSchemeViews = new Map<number, RealmInfo>();
  /** The address domain of each host seen (one per organization): see emailDomain. */
  private readonly emailDomains = new Map<string, string>();
  private readonly transactionGroups = new WeakMap<OpenTransaction, Map<number, Promise<Map<number, GroupInfo>>>>();

  constructor(
    private readonly prisma: PrismaClient,
    /** host[:port] of the root domain; organization N lives at N.<root>. */
    public externalHost: string,
    private readonly scheme: Scheme,
    /** The domain of bots' and dummy addresses when the host cannot form one (`localhost`, an IP address). */
    private readonly fakeEmailDomain: string,
  ) {}

  async loadAll(): Promise<void> {
    const rows = await this.prisma.realm.findMany({ select: { id: true } });
    for (const { id } of rows) await this.reload(id);
  }

  async reload(id: number): Promise<RealmInfo | undefined> {
    const row = await this.prisma.realm.findUnique({ where: { id } });
    const old = this.byIdCache.get(id);
    if (old) this.bySubdomain.delete(old.subdomain);
    this.otherSchemeViews.delete(id);
    if (!row) {
      this.byIdCache.delete(id);
      return undefined;
    }
    const groups = await this.prisma.userGroup.findMany({ where: { realmId: id, isSystemGroup: true }, select: { id: true, name: true } });
    const systemGroups = Object.fromEntries(groups.map((g) => [g.name, g.id])) as Record<SystemGroupName, number>;
    const stored = (row.permissions ?? {}) as Record<string, GroupSettingValue>;
    const permissions = Object.fromEntries(Object.entries(REALM_PERMISSION_DEFAULTS).map(([k, def]) => [k, stored[k] ?? systemGroups[def]])) as Record<
      RealmPermission,
      GroupSettingValue
    >;
    const info: RealmInfo = {
      id: row.id,
      subdomain: row.subdomain,
      name: row.name,
      description: row.description,
      dateCreated: row.dateCreated,
      deactivated: row.deactivated,
      settings: realmSettingsSchema.parse(row.settings ?? {}),
      permissions,
      systemGroups,
      userSettingsDefaults: (row.userSettingsDefaults ?? {}) as Partial<UserSettings>,
    };
    this.byIdCache.set(id, info);
    this.bySubdomain.set(info.subdomain, info);
    return info;
  }

  byId(id: number): RealmInfo | undefined {
    return this.byIdCache.get(id);
  }

  get count(): number {
    return this.byIdCache.size;
  }

  /**
   * Zulip's rule: a server with one organization serves it on any host; otherwise by subdomain.
   * `scheme`: the one the client used, as a trusted proxy reports it; the organization's URLs
   * (realm_url, links the server writes) then use it.
   */
  forHost(hostHeader: string, scheme: Scheme | null = null): RealmInfo | undefined {
    const realm = this.byIdCache.size === 1 ? this.byIdCache.values().next().value : this.bySubdomain.get(this.subdomainOf(hostHeader));
    if (!realm || scheme === null || scheme === this.scheme) return realm;
    let view = this.otherSchemeViews.get(realm.id);
    if (!view) {
      view = { ...realm, scheme };
      this.otherSchemeViews.set(realm.id, view);
    }
    return view;
  }

  subdomainOf(hostHeader: string): string {
    const host = stripPort(hostHeader.toLowerCase());
    const root = stripPort(this.externalHost.toLowerCase());
    return host.endsWith('.' + root) ? host.slice(0, -root.length - 1) : '';
  }

  /** host[:port] of an organization. */
  host(realm: RealmInfo): string {
    return realm.subdomain ? `${realm.subdomain}.${this.externalHost}` : this.externalHost;
  }

  url(realm: RealmInfo): string {
    return `${realm.scheme ?? this.scheme}://${this.host(realm)}`;
  }

  /**
   * Domain of the dummy API emails `user{id}@{domain}` and of system bots: the host without its
   * port, or FAKE_EMAIL_DOMAIN where that would not make a valid address (Zulip's get_fake_email_domain).
   */
  emailDomain(realm: RealmInfo): string {
    const host = stripPort(this.host(realm));
    // Asked for every user a register lists: each host is checked once.
    let domain = this.emailDomains.get(host);
    if (domain === undefined) {
      domain = isValidEmail(`bot@${host}`) ? host : this.fakeEmailDomain;
      this.emailDomains.set(host, domain);
    }
    return domain;
  }

  groups(realmId: number): Promise<Map<number, GroupInfo>> {
    // A transaction checks against the groups as it sees them (it may be changing them), read once.
    const t = currentTransaction();
    if (t) {
      let seen = this.transactionGroups.get(t);
      if (!seen) this.transactionGroups.set(t, (seen = new Map()));
      const groups = seen.get(realmId) ?? this.loadGroups(realmId);
      seen.set(realmId, groups);
      return groups;
    }
    let cached = this.groupCache.get(realmId);
    if (!cached) {
      cached = this.loadGroups(realmId);
      this.groupCache.set(realmId, cached);
      cached.catch(() => this.groupCache.delete(realmId));
    }
    return cached;
  }

  /** After a change of groups: inside its transaction, for what it reads next; at commit, for everyone. */
  forgetGroups(realmId: number): void {
    const t = currentTransaction();
    if (t) this.transactionGroups.get(t)?.delete(realmId);
    this.groupCache.delete(realmId);
  }

  /**
   * This directory seen from inside a transaction (a register snapshot): groups are read through
   * `client`, once per view, and never cached, since the cache may be newer than the snapshot.
   */
  within(client: Pick<PrismaClient, 'userGroup'>): RealmDirectory {
    const view = Object.create(this) as RealmDirectory;
    const loaded = new Map<number, Promise<Map<number, GroupInfo>>>();
    view.groups = (realmId) => {
      const groups = loaded.get(realmId) ?? this.loadGroups(realmId, client);
      loaded.set(realmId, groups);
      return groups;
    };
    return view;
  }

  private async loadGroups(realmId: number, client: Pick<PrismaClient, 'userGroup'> = this.prisma): Promise<Map<number, GroupInfo>> {
    const rows = await client.userGroup.findMany({
      where: { realmId },
      include: { members: { select: { userId: true } }, subgroups: { select: { subgroupId: true } } },
      orderBy: { id: 'asc' },
    });
    return new Map(
      rows.map((g) => [
        g.id,
        {
          id: g.id,
          name: g.name,
          description: g.description,
          isSystemGroup: g.isSystemGroup,
          deactivated: g.deactivated,
          dateCreated: g.dateCreated,
          creatorId: g.creatorId,
          members: new Set(g.members.map((m) => m.userId)),
          subgroups: g.subgroups.map((s) => s.subgroupId),
          permissions: (g.permissions ?? {}) as Record<string, GroupSettingValue>,
        },
      ]),
    );
  }
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}
