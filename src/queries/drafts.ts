// Drafts and saved snippets as the API shows them (spec 2.5), for GET endpoints, the register
// snapshot and the events that keep it current.
import type { App } from '../app.ts';
import type { Draft, SavedSnippet } from '../db/generated/client.ts';
import type { z } from 'zod';
import { draft, type snippet } from '../events/schemas.ts';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function formatDraft(d: Draft): z.infer<typeof draft> {
  return {
    id: d.id,
    type: draft.shape.type.parse(d.type),
    to: draft.shape.to.parse(d.to),
    topic: d.topic,
    content: d.content,
    timestamp: seconds(d.lastEditTime),
  };
}

export function formatSnippet(s: SavedSnippet): z.infer<typeof snippet> {
  return { id: s.id, title: s.title, content: s.content, date_created: seconds(s.dateCreated) };
}

/** The user's drafts, least recently edited first (as Zulip's GET /drafts). */
export async function listDrafts(app: App, userId: number): Promise<z.infer<typeof draft>[]> {
  const rows = await app.prisma.draft.findMany({ where: { userId }, orderBy: [{ lastEditTime: 'asc' }, { id: 'asc' }] });
  return rows.map(formatDraft);
}

export async function listSnippets(app: App, userId: number): Promise<z.infer<typeof snippet>[]> {
  const rows = await app.prisma.savedSnippet.findMany({ where: { userId }, orderBy: { id: 'asc' } });
  return rows.map(formatSnippet);
}
