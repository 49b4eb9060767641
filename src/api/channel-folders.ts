// Channel folders: POST /channel_folders/create, GET /channel_folders, PATCH /channel_folders
// (order), PATCH /channel_folders/{id} (spec 4.5).
import { z } from 'zod';
import { createChannelFolder, reorderChannelFolders, updateChannelFolder } from '../actions/channel-folders.ts';
import { badRequest } from '../errors.ts';
import { bool, intList, pathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { channelFolders, MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH } from '../queries/channel-folders.ts';
import { channelFolder } from '../events/schemas.ts';

const name = () => str(z.string().max(MAX_CHANNEL_FOLDER_NAME_LENGTH));
const description = () => str(z.string().max(MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH));

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/channel_folders/create',
    params: { name: name(), description: description() },
    response: z.object({ channel_folder_id: z.number().int() }),
    async handler({ app, realm, user, params }) {
      return { channel_folder_id: await createChannelFolder(app, realm, user, params.name, params.description) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/channel_folders',
    params: { include_archived: bool().default(false) },
    response: z.object({ channel_folders: z.array(channelFolder) }),
    async handler({ app, realm, params }) {
      return { channel_folders: await channelFolders(app, realm.id, params.include_archived) };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/channel_folders',
    params: { order: intList() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await reorderChannelFolders(app, realm, user, params.order);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/channel_folders/:channel_folder_id',
    params: { name: name().optional(), description: description().optional(), is_archived: bool().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const id = pathId(path.channel_folder_id, () => badRequest('Invalid channel folder ID'));
      await updateChannelFolder(app, realm, user, id, { name: params.name, description: params.description, isArchived: params.is_archived });
      return {};
    },
  }),
];
