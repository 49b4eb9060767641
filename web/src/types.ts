// The shapes of the API's objects this client reads (a subset of each).

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: 'unicode_emoji' | 'realm_emoji' | 'zulip_extra_emoji' | 'service_extra_emoji';
  user_id: number;
}

export interface Message {
  id: number;
  sender_id: number;
  sender_full_name: string;
  sender_email: string;
  avatar_url: string | null;
  /** The server's HTML, prepared for this page (see content.ts). */
  content: string;
  timestamp: number;
  type: 'stream' | 'private';
  stream_id?: number;
  subject: string;
  display_recipient: string | { id: number; email: string; full_name: string }[];
  flags: string[];
  reactions: Reaction[];
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  is_me_message: boolean;
  /** A message of one's own shown before the server has it (local echo), until its event replaces it. */
  localId?: string;
}

export interface User {
  user_id: number;
  full_name: string;
  email: string;
  /** The real address, when the viewer may see it (else `email` is a stand-in). */
  delivery_email?: string | null;
  avatar_url: string | null;
  is_bot: boolean;
  /** Welcome Bot and the other bots every organization comes with (register's cross_realm_bots). */
  is_system_bot?: boolean;
  is_active: boolean;
  /** 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
  role?: number;
  bot_owner_id?: number | null;
  date_joined?: string;
  timezone?: string;
  /** Custom profile field values by field id. */
  profile_data?: Record<string, { value: string; rendered_value?: string }>;
}

export interface Subscription {
  stream_id: number;
  name: string;
  color: string;
  description: string;
  invite_only: boolean;
  is_muted: boolean;
  pin_to_top: boolean;
  folder_id: number | null;
  /** The channel's own notification choices; null follows the user's defaults. */
  desktop_notifications: boolean | null;
  audible_notifications: boolean | null;
}

/** A user group id, or an anonymous group of members and subgroups (Zulip's group-setting value). */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/** A channel the user can see, subscribed or not (register's `streams`). */
export interface Channel {
  stream_id: number;
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  subscriber_count: number;
  can_send_message_group: GroupSettingValue;
  folder_id: number | null;
}

export interface ChannelFolder {
  id: number;
  name: string;
  description: string;
  order: number;
  is_archived: boolean;
}

export interface Topic {
  name: string;
  max_id: number;
}

export interface UserGroup {
  id: number;
  name: string;
  description: string;
  members: number[];
  is_system_group: boolean;
  deactivated: boolean;
}

export interface RealmEmoji {
  id: string;
  name: string;
  source_url: string;
  deactivated: boolean;
}

/** What the message list shows (see narrow.ts). */
export type Narrow =
  | { kind: 'home' }
  | { kind: 'channel'; streamId: number }
  | { kind: 'topic'; streamId: number; topic: string }
  | { kind: 'dm'; userIds: number[] }
  | { kind: 'mentions' }
  | { kind: 'starred' }
  /** All direct messages. */
  | { kind: 'dms' }
  /** The conversations with unread messages (Zulip's Inbox), from the unread state alone. */
  | { kind: 'inbox' }
  /** Conversations by their newest message, from the newest messages of the combined feed. */
  | { kind: 'recent' }
  /** Search words and operators as typed (`sender:… has:link words`), see search.ts. */
  | { kind: 'search'; query: string };

/** Where a message goes: a channel's topic, or a direct-message conversation. */
export type Destination = { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; userIds: number[] };

export interface EmojiEntry {
  /** Zulip's code: the Unicode code points, or a custom emoji's id. */
  code: string;
  /** The canonical name first, then its aliases. */
  names: string[];
  /** A custom emoji's image. */
  url?: string;
}

export interface EmojiCategory {
  name: string;
  emoji: EmojiEntry[];
}

/** Who is looking: the parts of the state that say which user the client is and what role they have. */
export interface Viewer {
  me: { userId: number };
  users: Map<number, User>;
}

/** Where an unread message is: what its counts add to. */
export type UnreadPlace = { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; key: string };

/** Zulip's topic visibility policies (user_topics). */
export const TopicVisibility = { NONE: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;
