// Zulip's mention and channel-link syntax (zerver/lib/mention.py, markdown/__init__.py).

/** Mentions and links start after whitespace or one of ' " ( { [ / < (or at the start). */
export const BEFORE_MENTION = String.raw`(?<![^\s'"({\[/<])`;

export const MENTIONS_SOURCE = String.raw`${BEFORE_MENTION}@(_?)(\*\*([^*]+)\*\*)`;
export const USER_GROUP_MENTIONS_SOURCE = String.raw`${BEFORE_MENTION}@(_?)(\*([^*]+)\*)`;

/** Fresh global regexes: (silent, wrapped, name). */
export const MENTIONS_RE = (): RegExp => new RegExp(MENTIONS_SOURCE, 'gu');
export const USER_GROUP_MENTIONS_RE = (): RegExp => new RegExp(USER_GROUP_MENTIONS_SOURCE, 'gu');

export const STREAM_LINK_SOURCE = String.raw`${BEFORE_MENTION}#\*\*([^*]+)\*\*`;
export const STREAM_TOPIC_LINK_SOURCE = String.raw`${BEFORE_MENTION}#\*\*([^*>]+)>([^*]*)\*\*`;
export const STREAM_TOPIC_MESSAGE_LINK_SOURCE = String.raw`${BEFORE_MENTION}#\*\*([^*>]+)>([^*]*)@(\d+)\*\*`;

export const TOPIC_WILDCARDS = new Set(['topic']);
export const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);

/** Topic name Zulip shows for the empty topic. */
export const EMPTY_TOPIC_FALLBACK_NAME = 'general chat';
