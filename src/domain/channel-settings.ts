// Channel-level permission settings and their defaults. Channel settings add to the realm's:
// "nobody" here means only the organization-level rule applies.
export const CHANNEL_PERMISSION_DEFAULTS = {
  can_add_subscribers_group: 'role:nobody',
  can_administer_channel_group: 'role:nobody',
  can_delete_any_message_group: 'role:nobody',
  can_delete_own_message_group: 'role:nobody',
  can_move_messages_out_of_channel_group: 'role:nobody',
  can_move_messages_within_channel_group: 'role:nobody',
  can_remove_subscribers_group: 'role:administrators',
  can_resolve_topics_group: 'role:nobody',
  can_send_message_group: 'role:everyone',
  can_subscribe_group: 'role:nobody',
  can_create_topic_group: 'role:everyone',
} as const;
export type ChannelPermission = keyof typeof CHANNEL_PERMISSION_DEFAULTS;
/** Settings that grant metadata access can never include guests, so role:everyone is refused. */
export const CHANNEL_SETTINGS_WITHOUT_EVERYONE: ReadonlySet<ChannelPermission> = new Set([
  'can_add_subscribers_group',
  'can_administer_channel_group',
  'can_subscribe_group',
]);

export const TOPICS_POLICIES = ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'] as const;

/** Zulip's limits (register response `max_*` keys). */
export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;
export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;
/** Zulip's MAX_REMINDER_NOTE_LENGTH: the note of a message reminder. */
export const MAX_REMINDER_NOTE_LENGTH = 1000;

/** Zulip's palette for new subscriptions, in the order colors are handed out. */
export const SUBSCRIPTION_COLORS = [
  '#76ce90',
  '#fae589',
  '#a6c7e5',
  '#e79ab5',
  '#bfd56f',
  '#f4ae55',
  '#b0a5fd',
  '#addfe5',
  '#f5ce6e',
  '#c2726a',
  '#94c849',
  '#bd86e5',
  '#ee7e4a',
  '#a6dcbf',
  '#95a5fd',
  '#53a063',
  '#9987e1',
  '#e4523d',
  '#c2c2c2',
  '#4f8de4',
  '#c6a8ad',
  '#e7cc4d',
  '#c8bebf',
  '#a47462',
] as const;
