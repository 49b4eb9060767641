// Old clients: the names requests used before Zulip renamed them keep working where Zulip still
// accepts them (narrow operators, subject for topic, private for direct, ...), and are refused
// where Zulip refuses them too (url_format_string).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '../helpers/client.ts';
import { captureEvents, eventAs } from '../helpers/events.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

const ids = async (client: Client, narrow: unknown[]) => {
  const r = await client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow });
  assert.is(r.status, 200, r.text);
  return (r.body.messages as { id: number }[]).map((m) => m.id);
};

test('narrow operators: every legacy name means what its successor means', async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'Verona', [ann, bob]);
  const inTopic = await send(bob, channel, 'Plans', 'in the channel');
  const one = await sendDm(bob, [ann.id], 'one to one');
  const group = await sendDm(bob, [ann.id, cat.id], 'group');
  const c = ann.client;
  const pairs: [unknown[], unknown[]][] = [
    [[['stream', 'Verona']], [{ operator: 'channel', operand: 'Verona' }]],
    [[{ operator: 'stream', operand: channel }], [{ operator: 'channel', operand: channel }]],
    [[['streams', 'public']], [['channels', 'public']]],
    [
      [
        ['stream', 'Verona'],
        ['subject', 'plans'],
      ],
      [
        ['channel', 'Verona'],
        ['topic', 'plans'],
      ],
    ],
    [[['pm-with', bob.email]], [{ operator: 'dm', operand: [bob.id] }]],
    [[['pm_with', bob.email]], [['dm', bob.email]]],
    [[['is', 'private']], [['is', 'dm']]],
  ];
  for (const [legacy, modern] of pairs) assert.equal(await ids(c, legacy), await ids(c, modern), JSON.stringify(legacy));
  assert.equal(
    await ids(c, [
      ['stream', 'Verona'],
      ['subject', 'plans'],
    ]),
    [inTopic],
  );
  assert.equal(await ids(c, [['pm-with', bob.email]]), [one]);
  assert.equal(await ids(c, [['dm-including', bob.email]]), [one, group]);
  // group-pm-with, which dm-including replaced, never meant one-on-one conversations.
  assert.equal(await ids(c, [['group-pm-with', bob.email]]), [group]);
  assert.equal(await ids(c, [{ operator: 'group_pm_with', operand: bob.id }]), [group]);
});

test('in:home leaves out muted channels (but not their unmuted topics) and muted topics; in:all filters nothing', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const loud = await makeChannel(realm, 'loud', [ann]);
  const quiet = await makeChannel(realm, 'quiet', [ann]);
  const a = await send(ann, loud, 'kept', 'a');
  await send(ann, loud, 'hushed', 'b');
  await send(ann, quiet, 'any', 'c');
  const d = await send(ann, quiet, 'wanted', 'd');
  const dm = await sendDm(ann, [ann.id], 'note');
  assert.is((await ann.client.patch(`/users/me/subscriptions/${quiet}`, { property: 'is_muted', value: 'true' })).status, 200);
  const prisma = realm.server.app.prisma;
  await prisma.userTopic.create({ data: { userId: ann.id, channelId: loud, topic: 'HUSHED', visibility: 1 } });
  await prisma.userTopic.create({ data: { userId: ann.id, channelId: quiet, topic: 'wanted', visibility: 2 } });
  assert.equal(await ids(ann.client, [['in', 'home']]), [a, d, dm]);
  assert.equal((await ids(ann.client, [['in', 'all']])).length, 5);
  assert.equal(await ids(ann.client, [{ operator: 'in', operand: 'home', negated: true }]), [a, d, dm], 'Zulip ignores the negation');
  const r = await ann.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['in', 'nowhere']] });
  assert.equal(r.body, errorBody("Invalid narrow operator: unknown 'in' operand nowhere", 'BAD_NARROW', { desc: "unknown 'in' operand nowhere" }));
});

test('a narrow cannot ask for a channel and direct messages at once; negated terms do not count', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'general', [ann]);
  const msg = await send(ann, channel, 't', 'x');
  const desc = 'No message can be both a channel message and direct message';
  for (const narrow of [
    [
      ['channel', 'general'],
      ['is', 'dm'],
    ],
    [
      ['topic', 't'],
      ['dm', ann.email],
    ],
    [
      ['pm-with', ann.email],
      ['stream', 'general'],
    ],
  ]) {
    const r = await ann.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow });
    assert.equal(r.body, errorBody(`Invalid narrow operator: ${desc}`, 'BAD_NARROW', { desc }), JSON.stringify(narrow));
  }
  assert.equal(await ids(ann.client, [['channel', 'general'], { operator: 'is', operand: 'private', negated: true }]), [msg]);
});

test('subject for topic and private for direct: sending, editing, typing', async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  const channel = await makeChannel(realm, 'general', [ann, bob]);
  const sent = await ann.client.post('/messages', { type: 'stream', to: 'general', subject: 'old name', content: 'hi' });
  const message = await realm.server.app.prisma.message.findUniqueOrThrow({ where: { id: sent.body.id } });
  assert.is(message.topic, 'old name');
  assert.is((await ann.client.patch(`/messages/${message.id}`, { subject: 'renamed' })).status, 200);
  assert.is((await realm.server.app.prisma.message.findUniqueOrThrow({ where: { id: message.id } })).topic, 'renamed');
  const dm = await ann.client.post('/messages', { type: 'private', to: `${bob.email}`, content: 'psst' });
  assert.is(dm.status, 200, dm.text);
  const events = captureEvents(realm.server.app, realm.id);
  assert.is((await ann.client.post('/typing', { type: 'stream', op: 'start', stream_id: channel, subject: 'renamed' })).status, 200);
  assert.is((await ann.client.post('/typing', { type: 'private', op: 'stop', to: [bob.id] })).status, 200);
  events.stop();
  assert.equal(
    events.envelopes.map((e) => eventAs(e.event, 'typing')).map((e) => [e.message_type, 'topic' in e ? e.topic : undefined]),
    [
      ['stream', 'renamed'],
      ['direct', undefined],
    ],
  );
});

test('register narrows name channels by their old operator; settings keep their old paths', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'watched', [ann]);
  const other = await makeChannel(realm, 'other', [ann]);
  const queue = await openQueue(ann, { event_types: ['message'], narrow: [['stream', 'watched']] });
  await send(ann, other, 't', 'not this');
  const id = await send(ann, channel, 't', 'this');
  const [event] = await queue.next();
  assert.is(event!.message.id, id);
  for (const path of ['/settings/display', '/settings/notifications']) {
    assert.is((await ann.client.patch(path, { enter_sends: true })).status, 200, path);
  }
});

test('url_format_string is gone: Zulip wants url_template since feature level 176, and so do we', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_format_string: 'https://x.test/%(id)s' });
  assert.equal([r.status, r.body], [400, errorBody("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'url_template' })]);
});

test.run();
