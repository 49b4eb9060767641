// Channels: GET/PATCH/DELETE /streams/{id}, GET /streams, GET /get_stream_id,
// GET /streams/{id}/members, GET /users/me/{id}/topics.
import { z } from 'zod';
import { archiveChannel, updateChannel, type ChannelUpdate } from '../actions/channels.ts';
import { TOPICS_POLICIES, MAX_CHANNEL_DESCRIPTION_LENGTH, type ChannelPermission } from '../domain/channel-settings.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, groupSettingValueSchema } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import { bool, choice, json, pathId as numericPathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { CHANNEL_PERMISSIONS, accessibleChannel, accessibleChannelByName, channelDict, channelTopics, listChannels, subscriberIds } from '../queries/channels.ts';

/** Ids in paths: anything but digits names no channel (or `error`'s object). */
export function pathId(value: string | undefined, error = 'Invalid channel ID'): number {
  return numericPathId(value, () => badRequest(error));
}

export const retentionSchema = z.union([z.string(), z.number().int()]);

const groupSettingUpdate = json(z.object({ new: groupSettingValueSchema, old: groupSettingValueSchema.optional() })).optional();
const groupSettingUpdates = Object.fromEntries(CHANNEL_PERMISSIONS.map((s) => [s, groupSettingUpdate])) as Record<ChannelPermission, typeof groupSettingUpdate>;

const updateParams = {
  new_name: str().optional(),
  description: str(z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH)).optional(),
  is_private: bool().optional(),
  is_web_public: bool().optional(),
  history_public_to_subscribers: bool().optional(),
  message_retention_days: json(retentionSchema).optional(),
  topics_policy: choice(TOPICS_POLICIES).optional(),
  folder_id: json(z.number().int().nullable()).optional(),
  ...groupSettingUpdates,
};

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/streams',
    params: {
      include_public: bool().default(true),
      include_web_public: bool().default(false),
      include_subscribed: bool().default(true),
      exclude_archived: bool().default(true),
      include_all: bool().default(false),
      include_all_active: bool().default(false),
      include_default: bool().default(false),
      include_owner_subscribed: bool().default(false),
      include_can_access_content: bool().default(false),
    },
    async handler({ app, realm, user, params: p }) {
      const streams = await listChannels(app, realm, user, {
        includePublic: p.include_public,
        includeWebPublic: p.include_web_public,
        includeSubscribed: p.include_subscribed,
        excludeArchived: p.exclude_archived,
        includeAll: p.include_all || p.include_all_active,
        includeDefault: p.include_default,
        includeOwnerSubscribed: p.include_owner_subscribed,
        includeCanAccessContent: p.include_can_access_content,
      });
      return { streams };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/streams/:stream_id',
    params: {},
    async handler({ app, realm, user, path }) {
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { active: true });
      return { stream: await channelDict(app, realm, channel) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/get_stream_id',
    params: { stream: str() },
    async handler({ app, realm, user, params }) {
      return { stream_id: (await accessibleChannelByName(app, realm, user, params.stream)).id };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/streams/:stream_id',
    params: updateParams,
    async handler({ app, realm, user, path, params: p }) {
      const groupSettings: ChannelUpdate['groupSettings'] = {};
      for (const setting of CHANNEL_PERMISSIONS) if (p[setting]) groupSettings[setting] = p[setting];
      await updateChannel(app, realm, user, pathId(path.stream_id), {
        newName: p.new_name,
        description: p.description,
        isPrivate: p.is_private,
        isWebPublic: p.is_web_public,
        historyPublicToSubscribers: p.history_public_to_subscribers,
        messageRetentionDays: p.message_retention_days,
        topicsPolicy: p.topics_policy,
        folderId: p.folder_id,
        groupSettings,
      });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/streams/:stream_id',
    params: {},
    async handler({ app, realm, user, path }) {
      await archiveChannel(app, realm, user, pathId(path.stream_id));
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/streams/:stream_id/members',
    params: {},
    async handler({ app, realm, user, path }) {
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { active: true });
      return { subscribers: await subscriberIds(app, channel.id) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/me/:stream_id/topics',
    params: { allow_empty_topic_name: bool().default(false) },
    async handler({ app, realm, user, path, params }) {
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { content: true, active: true });
      const topics = await channelTopics(app, user, channel);
      // Clients that do not know the empty topic see it under its display name.
      return { topics: params.allow_empty_topic_name ? topics : topics.map((t) => ({ ...t, name: t.name || EMPTY_TOPIC_DISPLAY_NAME })) };
    },
  }),
];
