// Channel folders as the API shows them (Zulip's get_channel_folder_dict), in display order.
import type { App } from '../app.ts';
import type { ChannelFolder, Prisma } from '../db/generated/client.ts';
import { timestamp } from './messages.ts';
import type { z } from 'zod';
import type { channelFolder } from '../events/schemas.ts';

export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
export const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;

export function formatChannelFolder(f: ChannelFolder): z.infer<typeof channelFolder> {
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

export async function channelFolders(app: App, realmId: number, includeArchived: boolean): Promise<z.infer<typeof channelFolder>[]> {
  return folders(app, { realmId, ...(includeArchived ? {} : { isArchived: false }) });
}

/** What a spectator may see: the folders holding a web-public channel in use. */
export async function spectatorChannelFolders(app: App, realmId: number): Promise<z.infer<typeof channelFolder>[]> {
  return folders(app, { realmId, channels: { some: { isWebPublic: true, isArchived: false } } });
}

async function folders(app: App, where: Prisma.ChannelFolderWhereInput): Promise<z.infer<typeof channelFolder>[]> {
  return (await app.prisma.channelFolder.findMany({ where, orderBy: [{ order: 'asc' }, { id: 'asc' }] })).map(formatChannelFolder);
}
