// The LDAP directory (Zulip's ZulipLDAPAuthBackend and ZulipLDAPUserPopulator), through ldapts:
// finding a user's entry from what they typed at login (a username, or an email address), checking
// a password by binding as the entry, and reading what the directory says of the user (address,
// name, avatar, custom profile fields, whether the account is disabled) for login and sync-ldap.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Client, InvalidCredentialsError, NoSuchObjectError, type Entry } from 'ldapts';
import type { Config } from '../config.ts';
import { isValidEmail } from '../domain/email-address.ts';

/** A user's entry: its DN and attributes. */
export interface DirectoryEntry {
  dn: string;
  attrs: Entry;
}

/** The directory did not answer (down, refused the search account, bad certificate). */
export class DirectoryUnavailable extends Error {}

/** Active Directory's ACCOUNTDISABLE flag of userAccountControl. */
const ACCOUNT_DISABLED = 2;
const PROFILE_FIELD_PREFIX = 'custom_profile_field__';
const TIMEOUT_MS = 10_000;

/** RFC 4515: a value as it may stand in a search filter. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** RFC 4514: a value as it may stand in a DN. */
export function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, '\\$&')
    .replace(/^[ #]/, '\\$&')
    .replace(/ $/, '\\ ');
}

export class LdapDirectory {
  private readonly tls: ConnectionOptions;

  private constructor(private readonly c: Config & { LDAP_SERVER_URL: string }) {
    this.tls = c.LDAP_TLS_CA_FILE ? { ca: readFileSync(c.LDAP_TLS_CA_FILE) } : {};
  }

  /** The configured directory, or null without LDAP_SERVER_URL. */
  static from(config: Config): LdapDirectory | null {
    return config.LDAP_SERVER_URL ? new LdapDirectory({ ...config, LDAP_SERVER_URL: config.LDAP_SERVER_URL }) : null;
  }

  /** Zulip's require_email_format_usernames: false when users log in with directory usernames. */
  get usernamesAreEmails(): boolean {
    return !this.c.LDAP_APPEND_DOMAIN && !this.c.LDAP_EMAIL_ATTR;
  }

  private async open(): Promise<Client> {
    const url = this.c.LDAP_SERVER_URL;
    // ldapts speaks TLS from the first byte whenever it is given TLS options, and writes into
    // those it is given for StartTLS: each gets its own copy. The host is what the certificate must name.
    const tls = () => ({ ...this.tls, host: new URL(url).hostname.replace(/^\[|\]$/g, '') });
    const client = new Client({ url, ...(url.startsWith('ldaps:') ? { tlsOptions: tls() } : {}), timeout: TIMEOUT_MS, connectTimeout: TIMEOUT_MS });
    if (this.c.LDAP_START_TLS) await client.startTLS(tls());
    return client;
  }

  /** Runs `use` on a connection bound as the search account (anonymous without LDAP_BIND_DN). */
  private async searching<T>(use: (client: Client) => Promise<T>): Promise<T> {
    let client: Client | undefined;
    try {
      client = await this.open();
      if (this.c.LDAP_BIND_DN) await client.bind(this.c.LDAP_BIND_DN, this.c.LDAP_BIND_PASSWORD ?? '');
      return await use(client);
    } catch (err) {
      // The message never holds the bind password, only what the directory answered.
      throw new DirectoryUnavailable(err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err));
    } finally {
      await client?.unbind().catch(() => undefined);
    }
  }

  private async search(client: Client, base: string, scope: 'base' | 'sub', filter: string): Promise<DirectoryEntry[]> {
    const avatar = this.c.LDAP_USER_ATTR_MAP.avatar;
    const { searchEntries } = await client.search(base, { scope, filter, explicitBufferAttributes: avatar ? [avatar] : [] });
    return searchEntries.map((attrs) => ({ dn: attrs.dn, attrs }));
  }

  /** The entry of a directory username: by AUTH_LDAP_USER_DN_TEMPLATE, or the one AUTH_LDAP_USER_SEARCH finds. */
  private async byUsername(client: Client, username: string): Promise<DirectoryEntry | null> {
    if (this.c.LDAP_USER_DN_TEMPLATE) {
      try {
        return (await this.search(client, this.c.LDAP_USER_DN_TEMPLATE.replace('%(user)s', escapeDnValue(username)), 'base', '(objectClass=*)'))[0] ?? null;
      } catch (err) {
        if (err instanceof NoSuchObjectError) return null;
        throw err;
      }
    }
    const found = await this.search(
      client,
      this.c.LDAP_USER_SEARCH_BASE!,
      'sub',
      this.c.LDAP_USER_SEARCH_FILTER.replace('%(user)s', escapeFilterValue(username)),
    );
    return found.length === 1 ? found[0]! : null;
  }

  /**
   * Zulip's django_to_ldap_username and the lookup: the entry of what a user typed (an address of
   * LDAP_APPEND_DOMAIN stands for its local part, an address with LDAP_EMAIL_ATTR is searched
   * for), or null when the directory has none (or more than one).
   */
  findUser(login: string): Promise<DirectoryEntry | null> {
    return this.searching(async (client) => {
      const domain = this.c.LDAP_APPEND_DOMAIN;
      if (domain && isValidEmail(login)) {
        const at = login.lastIndexOf('@');
        if (login.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return null;
        return this.byUsername(client, login.slice(0, at));
      }
      if (!domain && this.c.LDAP_EMAIL_ATTR && isValidEmail(login)) {
        const found = await this.search(client, this.c.LDAP_USER_SEARCH_BASE!, 'sub', `(${this.c.LDAP_EMAIL_ATTR}=${escapeFilterValue(login)})`);
        if (found.length === 1) return found[0]!;
      }
      return this.byUsername(client, login);
    });
  }

  /** Whether the password is the entry's: a bind as the entry. An empty one never is (it would be an anonymous bind, which succeeds). */
  async checkPassword(entry: DirectoryEntry, password: string): Promise<boolean> {
    if (!password) return false;
    let client: Client | undefined;
    try {
      client = await this.open();
      await client.bind(entry.dn, password);
      return true;
    } catch (err) {
      if (err instanceof InvalidCredentialsError) return false;
      throw new DirectoryUnavailable(err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err));
    } finally {
      await client?.unbind().catch(() => undefined);
    }
  }

  /** The attribute's values, whatever case the directory spells its name in. */
  private values(entry: DirectoryEntry, name: string | undefined): (string | Buffer)[] {
    if (!name) return [];
    const key = Object.keys(entry.attrs).find((k) => k.toLowerCase() === name.toLowerCase());
    const value = key === undefined ? undefined : entry.attrs[key];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  }

  private text(entry: DirectoryEntry, name: string | undefined): string | undefined {
    const first = this.values(entry, name)[0];
    return first === undefined ? undefined : first.toString();
  }

  /** Zulip's user_email_from_ldapuser: the username at LDAP_APPEND_DOMAIN, LDAP_EMAIL_ATTR's value, or the login itself. */
  emailOf(entry: DirectoryEntry, login: string): string | null {
    const domain = this.c.LDAP_APPEND_DOMAIN;
    if (domain) return `${isValidEmail(login) ? login.slice(0, login.lastIndexOf('@')) : login}@${domain}`;
    if (this.c.LDAP_EMAIL_ATTR) return this.text(entry, this.c.LDAP_EMAIL_ATTR) ?? null;
    return isValidEmail(login) ? login : null;
  }

  /** Zulip's get_mapped_name: full_name, or first_name and last_name. */
  fullName(entry: DirectoryEntry): string | null {
    const map = this.c.LDAP_USER_ATTR_MAP;
    if (map.full_name) return this.text(entry, map.full_name) ?? null;
    const [first, last] = [this.text(entry, map.first_name), this.text(entry, map.last_name)];
    return first !== undefined && last !== undefined ? `${first} ${last}` : null;
  }

  /** Whether the directory says which accounts are disabled (userAccountControl or deactivated mapped). */
  get tracksDisabled(): boolean {
    const map = this.c.LDAP_USER_ATTR_MAP;
    return map.userAccountControl !== undefined || map.deactivated !== undefined;
  }

  /** Disabled in the directory: Active Directory's userAccountControl flag, or a `deactivated` attribute that is true. */
  isDisabled(entry: DirectoryEntry): boolean {
    const map = this.c.LDAP_USER_ATTR_MAP;
    const control = this.text(entry, map.userAccountControl);
    if (control !== undefined && (Number(control) & ACCOUNT_DISABLED) !== 0) return true;
    return this.text(entry, map.deactivated)?.toLowerCase() === 'true';
  }

  /** The image of the `avatar` attribute, if the entry has one. */
  avatar(entry: DirectoryEntry): Buffer | null {
    const value = this.values(entry, this.c.LDAP_USER_ATTR_MAP.avatar)[0];
    return value === undefined ? null : Buffer.isBuffer(value) ? value : Buffer.from(value);
  }

  /** The mapped custom profile fields the entry has, by var name. */
  profileValues(entry: DirectoryEntry): Map<string, string> {
    const found = new Map<string, string>();
    for (const [key, attribute] of Object.entries(this.c.LDAP_USER_ATTR_MAP)) {
      const value = key.startsWith(PROFILE_FIELD_PREFIX) ? this.text(entry, attribute) : undefined;
      if (value !== undefined) found.set(key.slice(PROFILE_FIELD_PREFIX.length), value);
    }
    return found;
  }
}
