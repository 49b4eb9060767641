// PATCH /messages/{id}: content edits, topic and channel moves, resolving, limits and events.
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { editsRaceOnOneHash } from '../helpers/edit-race.ts';
import { captureEvents } from '../helpers/events.ts';
import { newRealm } from '../helpers/server.ts';
import { age, errorBody, makeChannel, send, sendDm, setRealmSettings, systemGroup, setChannelRow } from './messages-helpers.ts';

const WEEK = 604800;

async function topicMessages(client: { get: Function }, channel: number, topic: string) {
  const r = await client.get('/messages', {
    anchor: 'newest',
    num_before: 100,
    num_after: 0,
    narrow: [
      { operator: 'channel', operand: channel },
      { operator: 'topic', operand: topic },
    ],
    apply_markdown: false,
    allow_empty_topic_name: true,
  });
  return r.body.messages as { id: number; content: string; sender_full_name: string; flags: string[] }[];
}

test('payload errors', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const id = await send(realm.owner, sid, 'topic', 'text');
  const dm = await sendDm(realm.owner, [realm.owner.id], 'dm');
  const o = realm.owner.client;
  const cases: [number, Record<string, unknown>, string][] = [
    [id, {}, 'Nothing to change'],
    [id, { topic: 'topic' }, 'Nothing to change'],
    [dm, { topic: 'x' }, 'Direct messages cannot have topics.'],
    [dm, { stream_id: sid }, 'Direct messages cannot be moved to channels.'],
    [id, { content: 'x', propagate_mode: 'change_all' }, 'Invalid propagate_mode without topic edit'],
    [id, { topic: 'x', propagate_mode: 'invalid' }, 'Invalid propagate_mode'],
    [id, { topic: '✔ ' }, 'General chat cannot be marked as resolved'],
    [id, { topic: '✔ general chat' }, 'General chat cannot be marked as resolved'],
    [id, { topic: 'editing\nfun' }, 'Invalid character in topic, at position 8!'],
    [id, { content: 'x', stream_id: 999 }, 'Cannot change message content while changing channel'],
    [id, { content: 'x', prev_content_sha256: 'abc' }, "'prev_content_sha256' value does not match the expected value."],
    [999999, { content: 'x' }, 'Invalid message(s)'],
  ];
  for (const [target, params, msg] of cases) {
    const r = await o.patch(`/messages/${target}`, params);
    assert.equal([r.status, r.body.msg], [400, msg], JSON.stringify(params));
  }
  const ok = await o.patch(`/messages/${id}`, { content: 'new text', prev_content_sha256: createHash('sha256').update('text').digest('hex') });
  assert.equal(ok.body, { result: 'success', msg: '', detached_uploads: [] });
  const stale = await o.patch(`/messages/${id}`, { content: 'other', prev_content_sha256: createHash('sha256').update('text').digest('hex') });
  assert.equal(stale.body, errorBody("'prev_content_sha256' value does not match the expected value."));
});

test('content edits: who, realm switch, time limit with 20 s grace, event and timestamps', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const bob = await realm.addUser({ name: 'Bob' });
  const sid = await makeChannel(realm, 'general', [alice, bob]);
  const id = await send(alice, sid, 't', 'original');
  const notMine = await realm.owner.client.patch(`/messages/${id}`, { content: 'x' });
  assert.equal(notMine.body, errorBody("You don't have permission to edit this message"));

  const events = captureEvents(realm.server.app, realm.id);
  const r = await alice.client.patch(`/messages/${id}`, { content: 'edited @**Bob**' });
  events.stop();
  assert.is(r.status, 200);
  const [env] = events.ofType('update_message');
  assert.equal(env!.userIds.slice().sort(), [alice.id, bob.id].sort());
  assert.equal(env!.perUser, { [alice.id]: { flags: ['read'] }, [bob.id]: { flags: ['mentioned'] } });
  const ev = env!.event;
  assert.equal(
    { ...ev, edit_timestamp: 0 },
    {
      type: 'update_message',
      user_id: alice.id,
      edit_timestamp: 0,
      message_id: id,
      message_ids: [id],
      rendering_only: false,
      orig_content: 'original',
      orig_rendered_content: '<p>original</p>',
      content: 'edited @**Bob**',
      rendered_content: `<p>edited <span class="user-mention" data-user-id="${bob.id}">@Bob</span></p>`,
      is_me_message: false,
      stream_name: 'general',
      stream_id: sid,
    },
  );
  const m = (await bob.client.get(`/messages/${id}`)).body.message;
  assert.equal(m.flags, ['mentioned']);
  assert.type(m.last_edit_timestamp, 'number');
  assert.not.ok('last_moved_timestamp' in m);
  assert.is(m.edit_history.length, 1);
  assert.equal(Object.keys(m.edit_history[0]).sort(), ['prev_content', 'prev_rendered_content', 'timestamp', 'user_id']);
  await alice.client.patch(`/messages/${id}`, { content: 'no more mention' });
  assert.equal((await bob.client.get(`/messages/${id}`)).body.message.flags, []);
  await alice.client.patch(`/messages/${id}`, { content: '  ' });
  assert.is((await bob.client.get(`/messages/${id}`)).body.raw_content, '(deleted)');

  await age(realm, [id], 600 + 20 - 3);
  assert.is((await alice.client.patch(`/messages/${id}`, { content: 'inside grace' })).status, 200);
  await age(realm, [id], 600 + 20 + 3);
  assert.equal((await alice.client.patch(`/messages/${id}`, { content: 'late' })).body, errorBody('The time limit for editing this message has passed'));
  assert.is((await alice.client.patch(`/messages/${id}`, { topic: 'topic edits have their own limit' })).status, 200);
  await setRealmSettings(realm, { message_content_edit_limit_seconds: null });
  assert.is((await alice.client.patch(`/messages/${id}`, { content: 'unlimited' })).status, 200);
  await setRealmSettings(realm, { allow_message_editing: false });
  assert.equal((await alice.client.patch(`/messages/${id}`, { content: 'off' })).body, errorBody('Your organization has turned off message editing'));
});

test('direct message content edit goes to the conversation', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser();
  const id = await sendDm(alice, [realm.owner.id], 'hi');
  const events = captureEvents(realm.server.app, realm.id);
  await alice.client.patch(`/messages/${id}`, { content: 'hello' });
  events.stop();
  const [env] = events.ofType('update_message');
  assert.equal(env!.userIds.slice().sort(), [realm.owner.id, alice.id].sort());
  assert.not.ok('stream_id' in env!.event);
  assert.equal(env!.event.message_ids, [id]);
});

test('topic moves: propagate modes, breadcrumbs, edit history, last_moved_timestamp, event', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const sid = await makeChannel(realm, 'public stream', [realm.owner, alice]);
  const [a, b, c] = [await send(alice, sid, 'test', 'one'), await send(alice, sid, 'Test', 'two'), await send(alice, sid, 'test', 'three')];
  const events = captureEvents(realm.server.app, realm.id);
  const r = await realm.owner.client.patch(`/messages/${b}`, { topic: 'later', propagate_mode: 'change_later', send_notification_to_old_thread: true });
  events.stop();
  assert.is(r.status, 200, r.text);
  const who = `@_**Olivia Owner|${realm.owner.id}**`;
  assert.equal(
    (await topicMessages(alice.client, sid, 'later')).map((m) => [m.id, m.content]),
    [
      [b, 'two'],
      [c, 'three'],
      [c + 1, `2 messages were moved here from #**public stream>Test** by ${who}.`],
    ],
  );
  assert.equal(
    (await topicMessages(alice.client, sid, 'test')).map((m) => [m.id, m.content]),
    [
      [a, 'one'],
      [c + 2, `2 messages were moved from this topic to #**public stream>later** by ${who}.`],
    ],
  );
  const [env] = events.ofType('update_message');
  assert.equal(
    { ...env!.event, edit_timestamp: 0 },
    {
      type: 'update_message',
      user_id: realm.owner.id,
      edit_timestamp: 0,
      message_id: b,
      message_ids: [b, c],
      rendering_only: false,
      stream_name: 'public stream',
      stream_id: sid,
      propagate_mode: 'change_later',
      orig_subject: 'Test',
      subject: 'later',
      topic_links: [],
    },
  );
  const notices = events.ofType('message');
  assert.equal(
    notices.map((e) => e.perUser![realm.owner.id]),
    [{ flags: ['read'] }, { flags: ['read'] }],
    'the mover has read the notices',
  );
  assert.equal(notices[0]!.perUser![alice.id], { flags: [] });
  const moved = (await alice.client.get(`/messages/${c}`, { allow_empty_topic_name: true })).body.message;
  assert.type(moved.last_moved_timestamp, 'number');
  assert.not.ok('last_edit_timestamp' in moved);
  assert.equal(
    moved.edit_history.map((e: Record<string, unknown>) => ({ ...e, timestamp: 0 })),
    [{ user_id: realm.owner.id, timestamp: 0, prev_topic: 'Test', topic: 'later' }],
    "every moved message records the edited message's old topic",
  );

  const one = await realm.owner.client.patch(`/messages/${a}`, { topic: 'single', propagate_mode: 'change_all' });
  assert.is(one.status, 200);
  const crumb = (await topicMessages(alice.client, sid, 'single')).at(-1);
  assert.is(crumb!.content, `This topic was moved here from #**public stream>test** by ${who}.`, 'the whole topic moved');
  const all = await realm.owner.client.patch(`/messages/${b}`, { topic: 'single', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  assert.is(all.status, 200);
  assert.equal((await topicMessages(alice.client, sid, 'single')).map((m) => m.id).slice(0, 3), [a, b, c]);
  const partial = await realm.owner.client.patch(`/messages/${b}`, { topic: 'elsewhere' });
  assert.is(partial.status, 200);
  const link = (await topicMessages(alice.client, sid, 'elsewhere'))[1]!.content;
  assert.match(
    link,
    new RegExp(
      `^\\[A message\\]\\(http://${realm.subdomain}\\.[^)]*/#narrow/channel/${sid}-public-stream/topic/elsewhere/near/${b}\\) was moved here from #\\*\\*public stream>single\\*\\* by `,
    ),
  );
});

test('a topic of more than one batch moves a batch per transaction, each announced, then one breadcrumb', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const sid = await makeChannel(realm, 'big', [realm.owner, alice]);
  const ids: number[] = [];
  for (let start = 0; start < 1050; start += 50)
    ids.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => send(alice, sid, 'old', `m${start + i}`)))));
  ids.sort((x, y) => x - y);
  const edited = ids[500]!;
  const events = captureEvents(realm.server.app, realm.id);
  const r = await realm.owner.client.patch(`/messages/${edited}`, {
    topic: 'new',
    propagate_mode: 'change_all',
    send_notification_to_old_thread: true,
    send_notification_to_new_thread: false,
  });
  events.stop();
  assert.equal(r.body, { result: 'success', msg: '', detached_uploads: [] });
  const updates = events
    .ofType('update_message')
    .map((e) => e.event as { message_id: number; message_ids: number[]; orig_subject: string; subject: string; propagate_mode: string });
  // The edited message's batch first (it and the 999 oldest others), then the rest.
  assert.equal(
    updates.map((u) => u.message_ids.length),
    [1000, 50],
  );
  assert.equal(
    updates.flatMap((u) => u.message_ids).sort((x, y) => x - y),
    ids,
  );
  assert.ok(updates.every((u) => u.message_id === edited && u.orig_subject === 'old' && u.subject === 'new' && u.propagate_mode === 'change_all'));
  const inTopic = async (topic: string) =>
    (
      await alice.client.get('/messages', {
        anchor: 'newest',
        num_before: 2000,
        num_after: 0,
        narrow: [
          { operator: 'channel', operand: sid },
          { operator: 'topic', operand: topic },
        ],
      })
    ).body.messages.map((m: { id: number }) => m.id);
  assert.equal(await inTopic('new'), ids);
  const who = `@_**Olivia Owner|${realm.owner.id}**`;
  const [crumb] = (
    await alice.client.get('/messages', {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [
        { operator: 'channel', operand: sid },
        { operator: 'topic', operand: 'old' },
      ],
      apply_markdown: false,
    })
  ).body.messages;
  assert.is(crumb.content, `This topic was moved to #**big>new** by ${who}.`, 'one breadcrumb, for the whole topic');
});

test('topic move permissions and time limits', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const moderator = await realm.addUser({ role: 300 });
  const sid = await makeChannel(realm, 'general', [realm.owner, member, moderator]);
  const id = await send(member, sid, 't', 'x');
  await setRealmSettings(realm, {}, { can_move_messages_between_topics_group: systemGroup(realm, 'role:administrators') });
  assert.equal((await member.client.patch(`/messages/${id}`, { topic: 'new' })).body, errorBody("You don't have permission to edit this message"));
  await setChannelRow(realm, sid, { permissions: { can_move_messages_within_channel_group: systemGroup(realm, 'role:members') } });
  assert.is((await member.client.patch(`/messages/${id}`, { topic: 'new' })).status, 200, 'the channel-level permission is enough');
  await setRealmSettings(realm, {}, { can_move_messages_between_topics_group: systemGroup(realm, 'role:everyone') });

  await age(realm, [id], WEEK + 20 - 3);
  assert.is((await member.client.patch(`/messages/${id}`, { topic: 'in grace' })).status, 200);
  await age(realm, [id], WEEK + 20 + 3);
  assert.equal(
    (await member.client.patch(`/messages/${id}`, { topic: 'late' })).body,
    errorBody("The time limit for editing this message's topic has passed."),
  );
  assert.is((await moderator.client.patch(`/messages/${id}`, { topic: 'moderators may' })).status, 200);
});

test('change_all beyond the move limit: MOVE_MESSAGES_TIME_LIMIT_EXCEEDED and its keys', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const sid = await makeChannel(realm, 'general', [member]);
  const [old1, old2, fresh1, fresh2] = [
    await send(member, sid, 't', '1'),
    await send(member, sid, 't', '2'),
    await send(member, sid, 't', '3'),
    await send(member, sid, 't', '4'),
  ];
  await age(realm, [old1, old2], WEEK + 60);
  const r = await member.client.patch(`/messages/${fresh2}`, { topic: 'moved', propagate_mode: 'change_all' });
  assert.equal(
    [r.status, r.body],
    [
      400,
      errorBody('You only have permission to move the 2/4 most recent messages in this topic.', 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', {
        first_message_id_allowed_to_move: fresh1,
        total_messages_in_topic: 4,
        total_messages_allowed_to_move: 2,
      }),
    ],
  );
  assert.is((await member.client.patch(`/messages/${fresh1}`, { topic: 'moved', propagate_mode: 'change_later' })).status, 200, 'retry with change_later');
  assert.is(
    (await realm.owner.client.patch(`/messages/${old1}`, { topic: 'moved', propagate_mode: 'change_all' })).status,
    200,
    'administrators have no move limit',
  );
});

test('resolving topics: notice, no move breadcrumb, permission, undo within a minute', async () => {
  const realm = await newRealm();
  const alice = await realm.addUser({ name: 'Alice' });
  const sid = await makeChannel(realm, 'general', [realm.owner, alice]);
  const id = await send(alice, sid, 'bug', 'it broke');
  const r = await alice.client.patch(`/messages/${id}`, { topic: '✔ bug', propagate_mode: 'change_all' });
  assert.is(r.status, 200, r.text);
  const msgs = await topicMessages(realm.owner.client, sid, '✔ bug');
  assert.equal(
    msgs.map((m) => [m.content, m.sender_full_name, m.flags]),
    [
      ['it broke', 'Alice', []],
      [`@_**Alice|${alice.id}** has marked this topic as resolved.`, 'Notification Bot', ['read']],
    ],
  );
  assert.not.ok('last_moved_timestamp' in (await alice.client.get(`/messages/${id}`)).body.message, 'resolving is not a move');
  const unresolve = await alice.client.patch(`/messages/${id}`, { topic: 'bug', propagate_mode: 'change_all' });
  assert.is(unresolve.status, 200);
  assert.equal(
    (await topicMessages(realm.owner.client, sid, 'bug')).map((m) => m.content),
    ['it broke'],
    'a quick undo deletes the notice',
  );
  await setRealmSettings(realm, {}, { can_resolve_topics_group: systemGroup(realm, 'role:administrators') });
  const denied = await alice.client.patch(`/messages/${id}`, { topic: '✔ bug', propagate_mode: 'change_all' });
  assert.equal(denied.body, errorBody("You don't have permission to resolve topics in this channel."));
  const empty = await send(alice, sid, '', 'general');
  assert.equal((await realm.owner.client.patch(`/messages/${empty}`, { topic: '✔ ' })).body, errorBody('General chat cannot be marked as resolved'));
});

test('channel moves: permissions, access, rows, delete_message to guests, breadcrumbs', async () => {
  const realm = await newRealm();
  const member = await realm.addUser({ name: 'Member' });
  const guest = await realm.addUser({ role: 600, name: 'Guest' });
  const from = await makeChannel(realm, 'from', [realm.owner, member, guest]);
  const to = await makeChannel(realm, 'to', [realm.owner, member]);
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const id = await send(member, from, 't', 'moving');
  assert.equal((await guest.client.patch(`/messages/${id}`, { stream_id: to })).body, errorBody('Invalid channel ID'));
  assert.equal((await member.client.patch(`/messages/${id}`, { stream_id: secret })).body, errorBody('Invalid channel ID'));
  await setRealmSettings(realm, {}, { can_move_messages_between_channels_group: systemGroup(realm, 'role:administrators') });
  assert.equal((await member.client.patch(`/messages/${id}`, { stream_id: to })).body, errorBody("You don't have permission to move this message"));
  await setRealmSettings(realm, {}, { can_move_messages_between_channels_group: systemGroup(realm, 'role:members') });
  await age(realm, [id], WEEK + 30);
  assert.equal(
    (await member.client.patch(`/messages/${id}`, { stream_id: to })).body,
    errorBody("The time limit for editing this message's channel has passed"),
  );
  await age(realm, [id], 0);

  const events = captureEvents(realm.server.app, realm.id);
  const r = await member.client.patch(`/messages/${id}`, { stream_id: to, propagate_mode: 'change_all', send_notification_to_old_thread: true });
  events.stop();
  assert.is(r.status, 200, r.text);
  const [del] = events.ofType('delete_message');
  assert.equal([del!.userIds, del!.event], [[guest.id], { type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: from, topic: 't' }]);
  const [upd] = events.ofType('update_message');
  assert.equal([upd!.event.new_stream_id, upd!.event.orig_subject, upd!.event.stream_id], [to, 't', from]);
  assert.not.ok(upd!.userIds.includes(guest.id));
  assert.equal((await guest.client.get(`/messages/${id}`)).body, errorBody('Invalid message(s)'));
  const moved = (await member.client.get(`/messages/${id}`)).body.message;
  assert.equal([moved.stream_id, moved.display_recipient], [to, 'to']);
  assert.equal(
    moved.edit_history.map((e: Record<string, unknown>) => ({ ...e, timestamp: 0 })),
    [{ user_id: member.id, timestamp: 0, prev_stream: from, stream: to }],
  );
  const who = `@_**Member|${member.id}**`;
  assert.equal(
    (await topicMessages(member.client, to, 't')).map((m) => m.content),
    ['moving', `This topic was moved here from #**from>t** by ${who}.`],
  );
  assert.equal(
    (await topicMessages(member.client, from, 't')).map((m) => m.content),
    [`This topic was moved to #**to>t** by ${who}.`],
  );
});

test('protected history: a late subscriber moves only what they can see', async () => {
  const realm = await newRealm();
  const late = await realm.addUser();
  const sid = await makeChannel(realm, 'vault', [realm.owner], { invite_only: true, history_public_to_subscribers: false });
  const early = await send(realm.owner, sid, 't', 'before');
  await makeChannel(realm, 'vault', [late]);
  const seen = await send(realm.owner, sid, 't', 'after');
  await age(realm, [early], WEEK * 2);
  const r = await late.client.patch(`/messages/${seen}`, { topic: 'moved', propagate_mode: 'change_all', send_notification_to_new_thread: false });
  assert.is(r.status, 200, 'no time-limit error for messages the user cannot see');
  assert.equal(
    (await topicMessages(realm.owner.client, sid, 't')).map((m) => m.id),
    [early],
  );
  assert.equal(
    (await topicMessages(realm.owner.client, sid, 'moved')).map((m) => m.id),
    [seen],
  );
});

test('whether a move takes the whole topic counts only the messages the mover can see, before the moved ones', async () => {
  const realm = await newRealm();
  const late = await realm.addUser({ name: 'Late' });
  const sid = await makeChannel(realm, 'vault', [realm.owner], { invite_only: true, history_public_to_subscribers: false });
  await send(realm.owner, sid, 'old', 'unseen by Late');
  await makeChannel(realm, 'vault', [late]);
  const [first, second, third] = [
    await send(realm.owner, sid, 'old', 'one'),
    await send(realm.owner, sid, 'old', 'two'),
    await send(realm.owner, sid, 'old', 'three'),
  ];
  const move = async (id: number, topic: string, mode: string) => {
    const r = await late.client.patch(`/messages/${id}`, {
      topic,
      propagate_mode: mode,
      send_notification_to_old_thread: true,
      send_notification_to_new_thread: false,
    });
    assert.is(r.status, 200, r.text);
    const notices = await topicMessages(late.client, sid, 'old');
    return notices.at(-1)!.content;
  };
  const who = `@_**Late|${late.id}**`;
  assert.is(await move(third, 'a', 'change_one'), `A message was moved from this topic to #**vault>a** by ${who}.`, 'one of several');
  // "two" and the first notice, after it.
  assert.is(await move(second, 'b', 'change_later'), `2 messages were moved from this topic to #**vault>b** by ${who}.`, 'an older one stays');
  // Late sees "one" and the two notices: moving them from "one" on leaves only the message they never received.
  assert.is(await move(first, 'c', 'change_later'), `This topic was moved to #**vault>c** by ${who}.`, 'nothing visible before it');
  const solo = await send(late, sid, 'solo', 'alone');
  const r = await late.client.patch(`/messages/${solo}`, {
    topic: 'd',
    propagate_mode: 'change_one',
    send_notification_to_old_thread: true,
    send_notification_to_new_thread: false,
  });
  assert.is(r.status, 200, r.text);
  assert.equal(
    (await topicMessages(late.client, sid, 'solo')).map((m) => m.content),
    [`This topic was moved to #**vault>d** by ${who}.`],
    'the only message of its topic',
  );
});

test('edits: wildcard mention permission, topics policy on moves, can_create_topic_group', async () => {
  const realm = await newRealm();
  const users = [];
  for (let i = 0; i < 16; i++) users.push(await realm.addUser());
  const sid = await makeChannel(realm, 'big', users);
  const id = await send(users[0]!, sid, 't', 'plain');
  const r = await users[0]!.client.patch(`/messages/${id}`, { content: '@**all** now' });
  assert.equal(r.body, errorBody('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'));
  await setRealmSettings(realm, { topics_policy: 'disable_empty_topic' });
  assert.equal((await users[0]!.client.patch(`/messages/${id}`, { topic: '' })).body, errorBody('Topics are required in this organization.'));
  await setChannelRow(realm, sid, { permissions: { can_create_topic_group: systemGroup(realm, 'role:administrators') } });
  assert.equal(
    (await users[0]!.client.patch(`/messages/${id}`, { topic: 'brand new' })).body,
    errorBody('You do not have permission to create new topics in this channel.'),
  );
});

test('detached_uploads: files of the editor no message references any more', async () => {
  const realm = await newRealm();
  const sid = await makeChannel(realm, 'general', [realm.owner]);
  const prisma = realm.server.app.prisma;
  const path = `${realm.id}/ab/cdef/report.pdf`;
  const att = await prisma.attachment.create({ data: { realmId: realm.id, ownerId: realm.owner.id, pathId: path, fileName: 'report.pdf', size: 1234 } });
  const id = await send(realm.owner, sid, 't', `see [report.pdf](/user_uploads/${path})`);
  assert.is(await prisma.attachmentMessage.count({ where: { messageId: id } }), 1);
  const kept = await realm.owner.client.patch(`/messages/${id}`, { content: `still [report.pdf](/user_uploads/${path})` });
  assert.equal(kept.body.detached_uploads, []);
  const r = await realm.owner.client.patch(`/messages/${id}`, { content: 'never mind' });
  assert.equal(r.body.detached_uploads, [
    { id: att.id, name: 'report.pdf', path_id: path, size: 1234, create_time: Math.floor(att.createTime.getTime() / 1000), message_ids: [] },
  ]);
});

test('parallel edits with the same prev_content_sha256: exactly one succeeds, one history entry', async () => {
  await editsRaceOnOneHash(await newRealm());
});

test.run();
