// Every action that publishes, run through the API: it sends exactly the events listed, each in
// the shape its schema gives (Zulip's test_events.py with verify_action).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { deliverDueMessages } from '../../src/actions/scheduled-delivery.ts';
import { sendUnstored } from '../../src/actions/transaction.ts';
import type { App } from '../../src/app.ts';
import type { EventEnvelope } from '../../src/bus/bus.ts';
import { MemoryBus } from '../../src/bus/memory.ts';
import { Role } from '../../src/domain/roles.ts';
import { checkEvent, schemaKey } from '../../src/events/schemas.ts';
import { captureEvents, eventAs } from '../helpers/events.ts';
import { devicesOf, eventually, newTestDevice, registrationParams, TestRelay } from '../helpers/push-relay.ts';
import { newRealm, startTestServer } from '../helpers/server.ts';
import { encodeForm } from '../helpers/client.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { makeChannel, send, sendDm, withSystemBots } from '../messages/messages-helpers.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

test('schemas refuse what Zulip would not send', () => {
  assert.is(checkEvent({ type: 'reaction', op: 'add', message_id: 1 }) === null, false);
  assert.is(checkEvent({ type: 'drafts', op: 'remove', draft_id: 1, extra: true }) === null, false, 'unknown keys are refused');
  assert.match(checkEvent({ type: 'no_such_event' })!, 'no schema for event type no_such_event');
  assert.is(checkEvent({ type: 'drafts', op: 'remove', draft_id: 1 }), null);
});

test('an event that does not match its schema: strict mode throws, log mode logs and still delivers', () => {
  const delivered: unknown[] = [];
  const bus = new MemoryBus();
  bus.subscribe((e) => delivered.push(e.event));
  const appIn = (mode: 'strict' | 'log') => ({ config: { EVENT_SCHEMA_CHECK: mode }, bus }) as unknown as App;
  const bad: EventEnvelope = {
    realmId: 1,
    userIds: [1],
    // @ts-expect-error -- a typing event without its sender: the type refuses it, and so must the check at run time.
    event: { type: 'typing', op: 'start' },
  };
  assert.throws(() => sendUnstored(appIn('strict'), bad), /does not match its schema/);
  assert.equal(delivered, []);
  sendUnstored(appIn('log'), bad);
  assert.equal(delivered, [bad.event]);
});

test('messages: send, edit, move, delete, reactions, flags, typing', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  const sid = await makeChannel(realm, 'general', [realm.owner, bob]);
  await verifyAction(realm, () => o.post('/messages', { type: 'stream', to: sid, topic: 't', content: 'hi @**Bob**' }), ['message']);
  await verifyAction(realm, () => o.post('/messages', { type: 'direct', to: JSON.stringify([bob.id]), content: 'dm' }), ['message']);
  const id = await send(realm.owner, sid, 't', 'original');
  const hash = createHash('sha256').update('original').digest('hex');
  await verifyAction(realm, () => o.patch(`/messages/${id}`, { content: 'edited', prev_content_sha256: hash }), ['update_message']);
  // The Notification Bot came with the organization, and is nobody's news.
  await verifyAction(realm, () => o.patch(`/messages/${id}`, { topic: 'moved', send_notification_to_old_thread: true }), [
    'update_message',
    'message',
    'message',
  ]);
  await verifyAction(realm, () => o.patch(`/messages/${id}`, { topic: '✔ moved' }), ['update_message', 'message']);
  await verifyAction(realm, () => o.post(`/messages/${id}/reactions`, { emoji_name: 'smile' }), ['reaction/add']);
  await verifyAction(realm, () => o.delete(`/messages/${id}/reactions`, { emoji_name: 'smile' }), ['reaction/remove']);
  await verifyAction(realm, () => bob.client.post('/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'read' }), [
    'update_message_flags/add',
  ]);
  await verifyAction(realm, () => bob.client.post('/messages/flags', { messages: JSON.stringify([id]), op: 'remove', flag: 'read' }), [
    'update_message_flags/remove',
  ]);
  await verifyAction(realm, () => bob.client.post('/mark_all_as_read'), ['update_message_flags/add']);
  // With nothing unread there, marking a channel as read sends nothing (Zulip returns early); so one more message first.
  await verifyAction(realm, () => bob.client.post('/mark_stream_as_read', { stream_id: sid }), []);
  await send(realm.owner, sid, 't', 'news');
  await verifyAction(realm, () => bob.client.post('/mark_stream_as_read', { stream_id: sid }), ['update_message_flags/add']);
  await verifyAction(realm, () => o.post('/typing', { op: 'start', to: JSON.stringify([bob.id]) }), ['typing/start']);
  await verifyAction(realm, () => o.post('/typing', { type: 'stream', op: 'stop', stream_id: sid, topic: 't' }), ['typing/stop']);
  await verifyAction(realm, () => o.delete(`/messages/${id}`), ['delete_message']);
  const dm = await sendDm(realm.owner, [bob.id], 'dm');
  await verifyAction(realm, () => o.delete(`/messages/${dm}`), ['delete_message']);
});

test('channels and subscriptions', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  await verifyAction(realm, () => o.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'new' }]) }), [
    'stream/create',
    'subscription/add',
    'subscription/peer_add',
  ]);
  const sid = (await o.get('/get_stream_id', { stream: 'new' })).body.stream_id;
  await verifyAction(
    realm,
    () => o.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'new' }]), principals: JSON.stringify([bob.id]) }),
    ['subscription/add', 'subscription/peer_add'],
  );
  await verifyAction(
    realm,
    () => o.post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: sid, property: 'is_muted', value: true }]) }),
    ['subscription/update', 'subscription/update'],
  );
  await verifyAction(realm, () => o.patch(`/streams/${sid}`, { description: 'about' }), ['stream/update']);
  await verifyAction(realm, () => o.patch(`/streams/${sid}`, { is_private: true }), ['stream/update']);
  await verifyAction(realm, () => bob.client.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['new']) }), [
    'subscription/remove',
    'stream/delete',
    'subscription/peer_remove',
  ]);
  await verifyAction(realm, () => o.delete(`/streams/${sid}`), ['stream/update', 'stream/delete']);
});

test('users, settings, the organization', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  await verifyAction(realm, () => o.post('/users', { email: 'new@example.com', password: 'new-password', full_name: 'New Nina' }), [
    'realm_user/add',
    'user_group/add_members',
    'user_group/add_members',
  ]);
  const bob = await realm.addUser({ name: 'Bob' });
  await verifyAction(realm, () => o.patch(`/users/${bob.id}`, { role: Role.MODERATOR }), [
    'realm_user/update',
    'user_group/remove_members',
    'user_group/add_members',
    'user_group/remove_members',
  ]);
  await verifyAction(realm, () => o.patch(`/users/${bob.id}`, { full_name: 'Bobby' }), ['realm_user/update']);
  await verifyAction(realm, () => o.delete(`/users/${bob.id}`), ['realm_user/update']);
  await verifyAction(realm, () => o.post(`/users/${bob.id}/reactivate`), ['realm_user/update', 'user_group/add_members']);
  await verifyAction(realm, () => o.patch('/settings', { full_name: 'Olivia O' }), ['realm_user/update']);
  await verifyAction(realm, () => o.patch('/settings', { enter_sends: true }), ['user_settings/update']);
  await verifyAction(realm, () => o.patch('/settings', { timezone: 'Europe/Paris' }), ['user_settings/update', 'realm_user/update']);
  await verifyAction(realm, () => o.patch('/settings', { email_address_visibility: 5 }), [
    'user_settings/update',
    'realm_user/update',
    'realm_user/update',
    'realm_user/update',
  ]);
  await verifyAction(realm, () => o.patch('/realm', { name: 'Renamed' }), ['realm/update']);
  await verifyAction(realm, () => o.patch('/realm', { allow_message_editing: false }), ['realm/update_dict']);
  await verifyAction(realm, () => o.post('/users/me/presence', { status: 'active' }), ['presence']);
});

test('user groups', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  const created = await verifyAction(realm, () => o.post('/user_groups/create', { name: 'g', description: 'd', members: JSON.stringify([bob.id]) }), [
    'user_group/add',
  ]);
  const id = eventAs(created[0]!.event, 'user_group', 'add').group.id;
  await verifyAction(realm, () => o.patch(`/user_groups/${id}`, { name: 'g2' }), ['user_group/update']);
  await verifyAction(realm, () => o.post(`/user_groups/${id}/members`, { add: JSON.stringify([realm.owner.id]), delete: JSON.stringify([bob.id]) }), [
    'user_group/add_members',
    'user_group/remove_members',
  ]);
  const sub = (await o.post('/user_groups/create', { name: 'sub', description: '', members: '[]' })).body.group_id;
  await verifyAction(realm, () => o.post(`/user_groups/${id}/subgroups`, { add: JSON.stringify([sub]) }), ['user_group/add_subgroups']);
  await verifyAction(realm, () => o.post(`/user_groups/${id}/subgroups`, { delete: JSON.stringify([sub]) }), ['user_group/remove_subgroups']);
  await verifyAction(realm, () => o.post(`/user_groups/${id}/deactivate`), ['user_group/update', 'user_group/remove']);
  await verifyAction(realm, () => o.patch(`/user_groups/${id}`, { deactivated: false }), ['user_group/update', 'user_group/add']);
});

test('drafts, snippets, custom emoji, linkifiers, uploads', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const drafts = await verifyAction(realm, () => o.post('/drafts', { drafts: JSON.stringify([{ type: '', to: [], topic: '', content: 'd' }]) }), [
    'drafts/add',
  ]);
  const draft = eventAs(drafts[0]!.event, 'drafts', 'add').drafts[0]!.id;
  await verifyAction(realm, () => o.patch(`/drafts/${draft}`, { draft: JSON.stringify({ type: '', to: [], topic: '', content: 'e' }) }), ['drafts/update']);
  await verifyAction(realm, () => o.delete(`/drafts/${draft}`), ['drafts/remove']);
  const snippets = await verifyAction(realm, () => o.post('/saved_snippets', { title: 't', content: 'c' }), ['saved_snippets/add']);
  const snippet = eventAs(snippets[0]!.event, 'saved_snippets', 'add').saved_snippet.id;
  await verifyAction(realm, () => o.patch(`/saved_snippets/${snippet}`, { title: 'u' }), ['saved_snippets/update']);
  await verifyAction(realm, () => o.delete(`/saved_snippets/${snippet}`), ['saved_snippets/remove']);
  await verifyAction(realm, () => o.postMultipart('/realm/emoji/parrot', {}, [{ field: 'f1', filename: 'p.png', contentType: 'image/png', data: PNG }]), [
    'realm_emoji/add',
  ]);
  await verifyAction(realm, () => o.delete('/realm/emoji/parrot'), ['realm_emoji/update_one']);
  const added = await verifyAction(realm, () => o.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.test/{id}' }), [
    'realm_linkifiers',
  ]);
  const linkifier = eventAs(added[0]!.event, 'realm_linkifiers').realm_linkifiers[0]!.id;
  await verifyAction(realm, () => o.patch(`/realm/filters/${linkifier}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://y.test/{id}' }), [
    'realm_linkifiers',
  ]);
  await verifyAction(realm, () => o.patch('/realm/linkifiers', { ordered_linkifier_ids: JSON.stringify([linkifier]) }), ['realm_linkifiers']);
  await verifyAction(realm, () => o.delete(`/realm/filters/${linkifier}`), ['realm_linkifiers']);
  await verifyAction(
    realm,
    () => o.postMultipart('/user_uploads', {}, [{ field: 'file', filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('x') }]),
    ['attachment/add'],
  );
  const attachment = await realm.server.app.prisma.attachment.findFirstOrThrow({ where: { realmId: realm.id } });
  await verifyAction(realm, () => o.delete(`/attachments/${attachment.id}`), ['attachment/remove']);
});

test('bots, status, navigation views, channel folders, organization domains', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  await verifyAction(realm, () => o.post(`/bots/${bot.id}/api_key/regenerate`), ['realm_bot/update']);
  await verifyAction(realm, () => o.post('/users/me/status', { status_text: 'busy', emoji_name: 'octopus' }), ['user_status']);
  await verifyAction(realm, () => o.post('/users/me/status', { away: true }), ['user_settings/update', 'user_status']);
  await verifyAction(realm, () => o.post('/navigation_views', { fragment: 'inbox', is_pinned: true }), ['navigation_view/add']);
  await verifyAction(realm, () => o.patch('/navigation_views/inbox', { is_pinned: false }), ['navigation_view/update']);
  await verifyAction(realm, () => o.delete('/navigation_views/inbox'), ['navigation_view/remove']);
  const folder = await verifyAction(realm, () => o.post('/channel_folders/create', { name: 'F', description: 'd' }), ['channel_folder/add']);
  const folderId = eventAs(folder[0]!.event, 'channel_folder', 'add').channel_folder.id;
  await verifyAction(realm, () => o.patch(`/channel_folders/${folderId}`, { name: 'G', is_archived: true }), ['channel_folder/update']);
  await verifyAction(realm, () => o.patch('/channel_folders', { order: JSON.stringify([folderId]) }), ['channel_folder/reorder']);
  await verifyAction(realm, () => o.post('/realm/domains', { domain: 'a.test', allow_subdomains: false }), ['realm_domains/add']);
  await verifyAction(realm, () => o.patch('/realm/domains/a.test', { allow_subdomains: true }), ['realm_domains/change']);
  await verifyAction(realm, () => o.delete('/realm/domains/a.test'), ['realm_domains/remove']);
});

test('client devices and their push registration (a server with a push relay)', async () => {
  const relay = new TestRelay();
  await relay.start();
  const server = await startTestServer({ PUSH_RELAY_URL: relay.url });
  try {
    const realm = await newRealm(server);
    const o = realm.owner.client;
    const added = await verifyAction(realm, () => o.post('/register_client_device'), ['device/add']);
    const id = eventAs(added[0]!.event, 'device', 'add').device_id;
    const d = newTestDevice();
    await verifyAction(realm, () => o.post('/mobile_push/register', registrationParams(id, d)), ['device/update']);
    await eventually(async () => ((await devicesOf(realm.owner))[id]!.push_token_id === d.tokenId ? true : undefined), 15_000, 'the relay registration');
    const next = newTestDevice();
    await verifyAction(
      realm,
      () => o.post('/mobile_push/register', { device_id: id, push_key: next.pushKey.toString('base64'), push_key_id: next.pushKeyId }),
      ['device/update'],
    );
    const { push_key: _k, push_key_id: _i, ...tokenFields } = registrationParams(id, next);
    await verifyAction(realm, () => o.post('/mobile_push/register', tokenFields), ['device/update']);
    // The relay's answer comes as an event of its own, before the removal is watched.
    await eventually(async () => ((await devicesOf(realm.owner))[id]!.push_token_id === next.tokenId ? true : undefined), 15_000, 'the rotated token');
    await verifyAction(realm, () => o.post('/remove_client_device', { device_id: id }), ['device/remove']);
  } finally {
    await server.stop();
    await relay.stop();
  }
});

test('scheduled messages and reminders, and their delivery when due', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  const app = realm.server.app;
  const sid = await makeChannel(realm, 'general', [realm.owner, bob]);
  await withSystemBots(realm);
  const later = Math.floor(Date.now() / 1000) + 3600;
  const added = await verifyAction(
    realm,
    () => o.post('/scheduled_messages', { type: 'stream', to: sid, topic: 't', content: 'c', scheduled_delivery_timestamp: later }),
    ['scheduled_messages/add'],
  );
  const id = eventAs(added[0]!.event, 'scheduled_messages', 'add').scheduled_messages[0]!.scheduled_message_id;
  await verifyAction(realm, () => o.patch(`/scheduled_messages/${id}`, { type: 'direct', to: JSON.stringify([bob.id]) }), ['scheduled_messages/update']);
  await verifyAction(realm, () => o.delete(`/scheduled_messages/${id}`), ['scheduled_messages/remove']);
  const target = await send(bob, sid, 't', 'remember');
  const reminder = await verifyAction(realm, () => o.post('/reminders', { message_id: target, scheduled_delivery_timestamp: later }), ['reminders/add']);
  const reminderId = eventAs(reminder[0]!.event, 'reminders', 'add').reminders[0]!.reminder_id;
  await verifyAction(realm, () => o.delete(`/reminders/${reminderId}`), ['reminders/remove']);
  // Delivery: the scheduler's work, run here on rows made due behind its back.
  const deliver = async () => {
    await app.prisma.scheduledMessage.updateMany({
      where: { realmId: realm.id, delivered: false, failed: false },
      data: { scheduledTimestamp: new Date(Date.now() - 1000) },
    });
    await deliverDueMessages(app);
    return { status: 200, headers: {}, body: {}, text: '' };
  };
  await o.post('/scheduled_messages', { type: 'stream', to: sid, topic: 't', content: 'due', scheduled_delivery_timestamp: later });
  await verifyAction(realm, deliver, ['message', 'scheduled_messages/remove']);
  await o.post('/reminders', { message_id: target, scheduled_delivery_timestamp: later });
  await verifyAction(realm, deliver, ['message', 'reminders/remove']);
  await o.post('/scheduled_messages', { type: 'stream', to: sid, topic: 't', content: 'refused', scheduled_delivery_timestamp: later });
  await o.delete(`/streams/${sid}`);
  await verifyAction(realm, deliver, ['scheduled_messages/update', 'message']);
});

test('default channels and groups, custom profile fields and values', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  const sid = await makeChannel(realm, 'lobby', [realm.owner, bob]);
  await verifyAction(realm, () => o.post('/default_streams', { stream_id: sid }), ['default_streams']);
  await verifyAction(realm, () => o.post('/users', { email: 'joiner@example.com', password: 'joiner-password', full_name: 'Joiner' }), [
    'realm_user/add',
    'user_group/add_members',
    'user_group/add_members',
    'subscription/add',
    'subscription/peer_add',
  ]);
  await verifyAction(realm, () => o.delete('/default_streams', { stream_id: sid }), ['default_streams']);
  await verifyAction(realm, () => o.post('/default_stream_groups/create', { group_name: 'G', description: '', stream_names: ['lobby'] }), [
    'default_stream_groups',
  ]);
  const group = (await realm.server.app.prisma.defaultChannelGroup.findFirstOrThrow({ where: { realmId: realm.id } })).id;
  await verifyAction(realm, () => o.patch(`/default_stream_groups/${group}`, { new_group_name: 'H', new_description: 'd' }), [
    'default_stream_groups',
    'default_stream_groups',
  ]);
  await verifyAction(realm, () => o.patch(`/default_stream_groups/${group}/streams`, { op: 'remove', stream_names: ['lobby'] }), ['default_stream_groups']);
  await verifyAction(realm, () => o.delete(`/default_stream_groups/${group}`), ['default_stream_groups']);
  await verifyAction(realm, () => o.patch(`/streams/${sid}`, { is_default_stream: true }), ['default_streams']);
  await verifyAction(realm, () => o.post('/users/me/subscriptions', { subscriptions: [{ name: 'new' }], is_default_stream: true }), [
    'stream/create',
    'subscription/add',
    'subscription/peer_add',
    'default_streams',
  ]);
  await verifyAction(realm, () => o.delete(`/streams/${sid}`), ['default_streams', 'stream/update', 'stream/delete']);

  const created = await verifyAction(realm, () => o.post('/realm/profile_fields', { name: 'Bio', field_type: 2 }), ['custom_profile_fields']);
  const field = eventAs(created[0]!.event, 'custom_profile_fields').fields[0]!.id;
  await verifyAction(realm, () => o.patch(`/realm/profile_fields/${field}`, { hint: 'About you' }), ['custom_profile_fields']);
  await verifyAction(realm, () => o.patch('/realm/profile_fields', { order: [field] }), ['custom_profile_fields']);
  await verifyAction(realm, () => bob.client.patch('/users/me/profile_data', { data: [{ id: field, value: 'I **build**' }] }), ['realm_user/update']);
  await verifyAction(realm, () => o.patch(`/users/${bob.id}`, { profile_data: [{ id: field, value: null }] }), ['realm_user/update']);
  await verifyAction(realm, () => o.patch(`/users/${bob.id}`, { profile_data: [{ id: field, value: 'x' }] }), ['realm_user/update']);
  await verifyAction(realm, () => bob.client.delete('/users/me/profile_data', { data: [field] }), ['realm_user/update']);
  await verifyAction(realm, () => o.delete(`/realm/profile_fields/${field}`), ['custom_profile_fields']);
});

test('organization operations: defaults for new users, code playgrounds, channel creation, deactivation', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  await verifyAction(realm, () => o.patch('/realm/user_settings_defaults', { enter_sends: true, emojiset: 'text' }), [
    'realm_user_settings_defaults/update',
    'realm_user_settings_defaults/update',
  ]);
  const added = await verifyAction(
    realm,
    () => o.post('/realm/playgrounds', { name: 'Py', pygments_language: 'Python', url_template: 'https://py.test/?code={code}' }),
    ['realm_playgrounds'],
  );
  const playground = eventAs(added[0]!.event, 'realm_playgrounds').realm_playgrounds[0]!.id;
  await verifyAction(realm, () => o.delete(`/realm/playgrounds/${playground}`), ['realm_playgrounds']);
  const bob = await realm.addUser({ name: 'Bob' });
  await verifyAction(realm, () => o.post('/channels/create', { name: 'created', subscribers: [realm.owner.id] }), [
    'stream/create',
    'subscription/add',
    'subscription/peer_add',
  ]);
  await verifyAction(realm, () => bob.client.post('/channels/create', { name: 'empty', subscribers: [] }), ['stream/create']);
  await verifyAction(realm, () => o.post('/realm/deactivate'), ['realm/deactivated']);
});

test('avatars', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const avatar = [{ field: 'file', filename: 'me.png', contentType: 'image/png', data: PNG }];
  await verifyAction(realm, () => o.postMultipart('/users/me/avatar', {}, avatar), ['realm_user/update']);
  await verifyAction(realm, () => o.delete('/users/me/avatar'), ['realm_user/update']);
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  await verifyAction(realm, () => bot.client.postMultipart('/users/me/avatar', {}, avatar), ['realm_bot/update', 'realm_user/update']);
});

test('data exports: request, the background job, deletion, consent', async () => {
  const realm = await newRealm();
  await withSystemBots(realm);
  const o = realm.owner.client;
  const job = captureEvents(realm.server.app, realm.id);
  const [requested] = await verifyAction(realm, () => o.post('/export/realm'), ['realm_export']);
  const id = eventAs(requested!.event, 'realm_export').exports[0]!.id;
  // The export is written after the request's commit: the Notification Bot's notice, then the list.
  while (!job.ofType('realm_export').some((e) => e.event.exports[0]!.pending === false)) await new Promise((r) => setTimeout(r, 20));
  job.stop();
  assert.equal(
    job.envelopes.map((e) => schemaKey(e.event)),
    ['realm_export', 'message', 'realm_export'],
  );
  for (const e of job.envelopes) assert.is(checkEvent(e.event), null, JSON.stringify(e.event));
  await verifyAction(realm, () => o.delete(`/export/realm/${id}`), ['realm_export']);
  await verifyAction(realm, () => o.patch('/settings', { allow_private_data_export: true }), ['user_settings/update', 'realm_export_consent']);
});

test('reports, edit typing, topic deletion, subscription updates', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  const sid = await makeChannel(realm, 'general', [realm.owner, bob]);
  const reports = await makeChannel(realm, 'reports', [realm.owner], { invite_only: true });
  await withSystemBots(realm);
  await verifyAction(realm, () => o.patch('/realm', { moderation_request_channel_id: reports }), ['realm/update']);
  const id = await send(bob, sid, 't', 'report me');
  await verifyAction(realm, () => o.post(`/messages/${id}/report`, { report_type: 'spam' }), ['message']);
  await verifyAction(realm, () => bob.client.post(`/messages/${id}/typing`, { op: 'start' }), ['typing_edit_message/start']);
  const dm = await sendDm(bob, [realm.owner.id], 'dm');
  await verifyAction(realm, () => bob.client.post(`/messages/${dm}/typing`, { op: 'stop' }), ['typing_edit_message/stop']);
  await realm.server.app.prisma.userTopic.create({ data: { userId: bob.id, channelId: sid, topic: 't', visibility: 1 } });
  await verifyAction(realm, () => o.post(`/streams/${sid}/delete_topic`, { topic_name: 't' }), ['delete_message', 'stream/update', 'user_topic']);
  await verifyAction(realm, () => bob.client.patch(`/users/me/subscriptions/${sid}`, { property: 'pin_to_top', value: 'true' }), ['subscription/update']);
  await verifyAction(realm, () => bob.client.patch('/users/me/subscriptions', { delete: ['general'] }), ['subscription/remove', 'subscription/peer_remove']);
  await verifyAction(realm, () => o.delete(`/streams/${reports}`), ['realm/update_dict', 'stream/update', 'stream/delete']);
});

test('topic settings, muted users, alert words, deactivating oneself', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  const sid = await makeChannel(realm, 'general', [realm.owner, bob]);
  const id = await send(bob, sid, 'roses', 'hi');
  await verifyAction(realm, () => o.post('/user_topics', { stream_id: sid, topic: 'roses', visibility_policy: 3 }), ['muted_topics', 'user_topic']);
  await verifyAction(realm, () => o.patch('/users/me/subscriptions/muted_topics', { stream_id: sid, topic: 'tulips', op: 'add' }), [
    'muted_topics',
    'user_topic',
  ]);
  await verifyAction(
    realm,
    () =>
      o.patch(`/messages/${id}`, {
        topic: 'daisies',
        propagate_mode: 'change_all',
        send_notification_to_old_thread: false,
        send_notification_to_new_thread: false,
      }),
    ['user_topic', 'muted_topics', 'user_topic', 'update_message'],
  );
  await verifyAction(realm, () => o.post(`/users/me/muted_users/${bob.id}`), ['update_message_flags/add', 'muted_users']);
  await verifyAction(realm, () => o.delete(`/users/me/muted_users/${bob.id}`), ['muted_users']);
  await verifyAction(realm, () => o.post('/users/me/alert_words', { alert_words: JSON.stringify(['rose']) }), ['alert_words']);
  await verifyAction(realm, () => o.delete('/users/me/alert_words', { alert_words: JSON.stringify(['rose']) }), ['alert_words']);
  await realm.addUser({ bot: true, botOwnerId: bob.id });
  await verifyAction(realm, () => bob.client.delete('/users/me'), ['realm_user/update', 'realm_bot/update', 'subscription/peer_remove', 'realm_user/update']);
});

test('invitations, registration through a link, the welcome text, deactivating an inviter', async () => {
  const realm = await newRealm();
  await withSystemBots(realm);
  const o = realm.owner.client;
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const invites = () => realm.server.app.prisma.invitation.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } });
  await verifyAction(realm, () => o.post('/invites', { invitee_emails: `a@${realm.subdomain}.test, b@${realm.subdomain}.test`, stream_ids: [] }), [
    'invites_changed',
  ]);
  const [a, b] = await invites();
  await verifyAction(realm, () => o.post(`/invites/${a!.id}/resend`), []);
  await verifyAction(realm, () => o.delete(`/invites/${a!.id}`), ['invites_changed']);
  await verifyAction(realm, () => o.post('/invites/multiuse'), ['invites_changed']);
  const link = await realm.server.app.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: realm.id } });
  await verifyAction(realm, () => o.delete(`/invites/multiuse/${link.id}`), ['invites_changed']);
  const form = encodeForm({ key: b!.key, full_name: 'Bea Invited', password: 'bea-password' });
  await verifyAction(
    realm,
    () => realm.anonymous.request('POST', '/accounts/register/', { body: form }),
    ['realm_user/add', 'user_group/add_members', 'user_group/add_members', 'invites_changed', 'message', 'message'],
    302,
  );
  await verifyAction(realm, () => o.patch('/realm', { welcome_message_custom_text: 'Hi' }), ['realm/update']);
  await verifyAction(realm, () => o.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'Hi' }), ['message']);
  await admin.client.post('/invites', { invitee_emails: `c@${realm.subdomain}.test`, stream_ids: [] });
  await verifyAction(realm, () => o.delete(`/users/${admin.id}`), ['invites_changed', 'realm_user/update']);
});

test.run();
