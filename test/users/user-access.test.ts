// can_access_all_users_group: with role:members, guests access only themselves, bots, and the
// users they share a channel or a direct-message conversation with. Others are left out for
// clients with the user_list_incomplete capability and are an "Unknown user" for the rest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { captureEvents } from '../helpers/events.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, sendDm, systemGroup } from '../messages/messages-helpers.ts';

type Person = Record<string, unknown>;
const INCOMPLETE = { client_capabilities: { user_list_incomplete: true } };

async function limitGuests(realm: TestRealm, group = 'role:members'): Promise<void> {
  const r = await realm.owner.client.patch('/realm', { can_access_all_users_group: { new: systemGroup(realm, group) } });
  assert.is(r.status, 200, r.text);
}

/** Zulip's placeholder for a user the guest cannot access. */
const unknownUser = (realm: TestRealm, id: number) => ({
  user_id: id,
  delivery_email: null,
  email: `user${id}@${realm.subdomain}.localhost`,
  full_name: 'Unknown user',
  date_joined: '1970-01-01T00:00:00+00:00',
  is_active: true,
  is_owner: false,
  is_admin: false,
  is_guest: false,
  is_bot: false,
  role: 400,
  timezone: '',
  avatar_url: `http://${realm.host}/static/images/unknown-user-avatar.png`,
  avatar_version: 1,
  is_imported_stub: false,
  profile_data: {},
});

async function deactivate(realm: TestRealm, user: TestUser): Promise<void> {
  const r = await realm.owner.client.delete(`/users/${user.id}`);
  assert.is(r.status, 200, r.text);
}

/** A guest among users they share a channel with, a DM with, nothing with, and a bot. */
async function cast() {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const carol = await realm.addUser({ name: 'Carol' });
  const dave = await realm.addUser({ name: 'Dave' });
  const erin = await realm.addUser({ name: 'Erin' });
  const guest = await realm.addUser({ name: 'Gus', role: Role.GUEST });
  const bot = await realm.addUser({ name: 'Botty', bot: true });
  await makeChannel(realm, 'with guest', [guest, alice, erin]);
  await makeChannel(realm, 'without guest', [alice, carol]);
  await sendDm(bob, [guest.id], 'hello');
  await sendDm(dave, [guest.id, bob.id], 'hello both');
  // A deactivated DM partner stays accessible; a deactivated channel peer does not.
  await deactivate(realm, dave);
  await deactivate(realm, erin);
  return { realm, alice, bob, carol, dave, erin, guest, bot };
}

/** Every user as the owner (who can access everyone) gets them in the register response. */
async function ownerView(realm: TestRealm): Promise<Map<number, Person>> {
  const state = (await openQueue(realm.owner, { fetch_event_types: ['realm_user'] })).state;
  return new Map([...state.realm_users, ...state.realm_non_active_users].map((u: Person) => [u.user_id as number, u]));
}

async function userAsOwnerSees(realm: TestRealm, id: number, params: Record<string, unknown> = {}): Promise<Person> {
  const r = await realm.owner.client.get(`/users/${id}`, params);
  assert.is(r.status, 200, r.text);
  return r.body.user;
}

test('role:everyone (the default): a guest accesses every user', async () => {
  const { realm, carol, guest } = await cast();
  const [asOwner, asGuest] = [
    await openQueue(realm.owner, { fetch_event_types: ['realm_user'] }),
    await openQueue(guest, { fetch_event_types: ['realm_user'], ...INCOMPLETE }),
  ];
  assert.equal(asGuest.state.realm_users, asOwner.state.realm_users);
  assert.equal(asGuest.state.realm_non_active_users, asOwner.state.realm_non_active_users);
  assert.not.ok('user_list_incomplete' in asGuest.state, 'Zulip has no such state key');
  assert.equal((await guest.client.get('/users')).body, (await realm.owner.client.get('/users')).body);
  assert.equal((await guest.client.get(`/users/${carol.id}`)).body, (await realm.owner.client.get(`/users/${carol.id}`)).body);

  const queue = await openQueue(guest, { event_types: ['realm_user'], ...INCOMPLETE });
  const newbie = await realm.addUser({ name: 'Newbie' });
  assert.equal(await queue.next(), [
    { type: 'realm_user', op: 'add', person: await userAsOwnerSees(realm, newbie.id, { client_gravatar: false, include_custom_profile_fields: true }) },
  ]);
});

test('role:members, register: inaccessible users are Unknown user placeholders, or left out with user_list_incomplete', async () => {
  const { realm, alice, bob, carol, dave, erin, guest, bot } = await cast();
  await limitGuests(realm);
  const all = await ownerView(realm);
  const seen = (u: TestUser) => all.get(u.id);

  const complete = (await openQueue(guest, { fetch_event_types: ['realm_user'] })).state;
  // In id order; a placeholder is always an active user, as in Zulip, and the lists' entries have no is_active.
  const listed = (id: number) => {
    const { is_active: _, ...placeholder } = unknownUser(realm, id);
    return placeholder;
  };
  assert.equal(complete.realm_users, [listed(realm.owner.id), seen(alice), seen(bob), listed(carol.id), listed(erin.id), seen(guest), seen(bot)]);
  assert.equal(complete.realm_non_active_users, [seen(dave)]);

  const incomplete = (await openQueue(guest, { fetch_event_types: ['realm_user'], ...INCOMPLETE })).state;
  assert.equal(incomplete.realm_users, [seen(alice), seen(bob), seen(guest), seen(bot)]);
  assert.equal(incomplete.realm_non_active_users, [seen(dave)]);

  const member = (await openQueue(alice, { fetch_event_types: ['realm_user'], ...INCOMPLETE })).state;
  assert.equal(member.realm_users.length + member.realm_non_active_users.length, all.size, 'members access everyone');
});

test('role:members, REST: GET /users lists only accessible users; others are refused one by one', async () => {
  const { realm, alice, bob, carol, dave, guest, bot } = await cast();
  await limitGuests(realm);
  const everyone = (await realm.owner.client.get('/users')).body.members as Person[];
  const accessible = new Set([alice.id, bob.id, dave.id, guest.id, bot.id]);
  assert.equal((await guest.client.get('/users')).body, { result: 'success', msg: '', members: everyone.filter((u) => accessible.has(u.user_id as number)) });

  for (const user of [alice, bob, guest, bot]) {
    assert.equal((await guest.client.get(`/users/${user.id}`)).body, { result: 'success', msg: '', user: await userAsOwnerSees(realm, user.id) });
  }
  const dummyCarol = `user${carol.id}@${realm.subdomain}.localhost`;
  // Zulip checks a single user's access by their active subscriptions, so a deactivated DM partner is refused here.
  for (const path of [`/users/${carol.id}`, `/users/${encodeURIComponent(carol.email)}`, `/users/${encodeURIComponent(dummyCarol)}`, `/users/${dave.id}`]) {
    const r = await guest.client.get(path);
    assert.equal([r.status, r.body], [400, errorBody('Insufficient permission')], path);
  }
  assert.equal((await guest.client.get('/users/987654')).body, errorBody('No such user'));
});

test('role:members, events: a new user reaches a restricted guest as Unknown user, or not at all with user_list_incomplete', async () => {
  const realm = await newRealm();
  const member = await realm.addUser({ name: 'Mia' });
  const guest = await realm.addUser({ name: 'Gus', role: Role.GUEST });
  await limitGuests(realm);
  const placeholders = await openQueue(guest, { event_types: ['realm_user'] });
  const incomplete = await openQueue(guest, { event_types: ['realm_user'], ...INCOMPLETE });
  const members = await openQueue(member, { event_types: ['realm_user'] });

  const newbie = await realm.addUser({ name: 'Newbie' });
  assert.equal(await members.next(), [
    { type: 'realm_user', op: 'add', person: await userAsOwnerSees(realm, newbie.id, { client_gravatar: false, include_custom_profile_fields: true }) },
  ]);
  assert.equal(await placeholders.next(), [{ type: 'realm_user', op: 'add', person: unknownUser(realm, newbie.id) }]);
  assert.equal(await incomplete.pending(), []);

  // Bots are accessible to everyone.
  const bot = await realm.addUser({ name: 'Helper', bot: true });
  const botEvent = {
    type: 'realm_user',
    op: 'add',
    person: await userAsOwnerSees(realm, bot.id, { client_gravatar: false, include_custom_profile_fields: true }),
  };
  assert.equal(await placeholders.next(), [botEvent]);
  assert.equal(await incomplete.next(), [botEvent]);
  assert.equal(await members.next(), [botEvent]);
});

test('role:members, events: news about a user (deactivation, reactivation, renames) only to who can access them', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const carol = await realm.addUser({ name: 'Carol' });
  const guest = await realm.addUser({ name: 'Gus', role: Role.GUEST });
  await makeChannel(realm, 'with guest', [guest, alice]);
  await sendDm(bob, [guest.id], 'hello');
  await limitGuests(realm);
  const events = captureEvents(realm.server.app, realm.id);
  const update = (person: Person) => ({ type: 'realm_user', op: 'update', person });

  await deactivate(realm, carol);
  await deactivate(realm, bob);
  assert.is((await realm.owner.client.post(`/users/${bob.id}/reactivate`)).status, 200);
  assert.is((await realm.owner.client.post(`/users/${carol.id}/reactivate`)).status, 200);
  assert.is((await realm.owner.client.patch(`/users/${carol.id}`, { full_name: 'Caroline' })).status, 200);
  events.stop();
  assert.equal(
    events.ofType('realm_user').map((e) => [e.userIds, e.event]),
    [
      [[realm.owner.id, alice.id, bob.id], update({ user_id: carol.id, is_active: false })],
      // A DM partner stays accessible after deactivation.
      [[realm.owner.id, alice.id, guest.id], update({ user_id: bob.id, is_active: false })],
      [[realm.owner.id, alice.id, bob.id, guest.id], update({ user_id: bob.id, is_active: true })],
      [[realm.owner.id, alice.id, bob.id, carol.id], update({ user_id: carol.id, is_active: true })],
      [[realm.owner.id, alice.id, bob.id, carol.id], update({ user_id: carol.id, full_name: 'Caroline' })],
    ],
  );
});

test('role:members, events: a guest gains access by sharing a channel and loses it when that ends', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const guest = await realm.addUser({ name: 'Gus', role: Role.GUEST });
  await limitGuests(realm);
  const guestQueue = await openQueue(guest, { event_types: ['realm_user'], ...INCOMPLETE });
  const added = async () => ({
    type: 'realm_user',
    op: 'add',
    person: await userAsOwnerSees(realm, alice.id, { client_gravatar: false, include_custom_profile_fields: true }),
  });
  const removed = { type: 'realm_user', op: 'remove', person: { user_id: alice.id, full_name: 'Unknown user' } };

  await makeChannel(realm, 'meeting', [guest, alice]);
  assert.equal(await guestQueue.next(), [await added()]);
  const leave = await realm.owner.client.delete('/users/me/subscriptions', { subscriptions: ['meeting'], principals: [alice.id] });
  assert.is(leave.status, 200, leave.text);
  assert.equal(await guestQueue.next(), [removed]);

  await makeChannel(realm, 'meeting', [alice]);
  assert.equal(await guestQueue.next(), [await added()]);
  await deactivate(realm, alice);
  assert.equal(await guestQueue.next(), [removed], 'a deactivated channel peer is no longer accessible');
});

test.run();
