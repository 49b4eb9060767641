// Drafts and saved snippets as the API shows them (spec 2.5), for GET endpoints, the register
// snapshot and the events that keep it current.
import type { App } from '../app.ts';
import type { Draft, SavedSnippet } from '../db/generated/client.ts';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function formatDraft(d: Draft): Record<string, unknown> {
  return { id: d.id, type: d.type, to: d.to, topic: d.topic, content: d.content, timestamp: seconds(d.lastEditTime) };
}

export function formatSnippet(s: SavedSnippet): Record<string, unknown> {
  return { id: s.id, title: s.title, content: s.content, date_created: seconds(s.dateCreated) };
}

/** The user's drafts, least recently edited first (as Zulip's GET /drafts). */
export async function listDrafts(app: App, userId: number): Promise<Record<string, unknown>[]> {
  const rows = await app.prisma.draft.findMany({ where: { userId }, orderBy: [{ lastEditTime: 'asc' }, { id: 'asc' }] });
  return rows.map(formatDraft);
}

export async function listSnippets(app: App, userId: number): Promise<Record<string, unknown>[]> {
  const rows = await app.prisma.savedSnippet.findMany({ where: { userId }, orderBy: { id: 'asc' } });
  return rows.map(formatSnippet);
}
