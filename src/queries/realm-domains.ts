// The organization's email domains (GET /realm/domains, register's realm_domains).
import type { App } from '../app.ts';

export async function realmDomains(app: App, realmId: number): Promise<{ domain: string; allow_subdomains: boolean }[]> {
  const rows = await app.prisma.realmDomain.findMany({ where: { realmId }, orderBy: { id: 'asc' } });
  return rows.map((d) => ({ domain: d.domain, allow_subdomains: d.allowSubdomains }));
}

/**
 * Zulip's get_realm_email_validator: when the organization restricts emails to its domains, what is
 * wrong with an address (no `+` in it, a domain of the list, or a subdomain of one that allows
 * them); null when nothing is.
 */
export async function realmEmailChecker(
  app: App,
  realm: { id: number; settings: { emails_restricted_to_domains: boolean } },
): Promise<(email: string) => string | null> {
  if (!realm.settings.emails_restricted_to_domains) return () => null;
  const rows = await app.prisma.realmDomain.findMany({ where: { realmId: realm.id } });
  const exact = new Set(rows.map((r) => r.domain));
  const parents = new Set(rows.filter((r) => r.allowSubdomains).map((r) => r.domain));
  return (email) => {
    const at = email.lastIndexOf('@');
    if (email.slice(0, at).includes('+')) return 'Email addresses containing + are not allowed.';
    let domain = email.slice(at + 1).toLowerCase();
    if (exact.has(domain)) return null;
    while (domain.includes('.')) {
      domain = domain.slice(domain.indexOf('.') + 1);
      if (parents.has(domain)) return null;
    }
    return 'Outside your domain.';
  };
}
