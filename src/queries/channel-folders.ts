// Channel folders as the API shows them (Zulip's get_channel_folder_dict), in display order.
import type { App } from '../app.ts';
import type { ChannelFolder } from '../db/generated/client.ts';
import { timestamp } from './messages.ts';

export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
export const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;

export function formatChannelFolder(f: ChannelFolder): Record<string, unknown> {
  return {
    id: f.id, name: f.name, description: f.description, rendered_description: f.renderedDescription, order: f.order,
    date_created: timestamp(f.dateCreated), creator_id: f.creatorId, is_archived: f.isArchived,
  };
}

export async function channelFolders(app: App, realmId: number, includeArchived: boolean): Promise<Record<string, unknown>[]> {
  const rows = await app.prisma.channelFolder.findMany({
    where: { realmId, ...(includeArchived ? {} : { isArchived: false }) },
    orderBy: [{ order: 'asc' }, { id: 'asc' }],
  });
  return rows.map(formatChannelFolder);
}
