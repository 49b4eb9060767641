// PATCH /realm: organization settings and realm permissions, who may change them, Zulip's
// validation and response, and the `realm` events every active user receives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';

const error = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code, ...extra });

test('PATCH /realm: settings change, the response lists what changed, register shows it', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.patch('/realm', {
    name: 'New name',
    description: 'About us',
    allow_message_editing: false,
    message_content_edit_limit_seconds: 'unlimited',
    message_content_delete_limit_seconds: 120,
    topics_policy: 'disable_empty_topic',
    default_language: 'de',
    digest_weekday: 3,
    video_chat_provider: 0,
    giphy_rating: 4,
    waiting_period_threshold: 5,
    jitsi_server_url: 'https://jitsi.example.com',
  });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    name: 'updated',
    description: 'updated',
    allow_message_editing: false,
    message_content_edit_limit_seconds: null,
    message_content_delete_limit_seconds: 120,
    topics_policy: 3,
    default_language: 'updated',
    digest_weekday: 3,
    video_chat_provider: 0,
    giphy_rating: 4,
    waiting_period_threshold: 5,
    jitsi_server_url: 'updated',
  });
  const state = (await openQueue(realm.owner, { fetch_event_types: ['realm'] })).state;
  assert.is(state.realm_name, 'New name');
  assert.is(state.realm_description, 'About us');
  assert.is(state.realm_allow_message_editing, false);
  assert.is(state.realm_message_content_edit_limit_seconds, null);
  assert.is(state.realm_message_content_delete_limit_seconds, 120);
  assert.is(state.realm_topics_policy, 'disable_empty_topic');
  assert.is(state.realm_mandatory_topics, true);
  assert.is(state.realm_default_language, 'de');
  assert.is(state.realm_waiting_period_threshold, 5);
  assert.is(state.realm_jitsi_server_url, 'https://jitsi.example.com');
  const again = await realm.owner.client.patch('/realm', { name: 'New name', jitsi_server_url: 'default' });
  assert.equal(again.body, { result: 'success', msg: '', jitsi_server_url: null }, 'unchanged values are left out');
});

test('PATCH /realm: events to every active user, update or update_dict as Zulip sends them', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const q = await openQueue(member, { event_types: ['realm'] });
  await realm.owner.client.patch('/realm', {
    name: 'Renamed',
    description: 'Hello',
    allow_message_editing: false,
    message_content_edit_limit_seconds: 60,
    topics_policy: 'disable_empty_topic',
    invite_required: false,
    jitsi_server_url: 'default',
  });
  assert.equal(await q.pending(), [
    { type: 'realm', op: 'update', property: 'name', value: 'Renamed' },
    { type: 'realm', op: 'update', property: 'description', value: 'Hello' },
    { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
    { type: 'realm', op: 'update', property: 'invite_required', value: false },
    { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: 60 } },
    { type: 'realm', op: 'update_dict', property: 'default', data: { topics_policy: 'disable_empty_topic', mandatory_topics: true } },
  ]);
  assert.equal(await q.pending(), [], 'nothing more');
});

test('PATCH /realm: group settings, the {new, old} form, normalization and their events', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const q = await openQueue(member, { event_types: ['realm'] });
  const before = (await openQueue(realm.owner, { fetch_event_types: ['realm'] })).state;
  const groups = (await realm.owner.client.get('/user_groups')).body.user_groups as { id: number; name: string }[];
  const id = (name: string) => groups.find((g) => g.name === name)!.id;
  const r = await realm.owner.client.patch('/realm', {
    can_create_groups: { new: id('role:moderators'), old: before.realm_can_create_groups },
    can_delete_own_message_group: { new: { direct_members: [member.id], direct_subgroups: [id('role:administrators')] } },
    can_mention_many_users_group: { new: { direct_members: [], direct_subgroups: [id('role:members')] } },
  });
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    can_create_groups: id('role:moderators'),
    can_delete_own_message_group: { direct_members: [member.id], direct_subgroups: [id('role:administrators')] },
    can_mention_many_users_group: id('role:members'),
  });
  assert.equal(await q.pending(), [
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_create_groups: id('role:moderators') } },
    {
      type: 'realm',
      op: 'update_dict',
      property: 'default',
      data: { can_delete_own_message_group: { direct_members: [member.id], direct_subgroups: [id('role:administrators')] } },
    },
    { type: 'realm', op: 'update_dict', property: 'default', data: { can_mention_many_users_group: id('role:members') } },
  ]);
  const state = (await openQueue(realm.owner, { fetch_event_types: ['realm'] })).state;
  assert.is(state.realm_can_create_groups, id('role:moderators'));
  const stale = await realm.owner.client.patch('/realm', { can_create_groups: { new: id('role:members'), old: id('role:owners') } });
  assert.equal(stale.body, error("'old' value does not match the expected value."));
  // The new setting is what permission checks read: a member may no longer create groups.
  const create = await member.client.post('/user_groups/create', { name: 'g', description: '', members: [] });
  assert.equal(create.body, error('Insufficient permission'));
});

test('PATCH /realm: who may change what (guest, member, moderator, admin, owner-only settings)', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const mod = await realm.addUser({ role: Role.MODERATOR });
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: Role.GUEST });
  for (const u of [guest, member, mod]) {
    const r = await u.client.patch('/realm', { name: 'x' });
    assert.is(r.status, 400);
    assert.equal(r.body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
  }
  assert.equal((await admin.client.patch('/realm', { name: 'By admin' })).body, { result: 'success', msg: '', name: 'updated' });
  const owners = (await realm.owner.client.get('/user_groups')).body.user_groups.find((g: { name: string }) => g.name === 'role:members').id;
  for (const params of [
    { invite_required: false },
    { waiting_period_threshold: 3 },
    { message_retention_days: 30 },
    { emails_restricted_to_domains: true },
    { can_create_groups: { new: owners } },
    { can_manage_all_groups: { new: owners } },
    { can_invite_users_group: { new: owners } },
    { create_multiuse_invite_group: { new: owners } },
    { can_manage_billing_group: { new: owners } },
  ]) {
    assert.equal((await admin.client.patch('/realm', params)).body, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'), JSON.stringify(params));
  }
  assert.equal((await realm.owner.client.patch('/realm', { message_retention_days: 'unlimited' })).body, { result: 'success', msg: '' });
  assert.equal((await realm.owner.client.patch('/realm', { message_retention_days: 30 })).body, { result: 'success', msg: '', message_retention_days: 30 });
});

test("PATCH /realm: validation errors in Zulip's words", async () => {
  const realm = await newRealm();
  const groups = (await realm.owner.client.get('/user_groups')).body.user_groups as { id: number; name: string }[];
  const id = (name: string) => groups.find((g) => g.name === name)!.id;
  const cases: [Record<string, unknown>, Record<string, unknown>][] = [
    [
      { message_content_edit_limit_seconds: 0 },
      error("Bad value for 'message_content_edit_limit_seconds': 0", 'REQUEST_VARIABLE_INVALID', {
        var_name: 'message_content_edit_limit_seconds',
        bad_value: 0,
      }),
    ],
    [
      { move_messages_within_stream_limit_seconds: 'forever' },
      error("Bad value for 'move_messages_within_stream_limit_seconds': forever", 'REQUEST_VARIABLE_INVALID', {
        var_name: 'move_messages_within_stream_limit_seconds',
        bad_value: 'forever',
      }),
    ],
    [
      { message_retention_days: -5 },
      error("Bad value for 'message_retention_days': -5", 'REQUEST_VARIABLE_INVALID', { var_name: 'message_retention_days', bad_value: -5 }),
    ],
    [{ topics_policy: 'empty_topic_only' }, error('Invalid topics_policy')],
    [{ default_language: 'xx' }, error("Invalid language 'xx'")],
    [{ video_chat_provider: 9 }, error('Invalid video_chat_provider 9')],
    [{ giphy_rating: 9 }, error('Invalid giphy_rating 9')],
    [{ jitsi_server_url: 'not a url' }, error('jitsi_server_url is not an allowed_type')],
    [{ name: 'n'.repeat(41) }, error('name is too long (limit: 40 characters)', 'BAD_REQUEST', { var_name: 'name' })],
    [{ can_create_groups: { new: 999999 } }, error('Invalid user group')],
    [{ can_create_groups: { new: id('role:everyone') } }, error("'can_create_groups' setting cannot be set to 'role:everyone' group.")],
    [{ can_create_groups: { new: id('role:internet') } }, error("'can_create_groups' setting cannot be set to 'role:internet' group.")],
    [{ can_manage_all_groups: { new: id('role:nobody') } }, error("'can_manage_all_groups' setting cannot be set to 'role:nobody' group.")],
    [{ can_access_all_users_group: { new: id('role:moderators') } }, error("'can_access_all_users_group' setting cannot be set to 'role:moderators' group.")],
    [
      { can_create_web_public_channel_group: { new: { direct_members: [realm.owner.id], direct_subgroups: [] } } },
      error("'can_create_web_public_channel_group' must be a system user group."),
    ],
    [{ can_delete_any_message_group: { new: { direct_members: [424242], direct_subgroups: [] } } }, error('Invalid user ID: 424242')],
    [{ can_delete_any_message_group: { new: { direct_members: [realm.owner.id], direct_subgroups: [777777] } } }, error('Invalid user group ID: 777777')],
  ];
  for (const [params, body] of cases) {
    const r = await realm.owner.client.patch('/realm', params);
    assert.is(r.status, 400, JSON.stringify(params));
    assert.equal(r.body, body, JSON.stringify(params));
  }
  const state = (await openQueue(realm.owner, { fetch_event_types: ['realm'] })).state;
  assert.is(state.realm_message_content_edit_limit_seconds, 600, 'nothing was written');
});

test.run();
