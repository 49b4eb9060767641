// The organization's email domains (GET /realm/domains, register's realm_domains).
import type { App } from '../app.ts';

export async function realmDomains(app: App, realmId: number): Promise<{ domain: string; allow_subdomains: boolean }[]> {
  const rows = await app.prisma.realmDomain.findMany({ where: { realmId }, orderBy: { id: 'asc' } });
  return rows.map((d) => ({ domain: d.domain, allow_subdomains: d.allowSubdomains }));
}
