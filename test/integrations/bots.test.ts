// Bot management as Zulip's clients do it: POST/GET /bots, PATCH and DELETE /bots/{bot_id},
// GET /bots/{bot_id}/api_key; who may do what; and what register and the events show of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { Client, multipart } from '../helpers/client.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { expectError, makeChannel, send, setRealmSettings, systemGroup } from '../messages/messages-helpers.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

test('POST /bots makes a bot owned by its creator; GET /bots lists it; register shows it with its service', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  const r = await bob.client.post('/bots', {
    full_name: 'Hook Bot',
    short_name: 'hook',
    bot_type: 3,
    payload_url: JSON.stringify('https://bots.example.com/hook'),
    interface_type: 2,
    default_sending_stream: 'general',
  });
  assert.is(r.status, 200, r.text);
  const { user_id: id, api_key: apiKey } = r.body;
  const domain = realm.host.replace(/:\d+$/, '');
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    user_id: id,
    api_key: apiKey,
    avatar_url: r.body.avatar_url,
    default_sending_stream: 'general',
    default_events_register_stream: null,
    default_all_public_streams: false,
  });
  const listed = await bob.client.get('/bots');
  assert.equal(listed.body.bots, [
    {
      username: `hook-bot@${domain}`,
      full_name: 'Hook Bot',
      api_key: apiKey,
      avatar_url: r.body.avatar_url,
      default_sending_stream: 'general',
      default_events_register_stream: null,
      default_all_public_streams: false,
    },
  ]);
  const reg = await bob.client.post('/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
  const [bot] = reg.body.realm_bots;
  assert.equal(bot, {
    email: `hook-bot@${domain}`,
    user_id: id,
    full_name: 'Hook Bot',
    bot_type: 3,
    is_active: true,
    api_key: apiKey,
    default_sending_stream: 'general',
    default_events_register_stream: null,
    default_all_public_streams: false,
    owner_id: bob.id,
    avatar_url: r.body.avatar_url,
    services: [{ base_url: 'https://bots.example.com/hook', interface: 2, token: bot.services[0].token }],
  });
  assert.match(bot.services[0].token, /^[A-Za-z0-9]{32}$/);
  assert.is(channelId > 0, true);
  // The bot works with its key.
  const me = await bob.client.get(`/bots/${id}/api_key`);
  assert.equal(me.body, { result: 'success', msg: '', api_key: apiKey });
});

test("POST /bots with an avatar: the bot starts with it; one file at most; a bot's key for its owner and administrators only", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const zoe = await realm.addUser({ name: 'Zoe' });
  const file = (name: string) => ({ field: name, filename: `${name}.png`, contentType: 'image/png', data: PNG });
  const r = await bob.client.postMultipart('/bots', { full_name: 'Pic Bot', short_name: 'pic' }, [file('avatar')]);
  assert.is(r.status, 200, r.text);
  assert.match(r.body.avatar_url, new RegExp(`^/user_avatars/${realm.id}/[0-9a-f]{40}\\.png$`));
  assert.is((await realm.anonymous.request('GET', r.body.avatar_url)).status, 200);
  assert.is((await bob.client.get('/bots')).body.bots[0].avatar_url, r.body.avatar_url);
  const two = await bob.client.postMultipart('/bots', { full_name: 'Two Bot', short_name: 'two' }, [file('a'), file('b')]);
  assert.equal([two.status, two.body.msg], [400, 'You may only upload one file at a time']);
  assert.equal((await bob.client.get('/bots')).body.bots.length, 1);
  assert.equal((await zoe.client.get(`/bots/${r.body.user_id}/api_key`)).body.msg, 'Insufficient permission');
  assert.equal((await realm.owner.client.get(`/bots/${r.body.user_id}/api_key`)).body.api_key, r.body.api_key);
  assert.equal((await bob.client.get(`/bots/${bob.id}/api_key`)).body.msg, 'No such bot');
  assert.equal((await bob.client.get('/bots/99999999999/api_key')).body.msg, 'No such bot');
});

test('POST /bots refuses what Zulip refuses, and changes nothing', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const guest = await realm.addUser({ name: 'Gus', role: Role.GUEST });
  const o = realm.owner.client;
  const fail = async (who: typeof o, params: Record<string, unknown>, msg: string) => {
    const r = await who.post('/bots', { full_name: 'Some Bot', short_name: 'some', ...params });
    assert.is(r.status, 400, r.text);
    assert.is(r.body.msg, msg);
  };
  await fail(guest.client, {}, 'Not allowed for guest users');
  await fail(o, { short_name: '  ' }, 'Bad name or username');
  await fail(o, { bot_type: 4 }, 'Embedded bots are not enabled.');
  await fail(o, { bot_type: 7 }, 'Invalid bot type');
  await fail(o, { bot_type: 3, payload_url: JSON.stringify('not a url') }, 'payload_url is not a URL');
  await fail(o, { bot_type: 3, payload_url: JSON.stringify('https://x.example.com/'), interface_type: 5 }, 'Invalid interface type');
  await fail(o, { default_sending_stream: 'nowhere' }, "Invalid channel name 'nowhere'");
  await fail(o, { full_name: 'Bob' }, 'Name is already in use!');
  assert.is((await o.post('/bots', { full_name: 'Some Bot', short_name: 'some' })).status, 200);
  await fail(o, { full_name: 'Other Bot' }, 'Username already in use');
  // Only administrators may create bots when can_create_bots_group says so; write-only (incoming webhook) bots follow their own setting.
  await setRealmSettings(realm, {}, { can_create_bots_group: systemGroup(realm, 'role:administrators') });
  await fail(bob.client, { short_name: 'b1', full_name: 'B1 Bot' }, 'Insufficient permission');
  assert.is((await bob.client.post('/bots', { full_name: 'B2 Bot', short_name: 'b2', bot_type: 2 })).status, 200);
  await setRealmSettings(realm, {}, { can_create_write_only_bots_group: systemGroup(realm, 'role:administrators') });
  await fail(bob.client, { short_name: 'b3', full_name: 'B3 Bot', bot_type: 2 }, 'Insufficient permission');
  const bots = (await o.get('/bots')).body.bots.map((b: { full_name: string }) => b.full_name);
  assert.equal(bots, ['Some Bot']);
});

test('PATCH /bots/{id}: names, default channels, service, owner; owner or administrator only', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const zoe = await realm.addUser({ name: 'Zoe' });
  await makeChannel(realm, 'general', [realm.owner, bob]);
  const made = await bob.client.post('/bots', {
    full_name: 'Hook Bot',
    short_name: 'hook',
    bot_type: 3,
    payload_url: JSON.stringify('https://a.example.com/'),
  });
  const id = made.body.user_id;
  assert.is((await zoe.client.patch(`/bots/${id}`, { full_name: 'Mine Now' })).body.msg, 'Insufficient permission');
  assert.is((await bob.client.patch('/bots/99999', { full_name: 'X' })).body.msg, 'No such bot');
  const q = await openQueue(bob, { event_types: ['realm_bot', 'realm_user'] });
  const r = await bob.client.patch(`/bots/${id}`, {
    full_name: 'Renamed Bot',
    default_sending_stream: 'general',
    service_payload_url: JSON.stringify('https://b.example.com/'),
    service_interface: 2,
  });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    full_name: 'Renamed Bot',
    avatar_url: made.body.avatar_url,
    service_interface: 2,
    service_payload_url: 'https://b.example.com/',
    config_data: null,
    default_sending_stream: 'general',
    default_events_register_stream: null,
    default_all_public_streams: false,
    bot_owner: bob.email,
  });
  const events = await q.next();
  const token = events.find((e) => e.bot?.services)!.bot.services[0].token;
  assert.equal(events, [
    { type: 'realm_user', op: 'update', person: { user_id: id, full_name: 'Renamed Bot' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: id, full_name: 'Renamed Bot' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: id, default_sending_stream: 'general' } },
    { type: 'realm_bot', op: 'update', bot: { user_id: id, services: [{ base_url: 'https://b.example.com/', interface: 2, token }] } },
  ]);
  // A new owner: the previous owner (not an administrator) loses the bot from their list, the new one gains it.
  const failed = await bob.client.patch(`/bots/${id}`, { bot_owner_id: 99999 });
  assert.is(failed.body.msg, 'Failed to change owner, no such user');
  const [bobQ, zoeQ, ownerQ] = await Promise.all([bob, zoe, realm.owner].map((u) => openQueue(u, { event_types: ['realm_bot'] })));
  assert.is((await bob.client.patch(`/bots/${id}`, { bot_owner_id: zoe.id })).status, 200);
  assert.equal(await bobQ.next(), [{ type: 'realm_bot', op: 'delete', bot: { user_id: id } }]);
  const [added] = await zoeQ.next();
  assert.equal([added!.op, added!.bot.user_id, added!.bot.owner_id], ['add', id, zoe.id]);
  assert.equal(await ownerQ.next(), [{ type: 'realm_bot', op: 'update', bot: { user_id: id, owner_id: zoe.id } }]);
  const regZoe = await zoe.client.post('/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
  assert.equal(
    regZoe.body.realm_bots.map((b: { user_id: number; owner_id: number }) => [b.user_id, b.owner_id]),
    [[id, zoe.id]],
  );
  const regBob = await bob.client.post('/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
  assert.equal(regBob.body.realm_bots, []);
  assert.is((await bob.client.patch(`/bots/${id}`, { full_name: 'Again' })).body.msg, 'Insufficient permission');
  // The role: administrators only, as for users.
  assert.is((await zoe.client.patch(`/bots/${id}`, { role: Role.MODERATOR })).body.msg, 'Must be an organization administrator');
  assert.is((await realm.owner.client.patch(`/bots/${id}`, { role: Role.MODERATOR })).status, 200);
  assert.is((await realm.owner.client.get(`/users/${id}`)).body.user.role, Role.MODERATOR);
});

test('DELETE /bots/{id} deactivates the bot; its key stops working', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const made = await bob.client.post('/bots', { full_name: 'Temp Bot', short_name: 'temp' });
  const id = made.body.user_id;
  assert.is((await realm.owner.client.delete(`/bots/${id}`)).status, 200);
  assert.equal((await bob.client.get('/bots')).body.bots, []);
  const reg = await realm.owner.client.post('/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
  assert.is(reg.body.realm_bots.find((b: { user_id: number }) => b.user_id === id).is_active, false);
  assert.is((await bob.client.get(`/bots/${id}/api_key`)).status, 200, 'a deactivated bot keeps its key for its owner');
  // Reactivated, it is back in its owner's lists.
  const q = await openQueue(bob, { event_types: ['realm_bot'] });
  assert.is((await realm.owner.client.post(`/users/${id}/reactivate`)).status, 200);
  assert.equal(await q.next(), [{ type: 'realm_bot', op: 'update', bot: { user_id: id, is_active: true } }]);
  assert.equal(
    (await bob.client.get('/bots')).body.bots.map((b: { full_name: string }) => b.full_name),
    ['Temp Bot'],
  );
});

test("a bot's default channels: where it sends without `to`, what its queue hears without a narrow", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const general = await makeChannel(realm, 'general', [realm.owner, bob]);
  const other = await makeChannel(realm, 'other', [realm.owner, bob]);
  const made = await bob.client.post('/bots', {
    full_name: 'Default Bot',
    short_name: 'dflt',
    default_sending_stream: 'general',
    default_events_register_stream: 'general',
  });
  assert.is(made.status, 200, made.text);
  const domain = realm.host.replace(/:\d+$/, '');
  const bot = {
    id: made.body.user_id,
    email: `dflt-bot@${domain}`,
    apiKey: made.body.api_key,
    password: '',
    client: new Client(realm.server.port, realm.host, { email: `dflt-bot@${domain}`, apiKey: made.body.api_key }),
  };
  const sent = await bot.client.post('/messages', { type: 'stream', topic: 'hello', content: 'to my default' });
  assert.is(sent.status, 200, sent.text);
  assert.is((await bob.client.get(`/messages/${sent.body.id}`)).body.message.stream_id, general);
  const noDefault = await bob.client.post('/messages', { type: 'stream', topic: 'hello', content: 'nowhere' });
  assert.equal(noDefault.body.msg, 'Missing channel');
  assert.equal((await bob.client.post('/messages', { type: 'direct', content: 'to nobody' })).body.msg, 'Message must have recipients');
  // Its queue narrows to the default channel; the bot is subscribed to neither channel.
  await realm.owner.client.post('/users/me/subscriptions', {
    subscriptions: JSON.stringify([{ name: 'general' }, { name: 'other' }]),
    principals: JSON.stringify([bot.id]),
  });
  const q = await openQueue(bot, { event_types: ['message'] });
  await send(bob, other, 't', 'elsewhere');
  await send(bob, general, 't', 'here');
  const [event] = await q.next();
  assert.is(event!.message.content, 'here');
  // default_all_public_streams: its queue hears public channels it is not in.
  assert.is((await bob.client.patch(`/bots/${bot.id}`, { default_events_register_stream: '', default_all_public_streams: 'true' })).status, 200);
  const lurker = await makeChannel(realm, 'lurk', [realm.owner]);
  const all = await openQueue(bot, { event_types: ['message'] });
  await send(realm.owner, lurker, 't', 'public news');
  assert.is((await all.next())[0]!.message.content, 'public news');
});

test('events of bot management match their schemas', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const o = realm.owner.client;
  await verifyAction(
    realm,
    () => o.post('/bots', { full_name: 'Ev Bot', short_name: 'ev', bot_type: 3, payload_url: JSON.stringify('https://e.example.com/') }),
    ['realm_user/add', 'user_group/add_members', 'user_group/add_members', 'realm_bot/add'],
  );
  const id = (await o.post('/register', { fetch_event_types: JSON.stringify(['realm_bot']) })).body.realm_bots[0].user_id;
  await verifyAction(realm, () => o.patch(`/bots/${id}`, { full_name: 'Ev Two' }), ['realm_user/update', 'realm_bot/update']);
  await verifyAction(realm, () => o.patch(`/bots/${id}`, { default_all_public_streams: 'true' }), ['realm_bot/update']);
  await verifyAction(realm, () => o.patch(`/bots/${id}`, { bot_owner_id: bob.id }), ['realm_bot/add', 'realm_bot/update', 'realm_user/update']);
  const avatar = multipart({}, [{ field: 'file', filename: 'a.png', contentType: 'image/png', data: PNG }]);
  await verifyAction(realm, () => o.request('PATCH', `/api/v1/bots/${id}`, { body: avatar.body, contentType: avatar.contentType }), [
    'realm_bot/update',
    'realm_user/update',
  ]);
  await verifyAction(realm, () => bob.client.delete(`/bots/${id}`), ['realm_user/update', 'realm_bot/update']);
});

test('a bot posting to a channel that does not exist, or has no subscribers, is told to its owner by Notification Bot, once in five minutes', async () => {
  const realm = await newRealm();
  const domain = realm.host.replace(/:\d+$/, '');
  const bob = await realm.addUser({ name: 'Bob' });
  const makeBot = async (name: string) => {
    const made = await bob.client.post('/bots', { full_name: name, short_name: name, bot_type: 1 });
    assert.is(made.status, 200, made.text);
    const email = `${name}-bot@${domain}`;
    return { id: made.body.user_id as number, email, client: new Client(realm.server.port, realm.host, { email, apiKey: made.body.api_key }) };
  };
  const newestToBob = async () => {
    const r = await bob.client.get('/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'dm' }],
      apply_markdown: false,
    });
    const m = r.body.messages.at(-1);
    return m ? { id: m.id, sender: m.sender_full_name, content: m.content } : null;
  };

  const named = await makeBot('named');
  const r = await named.client.post('/messages', { type: 'stream', to: ' nowhere ', topic: 't', content: 'hello' });
  expectError(r, "Channel 'nowhere' does not exist", 400, 'STREAM_DOES_NOT_EXIST', { stream: 'nowhere' });
  const told = await newestToBob();
  assert.equal(told && [told.sender, told.content], [
    'Notification Bot',
    `Your bot \`${named.email}\` tried to send a message to channel #**nowhere**, but that channel does not exist. Click [here](#channels/new) to create it.`,
  ]);
  // Again within five minutes: the error, and no second notice.
  await Promise.all([1, 2].map(() => named.client.post('/messages', { type: 'stream', to: 'nowhere', topic: 't', content: 'again' })));
  assert.is((await newestToBob())!.id, told!.id);

  const byId = await makeBot('byid');
  expectError(
    await byId.client.post('/messages', { type: 'stream', to: 987654, topic: 't', content: 'hello' }),
    "Channel with ID '987654' does not exist",
    400,
    'STREAM_DOES_NOT_EXIST',
    { stream_id: 987654 },
  );
  assert.equal(
    (await newestToBob())!.content,
    `Your bot \`${byId.email}\` tried to send a message to channel ID 987654, but there is no channel with that ID.`,
  );

  // A channel whose last subscriber left: the message is sent, and the owner hears of it.
  const empty = await makeChannel(realm, 'quiet & empty', [realm.owner]);
  assert.is((await realm.owner.client.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['quiet & empty']) })).status, 200);
  const lonely = await makeBot('lonely');
  const sent = await lonely.client.post('/messages', { type: 'stream', to: empty, topic: 't', content: 'anyone?' });
  assert.is(sent.status, 200, sent.text);
  assert.equal(
    (await newestToBob())!.content,
    `Your bot \`${lonely.email}\` tried to send a message to channel [#quiet &amp; empty](#narrow/channel/${empty}-quiet-.26-empty). The channel exists but does not have any subscribers.`,
  );

  // A person's posts, and a bot's to a channel with subscribers, tell nobody.
  const before = await newestToBob();
  expectError(
    await bob.client.post('/messages', { type: 'stream', to: 'nowhere', topic: 't', content: 'hi' }),
    "Channel 'nowhere' does not exist",
    400,
    'STREAM_DOES_NOT_EXIST',
    { stream: 'nowhere' },
  );
  const busy = await makeBot('busy');
  await makeChannel(realm, 'busy', [bob]);
  assert.is((await busy.client.post('/messages', { type: 'stream', to: 'busy', topic: 't', content: 'hi' })).status, 200);
  assert.equal(await newestToBob(), before);
});

test.run();
