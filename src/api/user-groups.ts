// User groups: list, create, edit, membership and subgroups, deactivation.
import { z } from 'zod';
import { createUserGroup, deactivateUserGroup, type MembershipChange, requireNonGuest, updateMembership, updateUserGroup } from '../actions/user-groups.ts';
import { groupSettingChangeSchema, groupSettingValueSchema } from '../domain/realm-settings.ts';
import { USER_GROUP_PERMISSIONS, type UserGroupPermission } from '../domain/user-groups.ts';
import { badRequest } from '../errors.ts';
import { bool, type Field, intList, json, pathInt, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { activeUsers, directSubgroupIds, groupMemberIds, listGroups, readableGroup, recursiveSubgroupIds } from '../queries/user-groups.ts';
import { userById } from '../queries/users.ts';
import { group } from '../events/schemas.ts';

type Value = z.infer<typeof groupSettingValueSchema>;
type Change = z.infer<typeof groupSettingChangeSchema>;
const settingParams = <T>(field: () => Field<T | undefined>) =>
  Object.fromEntries(USER_GROUP_PERMISSIONS.map((s) => [s, field()])) as Record<UserGroupPermission, Field<T | undefined>>;
/** Only the settings the client sent. */
const sent = <T>(params: Record<string, unknown>) =>
  Object.fromEntries(USER_GROUP_PERMISSIONS.filter((s) => params[s] !== undefined).map((s) => [s, params[s] as T])) as Partial<Record<UserGroupPermission, T>>;
const groupId = (path: Record<string, string>) => pathInt(path.user_group_id);

const MEMBERS_NOTHING = 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".';
const SUBGROUPS_NOTHING = 'Nothing to do. Specify at least one of "add" or "delete".';
const anything = (c: MembershipChange) => [c.add, c.delete, c.addSubgroups, c.deleteSubgroups].some((ids) => ids?.length);

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/user_groups',
    params: { include_deactivated_groups: bool().default(false) },
    response: z.object({ user_groups: z.array(group) }),
    async handler({ app, realm, user, params }) {
      requireNonGuest(user);
      return { user_groups: await listGroups(app, realm, params.include_deactivated_groups) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/user_groups/create',
    params: {
      name: str(),
      description: str(),
      members: intList(),
      subgroups: intList().optional(),
      ...settingParams(() => json(groupSettingValueSchema).optional()),
    },
    response: z.object({ group_id: z.number().int() }),
    async handler({ app, realm, user, params }) {
      const { name, description, members, subgroups } = params;
      return { group_id: await createUserGroup(app, realm, user, { name, description, members, subgroups, settings: sent<Value>(params) }) };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/user_groups/:user_group_id',
    params: {
      name: str().optional(),
      description: str().optional(),
      deactivated: bool().optional(),
      ...settingParams(() => json(groupSettingChangeSchema).optional()),
    },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const { name, description, deactivated } = params;
      await updateUserGroup(app, realm, user, groupId(path), { name, description, deactivated, settings: sent<Change>(params) });
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/user_groups/:user_group_id/members',
    params: { add: intList().optional(), delete: intList().optional(), add_subgroups: intList().optional(), delete_subgroups: intList().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const change = { add: params.add, delete: params.delete, addSubgroups: params.add_subgroups, deleteSubgroups: params.delete_subgroups };
      if (!anything(change)) throw badRequest(MEMBERS_NOTHING);
      await updateMembership(app, realm, user, groupId(path), change);
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/user_groups/:user_group_id/subgroups',
    params: { add: intList().optional(), delete: intList().optional() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const change = { addSubgroups: params.add, deleteSubgroups: params.delete };
      if (!anything(change)) throw badRequest(SUBGROUPS_NOTHING);
      await updateMembership(app, realm, user, groupId(path), change);
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/user_groups/:user_group_id/members',
    params: { direct_member_only: bool().default(false) },
    response: z.object({ members: z.array(z.number().int()) }),
    async handler({ app, realm, user, params, path }) {
      requireNonGuest(user);
      const [groups, users] = await Promise.all([app.realms.groups(realm.id), activeUsers(app, realm.id)]);
      return { members: groupMemberIds(realm, readableGroup(groups, groupId(path)), groups, users, params.direct_member_only) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/user_groups/:user_group_id/members/:user_id',
    params: { direct_member_only: bool().default(false) },
    response: z.object({ is_user_group_member: z.boolean() }),
    async handler({ app, realm, user, params, path }) {
      requireNonGuest(user);
      const [groups, users] = await Promise.all([app.realms.groups(realm.id), activeUsers(app, realm.id)]);
      const group = readableGroup(groups, groupId(path));
      const target = await userById(app, realm, pathInt(path.user_id));
      if (target.isBot) throw badRequest('No such user');
      if (!target.isActive) throw badRequest('User is deactivated');
      return { is_user_group_member: groupMemberIds(realm, group, groups, users, params.direct_member_only).includes(target.id) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/user_groups/:user_group_id/subgroups',
    params: { direct_subgroup_only: bool().default(false) },
    response: z.object({ subgroups: z.array(z.number().int()) }),
    async handler({ app, realm, user, params, path }) {
      requireNonGuest(user);
      const groups = await app.realms.groups(realm.id);
      const group = readableGroup(groups, groupId(path));
      return { subgroups: params.direct_subgroup_only ? directSubgroupIds(realm, group) : recursiveSubgroupIds(realm, group, groups) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/user_groups/:user_group_id/deactivate',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deactivateUserGroup(app, realm, user, groupId(path));
      return {};
    },
  }),
];
