// Channel folders as the API shows them (Zulip's get_channel_folder_dict), in display order.
import type { App } from '../app.ts';
import type { ChannelFolder, Prisma } from '../db/generated/client.ts';
import { timestamp } from './messages.ts';

export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
export const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;

export function formatChannelFolder(f: ChannelFolder): Record<string, unknown> {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    rendered_description: f.renderedDescription,
    order: f.order,
    date_created: timestamp(f.dateCreated),
    creator_id: f.creatorId,
    is_archived: f.isArchived,
  };
}

export async function channelFolders(app: App, realmId: number, includeArchived: boolean): Promise<Record<string, unknown>[]> {
  return folders(app, { realmId, ...(includeArchived ? {} : { isArchived: false }) });
}

/** What a spectator may see: the folders holding a web-public channel in use. */
export async function spectatorChannelFolders(app: App, realmId: number): Promise<Record<string, unknown>[]> {
  return folders(app, { realmId, channels: { some: { isWebPublic: true, isArchived: false } } });
}

async function folders(app: App, where: Prisma.ChannelFolderWhereInput): Promise<Record<string, unknown>[]> {
  return (await app.prisma.channelFolder.findMany({ where, orderBy: [{ order: 'asc' }, { id: 'asc' }] })).map(formatChannelFolder);
}
