// Read state: POST /messages/flags, /messages/flags/narrow, and the deprecated /mark_*_as_read.
import { z } from 'zod';
import { markAllAsRead, markChannelAsRead, updateFlags } from '../actions/flags.ts';
import { badRequest } from '../errors.ts';
import { bool, int, intList, json, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { accessibleChannel } from '../queries/channels.ts';
import { fetchRange } from '../queries/messages.ts';
import { narrowSchema, normalizeTopicName } from '../queries/narrow.ts';
import { nonNegative, parseAnchor } from './messages.ts';

const MAX_MESSAGES_PER_UPDATE = 5000;

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/messages/flags',
    params: { messages: intList(), op: str(), flag: str() },
    response: z.object({ messages: z.array(z.number().int()), ignored_because_not_subscribed_channels: z.array(z.number().int()) }),
    async handler({ app, realm, user, params }) {
      const result = await updateFlags(app, realm, user, params.messages, params.op, params.flag);
      return { messages: params.messages, ignored_because_not_subscribed_channels: result.ignoredChannels };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/messages/flags/narrow',
    params: {
      anchor: str(),
      include_anchor: bool().default(true),
      num_before: nonNegative(),
      num_after: nonNegative(),
      narrow: json(narrowSchema).default([]),
      op: str(),
      flag: str(),
    },
    response: z.object({
      processed_count: z.number().int(),
      updated_count: z.number().int(),
      first_processed_id: z.number().int().nullable(),
      last_processed_id: z.number().int().nullable(),
      found_oldest: z.boolean(),
      found_newest: z.boolean(),
      ignored_because_not_subscribed_channels: z.array(z.number().int()),
    }),
    async handler({ app, realm, user, params: p }) {
      if (p.num_before > 0 && p.num_after > 0 && !p.include_anchor) throw badRequest('The anchor can only be excluded at an end of the range');
      // Zulip clamps the range to one batch, keeping at least half of it for the side asked first.
      const numBefore = Math.min(p.num_before, Math.max(MAX_MESSAGES_PER_UPDATE - p.num_after, MAX_MESSAGES_PER_UPDATE / 2));
      const numAfter = Math.min(p.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
      const range = await fetchRange(app, realm, user, {
        anchor: parseAnchor(p.anchor, false),
        includeAnchor: p.include_anchor,
        numBefore,
        numAfter,
        narrow: p.narrow,
      });
      const ids = range.rows.map((r) => r.id);
      const result = await updateFlags(app, realm, user, ids, p.op, p.flag);
      return {
        processed_count: ids.length,
        updated_count: result.changed.length,
        first_processed_id: ids[0] ?? null,
        last_processed_id: ids.at(-1) ?? null,
        found_oldest: range.foundOldest,
        found_newest: range.foundNewest,
        ignored_because_not_subscribed_channels: result.ignoredChannels,
      };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/mark_all_as_read',
    params: {},
    response: z.object({ complete: z.boolean() }),
    async handler({ app, realm, user }) {
      return { complete: await markAllAsRead(app, realm, user) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/mark_stream_as_read',
    params: { stream_id: int() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      const { channel } = await accessibleChannel(app, realm, user, params.stream_id, { content: true });
      await markChannelAsRead(app, realm, user, channel.id);
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/mark_topic_as_read',
    params: { stream_id: int(), topic_name: str() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      const { channel } = await accessibleChannel(app, realm, user, params.stream_id, { content: true });
      const topic = normalizeTopicName(params.topic_name);
      const exists = await app.prisma.$queryRawUnsafe<unknown[]>(
        'SELECT 1 FROM "UserMessage" um JOIN "Message" m ON m.id = um."messageId" WHERE um."userId" = $1 AND m."channelId" = $2 AND upper(m.topic) = upper($3) LIMIT 1',
        user.id,
        channel.id,
        topic,
      );
      if (exists.length === 0) throw badRequest(`No such topic '${topic}'`);
      await markChannelAsRead(app, realm, user, channel.id, topic);
      return {};
    },
  }),
];
