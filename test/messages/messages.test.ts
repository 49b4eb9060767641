// Sending and fetching messages: POST /messages, GET /messages, GET /messages/{id}, history.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm, setRealmSettings, systemGroup, setChannelRow } from './messages-helpers.ts';

const fetchAll = (client: { get: Function }, params: Record<string, unknown> = {}) =>
  client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, ...params });

test('POST /messages to a channel: response, stored message object, flags and the message event', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const sid = await makeChannel(realm, 'general', [alice, bob]);
  const events = captureEvents(realm.server.app, realm.id);
  const r = await alice.client.post(
    '/messages',
    { type: 'stream', to: sid, topic: 'greetings', content: 'hello @**Bob**', queue_id: 'q1', local_id: '7.01' },
    { headers: { 'User-Agent': 'ZulipMobile/27.1 (Android 14)' } },
  );
  events.stop();
  assert.equal(Object.keys(r.body).sort(), ['id', 'msg', 'result']);
  const id = r.body.id;
  const [env] = events.ofType('message');
  assert.equal(env!.userIds.slice().sort(), [alice.id, bob.id].sort());
  assert.equal(env!.perUser, { [alice.id]: { flags: ['read'] }, [bob.id]: { flags: ['mentioned'] } });
  assert.equal(env!.perQueue, { q1: { local_message_id: '7.01' } });
  const m = env!.event.message as Record<string, unknown>;
  assert.equal(
    { ...m, timestamp: 0, avatar_url: 'x' },
    {
      id,
      sender_id: alice.id,
      content: `<p>hello <span class="user-mention" data-user-id="${bob.id}">@Bob</span></p>`,
      raw_content: 'hello @**Bob**',
      recipient_id: sid * 2,
      timestamp: 0,
      client: 'ZulipMobile',
      subject: 'greetings',
      topic_links: [],
      is_me_message: false,
      reactions: [],
      submessages: [],
      sender_full_name: 'Alice',
      sender_email: alice.email,
      sender_realm_str: realm.subdomain,
      avatar_url: 'x',
      content_type: 'text/html',
      type: 'stream',
      display_recipient: 'general',
      stream_id: sid,
    },
  );
  const fetched = await bob.client.get(`/messages/${id}`);
  assert.is(fetched.body.raw_content, 'hello @**Bob**');
  assert.equal(fetched.body.message.flags, ['mentioned']);
  assert.type(fetched.body.message.avatar_url, 'string', 'GET /messages/{id} never uses client_gravatar');
});

test('POST /messages: channel by name (plain or JSON), subject alias, empty topic names, truncation', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'Denmark', [realm.owner]);
  const o = realm.owner.client;
  const byName = await o.post('/messages', { type: 'channel', to: 'denmark', subject: ' castle ', content: 'a' });
  const byJsonName = await o.post('/messages', { type: 'stream', to: '["Denmark"]', topic: 'general chat', content: 'b' });
  const noTopic = await o.post('/messages', { type: 'stream', to: sid, topic: '(no topic)', content: 'c' });
  const long = await o.post('/messages', { type: 'stream', to: sid, topic: 'x'.repeat(70), content: 'y'.repeat(10005) });
  const msgs = (await fetchAll(o, { allow_empty_topic_name: true, apply_markdown: false })).body.messages;
  assert.equal(
    msgs.map((m: { id: number }) => m.id),
    [byName.body.id, byJsonName.body.id, noTopic.body.id, long.body.id],
  );
  assert.equal(
    msgs.map((m: { subject: string }) => m.subject),
    ['castle', '', '', `${'x'.repeat(57)}...`],
  );
  assert.is(msgs[3].content, `${'y'.repeat(10000 - 20)}\n[message truncated]`);
  assert.is(msgs[3].content_type, 'text/x-markdown');
  const legacy = (await fetchAll(o)).body.messages;
  assert.is(legacy[1].subject, 'general chat', 'without allow_empty_topic_name the empty topic is shown by its display name');
});

test('POST /messages errors: recipients, topics, content', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const o = realm.owner.client;
  const cases: [Record<string, unknown>, object][] = [
    [
      { type: 'stream', to: 'nowhere', topic: 't', content: 'x' },
      errorBody("Channel 'nowhere' does not exist", 'STREAM_DOES_NOT_EXIST', { stream: 'nowhere' }),
    ],
    [{ type: 'stream', to: 9999, topic: 't', content: 'x' }, errorBody("Channel with ID '9999' does not exist", 'STREAM_DOES_NOT_EXIST', { stream_id: 9999 })],
    [{ type: 'stream', to: sid, content: 'x' }, errorBody('Missing topic')],
    [{ type: 'stream', to: sid, topic: 'editing\nfun', content: 'x' }, errorBody('Invalid character in topic, at position 8!')],
    [{ type: 'stream', to: sid, topic: 't', content: '  \n ' }, errorBody('Message must not be empty')],
    [{ type: 'stream', to: sid, topic: 't', content: 'a\u0000b' }, errorBody('Message must not contain null bytes')],
    [{ type: 'direct', to: [], content: 'x' }, errorBody('Message must have recipients')],
    [{ type: 'direct', to: [999999], content: 'x' }, errorBody('Invalid user ID 999999')],
    [{ type: 'direct', to: ['nobody@example.com'], content: 'x' }, errorBody("Invalid email 'nobody@example.com'")],
    [{ type: 'direct', to: '[1, "a@b.c"]', content: 'x' }, errorBody('Recipient lists may contain emails or user IDs, but not both.')],
    [{ type: 'huddle', to: [1], content: 'x' }, errorBody('Invalid message type')],
  ];
  for (const [params, body] of cases) {
    const r = await o.post('/messages', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  const missing = await o.post('/messages', { type: 'stream', to: sid });
  assert.equal(missing.body, errorBody("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'content' }));
});

test('topics policy: realm and channel settings', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const o = realm.owner.client;
  await setRealmSettings(realm, { topics_policy: 'disable_empty_topic' });
  for (const topic of ['', '(no topic)', 'general chat']) {
    const r = await o.post('/messages', { type: 'stream', to: sid, topic, content: 'x' });
    assert.equal(r.body, errorBody('Topics are required in this organization.'));
  }
  await setRealmSettings(realm, { topics_policy: 'allow_empty_topic' });
  await setChannelRow(realm, sid, { topicsPolicy: 'disable_empty_topic' });
  const r = await o.post('/messages', { type: 'stream', to: sid, topic: '', content: 'x' });
  assert.equal(r.body, errorBody('Sending messages to the general chat topic is not allowed in this channel.'));
  await setChannelRow(realm, sid, { topicsPolicy: 'empty_topic_only' });
  const named = await o.post('/messages', { type: 'stream', to: sid, topic: 'named', content: 'x' });
  assert.equal(named.body, errorBody('Only the general chat topic is allowed in this channel.'));
  assert.is((await o.post('/messages', { type: 'stream', to: sid, topic: '', content: 'x' })).status, 200);
});

test('who may post: guests, private channels, can_send_message_group, can_create_topic_group, archived', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const pub = await makeChannel(realm, 'public', [realm.owner]);
  const priv = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  assert.is(
    (await member.client.post('/messages', { type: 'stream', to: pub, topic: 't', content: 'x' })).status,
    200,
    'members post to public channels unsubscribed',
  );
  const guestPost = await guest.client.post('/messages', { type: 'stream', to: pub, topic: 't', content: 'x' });
  assert.equal(guestPost.body, errorBody("Not authorized to send to channel 'public'"));
  const privPost = await member.client.post('/messages', { type: 'stream', to: priv, topic: 't', content: 'x' });
  assert.equal(privPost.body, errorBody("Not authorized to send to channel 'secret'"));

  await setChannelRow(realm, pub, { permissions: { can_send_message_group: systemGroup(realm, 'role:administrators') } });
  const denied = await member.client.post('/messages', { type: 'stream', to: pub, topic: 't', content: 'x' });
  assert.equal(denied.body, errorBody('You do not have permission to post in this channel.'));
  await setChannelRow(realm, pub, { permissions: { can_create_topic_group: systemGroup(realm, 'role:administrators') } });
  const newTopic = await member.client.post('/messages', { type: 'stream', to: pub, topic: 'fresh', content: 'x' });
  assert.equal(newTopic.body, errorBody('You do not have permission to create new topics in this channel.'));
  assert.is((await member.client.post('/messages', { type: 'stream', to: pub, topic: 'T', content: 'existing topic, any case' })).status, 200);
  await setChannelRow(realm, pub, { isArchived: true });
  const archived = await realm.owner.client.post('/messages', { type: 'stream', to: pub, topic: 't', content: 'x' });
  assert.equal(archived.body, errorBody("Not authorized to send to channel 'public'"));
});

test('direct messages: groups, self, emails, deactivated users, DM permission settings, events', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const events = captureEvents(realm.server.app, realm.id);
  const group = await alice.client.post('/messages', { type: 'private', to: `${bob.email},${realm.owner.email}`, content: 'hi all' });
  const self = await sendDm(alice, [alice.id], 'note to self');
  events.stop();
  const [groupEvent, selfEvent] = events.ofType('message');
  assert.equal(groupEvent!.userIds, [realm.owner.id, alice.id, bob.id]);
  assert.equal(groupEvent!.perUser![bob.id], { flags: [] });
  assert.equal(selfEvent!.userIds, [alice.id]);
  const m = (await bob.client.get(`/messages/${group.body.id}`)).body.message;
  assert.equal(
    m.display_recipient.map((u: { id: number }) => u.id),
    [realm.owner.id, alice.id, bob.id],
  );
  assert.equal(m.display_recipient[1], { id: alice.id, email: alice.email, full_name: 'Alice', is_mirror_dummy: false });
  assert.is(m.type, 'private');
  assert.is((await alice.client.get(`/messages/${self}`)).body.message.recipient_id % 2, 1);
  const again = await sendDm(bob, [alice.id, realm.owner.id], 'reply');
  assert.is((await bob.client.get(`/messages/${again}`)).body.message.recipient_id, m.recipient_id, 'one recipient per conversation');

  await realm.server.app.prisma.user.update({ where: { id: bob.id }, data: { isActive: false } });
  realm.server.app.auth.forget(bob.id);
  const toInactive = await alice.client.post('/messages', { type: 'direct', to: [bob.id], content: 'x' });
  assert.equal(toInactive.body, errorBody(`'${bob.email}' is no longer using Zulip.`));

  await setRealmSettings(realm, {}, { direct_message_permission_group: systemGroup(realm, 'role:nobody') });
  const off = await alice.client.post('/messages', { type: 'direct', to: [realm.owner.id], content: 'x' });
  assert.equal(off.body, errorBody('Direct messages are disabled in this organization.'));
  assert.is((await alice.client.post('/messages', { type: 'direct', to: [alice.id], content: 'x' })).status, 200, 'self DMs are always allowed');
  await setRealmSettings(realm, {}, { direct_message_permission_group: systemGroup(realm, 'role:administrators') });
  const carol = await realm.addUser();
  const noAdmin = await alice.client.post('/messages', { type: 'direct', to: [carol.id], content: 'x' });
  assert.equal(noAdmin.body, errorBody('This conversation does not include any users who can authorize it.'));
  await setRealmSettings(
    realm,
    {},
    { direct_message_permission_group: systemGroup(realm, 'role:everyone'), direct_message_initiator_group: systemGroup(realm, 'role:administrators') },
  );
  const initiate = await alice.client.post('/messages', { type: 'direct', to: [carol.id], content: 'x' });
  assert.equal(initiate.body, errorBody('You do not have permission to initiate direct message conversations.'));
  await sendDm(realm.owner, [alice.id], 'an administrator may start it');
  assert.is((await alice.client.post('/messages', { type: 'direct', to: [realm.owner.id], content: 'x' })).status, 200, 'replies are not initiations');
});

test('wildcard mentions: flags, and permission above 15 subscribers', async () => {
  const realm = await newRealm();
  const users: TestUser[] = [];
  for (let i = 0; i < 16; i++) users.push(await realm.addUser());
  const small = await makeChannel(realm, 'small', users.slice(0, 3));
  const big = await makeChannel(realm, 'big', users);
  const id = await send(users[0]!, small, 't', 'hey @**all**');
  const flags = (await users[1]!.client.get(`/messages/${id}`)).body.message.flags;
  assert.equal(flags, ['stream_wildcard_mentioned', 'wildcard_mentioned']);
  const denied = await users[0]!.client.post('/messages', { type: 'stream', to: big, topic: 't', content: '@**everyone** look' });
  assert.equal(denied.body, errorBody('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'));
  assert.is((await users[0]!.client.post('/messages', { type: 'stream', to: big, topic: 't', content: '@_**everyone** silent is fine' })).status, 200);
  await makeChannel(realm, 'big', [realm.owner]);
  assert.is((await realm.owner.client.post('/messages', { type: 'stream', to: big, topic: 't', content: '@**all** admins may' })).status, 200);
  await makeChannel(realm, 'small', users.slice(0, 5));
  await send(users[3]!, small, 'T', 'the same topic in another case');
  await send(users[4]!, small, 'other', 'another topic');
  const topicWildcard = await send(users[1]!, small, 't', '@**topic** ping');
  const flagsOf = async (u: number) => (await users[u]!.client.get(`/messages/${topicWildcard}`)).body.message.flags;
  assert.equal(
    [await flagsOf(0), await flagsOf(3)],
    [
      ['topic_wildcard_mentioned', 'wildcard_mentioned'],
      ['topic_wildcard_mentioned', 'wildcard_mentioned'],
    ],
    "the topic's senders are mentioned, whatever the case they wrote it in",
  );
  assert.equal([await flagsOf(2), await flagsOf(4)], [[], []], 'non-participants are not');
});

test('GET /messages: anchors, include_anchor, found_* and limits', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push(await send(realm.owner, sid, 't', `m${i}`));
  const o = realm.owner.client;
  const get = async (params: Record<string, unknown>) => {
    const r = await o.get('/messages', params);
    assert.is(r.status, 200, r.text);
    const { messages, anchor, found_anchor, found_oldest, found_newest, history_limited } = r.body;
    return { ids: messages.map((m: { id: number }) => m.id), anchor, found_anchor, found_oldest, found_newest, history_limited };
  };
  assert.equal(await get({ anchor: 'newest', num_before: 2, num_after: 0 }), {
    ids: ids.slice(3),
    anchor: 10000000000000000,
    found_anchor: false,
    found_oldest: false,
    found_newest: true,
    history_limited: false,
  });
  assert.equal(await get({ anchor: 'oldest', num_before: 0, num_after: 2 }), {
    ids: ids.slice(0, 2),
    anchor: 0,
    found_anchor: false,
    found_oldest: true,
    found_newest: false,
    history_limited: false,
  });
  assert.equal(await get({ anchor: ids[2], num_before: 1, num_after: 1 }), {
    ids: ids.slice(1, 4),
    anchor: ids[2],
    found_anchor: true,
    found_oldest: false,
    found_newest: false,
    history_limited: false,
  });
  assert.equal((await get({ anchor: String(ids[2]), num_before: 5, num_after: 5, include_anchor: false })).ids, [ids[0], ids[1], ids[3], ids[4]]);
  const around = await get({ anchor: ids[2], num_before: 5, num_after: 5 });
  assert.equal([around.found_oldest, around.found_newest], [true, true]);
  await o.post('/messages/flags', { messages: ids, op: 'remove', flag: 'read' });
  await o.post('/messages/flags', { messages: ids.slice(0, 2), op: 'add', flag: 'read' });
  assert.equal((await get({ anchor: 'first_unread', num_before: 0, num_after: 1 })).anchor, ids[2]);
  assert.equal((await get({ use_first_unread_anchor: true, num_before: 1, num_after: 0 })).ids, [ids[1], ids[2]]);
  const tooMany = await o.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 1 });
  assert.equal(tooMany.body, errorBody('Too many messages requested (maximum 5000).'));
  assert.equal((await o.get('/messages', { num_before: 1, num_after: 1 })).body, errorBody("Missing 'anchor' argument."));
  assert.equal((await o.get('/messages', { anchor: 'sideways', num_before: 1, num_after: 1 })).body, errorBody('Invalid anchor'));
  const byIds = await o.get('/messages', { message_ids: [ids[0], ids[4], 999999] });
  assert.equal(
    byIds.body.messages.map((m: { id: number }) => m.id),
    [ids[0], ids[4]],
  );
});

test('GET /messages: first_unread in a narrow skips the unread messages outside it, and without any is the newest', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const one = await makeChannel(realm, 'one', [realm.owner, bob]);
  const two = await makeChannel(realm, 'two', [realm.owner, bob]);
  const sent: number[] = [];
  for (const [channel, topic] of [
    [one, 'a'],
    [two, 'b'],
    [one, 'a'],
    [two, 'c'],
    [one, 'b'],
  ] as const)
    sent.push(await send(realm.owner, channel, topic, 'hello'));
  await bob.client.post('/messages/flags', { messages: [sent[2]], op: 'add', flag: 'read' });
  const anchorOf = async (narrow: unknown[]) => {
    const r = await bob.client.get('/messages', { anchor: 'first_unread', num_before: 1, num_after: 1, narrow: JSON.stringify(narrow) });
    assert.is(r.status, 200, r.text);
    return { anchor: r.body.anchor, ids: r.body.messages.map((m: { id: number }) => m.id), found_newest: r.body.found_newest };
  };
  assert.equal(await anchorOf([]), { anchor: sent[0], ids: [sent[0], sent[1]], found_newest: false });
  assert.equal(await anchorOf([{ operator: 'channel', operand: two }]), { anchor: sent[1], ids: [sent[1], sent[3]], found_newest: false });
  assert.equal(
    await anchorOf([
      { operator: 'channel', operand: one },
      { operator: 'topic', operand: 'a' },
    ]),
    { anchor: sent[0], ids: [sent[0], sent[2]], found_newest: false },
  );
  // Topic "a" of channel one: its only other message is read, so after marking the first read
  // there is no unread message in the narrow and the anchor is the newest.
  await bob.client.post('/messages/flags', { messages: [sent[0]], op: 'add', flag: 'read' });
  assert.equal(
    await anchorOf([
      { operator: 'channel', operand: one },
      { operator: 'topic', operand: 'a' },
    ]),
    { anchor: 10000000000000000, ids: [sent[2]], found_newest: true },
  );
  assert.equal(await anchorOf([{ operator: 'channel', operand: one }]), { anchor: sent[4], ids: [sent[2], sent[4]], found_newest: true });
});

test('GET /messages narrows: channel, topic, sender, dm, is:, search, has, negation, legacy pairs', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const sid = await makeChannel(realm, 'Verona', [realm.owner, alice]);
  const other = await makeChannel(realm, 'other', [realm.owner, alice]);
  const a = await send(alice, sid, 'Castle', 'The QUICK brown fox');
  const b = await send(realm.owner, sid, 'castle', 'see https://example.com/x.png');
  const c = await send(realm.owner, other, 'misc', 'quick "thinking" @**Alice**');
  const d = await sendDm(alice, [realm.owner.id], 'a quick dm');
  const e = await sendDm(alice, [alice.id], 'self');
  const ids = async (narrow: unknown, client = realm.owner.client) => {
    const r = await fetchAll(client, { narrow });
    assert.is(r.status, 200, r.text);
    return r.body.messages.map((m: { id: number }) => m.id);
  };
  assert.equal(await ids([{ operator: 'channel', operand: sid }]), [a, b]);
  assert.equal(await ids([['stream', 'verona']]), [a, b]);
  assert.equal(
    await ids([
      { operator: 'channel', operand: 'Verona' },
      { operator: 'topic', operand: 'CASTLE' },
    ]),
    [a, b],
  );
  assert.equal(await ids([{ operator: 'sender', operand: alice.email }]), [a, d]);
  assert.equal(
    await ids([
      { operator: 'sender', operand: alice.id },
      { operator: 'is', operand: 'dm' },
    ]),
    [d],
  );
  assert.equal(await ids([{ operator: 'dm', operand: [alice.id] }]), [d]);
  assert.equal(await ids([['pm-with', alice.email]]), [d]);
  // An address in another case names the same person; a LIKE wildcard in it matches nothing else.
  assert.equal(await ids([['pm-with', alice.email.toUpperCase()]]), [d]);
  const wildcard = await fetchAll(realm.owner.client, { narrow: [['pm-with', alice.email.replace(/^./, '_')]] });
  assert.equal([wildcard.status, wildcard.body.code], [400, 'BAD_NARROW']);
  assert.equal(await ids([{ operator: 'dm', operand: [alice.id] }], alice.client), [e]);
  assert.equal(await ids([{ operator: 'dm-including', operand: realm.owner.id }], alice.client), [d]);
  assert.equal(await ids([{ operator: 'search', operand: 'quick' }]), [a, c, d]);
  assert.equal(await ids([{ operator: 'search', operand: 'quick brown' }]), [a]);
  assert.equal(await ids([{ operator: 'has', operand: 'image' }]), [b]);
  assert.equal(await ids([{ operator: 'has', operand: 'link' }]), [b]);
  assert.equal(await ids([{ operator: 'is', operand: 'mentioned' }], alice.client), [c]);
  assert.equal(
    await ids([
      { operator: 'channel', operand: sid, negated: true },
      { operator: 'is', operand: 'private', negated: true },
    ]),
    [c],
  );
  assert.equal(await ids([{ operator: 'id', operand: String(b) }]), [b]);
  const bad: [unknown, string][] = [
    [[{ operator: 'channel', operand: 'nope' }], 'unknown channel nope'],
    [[{ operator: 'is', operand: 'weird' }], "unknown 'is' operand weird"],
    [[{ operator: 'has', operand: 'weird' }], "unknown 'has' operand weird"],
    [[{ operator: 'sender', operand: 'ghost@example.com' }], 'unknown user ghost@example.com'],
    [[{ operator: 'bogus', operand: 'x' }], 'unknown operator bogus'],
  ];
  for (const [narrow, desc] of bad) {
    assert.equal((await fetchAll(realm.owner.client, { narrow })).body, errorBody(`Invalid narrow operator: ${desc}`, 'BAD_NARROW', { desc }));
  }
});

test('history: public channel history is readable unsubscribed (historical flags); guests and private channels are not', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: 600 });
  const pub = await makeChannel(realm, 'public', [realm.owner]);
  const priv = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true, history_public_to_subscribers: true });
  const p1 = await send(realm.owner, pub, 't', 'public words');
  const s1 = await send(realm.owner, priv, 't', 'secret words');
  const pubNarrow = await fetchAll(member.client, { narrow: [{ operator: 'channel', operand: pub }] });
  assert.equal(
    pubNarrow.body.messages.map((m: { id: number; flags: string[] }) => [m.id, m.flags]),
    [[p1, ['read', 'historical']]],
  );
  assert.equal((await fetchAll(member.client)).body.messages, [], 'the combined feed holds only received messages');
  assert.equal((await member.client.get(`/messages/${p1}`)).body.message.flags, ['read', 'historical']);
  for (const [user, id] of [
    [member, s1],
    [guest, s1],
    [guest, p1],
  ] as const) {
    const r = await user.client.get(`/messages/${id}`);
    assert.equal([r.status, r.body], [400, errorBody('Invalid message(s)')]);
  }
  assert.equal((await fetchAll(guest.client, { narrow: [{ operator: 'channel', operand: pub }] })).body.messages, []);
  assert.equal((await fetchAll(member.client, { narrow: [{ operator: 'channel', operand: priv }] })).body.messages, []);
  assert.equal((await fetchAll(guest.client, { narrow: [{ operator: 'search', operand: 'words' }] })).body.messages, []);
  assert.equal(
    (await fetchAll(member.client, { narrow: [{ operator: 'channels', operand: 'public' }] })).body.messages.map((m: { id: number }) => m.id),
    [p1],
  );

  const late = await realm.addUser();
  await makeChannel(realm, 'secret', [late]);
  const shared = await fetchAll(late.client, { narrow: [{ operator: 'channel', operand: priv }] });
  assert.equal(
    shared.body.messages.map((m: { id: number }) => m.id),
    [s1],
    'shared history reaches new subscribers',
  );
  const protectedId = await makeChannel(realm, 'vault', [realm.owner], { invite_only: true, history_public_to_subscribers: false });
  const v1 = await send(realm.owner, protectedId, 't', 'before you came');
  await makeChannel(realm, 'vault', [late]);
  assert.equal((await late.client.get(`/messages/${v1}`)).body, errorBody('Invalid message(s)'), 'protected history stays hidden');
  assert.equal((await fetchAll(late.client, { narrow: [{ operator: 'channel', operand: protectedId }] })).body.messages, []);
  const bad = await member.client.get('/messages/abc');
  assert.equal(bad.body, errorBody('Invalid message(s)'));
});

test('GET /messages: client_gravatar, avatar_url and apply_markdown', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  await send(realm.owner, sid, 't', '**bold**');
  const def = (await fetchAll(realm.owner.client)).body.messages[0];
  assert.is(def.avatar_url, null);
  assert.is(def.content, '<p><strong>bold</strong></p>');
  const raw = (await fetchAll(realm.owner.client, { client_gravatar: false, apply_markdown: false })).body.messages[0];
  assert.match(raw.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//);
  assert.equal([raw.content, raw.content_type], ['**bold**', 'text/x-markdown']);
});

test('GET /messages/{id}/history: snapshots oldest first; disabled by the realm', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const id = await send(realm.owner, sid, 'first', 'one');
  await realm.owner.client.patch(`/messages/${id}`, { content: 'two' });
  await realm.owner.client.patch(`/messages/${id}`, { topic: '' });
  const r = await realm.owner.client.get(`/messages/${id}/history`);
  const h = r.body.message_history;
  assert.is(h.length, 3);
  assert.equal({ ...h[0], timestamp: 0 }, { content: 'one', rendered_content: '<p>one</p>', topic: 'first', user_id: realm.owner.id, timestamp: 0 });
  assert.equal(
    { ...h[1], timestamp: 0 },
    {
      content: 'two',
      rendered_content: '<p>two</p>',
      topic: 'first',
      user_id: realm.owner.id,
      timestamp: 0,
      prev_content: 'one',
      prev_rendered_content: '<p>one</p>',
      content_html_diff: '<p><span class="highlight_text_inserted">two</span><span class="highlight_text_deleted">one</span></p>',
    },
  );
  assert.equal(
    { ...h[2], timestamp: 0 },
    { content: 'two', rendered_content: '<p>two</p>', topic: 'general chat', prev_topic: 'first', user_id: realm.owner.id, timestamp: 0 },
  );
  const modern = await realm.owner.client.get(`/messages/${id}/history`, { allow_empty_topic_name: true });
  assert.is(modern.body.message_history[2].topic, '');
  await setRealmSettings(realm, { allow_edit_history: false });
  const off = await realm.owner.client.get(`/messages/${id}/history`);
  assert.equal(off.body, errorBody('Message edit history is disabled in this organization'));
});

test('sending to N subscribers costs a constant number of queries', async () => {
  const realm = await newRealm();
  const small = await makeChannel(realm, 'small', [realm.owner]);
  const members = [realm.owner];
  for (let i = 0; i < 30; i++) members.push(await realm.addUser());
  const big = await makeChannel(realm, 'big', members);
  // Every statement, Prisma's and the raw ones sent past it, is timed by the query metric.
  const statements = async () => (await realm.server.app.metrics.queryDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  // The metric also counts the server's background statements (presence, upkeep, sweeps), which can
  // land inside one send's window and only ever add: the fewest over a few sends is the send's own.
  const count = async (sid: number) => {
    let fewest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      const before = await statements();
      await send(realm.owner, sid, 't', 'counted');
      fewest = Math.min(fewest, (await statements()) - before);
    }
    return fewest;
  };
  await send(realm.owner, small, 't', 'warm up');
  await send(realm.owner, big, 't', 'warm up');
  const [bigCount, smallCount] = [await count(big), await count(small)];
  assert.ok(smallCount >= 1, `queries were counted (${smallCount})`);
  assert.is(bigCount, smallCount);
});

test('a renamed or archived channel is what the next message sees (the send path caches channels)', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'before', [realm.owner]);
  const o = realm.owner.client;
  const post = (to: string | number) => o.post('/messages', { type: 'stream', to, topic: 't', content: 'x' });
  assert.is((await post('before')).status, 200);
  assert.is((await o.patch(`/streams/${sid}`, { new_name: 'after' })).status, 200);
  assert.equal((await post('before')).body, errorBody("Channel 'before' does not exist", 'STREAM_DOES_NOT_EXIST', { stream: 'before' }));
  assert.is((await post('AFTER')).status, 200);
  assert.is((await o.delete(`/streams/${sid}`)).status, 200);
  assert.equal((await post(sid)).body, errorBody("Not authorized to send to channel 'after'"));
  assert.equal(
    (await post(realm.id * 100000)).body,
    errorBody(`Channel with ID '${realm.id * 100000}' does not exist`, 'STREAM_DOES_NOT_EXIST', { stream_id: realm.id * 100000 }),
  );
});

test('concurrent sends to one channel: every message stored once, events in id order for every recipient', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const sid = await makeChannel(realm, 'busy', [realm.owner, member]);
  const queue = await openQueue(member, { event_types: ['message'] });
  const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => send(i % 2 ? member : realm.owner, sid, 't', `m${i}`)));
  const seen: Record<string, any>[] = [];
  while (seen.length < 40) seen.push(...(await queue.next()));
  assert.equal(
    seen.map((e) => e.message.id),
    [...ids].sort((a, b) => a - b),
  );
  const stored = await realm.server.app.prisma.userMessage.count({ where: { messageId: { in: ids } } });
  assert.is(stored, 80);
});

test('concurrent sends to many channels share commits: each stored once, each channel in send order, every event once', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const channels = await Promise.all(Array.from({ length: 12 }, (_, i) => makeChannel(realm, `c${i}`, [realm.owner, member])));
  const queue = await openQueue(member, { event_types: ['message'] });
  // Three rounds per channel, each round's 12 sends at once: a channel's sends are in order.
  const ids: number[][] = channels.map(() => []);
  for (let round = 0; round < 3; round++) {
    const sent = await Promise.all(channels.map((sid, c) => send(c % 2 ? member : realm.owner, sid, 't', `c${c} r${round}`)));
    sent.forEach((id, c) => ids[c]!.push(id));
  }
  for (const own of ids)
    assert.equal(
      own,
      [...own].sort((a, b) => a - b),
      'a channel gets ascending ids in its order',
    );
  const seen: Record<string, any>[] = [];
  while (seen.length < 36) seen.push(...(await queue.next()));
  assert.equal(
    seen.map((e) => e.message.id).sort((a, b) => a - b),
    ids.flat().sort((a, b) => a - b),
  );
  for (const [c, sid] of channels.entries()) {
    assert.equal(
      seen.filter((e) => e.message.stream_id === sid).map((e) => e.message.content),
      [0, 1, 2].map((r) => `c${c} r${r}`),
    );
  }
  assert.is(await realm.server.app.prisma.userMessage.count({ where: { messageId: { in: ids.flat() } } }), 72);
});

test('the first direct messages of a conversation sent at once: each stored, all in one conversation', async () => {
  const realm = await newRealm();
  const [ann, ben, cid] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  // Each round a new conversation, its first messages racing to create it (a one-on-one and a group).
  for (const to of [[ben.id], [ben.id, cid.id], [cid.id]]) {
    const statuses = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => (await ann.client.post('/messages', { type: 'direct', to, content: `first ${i}` })).status),
    );
    assert.equal(statuses, [200, 200, 200, 200, 200, 200], `to ${to}`);
  }
  const messages = await realm.server.app.prisma.message.findMany({ where: { realmId: realm.id, senderId: ann.id }, select: { directGroupId: true } });
  assert.is(messages.length, 18);
  assert.is(new Set(messages.map((m) => m.directGroupId)).size, 3);
});

test.run();

test('GET /messages shows each message of a page as GET /messages/{id} does: senders, conversations, channels, reactions, edits', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const carol = await realm.addUser({ name: 'Carol' });
  await makeChannel(realm, 'one', [alice, bob]);
  await makeChannel(realm, 'two', [alice, bob]);
  // Bob's address only administrators see: others get his stand-in address, and his Gravatar URL.
  assert.is((await bob.client.patch('/settings', { email_address_visibility: 4 })).status, 200);
  const ids = [
    await send(alice, 'one', 'a', 'first'),
    await send(bob, 'two', 'b', 'second'),
    // Carol never writes: she is shown as a member of the conversation only.
    await sendDm(bob, [alice.id, carol.id], 'to the group'),
    await send(bob, 'one', 'a', 'third'),
  ];
  for (const [user, id, emoji_name] of [
    [bob, ids[0], 'tada'],
    [alice, ids[0], 'smile'],
    [bob, ids[2], 'tada'],
  ] as const) {
    assert.is((await user.client.post(`/messages/${id}/reactions`, { emoji_name })).status, 200);
  }
  assert.is((await bob.client.patch(`/messages/${ids[3]}`, { content: 'third, edited', topic: 'moved' })).status, 200);
  const page = await fetchAll(alice.client, { client_gravatar: false });
  assert.is(page.status, 200, page.text);
  const shown = page.body.messages.filter((m: { id: number }) => ids.includes(m.id));
  assert.equal(
    shown.map((m: { id: number }) => m.id),
    ids,
  );
  for (const m of shown) assert.equal(m, (await alice.client.get(`/messages/${m.id}`)).body.message);
  const [first, second, group] = shown;
  assert.equal(
    first.reactions.map((r: { emoji_name: string; user_id: number }) => [r.emoji_name, r.user_id]),
    [
      ['tada', bob.id],
      ['smile', alice.id],
    ],
  );
  assert.equal([second.display_recipient, second.sender_email === bob.email], ['two', false]);
  assert.equal(
    group.display_recipient.map((u: { id: number; full_name: string }) => [u.id, u.full_name]),
    [
      [alice.id, 'Alice'],
      [bob.id, 'Bob'],
      [carol.id, 'Carol'],
    ],
  );
  assert.is(shown[3].edit_history.length, 1);
});
