// Channel folders (spec 4.5, Zulip's zerver/actions/channel_folders.py): administrators create,
// rename, describe, archive and order them; every active user gets `channel_folder` events.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { ChannelFolder, Prisma, User } from '../db/generated/client.ts';
import { unprintablePosition } from '../domain/printable.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { formatChannelFolder } from '../queries/channel-folders.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { renderDescription } from '../queries/render-context.ts';
import { realmViewers } from '../queries/users.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import type { EventBody } from '../events/schemas.ts';

type Tx = Prisma.TransactionClient;

/** Folder writes of one organization run one at a time: name uniqueness and order hold. */
async function lockRealm(tx: Tx, realmId: number): Promise<void> {
  await tx.$queryRawUnsafe('SELECT 1 FROM "Realm" WHERE id = $1 FOR UPDATE', realmId);
}

/** Zulip's check_channel_folder_name: printable, and unique among the folders in use. */
async function checkFolderName(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  if (name.trim() === '') throw badRequest("Channel folder name can't be empty.");
  const bad = unprintablePosition(name);
  if (bad !== null) throw badRequest(`Invalid character in channel folder name, at position ${bad}.`);
  const taken = await tx.channelFolder.findFirst({
    where: { realmId, isArchived: false, name: equalsIgnoringCase(name), ...(exceptId ? { id: { not: exceptId } } : {}) },
    select: { id: true },
  });
  if (taken) throw badRequest('Channel folder name already in use');
}

async function folderById(tx: Tx, realmId: number, id: number): Promise<ChannelFolder> {
  const folder = await tx.channelFolder.findFirst({ where: { id, realmId } });
  if (!folder) throw badRequest('Invalid channel folder ID');
  return folder;
}

async function sendFolderEvent(app: App, realm: RealmInfo, event: EventBody<'channel_folder'>): Promise<void> {
  const userIds = (await realmViewers(app, realm.id)).map((v) => v.id);
  sendOnCommit({ realmId: realm.id, userIds, event: { type: 'channel_folder', ...event } });
}

/** POST /channel_folders/create: the new folder goes last. */
export async function createChannelFolder(app: App, realm: RealmInfo, actor: User, name: string, description: string): Promise<number> {
  requireRole(actor, Role.ADMINISTRATOR);
  const renderedDescription = await renderDescription(app, realm, description);
  return atomic(app, async () => {
    const tx = app.prisma;
    await lockRealm(tx, realm.id);
    await checkFolderName(tx, realm.id, name);
    const order = await tx.channelFolder.count({ where: { realmId: realm.id } });
    const folder = await tx.channelFolder.create({ data: { realmId: realm.id, name, description, renderedDescription, order, creatorId: actor.id } });
    await sendFolderEvent(app, realm, { op: 'add', channel_folder: formatChannelFolder(folder) });
    return folder.id;
  });
}

export interface FolderChange {
  name?: string;
  description?: string;
  isArchived?: boolean;
}

/** PATCH /channel_folders/{id}: what really changes is written and announced in one event. */
export async function updateChannelFolder(app: App, realm: RealmInfo, actor: User, folderId: number, change: FolderChange): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  const renderedDescription = change.description === undefined ? undefined : await renderDescription(app, realm, change.description);
  await atomic(app, async () => {
    const tx = app.prisma;
    await lockRealm(tx, realm.id);
    const folder = await folderById(tx, realm.id, folderId);
    const data: Record<string, unknown> = {};
    if (change.name !== undefined && change.name !== folder.name) data.name = change.name;
    if (change.description !== undefined && change.description !== folder.description)
      Object.assign(data, { description: change.description, rendered_description: renderedDescription });
    if (change.isArchived !== undefined && change.isArchived !== folder.isArchived) data.is_archived = change.isArchived;
    if (Object.keys(data).length === 0) return;
    // A folder in use again must have a name no other folder in use has.
    if (data.name !== undefined || data.is_archived === false) await checkFolderName(tx, realm.id, (data.name as string | undefined) ?? folder.name, folder.id);
    if (data.is_archived === true && (await tx.channel.findFirst({ where: { folderId: folder.id, isArchived: false }, select: { id: true } }))) {
      throw badRequest('You need to remove all the channels from this folder to archive it.');
    }
    await tx.channelFolder.update({
      where: { id: folder.id },
      data: { name: change.name, description: change.description, renderedDescription, isArchived: change.isArchived },
    });
    await sendFolderEvent(app, realm, { op: 'update', channel_folder_id: folderId, data });
  });
}

/** PATCH /channel_folders: the ids of every folder, in their new order. */
export async function reorderChannelFolders(app: App, realm: RealmInfo, actor: User, order: number[]): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    const tx = app.prisma;
    await lockRealm(tx, realm.id);
    // As Zulip: every folder must be placed; ids of no folder here are passed over.
    const position = new Map(order.map((id, i) => [id, i]));
    const ids = (await tx.channelFolder.findMany({ where: { realmId: realm.id }, select: { id: true } })).map((f) => f.id);
    if (!ids.every((id) => position.has(id))) throw badRequest('Invalid order mapping.');
    await tx.$executeRawUnsafe(
      'UPDATE "ChannelFolder" f SET "order" = t.pos FROM unnest($1::int[], $2::int[]) AS t(id, pos) WHERE f.id = t.id',
      ids,
      ids.map((id) => position.get(id)!),
    );
    await sendFolderEvent(app, realm, { op: 'reorder', order });
  });
}
