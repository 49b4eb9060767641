// Drafts kept on the server (Zulip's drafts API), so they follow the user to any device: the
// compose box saves what it holds while one types and deletes it once sent; `#drafts` lists them.
import type { Api } from './api.ts';
import type { Destination } from './types.ts';

export interface Draft {
  id: number;
  type: 'stream' | 'private' | '';
  /** The channel's id, or the people's ids. */
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** The overlay's lists (`#drafts`, `#scheduled`, `#reminders`, as Zulip's addresses), or null for another address. */
export type DraftsTab = 'drafts' | 'scheduled' | 'reminders';

export function parseDraftsHash(hash: string): DraftsTab | null {
  const name = hash.replace(/^#/, '');
  return name === 'drafts' || name === 'scheduled' || name === 'reminders' ? name : null;
}

const draftOf = (to: Destination, content: string) => ({
  type: to.kind === 'stream' ? 'stream' : 'private',
  to: to.kind === 'stream' ? [to.streamId] : to.userIds,
  topic: to.kind === 'stream' ? to.topic : '',
  content,
  timestamp: Math.floor(Date.now() / 1000),
});

export const destinationOf = (d: Draft): Destination =>
  d.type === 'stream' ? { kind: 'stream', streamId: d.to[0]!, topic: d.topic } : { kind: 'dm', userIds: d.to };

/** Saves a draft (POST /drafts the first time, then PATCH /drafts/{id}); answers its id. */
export async function saveDraft(api: Api, id: number | null, to: Destination, content: string): Promise<number> {
  if (id !== null) {
    await api.patch(`/drafts/${id}`, { draft: draftOf(to, content) });
    return id;
  }
  const { ids } = await api.post<{ ids: number[] }>('/drafts', { drafts: [draftOf(to, content)] });
  return ids[0]!;
}

export async function deleteDraft(api: Api, id: number): Promise<void> {
  await api.delete(`/drafts/${id}`);
}
