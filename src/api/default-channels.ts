// Default channels: POST/DELETE /default_streams; default channel groups:
// POST /default_stream_groups/create, PATCH/DELETE /default_stream_groups/{id},
// PATCH /default_stream_groups/{id}/streams. Zulip has no GET for either: clients read them
// from register (realm_default_streams, realm_default_stream_groups).
import { z } from 'zod';
import {
  MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH,
  addDefaultChannel,
  createDefaultChannelGroup,
  removeDefaultChannel,
  removeDefaultChannelGroup,
  updateDefaultChannelGroup,
  updateDefaultChannelGroupChannels,
} from '../actions/default-channels.ts';
import { badRequest } from '../errors.ts';
import { int, json, pathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';

const description = () => str(z.string().max(MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH));
const channelNames = () => json(z.array(z.string()));
const groupId = (path: Record<string, string>) => pathId(path.group_id, () => badRequest(`Default channel group with id '${path.group_id}' does not exist.`));

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/default_streams',
    params: { stream_id: int() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await addDefaultChannel(app, realm, user, params.stream_id);
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/default_streams',
    params: { stream_id: int() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await removeDefaultChannel(app, realm, user, params.stream_id);
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/default_stream_groups/create',
    params: { group_name: str(), description: description(), stream_names: channelNames() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await createDefaultChannelGroup(app, realm, user, params.group_name, params.description, params.stream_names);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/default_stream_groups/:group_id',
    params: { new_group_name: str().optional(), new_description: description().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await updateDefaultChannelGroup(app, realm, user, groupId(path), { name: params.new_group_name, description: params.new_description });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/default_stream_groups/:group_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await removeDefaultChannelGroup(app, realm, user, groupId(path));
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/default_stream_groups/:group_id/streams',
    params: { op: str(), stream_names: channelNames() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await updateDefaultChannelGroupChannels(app, realm, user, groupId(path), params.op, params.stream_names);
      return {};
    },
  }),
];
