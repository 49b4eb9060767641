// Saved snippets (spec 4.14, Zulip's zerver/actions/saved_snippets.py): reusable message texts of
// one user, kept in step across the user's clients by `saved_snippets` events.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { notFound } from '../errors.ts';
import { formatSnippet } from '../queries/drafts.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { EventBody } from '../events/schemas.ts';

export const snippetNotFound = () => notFound('Saved snippet does not exist.');

function sendSnippets(realm: RealmInfo, user: User, event: EventBody<'saved_snippets'>): void {
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'saved_snippets', ...event } });
}

export async function createSnippet(app: App, realm: RealmInfo, user: User, title: string, content: string): Promise<number> {
  return atomic(app, async () => {
    const snippet = await app.prisma.savedSnippet.create({ data: { userId: user.id, title, content } });
    sendSnippets(realm, user, { op: 'add', saved_snippet: formatSnippet(snippet) });
    return snippet.id;
  });
}

/** Changes the given fields of the user's own snippet; someone else's is as missing as a deleted one. */
export async function editSnippet(app: App, realm: RealmInfo, user: User, id: number, change: { title?: string; content?: string }): Promise<void> {
  await atomic(app, async () => {
    const { count } = await app.prisma.savedSnippet.updateMany({ where: { id, userId: user.id }, data: change });
    if (count === 0) throw snippetNotFound();
    sendSnippets(realm, user, { op: 'update', saved_snippet: formatSnippet(await app.prisma.savedSnippet.findUniqueOrThrow({ where: { id } })) });
  });
}

export async function deleteSnippet(app: App, realm: RealmInfo, user: User, id: number): Promise<void> {
  await atomic(app, async () => {
    const { count } = await app.prisma.savedSnippet.deleteMany({ where: { id, userId: user.id } });
    if (count === 0) throw snippetNotFound();
    sendSnippets(realm, user, { op: 'remove', saved_snippet_id: id });
  });
}
