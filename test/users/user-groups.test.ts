// User groups over HTTP: listing, creation, edits, membership and subgroups, deactivation, who may
// do each, and the `user_group` events (with and without include_deactivated_groups).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { membershipRace } from '../helpers/membership-race.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const error = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code, ...extra });
const ok = { result: 'success', msg: '' };

async function systemGroups(user: TestUser): Promise<Record<string, number>> {
  const r = await user.client.get('/user_groups');
  return Object.fromEntries(
    (r.body.user_groups as { id: number; name: string; is_system_group: boolean }[]).filter((g) => g.is_system_group).map((g) => [g.name, g.id]),
  );
}

async function makeGroup(realm: TestRealm, creator: TestUser, name: string, members: number[], extra: Record<string, unknown> = {}): Promise<number> {
  const r = await creator.client.post('/user_groups/create', { name, description: `About ${name}`, members, ...extra });
  assert.is(r.status, 200, r.text);
  return r.body.group_id;
}

test('create: response, GET /user_groups and register agree, defaults of the group settings', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const sys = await systemGroups(realm.owner);
  const r = await member.client.post('/user_groups/create', { name: 'backend', description: 'Backend team', members: [member.id, realm.owner.id] });
  assert.equal(r.body, { ...ok, group_id: r.body.group_id });
  const id = r.body.group_id as number;
  const listed = (await member.client.get('/user_groups')).body.user_groups as Record<string, any>[];
  const group = listed.find((g) => g.id === id)!;
  assert.equal(
    { ...group, date_created: 0 },
    {
      id,
      name: 'backend',
      description: 'Backend team',
      members: [realm.owner.id, member.id],
      direct_subgroup_ids: [],
      is_system_group: false,
      deactivated: false,
      date_created: 0,
      creator_id: member.id,
      can_add_members_group: { direct_members: [member.id], direct_subgroups: [] },
      can_join_group: sys['role:nobody'],
      can_leave_group: sys['role:everyone'],
      can_manage_group: { direct_members: [member.id], direct_subgroups: [] },
      can_mention_group: sys['role:everyone'],
      can_remove_members_group: sys['role:nobody'],
    },
  );
  assert.type(group.date_created, 'number');
  const state = (await openQueue(member, { fetch_event_types: ['realm_user_groups'] })).state;
  assert.equal(state.realm_user_groups, listed);
  const members = listed.find((g) => g.name === 'role:members')!;
  assert.equal(members.members, [member.id], 'members are direct members of role:members');
  assert.equal(listed.find((g) => g.name === 'role:owners')!.members, [realm.owner.id]);
  assert.is(listed.find((g) => g.name === 'role:owners')!.can_manage_group, sys['role:nobody']);
});

test('create: errors and who may create', async () => {
  const realm = await newRealm();
  const guest = await realm.addUser({ role: Role.GUEST });
  const member = await realm.addUser();
  const sys = await systemGroups(realm.owner);
  const other = await makeGroup(realm, member, 'taken', []);
  const cases: [Record<string, unknown>, unknown][] = [
    [{ name: 'taken' }, error("User group 'taken' already exists.")],
    [{ name: '  ' }, error("User group name can't be empty!")],
    [{ name: 'x'.repeat(101) }, error('User group name cannot exceed 100 characters.')],
    [{ name: 'role:mine' }, error("User group name cannot start with 'role:'.")],
    [{ name: '@team' }, error("User group name cannot start with '@'.")],
    [{ members: [987654] }, error('Invalid user ID: 987654')],
    [{ subgroups: [876543] }, error('Invalid user group ID: 876543')],
    [{ can_manage_group: sys['role:everyone'] }, error("'can_manage_group' setting cannot be set to 'role:everyone' group.")],
    [{ can_mention_group: sys['role:internet'] }, error("'can_mention_group' setting cannot be set to 'role:internet' group.")],
    [{ can_join_group: 555555 }, error('Invalid user group')],
  ];
  for (const [params, body] of cases) {
    const r = await member.client.post('/user_groups/create', { name: 'new', description: '', members: [], ...params });
    assert.is(r.status, 400);
    assert.equal(r.body, body, JSON.stringify(params));
  }
  assert.equal((await guest.client.post('/user_groups/create', { name: 'g', description: '', members: [] })).body, error('Not allowed for guest users'));
  assert.equal((await guest.client.get('/user_groups')).body, error('Not allowed for guest users'));
  const missing = await member.client.post('/user_groups/create', { name: 'n', members: [] });
  assert.equal(missing.body, error("Missing 'description' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'description' }));
  const withSub = await makeGroup(realm, member, 'parent', [member.id], {
    subgroups: [other],
    can_mention_group: { direct_members: [], direct_subgroups: [sys['role:moderators']] },
  });
  const listed = (await member.client.get('/user_groups')).body.user_groups.find((g: { id: number }) => g.id === withSub);
  assert.equal(listed.direct_subgroup_ids, [other]);
  assert.is(listed.can_mention_group, sys['role:moderators'], 'a single subgroup is stored as the group itself');
});

test('edit: name, description, settings with {new, old}; permissions of manager, member, admin, owner', async () => {
  const realm = await newRealm();
  const creator = await realm.addUser();
  const member = await realm.addUser();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const sys = await systemGroups(realm.owner);
  const id = await makeGroup(realm, creator, 'team', [creator.id]);
  await makeGroup(realm, creator, 'other', []);
  const q = await openQueue(member, { event_types: ['user_group'] });
  assert.equal((await member.client.patch(`/user_groups/${id}`, { name: 'x' })).body, error('Insufficient permission'));
  assert.equal((await admin.client.patch(`/user_groups/${id}`, { name: 'x' })).body, error('Insufficient permission'), 'can_manage_all_groups is owners');
  assert.equal((await creator.client.patch(`/user_groups/${id}`, {})).body, error('No new data supplied'));
  assert.equal((await creator.client.patch(`/user_groups/${id}`, { name: 'other' })).body, error("User group 'other' already exists."));
  assert.equal((await creator.client.patch(`/user_groups/${sys['role:members']}`, { name: 'x' })).body, error('Insufficient permission'));
  assert.equal((await creator.client.patch('/user_groups/999999', { name: 'x' })).body, error('Invalid user group'));
  const r = await creator.client.patch(`/user_groups/${id}`, {
    name: 'renamed',
    description: 'New text',
    can_mention_group: { new: sys['role:moderators'], old: sys['role:everyone'] },
  });
  assert.equal(r.body, ok);
  assert.equal(await q.pending(), [
    { type: 'user_group', op: 'update', group_id: id, data: { name: 'renamed' } },
    { type: 'user_group', op: 'update', group_id: id, data: { description: 'New text' } },
    { type: 'user_group', op: 'update', group_id: id, data: { can_mention_group: sys['role:moderators'] } },
  ]);
  assert.equal(
    (await creator.client.patch(`/user_groups/${id}`, { can_mention_group: { new: sys['role:members'], old: sys['role:everyone'] } })).body,
    error("'old' value does not match the expected value."),
  );
  // Handing management to members lets any member edit; the owner always may.
  assert.equal((await creator.client.patch(`/user_groups/${id}`, { can_manage_group: { new: sys['role:members'] } })).body, ok);
  assert.equal((await member.client.patch(`/user_groups/${id}`, { description: 'by member' })).body, ok);
  assert.equal((await realm.owner.client.patch(`/user_groups/${id}`, { description: 'by owner' })).body, ok);
  const group = (await member.client.get('/user_groups')).body.user_groups.find((g: { id: number }) => g.id === id);
  assert.equal(
    [group.name, group.description, group.can_manage_group, group.can_mention_group],
    ['renamed', 'by owner', sys['role:members'], sys['role:moderators']],
  );
});

test('members: add, delete, join and leave, with the permission each needs and the events', async () => {
  const realm = await newRealm();
  const creator = await realm.addUser();
  const bob = await realm.addUser();
  const carol = await realm.addUser();
  const guest = await realm.addUser({ role: Role.GUEST });
  const sys = await systemGroups(realm.owner);
  const id = await makeGroup(realm, creator, 'team', [creator.id]);
  const q = await openQueue(bob, { event_types: ['user_group'] });
  assert.equal(
    (await bob.client.post(`/user_groups/${id}/members`, {})).body,
    error('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'),
  );
  assert.equal((await bob.client.post(`/user_groups/${id}/members`, { add: [bob.id] })).body, error('Insufficient permission'), 'can_join_group is nobody');
  assert.equal((await guest.client.post(`/user_groups/${id}/members`, { add: [guest.id] })).body, error('Not allowed for guest users'));
  assert.equal(
    (await creator.client.post(`/user_groups/${id}/members`, { add: [creator.id] })).body,
    error(`User ${creator.id} is already a member of this group`),
  );
  assert.equal((await creator.client.post(`/user_groups/${id}/members`, { add: [424242] })).body, error('Invalid user ID: 424242'));
  assert.equal(
    (await creator.client.post(`/user_groups/${id}/members`, { delete: [bob.id] })).body,
    error(`There is no member '${bob.id}' in this user group`),
  );
  assert.equal((await creator.client.post(`/user_groups/${id}/members`, { add: [bob.id, carol.id] })).body, ok);
  assert.equal((await creator.client.post(`/user_groups/${id}/members`, { delete: [carol.id] })).body, ok);
  // can_leave_group is everyone: bob may leave by himself but not remove others.
  assert.equal((await bob.client.post(`/user_groups/${id}/members`, { delete: [creator.id] })).body, error('Insufficient permission'));
  assert.equal((await bob.client.post(`/user_groups/${id}/members`, { delete: [bob.id] })).body, ok);
  assert.equal((await creator.client.patch(`/user_groups/${id}`, { can_join_group: { new: sys['role:members'] } })).body, ok);
  assert.equal((await carol.client.post(`/user_groups/${id}/members`, { add: [carol.id] })).body, ok);
  assert.equal(await q.pending(), [
    { type: 'user_group', op: 'add_members', group_id: id, user_ids: [bob.id, carol.id] },
    { type: 'user_group', op: 'remove_members', group_id: id, user_ids: [carol.id] },
    { type: 'user_group', op: 'remove_members', group_id: id, user_ids: [bob.id] },
    { type: 'user_group', op: 'update', group_id: id, data: { can_join_group: sys['role:members'] } },
    { type: 'user_group', op: 'add_members', group_id: id, user_ids: [carol.id] },
  ]);
  const members = await bob.client.get(`/user_groups/${id}/members`);
  assert.equal(members.body, { ...ok, members: [creator.id, carol.id] });
  assert.equal((await bob.client.get(`/user_groups/${id}/members/${carol.id}`)).body, { ...ok, is_user_group_member: true });
  assert.equal((await bob.client.get(`/user_groups/${id}/members/${bob.id}`)).body, { ...ok, is_user_group_member: false });
  assert.equal((await creator.client.post(`/user_groups/${sys['role:members']}/members`, { add: [guest.id] })).body, error('Insufficient permission'));
});

test('subgroups: add, remove, cycles, recursive membership and the permission checks that use it', async () => {
  const realm = await newRealm();
  const creator = await realm.addUser();
  const bob = await realm.addUser();
  const sys = await systemGroups(realm.owner);
  const parent = await makeGroup(realm, creator, 'parent', [creator.id]);
  const child = await makeGroup(realm, creator, 'child', [bob.id]);
  const q = await openQueue(bob, { event_types: ['user_group'] });
  assert.equal((await creator.client.post(`/user_groups/${parent}/subgroups`, {})).body, error('Nothing to do. Specify at least one of "add" or "delete".'));
  assert.equal((await creator.client.post(`/user_groups/${parent}/subgroups`, { add: [child] })).body, ok);
  assert.equal(
    (await creator.client.post(`/user_groups/${parent}/subgroups`, { add: [child] })).body,
    error(`User group ${child} is already a subgroup of this group.`),
  );
  assert.equal(
    (await creator.client.post(`/user_groups/${child}/subgroups`, { add: [parent] })).body,
    error(`User group ${child} is already a subgroup of one of the passed subgroups.`),
  );
  assert.equal((await creator.client.post(`/user_groups/${parent}/subgroups`, { add: [333333] })).body, error('Invalid user group ID: 333333'));
  assert.equal(
    (await creator.client.post(`/user_groups/${parent}/subgroups`, { delete: [sys['role:members']] })).body,
    error(`User group ${sys['role:members']} is not a subgroup of this group.`),
  );
  assert.equal((await bob.client.post(`/user_groups/${parent}/subgroups`, { add: [sys['role:moderators']] })).body, error('Insufficient permission'));
  assert.equal((await bob.client.get(`/user_groups/${parent}/members`)).body, { ...ok, members: [creator.id, bob.id] });
  assert.equal((await bob.client.get(`/user_groups/${parent}/members`, { direct_member_only: true })).body, { ...ok, members: [creator.id] });
  assert.equal((await bob.client.get(`/user_groups/${parent}/subgroups`)).body, { ...ok, subgroups: [child] });
  assert.equal((await bob.client.get(`/user_groups/${sys['role:administrators']}/subgroups`)).body, { ...ok, subgroups: [sys['role:owners']] });
  // Bob manages the parent group through the child group.
  assert.equal((await creator.client.patch(`/user_groups/${parent}`, { can_manage_group: { new: child } })).body, ok);
  assert.equal((await bob.client.patch(`/user_groups/${parent}`, { description: 'by bob' })).body, ok);
  assert.equal((await bob.client.post(`/user_groups/${parent}/members`, { delete_subgroups: [child], add: [bob.id] })).body, ok);
  assert.equal(await q.pending(), [
    { type: 'user_group', op: 'add_subgroups', group_id: parent, direct_subgroup_ids: [child] },
    { type: 'user_group', op: 'update', group_id: parent, data: { can_manage_group: child } },
    { type: 'user_group', op: 'update', group_id: parent, data: { description: 'by bob' } },
    { type: 'user_group', op: 'add_members', group_id: parent, user_ids: [bob.id] },
    { type: 'user_group', op: 'remove_subgroups', group_id: parent, direct_subgroup_ids: [child] },
  ]);
});

test("members: active users only, in id order, in a user group's and the system groups' lists alike", async () => {
  const realm = await newRealm();
  const [a, b, c] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const guest = await realm.addUser({ role: Role.GUEST });
  const id = await makeGroup(realm, realm.owner, 'crew', [c.id, a.id, b.id, guest.id]);
  assert.is((await realm.owner.client.delete(`/users/${b.id}`)).status, 200);
  const sys = await systemGroups(realm.owner);
  const listed = (await realm.owner.client.get('/user_groups')).body.user_groups as { id: number; members: number[] }[];
  const registered = (await realm.owner.client.post('/register', { fetch_event_types: ['realm_user_groups'] })).body.realm_user_groups as typeof listed;
  const membersOf = (groups: typeof listed, group: number) => groups.find((g) => g.id === group)!.members;
  for (const groups of [listed, registered]) {
    assert.equal(membersOf(groups, id), [a.id, c.id, guest.id]);
    assert.equal(membersOf(groups, sys['role:members']!), [a.id, c.id]);
    assert.equal(membersOf(groups, sys['role:administrators']!), [admin.id]);
    assert.equal(membersOf(groups, sys['role:owners']!), [realm.owner.id]);
    assert.equal(membersOf(groups, sys['role:everyone']!), [guest.id]);
  }
  assert.equal((await realm.owner.client.get(`/user_groups/${id}/members`, { direct_member_only: true })).body, { ...ok, members: [a.id, c.id, guest.id] });
});

test('deactivate: objections, events with and without include_deactivated_groups, reactivation', async () => {
  const realm = await newRealm();
  const creator = await realm.addUser();
  const other = await realm.addUser();
  const id = await makeGroup(realm, creator, 'team', [creator.id]);
  const parent = await makeGroup(realm, creator, 'parent', [], { subgroups: [id] });
  const modern = await openQueue(other, { event_types: ['user_group'], client_capabilities: { include_deactivated_groups: true } });
  const old = await openQueue(other, { event_types: ['user_group'] });
  assert.equal((await other.client.post(`/user_groups/${id}/deactivate`)).body, error('Insufficient permission'));
  const inUse = await creator.client.post(`/user_groups/${id}/deactivate`);
  assert.equal(
    inUse.body,
    error('Cannot deactivate user group in use.', 'CANNOT_DEACTIVATE_GROUP_IN_USE', { objections: [{ type: 'subgroup', supergroup_ids: [parent] }] }),
  );
  assert.equal((await creator.client.post(`/user_groups/${parent}/subgroups`, { delete: [id] })).body, ok);
  assert.equal((await realm.owner.client.patch('/realm', { can_create_groups: { new: id } })).body, { ...ok, can_create_groups: id });
  assert.equal(
    (await creator.client.post(`/user_groups/${id}/deactivate`)).body,
    error('Cannot deactivate user group in use.', 'CANNOT_DEACTIVATE_GROUP_IN_USE', { objections: [{ type: 'realm', settings: ['can_create_groups'] }] }),
  );
  const members = (await realm.owner.client.get('/user_groups')).body.user_groups.find((g: { name: string }) => g.name === 'role:members').id;
  assert.equal((await realm.owner.client.patch('/realm', { can_create_groups: { new: members } })).body, { ...ok, can_create_groups: members });
  assert.equal((await creator.client.post(`/user_groups/${id}/deactivate`)).body, ok);
  assert.equal((await creator.client.post(`/user_groups/${id}/deactivate`)).body, error('User group is deactivated.'));
  assert.equal((await creator.client.get(`/user_groups/${id}/members`)).body, error('User group is deactivated.'));
  assert.not.ok((await other.client.get('/user_groups')).body.user_groups.some((g: { id: number }) => g.id === id));
  const all = (await other.client.get('/user_groups', { include_deactivated_groups: true })).body.user_groups;
  assert.is(all.find((g: { id: number }) => g.id === id).deactivated, true);
  assert.not.ok((await openQueue(other, { fetch_event_types: ['realm_user_groups'] })).state.realm_user_groups.some((g: { id: number }) => g.id === id));
  assert.equal((await creator.client.patch(`/user_groups/${id}`, { name: 'sleeping' })).body, ok);
  assert.equal((await creator.client.patch(`/user_groups/${id}`, { deactivated: false })).body, ok);
  const modernEvents = await modern.pending();
  assert.equal(modernEvents.slice(-3), [
    { type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } },
    { type: 'user_group', op: 'update', group_id: id, data: { name: 'sleeping' } },
    { type: 'user_group', op: 'update', group_id: id, data: { deactivated: false } },
  ]);
  const oldEvents = await old.pending();
  assert.equal(
    oldEvents.slice(-2).map((e) => e.op),
    ['remove', 'add'],
  );
  assert.equal(oldEvents.at(-2), { type: 'user_group', op: 'remove', group_id: id });
  assert.is(oldEvents.at(-1)!.group.name, 'sleeping');
  assert.equal(oldEvents.at(-1)!.group.members, [creator.id]);
});

test('parallel adds of one member: exactly one succeeds, the others are told so', async () => {
  await membershipRace(await newRealm());
});

test.run();
