// GET /streams/{id}/email_address (Zulip's get_stream_email_address and encode_email_address):
// "<name>.<token>.show-sender" in EMAIL_GATEWAY_PATTERN, one token per channel, requester and
// sender; an empty address without a gateway; who may be the sender.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { newRealm, startTestServer } from '../helpers/server.ts';
import { errorBody, makeChannel } from '../messages/messages-helpers.ts';

let gateway: RunningServer;

test.before(async () => {
  gateway = await startTestServer({ EMAIL_GATEWAY_PATTERN: '%s@streams.example.test' });
});

test.after(async () => {
  await gateway?.stop();
});

const ADDRESS = /^([a-z0-9-]+)\.([0-9a-f]{32})\.show-sender@streams\.example\.test$/;

test('without an email gateway the address is empty, as on a Zulip server without EMAIL_GATEWAY_PATTERN', async () => {
  const realm = await newRealm();
  const channel = await makeChannel(realm, 'general', [realm.owner]);
  assert.equal((await realm.owner.client.get(`/streams/${channel}/email_address`)).body, { result: 'success', msg: '', email: '' });
});

test('name, token and sender: one stable token per channel, requester and sender', async () => {
  const realm = await newRealm(gateway);
  const o = realm.owner.client;
  const channel = await makeChannel(realm, 'Dänemark café', [realm.owner]);
  const address = async (params: Record<string, unknown> = {}) => {
    const r = await o.get(`/streams/${channel}/email_address`, params);
    assert.is(r.status, 200, r.text);
    return r.body.email as string;
  };
  const first = await address();
  assert.is(ADDRESS.exec(first)?.[1], 'danemark-cafe');
  assert.is(await address(), first);
  const bot = await realm.server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, fullName: 'Email Gateway', isBot: true } });
  assert.is(await address({ sender_id: bot.id }), first);
  const own = await address({ sender_id: realm.owner.id });
  const mine = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  const asBot = await address({ sender_id: mine.id });
  assert.is(new Set([first, own, asBot].map((a) => ADDRESS.exec(a)?.[2])).size, 3);
  const tokens = await realm.server.app.prisma.channelEmailAddress.findMany({ where: { channelId: channel }, orderBy: { id: 'asc' } });
  assert.equal(
    tokens.map((t) => [t.creatorId, t.senderId]),
    [
      [realm.owner.id, bot.id],
      [realm.owner.id, realm.owner.id],
      [realm.owner.id, mine.id],
    ],
  );
});

test('requests at once for a new address all get the one token (the row is made once, not raced)', async () => {
  const realm = await newRealm(gateway);
  const channel = await makeChannel(realm, 'together', [realm.owner]);
  const answers = await Promise.all(Array.from({ length: 12 }, () => realm.owner.client.get(`/streams/${channel}/email_address`)));
  assert.equal(
    answers.map((r) => r.status),
    answers.map(() => 200),
    answers.map((r) => r.text).join('\n'),
  );
  assert.is(new Set(answers.map((r) => r.body.email)).size, 1);
  assert.is(await realm.server.app.prisma.channelEmailAddress.count({ where: { channelId: channel } }), 1);
});

test('names that do not fold to ASCII whole become "channel"; other characters become dashes', async () => {
  const realm = await newRealm(gateway);
  const cases: [string, string][] = [
    ['日本', 'channel'],
    ['a b!c', 'a-b-c'],
    ['trailing!', 'channel'],
    ['-edge', 'channel'],
    ['Straße', 'channel'],
  ];
  for (const [name, expected] of cases) {
    const channel = await makeChannel(realm, name, [realm.owner]);
    const email = (await realm.owner.client.get(`/streams/${channel}/email_address`)).body.email;
    assert.is(ADDRESS.exec(email)?.[1], expected, name);
  }
});

test('errors: a channel the caller can read; a sender that is the caller, the gateway, or their bot', async () => {
  const realm = await newRealm(gateway);
  const member = await realm.addUser();
  const open = await makeChannel(realm, 'open', [realm.owner, member]);
  const closed = await makeChannel(realm, 'closed', [realm.owner], { invite_only: true });
  const othersBot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  const cases: [number, Record<string, unknown>, object][] = [
    [closed, {}, errorBody('Invalid channel ID')],
    [999999, {}, errorBody('Invalid channel ID')],
    [open, { sender_id: realm.owner.id }, errorBody('No such bot')],
    [open, { sender_id: othersBot.id }, errorBody('Insufficient permission')],
    [open, { sender_id: 999999 }, errorBody('No such bot')],
    [open, { sender_id: 'x' }, errorBody('Argument "sender_id" is not valid JSON.', 'BAD_REQUEST', { var_name: 'sender_id' })],
  ];
  for (const [channel, params, body] of cases) {
    const r = await member.client.get(`/streams/${channel}/email_address`, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify([channel, params]));
  }
});

test.run();
