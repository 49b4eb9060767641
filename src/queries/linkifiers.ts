// An organization's linkifiers: the ordered list the API shows, and the compiled set the renderer
// applies. Both are cached per realm, since every rendered message needs them; actions call
// forgetLinkifiers after each committed change (through cluster/cache-sync.ts, which tells the
// other processes of a cluster too).
import type { App } from '../app.ts';
import type { Prisma } from '../db/generated/client.ts';
import { compileLinkifiers, type CompiledLinkifiers } from '../markdown/index.ts';
import { realmCache } from './realm-cache.ts';

/** A linkifier as GET /realm/linkifiers, POST /register and `realm_linkifiers` events show it. */
export interface LinkifierDict {
  id: number;
  pattern: string;
  url_template: string;
  example_input: string | null;
  reverse_template: string | null;
  alternative_url_templates: string[];
}

interface RealmLinkifiers {
  list: LinkifierDict[];
  compiled: CompiledLinkifiers;
}

type Reader = Pick<Prisma.TransactionClient, 'linkifier'>;

/** The stored JSON column as the list it always holds. */
export function alternativeTemplates(value: Prisma.JsonValue): string[] {
  return Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : [];
}

/** The realm's linkifiers in processing order; ties (as after a plain insert) go by id, as in Zulip. */
export async function loadLinkifiers(db: Reader, realmId: number): Promise<LinkifierDict[]> {
  const rows = await db.linkifier.findMany({ where: { realmId }, orderBy: [{ order: 'asc' }, { id: 'asc' }] });
  return rows.map((r) => ({
    id: r.id,
    pattern: r.pattern,
    url_template: r.urlTemplate,
    example_input: r.exampleInput,
    reverse_template: r.reverseTemplate,
    alternative_url_templates: alternativeTemplates(r.alternativeUrlTemplates),
  }));
}

const linkifiers = realmCache(async (app, realmId): Promise<RealmLinkifiers> => {
  const list = await loadLinkifiers(app.prisma, realmId);
  return { list, compiled: compileLinkifiers(list) };
});

export async function realmLinkifiers(app: App, realmId: number): Promise<LinkifierDict[]> {
  return (await linkifiers.get(app, realmId)).list;
}

/** The compiled set for MarkdownContext.linkifiers and topicLinks. */
export async function compiledLinkifiers(app: App, realmId: number): Promise<CompiledLinkifiers> {
  return (await linkifiers.get(app, realmId)).compiled;
}

export function forgetLinkifiers(app: App, realmId: number): void {
  linkifiers.forget(app, realmId);
}
