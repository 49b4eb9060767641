// Channel folders (Zulip's /channel_folders): administrators make folders, rename, describe and
// archive them, and put channels in them; the left sidebar groups channels by folder.
import type { Api } from './api.ts';

export async function createFolder(api: Api, name: string, description: string): Promise<void> {
  await api.post('/channel_folders/create', { name, description });
}

export async function updateFolder(api: Api, id: number, change: { name?: string; description?: string; is_archived?: boolean }): Promise<void> {
  await api.patch(`/channel_folders/${id}`, change);
}

/** Puts a channel in a folder, or takes it out (null). */
export async function setChannelFolder(api: Api, streamId: number, folderId: number | null): Promise<void> {
  await api.patch(`/streams/${streamId}`, { folder_id: folderId });
}
