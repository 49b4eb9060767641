// Administering users: PATCH /users/{id} (name, role with the owner rules, profile data),
// DELETE /users/{id} and reactivation, DELETE /users/me, with the `realm_user` events and their
// consequences (no more authentication, queues ended, group, subscription and bot events).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { makeChannel } from '../messages/messages-helpers.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';

const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
const ok = { result: 'success', msg: '' };
const ownerError = error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');

async function groupIds(realm: Awaited<ReturnType<typeof newRealm>>): Promise<Record<string, number>> {
  const r = await realm.owner.client.get('/user_groups');
  return Object.fromEntries(r.body.user_groups.map((g: { id: number; name: string }) => [g.name, g.id]));
}

test('role changes: who may grant what, the last owner, and the events', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const mod = await realm.addUser({ role: Role.MODERATOR });
  const member = await realm.addUser();
  const sys = await groupIds(realm);
  const q = await openQueue(mod, { event_types: ['realm_user', 'user_group'] });
  assert.equal((await member.client.patch(`/users/${mod.id}`, { role: Role.MEMBER })).body, error('Insufficient permission'));
  assert.equal((await mod.client.patch(`/users/${member.id}`, { role: Role.GUEST })).body, error('Insufficient permission'));
  assert.equal((await admin.client.patch(`/users/${member.id}`, { role: Role.OWNER })).body, ownerError);
  assert.equal((await admin.client.patch(`/users/${realm.owner.id}`, { role: Role.MEMBER })).body, ownerError);
  assert.equal(
    (await realm.owner.client.patch(`/users/${realm.owner.id}`, { role: Role.ADMINISTRATOR })).body,
    error('The owner permission cannot be removed from the only organization owner.'),
  );
  assert.equal((await admin.client.patch(`/users/${member.id}`, { role: 250 })).body, { ...error('Invalid role'), var_name: 'role' });
  assert.equal((await admin.client.patch('/users/999999', { role: Role.MEMBER })).body, error('No such user'));
  assert.equal((await admin.client.patch(`/users/${member.id}`, { role: Role.MODERATOR })).body, ok);
  assert.equal(await q.pending(), [
    { type: 'realm_user', op: 'update', person: { user_id: member.id, role: Role.MODERATOR } },
    { type: 'user_group', op: 'remove_members', group_id: sys['role:members'], user_ids: [member.id] },
    { type: 'user_group', op: 'add_members', group_id: sys['role:moderators'], user_ids: [member.id] },
    { type: 'user_group', op: 'remove_members', group_id: sys['role:fullmembers'], user_ids: [member.id] },
  ]);
  // The new role is what the next request of that user is checked against.
  assert.equal((await member.client.get(`/user_groups/${sys['role:moderators']}/members/${member.id}`)).body, { ...ok, is_user_group_member: true });
  assert.equal((await realm.owner.client.patch(`/users/${admin.id}`, { role: Role.OWNER })).body, ok);
  assert.equal((await admin.client.patch(`/realm`, { invite_required: false })).body, { ...ok, invite_required: false });
  assert.equal((await admin.client.patch(`/users/${realm.owner.id}`, { role: Role.MEMBER })).body, ok, 'not the only owner any more');
  const state = (await openQueue(member, { fetch_event_types: ['realm_user_groups', 'realm_user'] })).state;
  assert.equal(state.realm_user_groups.find((g: { name: string }) => g.name === 'role:owners').members, [admin.id]);
  assert.is(state.realm_users.find((u: { user_id: number }) => u.user_id === realm.owner.id).role, Role.MEMBER);
});

test('full name and profile data', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser({ name: 'Mary' });
  const other = await realm.addUser({ name: 'Taken Name' });
  const field = await realm.server.app.prisma.customProfileField.create({ data: { realmId: realm.id, name: 'Phone', fieldType: 1 } });
  const q = await openQueue(other, { event_types: ['realm_user'] });
  assert.equal((await admin.client.patch(`/users/${member.id}`, { full_name: 'x'.repeat(101) })).body, error('Name too long!'));
  assert.equal((await admin.client.patch(`/users/${member.id}`, { full_name: '  ' })).body, ok, 'an empty name is ignored');
  assert.equal((await admin.client.patch(`/users/${member.id}`, { profile_data: [{ id: 999999, value: 'x' }] })).body, error('Field id 999999 not found.'));
  assert.equal((await admin.client.patch(`/users/${member.id}`, { full_name: 'Mary Major', profile_data: [{ id: field.id, value: '555-1234' }] })).body, ok);
  assert.equal((await admin.client.patch(`/users/${member.id}`, { profile_data: [{ id: field.id, value: null }] })).body, ok);
  assert.equal(await q.pending(), [
    { type: 'realm_user', op: 'update', person: { user_id: member.id, full_name: 'Mary Major' } },
    {
      type: 'realm_user',
      op: 'update',
      person: { user_id: member.id, custom_profile_field: { id: field.id, value: '555-1234', rendered_value: '<p>555-1234</p>' } },
    },
    { type: 'realm_user', op: 'update', person: { user_id: member.id, custom_profile_field: { id: field.id, value: null } } },
  ]);
  assert.is((await admin.client.get(`/users/${member.id}`)).body.user.full_name, 'Mary Major');
  await realm.owner.client.patch('/realm', { require_unique_names: true });
  assert.equal((await admin.client.patch(`/users/${member.id}`, { full_name: 'taken name' })).body, error('Unique names required in this organization.'));
});

test('deactivate: owner rules, events, no more authentication, queues end; reactivate', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const watcher = await realm.addUser();
  const sys = await groupIds(realm);
  const channelId = await makeChannel(realm, 'general', [member, watcher]);
  const teamRes = await watcher.client.post('/user_groups/create', { name: 'team', description: '', members: [member.id] });
  const team = teamRes.body.group_id as number;
  assert.equal((await member.client.delete(`/users/${watcher.id}`)).body, error('Insufficient permission'));
  assert.equal((await admin.client.delete(`/users/${realm.owner.id}`)).body, ownerError);
  assert.equal((await realm.owner.client.delete(`/users/${realm.owner.id}`)).body, error('Cannot deactivate the only organization owner'));
  const memberQueue = await openQueue(member, { event_types: ['message'] });
  const q = await openQueue(watcher, { event_types: ['realm_user', 'subscription', 'user_group'] });
  assert.equal((await admin.client.delete(`/users/${member.id}`)).body, ok);
  assert.equal(await q.pending(), [
    { type: 'subscription', op: 'peer_remove', stream_ids: [channelId], user_ids: [member.id] },
    { type: 'realm_user', op: 'update', person: { user_id: member.id, is_active: false } },
  ]);
  const denied = await member.client.get('/users/me');
  assert.is(denied.status, 401);
  assert.equal(denied.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
  assert.is(realm.server.app.queues.peek(memberQueue.state.queue_id), undefined, "the deactivated user's queues are gone");
  assert.equal((await admin.client.delete(`/users/${member.id}`)).body, error('User is deactivated'));
  const listed = (await watcher.client.get('/user_groups')).body.user_groups.find((g: { id: number }) => g.id === team);
  assert.equal(listed.members, [], 'deactivated users are not listed as members');
  const state = (await openQueue(watcher, { fetch_event_types: ['realm_user'] })).state;
  assert.ok(state.realm_non_active_users.some((u: { user_id: number }) => u.user_id === member.id));
  assert.equal((await member.client.get('/users/me')).status, 401);

  assert.equal((await member.client.post(`/users/${member.id}/reactivate`)).status, 401);
  assert.equal((await watcher.client.post(`/users/${member.id}/reactivate`)).body, error('Insufficient permission'));
  assert.equal((await admin.client.post(`/users/${member.id}/reactivate`)).body, ok);
  assert.equal(await q.pending(), [
    { type: 'realm_user', op: 'update', person: { user_id: member.id, is_active: true } },
    { type: 'subscription', op: 'peer_add', stream_ids: [channelId], user_ids: [member.id] },
    { type: 'user_group', op: 'add_members', group_id: sys['role:fullmembers'], user_ids: [member.id] },
    { type: 'user_group', op: 'add_members', group_id: sys['role:members'], user_ids: [member.id] },
    { type: 'user_group', op: 'add_members', group_id: team, user_ids: [member.id] },
  ]);
  assert.is((await member.client.get('/users/me')).status, 200);
});

test('deactivate: bots go with their owner; a bot is not a user here', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const bot = await realm.addUser({ bot: true });
  await realm.server.app.prisma.user.update({ where: { id: bot.id }, data: { botOwnerId: member.id } });
  assert.equal((await admin.client.delete(`/users/${bot.id}`)).body, error('No such user'));
  const q = await openQueue(admin, { event_types: ['realm_user'] });
  assert.equal((await admin.client.delete(`/users/${member.id}`)).body, ok);
  assert.equal(await q.pending(), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } },
    { type: 'realm_user', op: 'update', person: { user_id: member.id, is_active: false } },
  ]);
  assert.is((await bot.client.get('/users/me')).status, 401);
});

test('DELETE /users/me: anyone but the last user or owner; the account and its bots end, with their queues and keys', async () => {
  const solo = await newRealm();
  const alone = await solo.owner.client.delete('/users/me');
  const lastError = (entity: string, isLastOwner: boolean) => ({
    ...error(`Cannot deactivate the only ${entity}.`, 'CANNOT_DEACTIVATE_LAST_USER'),
    is_last_owner: isLastOwner,
    entity,
  });
  assert.equal([alone.status, alone.body], [400, lastError('user', false)]);
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const bot = await realm.addUser({ bot: true, botOwnerId: member.id });
  const lastOwner = await realm.owner.client.delete('/users/me');
  assert.equal([lastOwner.status, lastOwner.body], [400, lastError('organization owner', true)]);

  const channelId = await makeChannel(realm, 'general', [member, admin]);
  const memberQueue = await openQueue(member, {});
  const q = await openQueue(admin, { event_types: ['realm_user', 'realm_bot', 'subscription'] });
  assert.equal((await member.client.delete('/users/me')).body, ok);
  assert.equal(await q.pending(), [
    { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } },
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, is_active: false } },
    { type: 'subscription', op: 'peer_remove', stream_ids: [channelId], user_ids: [member.id] },
    { type: 'realm_user', op: 'update', person: { user_id: member.id, is_active: false } },
  ]);
  assert.is(realm.server.app.queues.peek(memberQueue.state.queue_id), undefined, "the user's other clients lose their queues");
  for (const u of [member, bot]) assert.equal((await u.client.get('/users/me')).body, error('Account is deactivated', 'USER_DEACTIVATED'));

  // With a second owner, an owner may leave.
  assert.equal((await realm.owner.client.patch(`/users/${admin.id}`, { role: Role.OWNER })).body, ok);
  assert.equal((await realm.owner.client.delete('/users/me')).body, ok);
  assert.is((await realm.owner.client.get('/users/me')).status, 401);
});

test.run();
