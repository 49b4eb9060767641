// Saved snippets (spec 4.14, Zulip's zerver/actions/saved_snippets.py): reusable message texts of
// one user, kept in step across the user's clients by `saved_snippets` events.
import type { App } from '../app.ts';
import { committedWrite, transactionId } from '../db/commits.ts';
import type { User } from '../db/generated/client.ts';
import { notFound } from '../errors.ts';
import { formatSnippet } from '../queries/drafts.ts';
import type { RealmInfo } from '../queries/realms.ts';

export const snippetNotFound = () => notFound('Saved snippet does not exist.');

function publishSnippets(app: App, realm: RealmInfo, user: User, xid: number, event: Record<string, unknown>): void {
  app.bus.publish({ realmId: realm.id, userIds: [user.id], event: { type: 'saved_snippets', ...event }, xid });
}

export async function createSnippet(app: App, realm: RealmInfo, user: User, title: string, content: string): Promise<number> {
  const [snippet, xid] = await committedWrite(app.prisma, app.prisma.savedSnippet.create({ data: { userId: user.id, title, content } }));
  publishSnippets(app, realm, user, xid, { op: 'add', saved_snippet: formatSnippet(snippet) });
  return snippet.id;
}

/** Changes the given fields of the user's own snippet; someone else's is as missing as a deleted one. */
export async function editSnippet(app: App, realm: RealmInfo, user: User, id: number, change: { title?: string; content?: string }): Promise<void> {
  const [snippet, xid] = await app.prisma.$transaction(async (tx) => {
    const { count } = await tx.savedSnippet.updateMany({ where: { id, userId: user.id }, data: change });
    if (count === 0) throw snippetNotFound();
    return [await tx.savedSnippet.findUniqueOrThrow({ where: { id } }), await transactionId(tx)] as const;
  });
  publishSnippets(app, realm, user, xid, { op: 'update', saved_snippet: formatSnippet(snippet) });
}

export async function deleteSnippet(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  const [{ count }, xid] = await committedWrite(app.prisma, app.prisma.savedSnippet.deleteMany({ where: { id, userId: user.id } }));
  if (count === 0) throw snippetNotFound();
  publishSnippets(app, realm, user, xid, { op: 'remove', saved_snippet_id: id });
}
