// Channels: POST /channels/create, GET/PATCH/DELETE /streams/{id}, GET /streams, GET /get_stream_id,
// GET /streams/{id}/members, GET /users/me/{id}/topics, POST /streams/{id}/delete_topic,
// GET /streams/{id}/email_address.
import { z } from 'zod';
import { channelEmailAddress } from '../actions/channel-email.ts';
import { archiveChannel, updateChannel, type ChannelUpdate } from '../actions/channels.ts';
import { deleteTopic } from '../actions/messages-delete.ts';
import { createChannel, type NewChannelOptions } from '../actions/subscriptions.ts';
import { TOPICS_POLICIES, MAX_CHANNEL_DESCRIPTION_LENGTH, type ChannelPermission } from '../domain/channel-settings.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, groupSettingValueSchema } from '../domain/realm-settings.ts';
import { badRequest } from '../errors.ts';
import { bool, choice, int, json, pathId as numericPathId, str, type ParamsOf } from '../http/params.ts';
import { userRoute } from './route.ts';
import {
  CHANNEL_PERMISSIONS,
  accessibleChannel,
  accessibleChannelByName,
  channelDict,
  channelTopics,
  listChannels,
  subscriberIds,
} from '../queries/channels.ts';
import { channel } from '../events/schemas.ts';

/** Ids in paths: anything but digits names no channel (or `error`'s object). */
export function pathId(value: string | undefined, error = 'Invalid channel ID'): number {
  return numericPathId(value, () => badRequest(error));
}

export const retentionSchema = z.union([z.string(), z.number().int()]);

const groupSetting = json(groupSettingValueSchema).optional();
const groupSettings = Object.fromEntries(CHANNEL_PERMISSIONS.map((s) => [s, groupSetting])) as Record<ChannelPermission, typeof groupSetting>;

/** What a new channel may be given, for POST /channels/create and the channels POST /users/me/subscriptions creates. */
export const newChannelParams = {
  // Accepted for compatibility; there is no announcement channel to post to yet.
  announce: bool().default(false),
  invite_only: bool().default(false),
  is_web_public: bool().default(false),
  is_default_stream: bool().default(false),
  history_public_to_subscribers: bool().optional(),
  message_retention_days: json(retentionSchema).optional(),
  topics_policy: json(z.enum(TOPICS_POLICIES)).optional(),
  folder_id: json(z.number().int()).optional(),
  ...groupSettings,
};

export function newChannelOptions(p: ParamsOf<typeof newChannelParams>): NewChannelOptions {
  const options: NewChannelOptions = {
    inviteOnly: p.invite_only,
    isWebPublic: p.is_web_public,
    historyPublicToSubscribers: p.history_public_to_subscribers,
    messageRetentionDays: p.message_retention_days,
    topicsPolicy: p.topics_policy,
    folderId: p.folder_id,
    isDefault: p.is_default_stream,
    groupSettings: {},
  };
  for (const setting of CHANNEL_PERMISSIONS) if (p[setting] !== undefined) options.groupSettings[setting] = p[setting];
  return options;
}

const groupSettingUpdate = json(z.object({ new: groupSettingValueSchema, old: groupSettingValueSchema.optional() })).optional();
const groupSettingUpdates = Object.fromEntries(CHANNEL_PERMISSIONS.map((s) => [s, groupSettingUpdate])) as Record<ChannelPermission, typeof groupSettingUpdate>;

const updateParams = {
  new_name: str().optional(),
  description: str(z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH)).optional(),
  is_private: bool().optional(),
  is_web_public: bool().optional(),
  is_default_stream: bool().optional(),
  history_public_to_subscribers: bool().optional(),
  message_retention_days: json(retentionSchema).optional(),
  topics_policy: choice(TOPICS_POLICIES).optional(),
  folder_id: json(z.number().int().nullable()).optional(),
  ...groupSettingUpdates,
};

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/channels/create',
    params: {
      name: str(z.string().trim().min(1)),
      description: str(z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH)).default(''),
      subscribers: json(z.array(z.number().int())),
      ...newChannelParams,
    },
    response: z.object({ id: z.number().int() }),
    async handler({ app, realm, user, params: p }) {
      const id = await createChannel(app, realm, user, { name: p.name, description: p.description, subscribers: p.subscribers, options: newChannelOptions(p) });
      return { id };
    },
  }),
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
    response: z.object({ streams: z.array(channel.extend({ is_default: z.boolean().optional().describe('With include_default') })) }),
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
    response: z.object({ stream: channel }),
    async handler({ app, realm, user, path }) {
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { active: true });
      return { stream: await channelDict(app, realm, channel) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/get_stream_id',
    params: { stream: str() },
    response: z.object({ stream_id: z.number().int() }),
    async handler({ app, realm, user, params }) {
      return { stream_id: (await accessibleChannelByName(app, realm, user, params.stream)).id };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/streams/:stream_id',
    params: updateParams,
    response: z.object({}),
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
        isDefault: p.is_default_stream,
        groupSettings,
      });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/streams/:stream_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await archiveChannel(app, realm, user, pathId(path.stream_id));
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/streams/:stream_id/members',
    params: {},
    response: z.object({ subscribers: z.array(z.number().int()) }),
    async handler({ app, realm, user, path }) {
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { active: true });
      return { subscribers: await subscriberIds(app, channel.id) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/streams/:stream_id/email_address',
    params: { sender_id: int().optional() },
    response: z.object({ email: z.string() }),
    async handler({ app, realm, user, path, params }) {
      return { email: await channelEmailAddress(app, realm, user, pathId(path.stream_id), params.sender_id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/streams/:stream_id/delete_topic',
    params: { topic_name: str() },
    response: z.object({ complete: z.boolean() }),
    async handler({ app, realm, user, path, params }) {
      return deleteTopic(app, realm, user, pathId(path.stream_id), params.topic_name);
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/users/me/:stream_id/topics',
    params: { allow_empty_topic_name: bool().default(false) },
    response: z.object({ topics: z.array(z.object({ name: z.string(), max_id: z.number().int() })) }),
    async handler({ app, realm, user, path, params }) {
      const { channel } = await accessibleChannel(app, realm, user, pathId(path.stream_id), { content: true, active: true });
      const topics = await channelTopics(app, user, channel);
      // Clients that do not know the empty topic see it under its display name.
      return { topics: params.allow_empty_topic_name ? topics : topics.map((t) => ({ ...t, name: t.name || EMPTY_TOPIC_DISPLAY_NAME })) };
    },
  }),
];
