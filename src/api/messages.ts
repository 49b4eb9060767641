// Messages: POST /messages, GET /messages, GET /messages/{id}, GET /messages/{id}/history,
// POST /messages/{id}/report.
import { z } from 'zod';
import { MAX_REPORT_DESCRIPTION_LENGTH, reportMessage } from '../actions/message-report.ts';
import { REPORT_REASONS, type ReportType } from '../domain/report-reasons.ts';
import { sendMessage } from '../actions/messages.ts';
import type { Addressee } from '../actions/messages-prepare.ts';
import type { User } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import { bool, choice, intList, json, pathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import {
  accessMessage,
  fetchRange,
  filterByNarrow,
  invalidMessage,
  loadPage,
  matchesNarrow,
  messageHistory,
  presentMessages,
  type RangeQuery,
} from '../queries/messages.ts';
import { readReceipts } from '../queries/read-receipts.ts';
import { narrowSchema } from '../queries/narrow.ts';
import { searchOperandsOf } from '../queries/search-highlight.ts';
import { topicLink } from '../events/schemas.ts';

const MAX_MESSAGES_PER_FETCH = 5000;

/** Whether `text` can be JSON at all, by its first character after white space (JSON.parse's). */
function startsLikeJson(text: string): boolean {
  const first = /^[ \t\n\r]*(.)/s.exec(text)?.[1];
  return first !== undefined && '[{"-0123456789tfn'.includes(first);
}

/** Zulip's extract_stream_indicator: a name, an id, or either JSON-encoded (also in a 1-list). */
function channelIndicator(to: string): number | string {
  // A plain name (the common case) is not JSON: no parse, whose failure costs an exception.
  if (!startsLikeJson(to)) return to;
  let data: unknown;
  try {
    data = JSON.parse(to);
  } catch {
    return to;
  }
  if (Array.isArray(data)) {
    if (data.length !== 1) throw badRequest('Expected exactly one channel');
    data = data[0];
  }
  if (typeof data === 'string' || (typeof data === 'number' && Number.isInteger(data))) return data;
  throw badRequest('Invalid data type for channel');
}

/** Zulip's extract_private_recipients: a JSON list of ids or emails, or comma-separated emails. */
function directRecipients(to: string): number[] | string[] {
  let data: unknown;
  try {
    data = JSON.parse(to);
  } catch {
    data = to;
  }
  if (typeof data === 'string') data = data.split(',');
  if (typeof data === 'number') data = [data];
  if (!Array.isArray(data)) throw badRequest('Invalid data type for recipients');
  if (data.length === 0) return [];
  const mixed = badRequest('Recipient lists may contain emails or user IDs, but not both.');
  if (typeof data[0] === 'string') {
    if (!data.every((d) => typeof d === 'string')) throw mixed;
    return [...new Set((data as string[]).map((e) => e.trim()).filter(Boolean))];
  }
  if (!Number.isInteger(data[0])) throw badRequest('Invalid data type for recipients');
  if (!data.every((d) => Number.isInteger(d))) throw mixed;
  return [...new Set(data as number[])];
}

/** `to` may be left out: a channel message then goes to the sender's default_sending_stream (bots), as in Zulip. */
function addressee(sender: User, type: string, to: string | undefined, topic: string | undefined): Addressee {
  if (type === 'stream' || type === 'channel') {
    const channel = to === undefined ? sender.defaultSendingChannelId : channelIndicator(to);
    if (channel === null) throw badRequest('Missing channel');
    return { kind: 'channel', channel, topic };
  }
  if (type === 'direct' || type === 'private') return { kind: 'direct', users: to === undefined ? [] : directRecipients(to) };
  throw badRequest('Invalid message type');
}

/** Zulip's client name from the User-Agent ("ZulipMobile/27.1 ..." → "ZulipMobile"). */
export const clientName = (userAgent: string) => /^[^/ ]*[^0-9/( ]*/.exec(userAgent)?.[0]?.trim() || 'Unspecified';

export function parseAnchor(anchor: string | undefined, useFirstUnread: boolean): RangeQuery['anchor'] {
  if (useFirstUnread) return 'first_unread';
  if (anchor === undefined) throw badRequest("Missing 'anchor' argument.");
  if (anchor === 'newest' || anchor === 'oldest' || anchor === 'first_unread') return anchor;
  if (!/^-?\d+$/.test(anchor)) throw badRequest('Invalid anchor');
  return Number(anchor);
}

export const nonNegative = () => json(z.number().int().min(0));

const int = z.number().int();
const editHistoryEntry = z.object({
  user_id: int.nullable(),
  timestamp: int,
  prev_content: z.string().optional(),
  prev_rendered_content: z.string().optional(),
  prev_topic: z.string().optional(),
  topic: z.string().optional(),
  prev_stream: int.optional(),
  stream: int.optional(),
});

/** A message as one viewer reads it (GET /messages and GET /messages/{id}). */
export const apiMessage = z
  .object({
    id: int,
    sender_id: int,
    content: z.string().describe('HTML, or the Markdown source without apply_markdown'),
    content_type: z.enum(['text/html', 'text/x-markdown']),
    recipient_id: int,
    timestamp: int,
    client: z.string(),
    subject: z.string().describe('The topic'),
    topic_links: z.array(topicLink),
    is_me_message: z.boolean(),
    reactions: z.array(z.object({ emoji_name: z.string(), emoji_code: z.string(), reaction_type: z.string(), user_id: int })),
    submessages: z.array(z.unknown()),
    sender_full_name: z.string(),
    sender_email: z.string(),
    sender_realm_str: z.string(),
    avatar_url: z.string().nullable(),
    type: z.enum(['stream', 'private']),
    display_recipient: z
      .union([z.string(), z.array(z.object({ id: int, email: z.string(), full_name: z.string(), is_mirror_dummy: z.boolean() }))])
      .describe("The channel's name, or the users of a direct conversation"),
    stream_id: int.optional(),
    last_edit_timestamp: int.optional(),
    last_moved_timestamp: int.optional(),
    edit_history: z.array(editHistoryEntry).optional(),
    flags: z.array(z.string()),
    match_content: z.string().optional().describe('Search results: the content with the matches highlighted'),
    match_subject: z.string().optional().describe('Search results: the topic with the matches highlighted'),
  })
  .meta({ id: 'Message' });

const messageSnapshot = z.object({
  content: z.string(),
  rendered_content: z.string(),
  timestamp: int,
  topic: z.string(),
  user_id: int.nullable(),
  prev_topic: z.string().optional(),
  prev_content: z.string().optional(),
  prev_rendered_content: z.string().optional(),
  content_html_diff: z.string().optional(),
  prev_stream: int.optional(),
  stream: int.optional(),
});

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/messages',
    params: {
      type: str(),
      to: str().optional(),
      content: str(),
      topic: str().optional(),
      subject: str().optional(),
      queue_id: str().optional(),
      local_id: str().optional(),
      read_by_sender: bool().optional(),
    },
    response: z.object({ id: int }),
    async handler({ app, realm, user, params, headers }) {
      const to = addressee(user, params.type, params.to, params.topic ?? params.subject);
      return sendMessage(app, realm, user, to, params.content, {
        client: clientName(headers.userAgent),
        readBySender: params.read_by_sender ?? true,
        queueId: params.queue_id,
        localId: params.local_id,
      });
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/messages',
    params: {
      anchor: str().optional(),
      include_anchor: bool().default(true),
      num_before: nonNegative().optional(),
      num_after: nonNegative().optional(),
      narrow: json(narrowSchema).default([]),
      client_gravatar: bool().default(true),
      apply_markdown: bool().default(true),
      use_first_unread_anchor: bool().default(false),
      message_ids: intList().optional(),
      allow_empty_topic_name: bool().default(false),
    },
    response: z
      .object({
        messages: z.array(apiMessage),
        anchor: z.number().optional().describe("The anchor message's id (10000000000000000 for newest, as Zulip)"),
        found_anchor: z.boolean().optional(),
        found_oldest: z.boolean().optional(),
        found_newest: z.boolean().optional(),
        history_limited: z.boolean(),
      })
      .describe('With message_ids, only messages and history_limited'),
    async handler({ app, realm, user, params }) {
      const opts = { applyMarkdown: params.apply_markdown, clientGravatar: params.client_gravatar, allowEmptyTopicName: params.allow_empty_topic_name };
      if (params.message_ids) {
        if (params.anchor !== undefined || params.num_before !== undefined || params.num_after !== undefined) {
          throw badRequest('Unsupported parameter combination: anchor, message_ids');
        }
        const rows = await filterByNarrow(app, realm, user, params.message_ids, params.narrow);
        const page = await loadPage(
          app,
          rows.map((r) => r.id),
        );
        const flags = new Map(rows.map((r) => [r.id, r.flags]));
        const messages = await presentMessages(app, realm, user, page.messages, flags, opts, searchOperandsOf(params.narrow), page.users);
        return { messages, history_limited: false };
      }
      if (params.num_before === undefined) throw badRequest("Missing 'num_before' argument");
      if (params.num_after === undefined) throw badRequest("Missing 'num_after' argument");
      if (params.num_before + params.num_after > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
      const range = await fetchRange(app, realm, user, {
        anchor: parseAnchor(params.anchor, params.use_first_unread_anchor),
        includeAnchor: params.include_anchor,
        numBefore: params.num_before,
        numAfter: params.num_after,
        narrow: params.narrow,
      });
      const page = await loadPage(
        app,
        range.rows.map((r) => r.id),
      );
      const flags = new Map(range.rows.map((r) => [r.id, r.flags]));
      return {
        messages: await presentMessages(app, realm, user, page.messages, flags, opts, searchOperandsOf(params.narrow), page.users),
        anchor: range.anchor,
        found_anchor: range.foundAnchor,
        found_oldest: range.foundOldest,
        found_newest: range.foundNewest,
        history_limited: false,
      };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/messages/:message_id',
    params: { apply_markdown: bool().default(true), allow_empty_topic_name: bool().default(false) },
    response: z.object({ raw_content: z.string(), message: apiMessage }),
    async handler({ app, realm, user, params, path }) {
      const { message, flags } = await accessMessage(app, realm, user, messageIdOf(path.message_id));
      const opts = { applyMarkdown: params.apply_markdown, clientGravatar: false, allowEmptyTopicName: params.allow_empty_topic_name };
      const [formatted] = await presentMessages(app, realm, user, [message], new Map([[message.id, flags]]), opts);
      return { raw_content: message.content, message: formatted };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/messages/matches_narrow',
    params: { msg_ids: intList(), narrow: json(narrowSchema) },
    response: z.object({ messages: z.record(z.string(), z.object({ match_content: z.string(), match_subject: z.string() })).describe('By message id') }),
    async handler({ app, realm, user, params }) {
      return { messages: await matchesNarrow(app, realm, user, params.msg_ids, params.narrow) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/messages/:message_id/read_receipts',
    params: {},
    response: z.object({ user_ids: z.array(int) }),
    async handler({ app, realm, user, path }) {
      return { user_ids: await readReceipts(app, realm, user, messageIdOf(path.message_id)) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/messages/:message_id/report',
    params: {
      report_type: choice(Object.keys(REPORT_REASONS) as [ReportType, ...ReportType[]]),
      description: str(z.string().max(MAX_REPORT_DESCRIPTION_LENGTH)).default(''),
    },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await reportMessage(app, realm, user, messageIdOf(path.message_id), params.report_type, params.description);
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/messages/:message_id/history',
    params: { allow_empty_topic_name: bool().default(false) },
    response: z.object({ message_history: z.array(messageSnapshot) }),
    async handler({ app, realm, user, params, path }) {
      if (!realm.settings.allow_edit_history) throw badRequest('Message edit history is disabled in this organization');
      const { message } = await accessMessage(app, realm, user, messageIdOf(path.message_id));
      return { message_history: messageHistory(message, params.allow_empty_topic_name) };
    },
  }),
];

export function messageIdOf(segment: string | undefined): number {
  return pathId(segment, invalidMessage);
}
