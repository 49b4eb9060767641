// Client devices and their E2EE push registration (spec 4.4; Zulip's views/devices.py and
// register_push_device): every rule and error of POST /mobile_push/register, key and token
// rotation, the relay's answer, the `device` events and register's `devices`, the legacy token
// routes and the test notifications.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkEvent } from '../../src/events/schemas.ts';
import { captureEvents, eventAs } from '../helpers/events.ts';
import { devicesOf, eventually, newDevice, newTestDevice, openNotification, registered, registrationParams, relayAndServer } from '../helpers/push-relay.ts';
import { newRealm } from '../helpers/server.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { expectError } from '../messages/messages-helpers.ts';

const suite = relayAndServer(test);
const { relay } = suite;

const NULL_DEVICE = {
  push_key_id: null,
  push_token_id: null,
  pending_push_token_id: null,
  push_token_last_updated_timestamp: null,
  push_registration_error_code: null,
};

test('register_client_device and remove_client_device, with register state and events', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  const before = await devicesOf(o);
  assert.equal(before, {});
  const added = await verifyAction(realm, () => o.client.post('/register_client_device'), ['device/add']);
  const id = eventAs(added[0]!.event, 'device', 'add').device_id;
  assert.equal(added[0]!.event, { type: 'device', op: 'add', device_id: id });
  assert.equal(added[0]!.userIds, [o.id]);
  assert.equal(await devicesOf(o), { [id]: NULL_DEVICE });
  const bob = await realm.addUser({ name: 'Bob' });
  expectError(await bob.client.post('/remove_client_device', { device_id: id }), 'Invalid `device_id`');
  expectError(await o.client.post('/remove_client_device', {}), "Missing 'device_id' argument", 400, 'REQUEST_VARIABLE_MISSING', { var_name: 'device_id' });
  const removed = await verifyAction(realm, () => o.client.post('/remove_client_device', { device_id: id }), ['device/remove']);
  assert.equal(removed[0]!.event, { type: 'device', op: 'remove', device_id: id });
  assert.equal(await devicesOf(o), {});
  expectError(await o.client.post('/remove_client_device', { device_id: id }), 'Invalid `device_id`');
});

test('without a push relay: PUSH_SERVICE_NOT_CONFIGURED, and the server says push is off', async () => {
  const realm = await newRealm();
  const id = await newDevice(realm.owner);
  const r = await realm.owner.client.post('/mobile_push/register', registrationParams(id, newTestDevice()));
  expectError(r, 'Server is not configured to use push notification service.', 400, 'PUSH_SERVICE_NOT_CONFIGURED');
  assert.is((await realm.anonymous.get('/server_settings')).body.push_notifications_enabled, false);
  const withRelay = await newRealm(suite.server);
  assert.is((await withRelay.anonymous.get('/server_settings')).body.push_notifications_enabled, true);
  const state = (await withRelay.owner.client.post('/register', { fetch_event_types: ['realm'] })).body;
  assert.is(state.realm_push_notifications_enabled, true);
});

test('a first registration: both field groups, a pending token, then the relay makes it the token', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  const d = newTestDevice(2408);
  const id = await newDevice(o);
  const capture = captureEvents(suite.server.app, realm.id);
  const seen = relay.registrations.length;
  const before = Math.floor(Date.now() / 1000);
  const r = await o.client.post('/mobile_push/register', registrationParams(id, d));
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '' }]);
  const completed = await eventually(() => (capture.ofType('device').length >= 2 ? capture.ofType('device') : undefined), 15_000, 'the relay registration');
  capture.stop();
  const first = eventAs(completed[0]!.event, 'device', 'update');
  assert.ok(first.push_token_last_updated_timestamp! >= before);
  assert.equal(first, {
    type: 'device',
    op: 'update',
    device_id: id,
    push_key_id: 2408,
    pending_push_token_id: d.tokenId,
    push_token_last_updated_timestamp: first.push_token_last_updated_timestamp,
    push_registration_error_code: null,
  });
  assert.equal(completed[1]!.event, { type: 'device', op: 'update', device_id: id, push_token_id: d.tokenId, pending_push_token_id: null });
  for (const e of completed) assert.is(checkEvent(e.event), null);
  assert.equal(relay.registrations.slice(seen), [
    {
      realm_uuid: relay.registrations[seen]!.realm_uuid,
      token_id: d.tokenId,
      token_kind: 'fcm',
      bouncer_public_key: 'bouncer-public-key',
      encrypted_push_registration: registrationParams(id, d).encrypted_push_registration as string,
    },
  ]);
  assert.equal((await devicesOf(o))[id], {
    push_key_id: 2408,
    push_token_id: d.tokenId,
    pending_push_token_id: null,
    push_token_last_updated_timestamp: first.push_token_last_updated_timestamp,
    push_registration_error_code: null,
  });
  // The same registration again changes nothing and tells nobody.
  await verifyAction(realm, () => o.client.post('/mobile_push/register', registrationParams(id, d)), []);
  assert.is(relay.registrations.length, seen + 1);
});

test('every error of POST /mobile_push/register', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  const d = newTestDevice();
  const id = await newDevice(o);
  const full = registrationParams(id, d);
  const post = (params: Record<string, unknown>) => o.client.post('/mobile_push/register', params);
  const without = (...names: string[]) => Object.fromEntries(Object.entries(full).filter(([k]) => !names.includes(k)));
  expectError(await post(without('device_id')), "Missing 'device_id' argument", 400, 'REQUEST_VARIABLE_MISSING', { var_name: 'device_id' });
  const bob = await realm.addUser({ name: 'Bob' });
  expectError(await bob.client.post('/mobile_push/register', full), 'Invalid `device_id`');
  const bot = await realm.addUser({ name: 'Bot', bot: true, botOwnerId: o.id });
  expectError(await bot.client.post('/mobile_push/register', full), 'This endpoint does not accept bot requests.');
  // Neither group complete.
  expectError(await post(without('push_key_id', 'token_id')), 'Missing parameters: must provide either all push key fields, all token fields, or both.');
  expectError(await post({ device_id: id }), 'Missing parameters: must provide either all push key fields, all token fields, or both.');
  // A rotation before any registration.
  expectError(
    await post(without('token_kind', 'token_id', 'bouncer_public_key', 'encrypted_push_registration')),
    'No push registration exists to rotate key for.',
  );
  expectError(await post(without('push_key', 'push_key_id')), 'No push registration exists to rotate token for.');
  // push_key: standard Base64 of 0x31 and a 32-byte key.
  const key = d.pushKey;
  for (const bad of [
    '@abcdefg',
    'abcd',
    Buffer.concat([Buffer.from([0x32]), key.subarray(1)]).toString('base64'),
    key.subarray(0, 32).toString('base64'),
    Buffer.concat([key, Buffer.from([0])]).toString('base64'),
    key.toString('base64').replace(/.$/, '-'),
    key.toString('base64').slice(0, -1),
  ]) {
    expectError(await post({ ...full, push_key: bad }), 'Invalid `push_key`');
  }
  // push_key_id: an unsigned 32-bit integer.
  for (const bad of [-1, 2 ** 32]) {
    expectError(await post({ ...full, push_key_id: bad }), 'Invalid push_key_id: Value error, Not a valid unsigned 32-bit integer', 400, 'BAD_REQUEST', {
      var_name: 'push_key_id',
    });
  }
  expectError(await post({ ...full, push_key_id: 'x' }), 'Argument "push_key_id" is not valid JSON.', 400, 'BAD_REQUEST', { var_name: 'push_key_id' });
  expectError(await post({ ...full, token_id: '@abcdefg' }), '`token_id` is not Base64 encoded');
  expectError(await post({ ...full, token_id: 'AAAA' }), 'Invalid `token_id`');
  expectError(await post({ ...full, token_kind: 'gcm' }), 'Invalid token_kind', 400, 'BAD_REQUEST', { var_name: 'token_kind' });
  // None of that left a trace.
  assert.equal((await devicesOf(o))[id], NULL_DEVICE);
  // The largest key id is fine.
  const r = await post({ ...full, push_key_id: 2 ** 32 - 1 });
  assert.is(r.status, 200, r.text);
});

test('key rotation: the key fields alone; the same key again is no change', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  const d = newTestDevice(1);
  const id = await registered(o, d);
  const next = newTestDevice(1144);
  const rotate = { device_id: id, push_key: next.pushKey.toString('base64'), push_key_id: 1144 };
  const events = await verifyAction(realm, () => o.client.post('/mobile_push/register', rotate), ['device/update']);
  assert.equal(events[0]!.event, { type: 'device', op: 'update', device_id: id, push_key_id: 1144 });
  await verifyAction(realm, () => o.client.post('/mobile_push/register', rotate), []);
  expectError(await o.client.post('/mobile_push/register', { ...rotate, push_key: 'abcd' }), 'Invalid `push_key`');
  const row = await suite.server.app.prisma.device.findUniqueOrThrow({ where: { id } });
  assert.ok(Buffer.from(row.pushKey!).equals(next.pushKey));
  assert.equal((await devicesOf(o))[id]!.push_token_id, d.tokenId);
});

test('token rotation: the token fields alone; pending until the relay answers; one registration at a time', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  const d = newTestDevice();
  const id = await registered(o, d);
  const next = newTestDevice();
  const { push_key: _k, push_key_id: _i, ...tokenFields } = registrationParams(id, next);
  // The same token again is no change.
  const { push_key: _k2, push_key_id: _i2, ...sameToken } = registrationParams(id, d);
  await verifyAction(realm, () => o.client.post('/mobile_push/register', sameToken), []);
  // While the relay is down the new token stays pending, and a second registration must wait.
  await relay.stop();
  try {
    const events = await verifyAction(realm, () => o.client.post('/mobile_push/register', tokenFields), ['device/update']);
    const e = eventAs(events[0]!.event, 'device', 'update');
    assert.equal(e, {
      type: 'device',
      op: 'update',
      device_id: id,
      pending_push_token_id: next.tokenId,
      push_token_last_updated_timestamp: e.push_token_last_updated_timestamp,
      push_registration_error_code: null,
    });
    expectError(await o.client.post('/mobile_push/register', tokenFields), 'A registration for the device already in progress.');
    const state = (await devicesOf(o))[id]!;
    assert.equal([state.push_token_id, state.pending_push_token_id], [d.tokenId, next.tokenId]);
  } finally {
    await relay.start();
  }
  await eventually(async () => ((await devicesOf(o))[id]!.push_token_id === next.tokenId ? true : undefined), 20_000, 'the rotated token');
  assert.is((await devicesOf(o))[id]!.pending_push_token_id, null);
});

test("the relay refuses a registration: the error code is the device's, and registering again is allowed", async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  const d = newTestDevice();
  const id = await newDevice(o);
  const capture = captureEvents(suite.server.app, realm.id);
  relay.refuseWith = 'INVALID_BOUNCER_PUBLIC_KEY';
  try {
    assert.is((await o.client.post('/mobile_push/register', registrationParams(id, d))).status, 200);
    await eventually(() => (capture.ofType('device').length >= 2 ? true : undefined), 15_000, 'the refusal');
  } finally {
    relay.refuseWith = null;
    capture.stop();
  }
  assert.equal(capture.ofType('device')[1]!.event, { type: 'device', op: 'update', device_id: id, push_registration_error_code: 'INVALID_BOUNCER_PUBLIC_KEY' });
  assert.is((await devicesOf(o))[id]!.push_registration_error_code, 'INVALID_BOUNCER_PUBLIC_KEY');
  assert.is((await o.client.post('/mobile_push/register', registrationParams(id, d))).status, 200);
  await eventually(async () => ((await devicesOf(o))[id]!.push_token_id === d.tokenId ? true : undefined), 15_000, 'the second registration');
  assert.is((await devicesOf(o))[id]!.push_registration_error_code, null);
});

test('legacy token routes, and the legacy registration of the same token goes once the device is registered', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner.client;
  expectError(await o.post('/users/me/apns_device_token', { token: 'c0ffee' }), "Missing 'appid' argument", 400, 'REQUEST_VARIABLE_MISSING', {
    var_name: 'appid',
  });
  expectError(await o.post('/users/me/apns_device_token', { token: 'not hex', appid: 'org.zulip.Zulip' }), 'Invalid APNS token');
  expectError(await o.post('/users/me/apns_device_token', { token: '', appid: 'org.zulip.Zulip' }), 'Empty or invalid length token');
  expectError(await o.post('/users/me/android_gcm_reg_id', { token: 'x'.repeat(4097) }), 'Empty or invalid length token');
  assert.equal((await o.post('/users/me/apns_device_token', { token: 'c0ffee', appid: 'org.zulip.Zulip' })).body, { result: 'success', msg: '' });
  assert.is((await o.post('/users/me/apns_device_token', { token: 'c0ffee', appid: 'org.zulip.Zulip' })).status, 200);
  expectError(await o.delete('/users/me/apns_device_token', { token: 'beef' }), 'Device not recognized', 400, 'INVALID_PUSH_DEVICE_TOKEN');
  assert.is((await o.delete('/users/me/apns_device_token', { token: 'c0ffee' })).status, 200);
  expectError(await o.delete('/users/me/apns_device_token', { token: 'c0ffee' }), 'Device not recognized', 400, 'INVALID_PUSH_DEVICE_TOKEN');
  // An Android token, then the same phone's E2EE registration replaces it.
  const d = newTestDevice();
  assert.is((await o.post('/users/me/android_gcm_reg_id', { token: d.token })).status, 200);
  assert.is((await o.post('/users/me/android_gcm_reg_id', { token: 'another-phone' })).status, 200);
  await registered(realm.owner, d);
  expectError(await o.delete('/users/me/android_gcm_reg_id', { token: d.token }), 'Device not recognized', 400, 'INVALID_PUSH_DEVICE_TOKEN');
  assert.is((await o.delete('/users/me/android_gcm_reg_id', { token: 'another-phone' })).status, 200);
});

test('test notifications: legacy tokens through the relay, E2EE devices sealed with their key', async () => {
  const realm = await newRealm(suite.server);
  const o = realm.owner;
  expectError(await o.client.post('/mobile_push/test_notification', { token: 'nope' }), 'Device not recognized', 400, 'INVALID_PUSH_DEVICE_TOKEN');
  assert.is((await o.client.post('/users/me/android_gcm_reg_id', { token: 'legacy-token' })).status, 200);
  const seen = relay.legacyTests.length;
  assert.equal((await o.client.post('/mobile_push/test_notification', { token: 'legacy-token' })).body, { result: 'success', msg: '' });
  const sent = await eventually(() => relay.legacyTests[seen], 15_000, 'the legacy test');
  assert.equal(
    [sent.user_id, sent.token, sent.token_kind, (sent.base_payload as Record<string, unknown>).realm_name],
    [o.id, 'legacy-token', 2, suite.server.app.realms.byId(realm.id)!.name],
  );
  expectError(await o.client.post('/mobile_push/e2ee/test_notification'), 'No active registered push device', 400, 'NO_ACTIVE_PUSH_DEVICE');
  const d = newTestDevice();
  const id = await registered(o, d);
  expectError(
    await o.client.post('/mobile_push/e2ee/test_notification', { device_id: id + 1000 }),
    'No active registered push device',
    400,
    'NO_ACTIVE_PUSH_DEVICE',
  );
  const row = await suite.server.app.prisma.device.findUniqueOrThrow({ where: { id } });
  const before = relay.requestsFor(Number(row.relayDeviceId)).length;
  assert.is((await o.client.post('/mobile_push/e2ee/test_notification', { device_id: id })).status, 200);
  const request = await eventually(() => relay.requestsFor(Number(row.relayDeviceId))[before], 15_000, 'the E2EE test');
  assert.is(request.payload.push_key_id, d.pushKeyId);
  const payload = openNotification(d.pushKey, request.payload.encrypted_data);
  assert.equal(payload, {
    realm_name: payload.realm_name,
    realm_url: suite.server.app.realms.url(suite.server.app.realms.byId(realm.id)!),
    user_id: o.id,
    type: 'test',
    time: payload.time,
  });
});

test.run();
