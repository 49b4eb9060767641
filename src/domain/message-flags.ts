// Per-recipient message flags, stored as one bit set on UserMessage.flags. The order is ours (the
// database is not Zulip's); the names and which ones clients may change are Zulip's.

export const FLAG_BITS = {
  read: 1 << 0,
  starred: 1 << 1,
  collapsed: 1 << 2,
  mentioned: 1 << 3,
  stream_wildcard_mentioned: 1 << 4,
  topic_wildcard_mentioned: 1 << 5,
  has_alert_word: 1 << 6,
  historical: 1 << 7,
} as const;
export type FlagName = keyof typeof FLAG_BITS;

/**
 * Zulip's active_mobile_push_notification: the user's phones show a notification of the message,
 * to be withdrawn when it is read or deleted. Internal: no API lists or changes it.
 */
export const PUSH_NOTIFIED = 1 << 8;

/**
 * Zulip's is_private: the message is a direct message. Internal, for the partial index that finds a
 * user's direct messages (recent conversations, is:dm) without reading the rest of their history.
 */
export const IS_PRIVATE = 1 << 9;

/** Flags a client may add or remove with POST /messages/flags. */
export const EDITABLE_FLAGS: readonly FlagName[] = ['read', 'starred', 'collapsed'];

/** Every flag name the API knows, including the legacy `wildcard_mentioned`. */
export const API_FLAGS: readonly string[] = [...Object.keys(FLAG_BITS), 'wildcard_mentioned'];

const WILDCARD_BITS = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/** The flag names of a bit set, as messages and events list them. */
export function flagList(bits: number): string[] {
  const names: string[] = [];
  for (const [name, bit] of Object.entries(FLAG_BITS)) {
    if (bits & bit) names.push(name);
    // Zulip still sends the pre-8.0 name next to the two precise wildcard flags.
    if (name === 'topic_wildcard_mentioned' && bits & WILDCARD_BITS) names.push('wildcard_mentioned');
  }
  return names;
}

/** Flags of a channel message the user reads without having received it. */
export const HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

/**
 * Zulip's MAX_UNREAD_MESSAGES: register lists the newest unread messages up to this many, and
 * first_unread looks among the same ones.
 */
export const MAX_UNREAD_MESSAGES = 50_000;
