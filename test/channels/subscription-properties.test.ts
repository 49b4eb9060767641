// PATCH /users/me/subscriptions/{stream_id} (one property, Zulip's update_subscriptions_property),
// the bulk POST /users/me/subscriptions/properties it shares its rules with, and PATCH
// /users/me/subscriptions (Zulip's update_subscriptions_backend: add and delete in one request).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { errorBody, makeChannel } from '../messages/messages-helpers.ts';
import { eventAs } from '../helpers/events.ts';

const ok = { result: 'success', msg: '' };

test("PATCH /users/me/subscriptions/{id}: each property, with Zulip's events and the legacy in_home_view", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const id = await makeChannel(realm, 'prefs', [ann]);
  const patch = (property: string, value: string) => ann.client.patch(`/users/me/subscriptions/${id}`, { property, value });
  const update = (property: string, value: unknown) => ({ type: 'subscription', op: 'update', property, value, stream_id: id });
  const muted = await verifyAction(realm, () => patch('is_muted', 'true'), ['subscription/update', 'subscription/update']);
  assert.equal(
    muted.map((e) => e.event),
    [update('in_home_view', false), update('is_muted', true)],
  );
  const shown = await verifyAction(realm, () => patch('in_home_view', 'true'), ['subscription/update', 'subscription/update']);
  assert.equal(
    shown.map((e) => e.event),
    [update('in_home_view', true), update('is_muted', false)],
  );
  const colored = await verifyAction(realm, () => patch('color', '#a1b'), ['subscription/update']);
  assert.equal(colored[0]!.event, update('color', '#a1b'));
  for (const property of [
    'pin_to_top',
    'desktop_notifications',
    'audible_notifications',
    'push_notifications',
    'email_notifications',
    'wildcard_mentions_notify',
  ]) {
    assert.equal((await patch(property, 'true')).body, ok, property);
  }
  assert.equal((await patch('color', '#a1b2')).body, ok, 'Zulip takes 3 to 6 hex digits');
  // zulip-js sends PATCH parameters in the query string.
  assert.equal((await ann.client.withQuery('PATCH', `/users/me/subscriptions/${id}`, { property: 'is_muted', value: 'false' })).body, ok);
  const sub = (await ann.client.post('/register', { fetch_event_types: ['subscription'], client_capabilities: { notification_settings_null: true } })).body
    .subscriptions[0];
  assert.equal(
    [
      sub.color,
      sub.is_muted,
      sub.in_home_view,
      sub.pin_to_top,
      sub.desktop_notifications,
      sub.audible_notifications,
      sub.push_notifications,
      sub.email_notifications,
      sub.wildcard_mentions_notify,
    ],
    ['#a1b2', false, true, true, true, true, true, true, true],
  );
});

test('PATCH /users/me/subscriptions/{id}: errors; only digits name a channel, so named routes beside it keep theirs', async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const open = await makeChannel(realm, 'open', [ann]);
  const closed = await makeChannel(realm, 'closed', [ann], { invite_only: true });
  const cases: [typeof ann, string, Record<string, unknown>, number, object][] = [
    [ann, `${open}`, { property: 'color', value: 'red' }, 400, errorBody('color is not a valid hex color code')],
    [ann, `${open}`, { property: 'color', value: '"#ffffff"' }, 400, errorBody('color is not a valid hex color code')],
    [ann, `${open}`, { property: 'is_muted', value: 'yes' }, 400, errorBody('is_muted is not a boolean')],
    [ann, `${open}`, { property: 'volume', value: 'true' }, 400, errorBody('Unknown subscription property: volume')],
    [ann, `${open}`, { value: 'true' }, 400, errorBody("Missing 'property' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'property' })],
    [ann, `${open}`, { property: 'is_muted' }, 400, errorBody("Missing 'value' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'value' })],
    [bob, `${open}`, { property: 'is_muted', value: 'true' }, 400, errorBody(`Not subscribed to channel ID ${open}`)],
    [bob, `${closed}`, { property: 'is_muted', value: 'true' }, 400, errorBody('Invalid channel ID')],
    [ann, '999999', { property: 'is_muted', value: 'true' }, 400, errorBody('Invalid channel ID')],
    [ann, 'general', { property: 'is_muted', value: 'true' }, 404, errorBody('Not Found', 'NOT_FOUND')],
    [ann, 'properties', { property: 'is_muted', value: 'true' }, 405, { result: 'error', msg: 'Method Not Allowed', allowed_methods: ['POST'] }],
  ];
  for (const [user, segment, params, status, body] of cases) {
    const r = await user.client.patch(`/users/me/subscriptions/${segment}`, params);
    assert.equal([r.status, r.body], [status, body], `${segment} ${JSON.stringify(params)}`);
  }
  // The other users/{id}/subscriptions route answers only GET, and not for "me".
  const r = await ann.client.get(`/users/me/subscriptions/${open}`);
  assert.equal([r.status, r.body.allowed_methods], [405, ['PATCH']]);
});

test('POST /users/me/subscriptions/properties: every value is checked before any channel; ids may be strings', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const id = await makeChannel(realm, 'prefs', [ann]);
  const bad = await ann.client.post('/users/me/subscriptions/properties', {
    subscription_data: [
      { stream_id: 999999, property: 'pin_to_top', value: true },
      { stream_id: id, property: 'pin_to_top', value: 'yes' },
    ],
  });
  assert.equal(bad.body, errorBody('pin_to_top is not a boolean'));
  const events = await verifyAction(
    realm,
    () => ann.client.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: String(id), property: 'pin_to_top', value: true }] }),
    ['subscription/update'],
  );
  assert.equal(events[0]!.event, { type: 'subscription', op: 'update', property: 'pin_to_top', value: true, stream_id: id });
});

test('PATCH /users/me/subscriptions: add (creating channels) and delete together, one answer', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  await makeChannel(realm, 'old', [ann]);
  await makeChannel(realm, 'kept', [ann]);
  const r = await verifyAction(
    realm,
    () => ann.client.patch('/users/me/subscriptions', { add: [{ name: 'brand new', color: '#00ff00' }, { name: 'kept' }], delete: ['old', 'kept'] }),
    ['stream/create', 'subscription/add', 'subscription/peer_add', 'subscription/remove', 'subscription/peer_remove', 'subscription/peer_remove'],
  );
  const added = eventAs(r[1]!.event, 'subscription', 'add').subscriptions;
  assert.equal(
    added.map((s) => [s.name, s.color]),
    [['brand new', '#00ff00']],
  );
  const again = await ann.client.patch('/users/me/subscriptions', { add: [{ name: 'brand new' }], delete: ['old'] });
  assert.equal(again.body, { ...ok, subscribed: {}, already_subscribed: { [ann.id]: ['brand new'] }, removed: [], not_removed: ['old'] });
  const names = (await ann.client.get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name).sort();
  assert.equal(names, ['brand new']);

  const errors: [typeof ann, Record<string, unknown>, object][] = [
    [ann, {}, errorBody('Nothing to do. Specify at least one of "add" or "delete".')],
    [ann, { add: [], delete: [] }, errorBody('Nothing to do. Specify at least one of "add" or "delete".')],
    [ann, { add: [{ name: 'x', color: 'green' }] }, errorBody('add.color is not a valid hex color code')],
    [ann, { delete: ['missing'] }, errorBody('Channel(s) (missing) do not exist')],
    [guest, { delete: ['old'] }, errorBody('Not allowed for guest users')],
  ];
  for (const [user, params, body] of errors) {
    const bad = await user.client.patch('/users/me/subscriptions', params);
    assert.equal([bad.status, bad.body], [400, body], JSON.stringify(params));
  }
});

test.run();
