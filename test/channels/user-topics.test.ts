// Personal topic settings (Zulip's test_user_topics.py and test_muted_topics.py): POST /user_topics,
// the legacy PATCH /users/me/subscriptions/muted_topics, `user_topic` and `muted_topics` events,
// register's user_topics and muted_topics, and the settings following a topic that moves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue, type OpenQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send } from '../messages/messages-helpers.ts';

type Event = Record<string, any>;
const SUCCESS = { result: 'success', msg: '' };
const [INHERIT, MUTED, UNMUTED, FOLLOWED] = [0, 1, 2, 3];

const setPolicy = (u: TestUser, streamId: number, topic: string, policy: number) =>
  u.client.post('/user_topics', { stream_id: streamId, topic, visibility_policy: policy });
const muteTopic = (u: TestUser, params: Record<string, unknown>) => u.client.patch('/users/me/subscriptions/muted_topics', params);

/** Times are the server's clock: checked against ours, then written as 'now' so bodies compare exactly. */
function now(seconds: unknown): string {
  assert.type(seconds, 'number');
  assert.ok(Math.abs((seconds as number) - Date.now() / 1000) < 60, `${String(seconds)} is not now`);
  return 'now';
}
const timed = (e: Event): Event => ({
  ...e,
  ...('last_updated' in e ? { last_updated: now(e.last_updated) } : {}),
  ...('muted_topics' in e ? { muted_topics: e.muted_topics.map(([c, t, at]: [string, string, number]) => [c, t, now(at)]) } : {}),
});

/** The next `count` events of a queue. */
async function take(q: OpenQueue, count: number): Promise<Event[]> {
  const events: Event[] = [];
  while (events.length < count) events.push(...(await q.next()));
  assert.is(events.length, count, JSON.stringify(events));
  return events.map(timed);
}

async function settings(u: TestUser): Promise<{ user_topics: Event[]; muted_topics: Event[] }> {
  const r = await u.client.post('/register', { fetch_event_types: ['user_topic'] });
  const legacy = await u.client.post('/register', { fetch_event_types: ['muted_topics'] });
  // With all data both lists come from one read of the settings: the same lists.
  const all = await u.client.post('/register', {});
  assert.equal([all.body.user_topics, all.body.muted_topics], [r.body.user_topics, legacy.body.muted_topics]);
  return { user_topics: r.body.user_topics.map(timed), muted_topics: timed({ muted_topics: legacy.body.muted_topics }).muted_topics };
}

const topicEvent = (streamId: number, topic: string, policy: number) => ({
  type: 'user_topic',
  stream_id: streamId,
  topic_name: topic,
  last_updated: 'now',
  visibility_policy: policy,
});
const setting = (streamId: number, topic: string, policy: number) => ({
  stream_id: streamId,
  topic_name: topic,
  last_updated: 'now',
  visibility_policy: policy,
});

test("POST /user_topics: each policy, events to the user's clients, register; nothing changes, nothing is sent", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const garden = await makeChannel(realm, 'Garden', [ann, bob]);
  const modern = await openQueue(ann, { event_types: ['user_topic', 'muted_topics'] });
  const legacy = await openQueue(ann, { event_types: ['muted_topics'] });
  const bobs = await openQueue(bob, { event_types: ['user_topic', 'muted_topics'] });

  assert.equal((await setPolicy(ann, garden, 'Roses', MUTED)).body, SUCCESS);
  assert.equal(await take(modern, 1), [topicEvent(garden, 'Roses', MUTED)], 'a client that asked for user_topic gets no muted_topics');
  assert.equal(await take(legacy, 1), [{ type: 'muted_topics', muted_topics: [['Garden', 'Roses', 'now']] }]);
  // The same policy again changes nothing and sends nothing; any spelling names the same topic.
  assert.equal((await setPolicy(ann, garden, 'roses', MUTED)).body, SUCCESS);
  assert.equal((await setPolicy(ann, garden, 'ROSES', FOLLOWED)).body, SUCCESS);
  assert.equal(await take(modern, 1), [topicEvent(garden, 'ROSES', FOLLOWED)]);
  assert.equal(await take(legacy, 1), [{ type: 'muted_topics', muted_topics: [] }]);
  assert.equal((await setPolicy(ann, garden, 'general chat', UNMUTED)).body, SUCCESS, 'the empty topic by its display name');
  assert.equal(await take(modern, 1), [topicEvent(garden, '', UNMUTED)]);
  assert.equal(
    await settings(ann),
    { user_topics: [setting(garden, 'Roses', FOLLOWED), setting(garden, '', UNMUTED)], muted_topics: [] },
    'the first spelling stays',
  );

  assert.equal((await setPolicy(ann, garden, 'roses', INHERIT)).body, SUCCESS);
  assert.equal((await setPolicy(ann, garden, 'roses', INHERIT)).body, SUCCESS, 'removing what is not there succeeds');
  assert.equal((await setPolicy(ann, garden, 'tulips', MUTED)).body, SUCCESS);
  assert.equal(await take(modern, 2), [topicEvent(garden, 'roses', INHERIT), topicEvent(garden, 'tulips', MUTED)]);
  assert.equal(await settings(ann), {
    user_topics: [setting(garden, '', UNMUTED), setting(garden, 'tulips', MUTED)],
    muted_topics: [['Garden', 'tulips', 'now']],
  });

  assert.equal((await setPolicy(bob, garden, 'AXB', FOLLOWED)).body, SUCCESS);
  assert.equal((await setPolicy(bob, garden, 'a_b', MUTED)).body, SUCCESS, 'a `_` in a topic is no wildcard');
  assert.equal(await take(bobs, 2), [topicEvent(garden, 'AXB', FOLLOWED), topicEvent(garden, 'a_b', MUTED)]);
  await setPolicy(bob, garden, 'a_b', INHERIT);
  await setPolicy(bob, garden, 'axb', INHERIT);
  await take(bobs, 2);
  assert.equal((await setPolicy(bob, garden, 'lilies', MUTED)).body, SUCCESS);
  assert.equal(await take(bobs, 1), [topicEvent(garden, 'lilies', MUTED)]);
  assert.equal(await modern.pending(), [], "another user's settings reach only their clients");
  assert.equal((await settings(bob)).user_topics, [setting(garden, 'lilies', MUTED)]);
  assert.equal((await settings(ann)).user_topics.length, 2);
});

test('POST /user_topics errors: parameters, channels one cannot read, archived or missing; removing needs no access', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const open = await makeChannel(realm, 'open', [ann]);
  const secret = await makeChannel(realm, 'secret', [bob], { invite_only: true });
  const gone = await makeChannel(realm, 'gone', [ann]);
  await setPolicy(bob, secret, 'plans', MUTED);
  assert.equal((await realm.owner.client.delete(`/streams/${gone}`)).status, 200);
  const invalidChannel = errorBody('Invalid channel ID');
  const cases: [Record<string, unknown>, object][] = [
    [{ topic: 't', visibility_policy: MUTED }, errorBody("Missing 'stream_id' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'stream_id' })],
    [{ stream_id: open, visibility_policy: MUTED }, errorBody("Missing 'topic' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'topic' })],
    [{ stream_id: open, topic: 't' }, errorBody("Missing 'visibility_policy' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'visibility_policy' })],
    [{ stream_id: open, topic: 't', visibility_policy: 4 }, errorBody('Invalid visibility_policy', 'BAD_REQUEST', { var_name: 'visibility_policy' })],
    [
      { stream_id: open, topic: 't', visibility_policy: 'muted' },
      errorBody('Argument "visibility_policy" is not valid JSON.', 'BAD_REQUEST', { var_name: 'visibility_policy' }),
    ],
    [
      { stream_id: open, topic: 'x'.repeat(61), visibility_policy: MUTED },
      errorBody('topic is too long (limit: 60 characters)', 'BAD_REQUEST', { var_name: 'topic' }),
    ],
    [{ stream_id: secret, topic: 't', visibility_policy: MUTED }, invalidChannel],
    [{ stream_id: gone, topic: 't', visibility_policy: FOLLOWED }, invalidChannel],
    [{ stream_id: 999999, topic: 't', visibility_policy: MUTED }, invalidChannel],
    [{ stream_id: 999999, topic: 't', visibility_policy: INHERIT }, invalidChannel],
  ];
  for (const [params, body] of cases) {
    const r = await ann.client.post('/user_topics', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  assert.equal((await setPolicy(ann, open, '🌹'.repeat(60), MUTED)).body, SUCCESS, 'the limit counts characters, not UTF-16 units');
  assert.equal((await setPolicy(ann, secret, 'plans', INHERIT)).body, SUCCESS, 'a setting can be dropped without access to its channel');
  assert.equal((await settings(bob)).user_topics, [setting(secret, 'plans', MUTED)], "and it was only ever the caller's own");
});

test("legacy PATCH /users/me/subscriptions/muted_topics: by name or id, add and remove, Zulip's errors", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const garden = await makeChannel(realm, 'Garden', [ann]);
  const secret = await makeChannel(realm, 'secret', [bob], { invite_only: true });
  const q = await openQueue(ann, {});
  assert.equal((await muteTopic(ann, { stream: 'garden', topic: 'roses', op: 'add' })).body, SUCCESS);
  assert.equal((await muteTopic(ann, { stream_id: garden, topic: 'Roses', op: 'add' })).body, SUCCESS, 'muting a muted topic succeeds (Zulip 7.0)');
  assert.equal((await muteTopic(ann, { stream_id: garden, topic: 'tulips', op: 'add' })).body, SUCCESS);
  assert.equal(
    await take(q, 4),
    [
      { type: 'muted_topics', muted_topics: [['Garden', 'roses', 'now']] },
      topicEvent(garden, 'roses', MUTED),
      {
        type: 'muted_topics',
        muted_topics: [
          ['Garden', 'roses', 'now'],
          ['Garden', 'tulips', 'now'],
        ],
      },
      topicEvent(garden, 'tulips', MUTED),
    ],
    'a client with every event type gets both forms',
  );
  assert.equal((await muteTopic(ann, { stream: 'Garden', topic: 'ROSES', op: 'remove' })).body, SUCCESS);
  assert.equal((await muteTopic(ann, { stream: 'Garden', topic: 'lilies', op: 'remove' })).body, SUCCESS, 'unmuting what is not muted succeeds');
  assert.equal(await take(q, 2), [{ type: 'muted_topics', muted_topics: [['Garden', 'tulips', 'now']] }, topicEvent(garden, 'ROSES', INHERIT)]);
  assert.equal((await settings(ann)).muted_topics, [['Garden', 'tulips', 'now']]);

  const cases: [Record<string, unknown>, object][] = [
    [{ topic: 't', op: 'add' }, errorBody("Missing 'stream_id' argument")],
    [
      { stream: 'Garden', stream_id: garden, topic: 't', op: 'add' },
      errorBody('Unsupported parameter combination: stream_id, stream', 'BAD_REQUEST', { parameters: 'stream_id, stream' }),
    ],
    [{ stream: 'Garden', topic: 't' }, errorBody("Missing 'op' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'op' })],
    [{ stream: 'Garden', topic: 't', op: 'toggle' }, errorBody('Invalid op', 'BAD_REQUEST', { var_name: 'op' })],
    [{ stream: 'Garden', op: 'add' }, errorBody("Missing 'topic' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'topic' })],
    [{ stream: 'Nowhere', topic: 't', op: 'add' }, errorBody("Invalid channel name 'Nowhere'")],
    [{ stream: 'secret', topic: 't', op: 'add' }, errorBody("Invalid channel name 'secret'")],
    [{ stream_id: secret, topic: 't', op: 'add' }, errorBody('Invalid channel ID')],
    [{ stream: 'Nowhere', topic: 't', op: 'remove' }, errorBody('Topic is not muted')],
    [{ stream_id: 999999, topic: 't', op: 'remove' }, errorBody('Topic is not muted')],
  ];
  for (const [params, body] of cases) {
    const r = await muteTopic(ann, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  assert.equal((await muteTopic(ann, { stream_id: secret, topic: 't', op: 'remove' })).body, SUCCESS, 'unmuting needs no access');
});

/** Moves the topic of message `id` (and its others, by `mode`) as the owner. */
async function move(realm: TestRealm, id: number, change: Record<string, unknown>, mode = 'change_all'): Promise<void> {
  const r = await realm.owner.client.patch(`/messages/${id}`, {
    ...change,
    propagate_mode: mode,
    send_notification_to_old_thread: false,
    send_notification_to_new_thread: false,
  });
  assert.is(r.status, 200, r.text);
}

const types = (events: Event[]) => events.map((e) => e.type);

test("moving a whole topic moves its settings, merged with the destination's when it has messages", async () => {
  const realm = await newRealm();
  const [ann, bob, cat, dan] = [await realm.addUser(), await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const garden = await makeChannel(realm, 'Garden', [realm.owner, ann, bob, cat, dan]);
  const first = await send(realm.owner, garden, 'roses', 'one');
  await send(realm.owner, garden, 'roses', 'two');
  await send(realm.owner, garden, 'lilies', 'three');
  await setPolicy(ann, garden, 'roses', MUTED);
  await setPolicy(bob, garden, 'Roses', FOLLOWED);
  await setPolicy(bob, garden, 'lilies', MUTED);
  await setPolicy(cat, garden, 'roses', MUTED);
  await setPolicy(cat, garden, 'lilies', UNMUTED);
  await setPolicy(dan, garden, 'lilies', MUTED);
  const annQueue = await openQueue(ann, { event_types: ['user_topic', 'muted_topics', 'update_message'] });
  const bobQueue = await openQueue(bob, { event_types: ['user_topic', 'muted_topics', 'update_message'] });

  // Into a topic without messages: each setting moves as it is, before the update_message event.
  await move(realm, first, { topic: 'daisies' });
  const annEvents = await take(annQueue, 3);
  assert.equal(annEvents.slice(0, 2), [topicEvent(garden, 'roses', INHERIT), topicEvent(garden, 'daisies', MUTED)]);
  assert.equal([annEvents[2]!.type, annEvents[2]!.subject], ['update_message', 'daisies']);
  assert.equal(types(await take(bobQueue, 3)), ['user_topic', 'user_topic', 'update_message']);
  assert.equal((await settings(ann)).user_topics, [setting(garden, 'daisies', MUTED)]);
  assert.equal((await settings(ann)).muted_topics, [['Garden', 'daisies', 'now']]);
  assert.equal((await settings(bob)).user_topics, [setting(garden, 'lilies', MUTED), setting(garden, 'daisies', FOLLOWED)]);
  assert.equal((await settings(dan)).user_topics, [setting(garden, 'lilies', MUTED)]);

  // Into a topic with messages: the more visible of the two policies wins (Zulip's merge).
  await move(realm, first, { topic: 'lilies' });
  const bobEvents = await take(bobQueue, 3);
  assert.equal(bobEvents.slice(0, 2), [topicEvent(garden, 'daisies', INHERIT), topicEvent(garden, 'lilies', FOLLOWED)]);
  assert.equal(bobEvents[2]!.type, 'update_message');
  assert.equal((await settings(bob)).user_topics, [setting(garden, 'lilies', FOLLOWED)], 'followed beats muted');
  assert.equal((await settings(cat)).user_topics, [setting(garden, 'lilies', UNMUTED)], 'unmuted beats muted');
  assert.equal((await settings(ann)).user_topics, [], 'no setting beats muted');
  assert.equal((await settings(dan)).user_topics, [], 'a muted destination takes in an unmuted topic');

  // Only a change of case: the settings already apply.
  await move(realm, first, { topic: 'Lilies' });
  assert.equal((await settings(bob)).user_topics, [setting(garden, 'lilies', FOLLOWED)]);
});

test('a part of a topic leaves its settings behind; the rest of it, or a move into another channel, takes them', async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const garden = await makeChannel(realm, 'Garden', [realm.owner, ann, bob]);
  const secret = await makeChannel(realm, 'secret', [realm.owner, bob], { invite_only: true });
  const [one, two] = [await send(realm.owner, garden, 'violets', 'one'), await send(realm.owner, garden, 'violets', 'two')];
  await setPolicy(ann, garden, 'violets', MUTED);
  await setPolicy(bob, garden, 'violets', FOLLOWED);
  await move(realm, two, { topic: 'pansies' }, 'change_one');
  assert.equal((await settings(ann)).user_topics, [setting(garden, 'violets', MUTED)], 'one of two messages moved');
  await move(realm, one, { topic: 'asters' }, 'change_later');
  assert.equal((await settings(ann)).user_topics, [setting(garden, 'asters', MUTED)], 'the last one moved: the whole topic did');

  // Into a private channel: who cannot follow the messages there loses the setting, with both events.
  const annQueue = await openQueue(ann, {});
  await move(realm, one, { stream_id: secret });
  const events = await take(annQueue, 3);
  assert.equal(events.slice(0, 2), [{ type: 'muted_topics', muted_topics: [] }, topicEvent(garden, 'asters', INHERIT)]);
  assert.equal(events[2]!.type, 'delete_message');
  assert.equal((await settings(ann)).user_topics, []);
  assert.equal((await settings(bob)).user_topics, [setting(secret, 'asters', FOLLOWED)]);
});

test('resolving a topic: its followers keep following it, and the notice stays unread for them alone', async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const garden = await makeChannel(realm, 'Garden', [realm.owner, ann, bob]);
  const id = await send(realm.owner, garden, 'roses', 'done?');
  await setPolicy(ann, garden, 'roses', FOLLOWED);
  await move(realm, id, { topic: '✔ roses' });
  assert.equal((await settings(ann)).user_topics, [setting(garden, '✔ roses', FOLLOWED)]);
  const notice = async (u: TestUser) => {
    const r = await u.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
    return [r.body.messages[0].content, r.body.messages[0].flags];
  };
  const text = `<p><span class="user-mention silent" data-user-id="${realm.owner.id}">Olivia Owner</span> has marked this topic as resolved.</p>`;
  assert.equal(await notice(ann), [text, []]);
  assert.equal(await notice(bob), [text, ['read']]);
});

test.run();
