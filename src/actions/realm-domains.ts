// Organization email domains (Zulip's zerver/views/realm_domains.py and do_*_realm_domain):
// owners add, change and remove them; every active user gets `realm_domains` events. Removing
// the last domain lifts the restriction of new accounts to the organization's domains.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { sendToRealm, updateRealm } from './realm.ts';
import { atomic } from './transaction.ts';

/** Zulip's validate_domain; the reason follows "Invalid domain: ". */
function domainProblem(domain: string): string | null {
  if (domain.length === 0) return "Domain can't be empty.";
  if (!domain.includes('.')) return 'Domain must have at least one dot (.)';
  if (domain.length > 255) return 'Domain is too long';
  if (domain.startsWith('.') || domain.endsWith('.')) return 'Domain cannot start or end with a dot (.)';
  for (const part of domain.split('.')) {
    if (!part) return "Consecutive '.' are not allowed.";
    if (part.startsWith('-') || part.endsWith('-')) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(part)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}

const noEntry = (domain: string) => badRequest(`No entry found for domain ${domain}.`);

/** POST /realm/domains: returns [id, domain] as Zulip's new_domain. */
export async function addRealmDomain(app: App, realm: RealmInfo, actor: User, rawDomain: string, allowSubdomains: boolean): Promise<[number, string]> {
  requireRole(actor, Role.OWNER);
  const domain = rawDomain.trim().toLowerCase();
  const problem = domainProblem(domain);
  if (problem) throw badRequest(`Invalid domain: ${problem}`);
  const row = await atomic(app, async () => {
    const created = await app.prisma.realmDomain.createMany({ data: [{ realmId: realm.id, domain, allowSubdomains }], skipDuplicates: true });
    if (created.count === 0) throw badRequest(`The domain ${domain} is already a part of your organization.`);
    await sendToRealm(app, realm, { type: 'realm_domains', op: 'add', realm_domain: { domain, allow_subdomains: allowSubdomains } });
    return app.prisma.realmDomain.findUniqueOrThrow({ where: { realmId_domain: { realmId: realm.id, domain } } });
  });
  return [row.id, row.domain];
}

/** PATCH /realm/domains/{domain}. */
export async function changeRealmDomain(app: App, realm: RealmInfo, actor: User, domain: string, allowSubdomains: boolean): Promise<void> {
  requireRole(actor, Role.OWNER);
  await atomic(app, async () => {
    const { count } = await app.prisma.realmDomain.updateMany({ where: { realmId: realm.id, domain }, data: { allowSubdomains } });
    if (count === 0) throw noEntry(domain);
    await sendToRealm(app, realm, { type: 'realm_domains', op: 'change', realm_domain: { domain, allow_subdomains: allowSubdomains } });
  });
}

/** DELETE /realm/domains/{domain}. */
export async function removeRealmDomain(app: App, realm: RealmInfo, actor: User, domain: string): Promise<void> {
  requireRole(actor, Role.OWNER);
  await atomic(app, async () => {
    const { count } = await app.prisma.realmDomain.deleteMany({ where: { realmId: realm.id, domain } });
    if (count === 0) throw noEntry(domain);
    await sendToRealm(app, realm, { type: 'realm_domains', op: 'remove', domain });
    // With no domain left, a restriction to the organization's domains would admit nobody.
    const remaining = await app.prisma.realmDomain.count({ where: { realmId: realm.id } });
    if (remaining === 0 && realm.settings.emails_restricted_to_domains)
      await updateRealm(app, realm, actor, { settings: { emails_restricted_to_domains: false }, permissions: {} });
  });
}
