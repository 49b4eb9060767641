// User groups' own permission settings and the rules every group-setting value must follow,
// with Zulip's defaults (NamedUserGroup.GROUP_PERMISSION_SETTINGS).
import type { GroupSettingRules } from './realm-settings.ts';

export const MAX_USER_GROUP_NAME_LENGTH = 100;
/** Prefixes that would make a group name look like a mention or a system group. */
export const INVALID_USER_GROUP_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

/** `group_creator` means an anonymous group holding just the creator. */
export const USER_GROUP_PERMISSION_DEFAULTS = {
  can_add_members_group: 'group_creator',
  can_join_group: 'role:nobody',
  can_leave_group: 'role:everyone',
  can_manage_group: 'group_creator',
  can_mention_group: 'role:everyone',
  can_remove_members_group: 'role:nobody',
} as const;
export type UserGroupPermission = keyof typeof USER_GROUP_PERMISSION_DEFAULTS;
export const USER_GROUP_PERMISSIONS = Object.keys(USER_GROUP_PERMISSION_DEFAULTS) as UserGroupPermission[];

export const USER_GROUP_PERMISSION_RULES: Record<UserGroupPermission, GroupSettingRules> = {
  can_add_members_group: { allowEveryone: false },
  can_join_group: { allowEveryone: false },
  can_leave_group: { allowEveryone: true },
  can_manage_group: { allowEveryone: false },
  can_mention_group: { allowEveryone: true },
  can_remove_members_group: { allowEveryone: false },
};
