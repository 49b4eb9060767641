// The organization's code playgrounds (register's realm_playgrounds and their events).
import type { Prisma } from '../db/generated/client.ts';

export interface PlaygroundDict {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export async function realmPlaygrounds(db: Pick<Prisma.TransactionClient, 'realmPlayground'>, realmId: number): Promise<PlaygroundDict[]> {
  const rows = await db.realmPlayground.findMany({ where: { realmId }, orderBy: { id: 'asc' } });
  return rows.map((p) => ({ id: p.id, name: p.name, pygments_language: p.pygmentsLanguage, url_template: p.urlTemplate }));
}
