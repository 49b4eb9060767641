// Outgoing-webhook bots (bot type 3) against a real local HTTP endpoint: the payload Zulip posts
// for a mention or a direct message, the reply posted back as the bot, Slack's format, and each
// failure as Zulip reports it (in the conversation and to the bot's owner), with retries and a
// call queued before a restart made after it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '../helpers/client.ts';
import { eventually } from '../helpers/push-relay.ts';
import { freshDatabase, newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import type { RunningServer } from '../../src/server.ts';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** The bot's server: records each request and answers as `answer` says. */
class BotEndpoint {
  readonly received: Received[] = [];
  answer: (req: Received, res: ServerResponse) => void = (_req, res) => res.end('{"content": "pong"}');
  private server: Server | null = null;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(r);
        this.answer(r, res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = null;
  }
}

let server: RunningServer;
const endpoint = new BotEndpoint();

test.before(async () => {
  await endpoint.start();
  server = await startTestServer({ OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '1' });
});
test.after(async () => {
  await server.stop();
  await endpoint.stop();
});
test.before.each(() => {
  endpoint.received.length = 0;
  endpoint.answer = (_req, res) => res.end('{"content": "pong"}');
});

/** An outgoing-webhook bot made through POST /bots by `owner`; returns its id and token. */
async function makeBot(owner: TestUser, name: string, url: string, interfaceType = 1): Promise<{ id: number; token: string; email: string }> {
  const r = await owner.client.post('/bots', {
    full_name: name,
    short_name: name.toLowerCase().replace(/ /g, ''),
    bot_type: 3,
    payload_url: JSON.stringify(url),
    interface_type: interfaceType,
  });
  assert.is(r.status, 200, r.text);
  const reg = await owner.client.post('/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
  const bot = reg.body.realm_bots.find((b: { user_id: number }) => b.user_id === r.body.user_id);
  assert.equal(bot.services, [{ base_url: url, interface: interfaceType, token: bot.services[0].token }]);
  return { id: r.body.user_id, token: bot.services[0].token, email: bot.email };
}

/** The newest messages `user` sees in a narrow, as Markdown. */
async function messagesIn(user: TestUser, narrow: unknown[]): Promise<{ id: number; sender_id: number; content: string; subject: string }[]> {
  const r = await user.client.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: JSON.stringify(narrow), apply_markdown: 'false' });
  assert.is(r.status, 200, r.text);
  return r.body.messages;
}

async function replyFrom(user: TestUser, botId: number, narrow: unknown[], count = 1): Promise<string[]> {
  return eventually(
    async () => {
      const mine = (await messagesIn(user, narrow)).filter((m) => m.sender_id === botId);
      return mine.length >= count ? mine.map((m) => m.content) : undefined;
    },
    20_000,
    'the bot to answer',
  );
}

async function setup(): Promise<{ realm: TestRealm; bob: TestUser; channelId: number }> {
  const realm = await newRealm(server);
  const bob = await realm.addUser({ name: 'Bob' });
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
  return { realm, bob, channelId };
}

test("a mention in a channel posts Zulip's payload; the answer is posted back as the bot in the same topic", async () => {
  const { realm, bob, channelId } = await setup();
  const bot = await makeBot(realm.owner, 'Echo', endpoint.url);
  const id = await send(bob, channelId, 'greetings', 'hello @**Echo**');
  const [content] = await replyFrom(bob, bot.id, [
    { operator: 'channel', operand: channelId },
    { operator: 'topic', operand: 'greetings' },
  ]);
  assert.is(content, 'pong');
  assert.is(endpoint.received.length, 1);
  const req = endpoint.received[0]!;
  assert.is(req.headers['content-type'], 'application/json');
  assert.match(String(req.headers['user-agent']), /^ZulipOutgoingWebhook\//);
  const payload = JSON.parse(req.body);
  const fetched = (await bob.client.get(`/messages/${id}`, { apply_markdown: 'false' })).body.message;
  const rendered = (await bob.client.get(`/messages/${id}`)).body.message.content;
  const { flags: _, ...expectedMessage } = fetched;
  assert.equal(payload, {
    data: 'hello @**Echo**',
    message: { ...expectedMessage, rendered_content: rendered },
    bot_email: bot.email,
    bot_full_name: 'Echo',
    token: bot.token,
    trigger: 'mention',
  });
});

test('a direct message to the bot triggers `direct_message`; the answer goes to the same conversation', async () => {
  const { realm, bob } = await setup();
  const bot = await makeBot(realm.owner, 'Helper', endpoint.url);
  endpoint.answer = (_req, res) => res.end(JSON.stringify({ content: 'at your service' }));
  await sendDm(bob, [bot.id], 'help me');
  const [content] = await replyFrom(bob, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
  assert.is(content, 'at your service');
  const payload = JSON.parse(endpoint.received[0]!.body);
  assert.is(payload.trigger, 'direct_message');
  assert.is(payload.data, 'help me');
  assert.is(payload.message.type, 'private');
});

test('nothing is posted for response_not_required or an empty answer; bots and plain messages trigger nothing', async () => {
  const { realm, bob, channelId } = await setup();
  const bot = await makeBot(realm.owner, 'Quiet', endpoint.url);
  endpoint.answer = (_req, res) => res.end('{"response_not_required": true}');
  await send(bob, channelId, 't', '@**Quiet** one');
  endpoint.answer = (_req, res) => res.end('""');
  await send(bob, channelId, 't', '@**Quiet** two');
  await eventually(() => (endpoint.received.length === 2 ? true : undefined));
  // A message from a bot (the bot itself here) never triggers a call, nor does a message without the mention.
  const key = (await realm.owner.client.get(`/bots/${bot.id}/api_key`)).body.api_key as string;
  const asBot = new Client(server.port, realm.host, { email: bot.email, apiKey: key });
  assert.is((await asBot.post('/messages', { type: 'stream', to: channelId, topic: 't', content: '@**Quiet** from a bot' })).status, 200);
  await send(bob, channelId, 't', 'no mention of the bot');
  await sendDm(realm.owner, [bob.id], 'not to the bot');
  // One more call after those proves they made none (calls are made in order).
  endpoint.answer = (_req, res) => res.end('{"content": "three"}');
  await send(bob, channelId, 't', '@**Quiet** three');
  // The bot's own message above is one of its two; the answer to "three" is the other.
  assert.equal(await replyFrom(bob, bot.id, [{ operator: 'channel', operand: channelId }], 2), ['@**Quiet** from a bot', 'three']);
  assert.equal(
    endpoint.received.map((r) => JSON.parse(r.body).data),
    ['@**Quiet** one', '@**Quiet** two', '@**Quiet** three'],
  );
});

test('an answer that is not JSON: "Failure!" in the conversation, and the owner is told what came back', async () => {
  const { realm, bob, channelId } = await setup();
  const bot = await makeBot(realm.owner, 'Broken', endpoint.url);
  endpoint.answer = (_req, res) => res.end("it's not json");
  const id = await send(bob, channelId, 'oops', '@**Broken** go');
  const [failure] = await replyFrom(bob, bot.id, [{ operator: 'channel', operand: channelId }]);
  assert.is(failure, 'Failure! Invalid JSON in response');
  const [notice] = await replyFrom(realm.owner, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
  assert.is(
    notice,
    [
      `[A message](http://${realm.host}/#narrow/channel/${channelId}-general/topic/oops/near/${id}) to your bot @_**Broken** triggered an outgoing webhook.`,
      'The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:',
      '> Invalid JSON in response',
      'The response contains the following payload:',
      '```',
      `"it's not json"`,
      '```',
    ].join('\n'),
  );
});

test('an error status: "Failure! Third party responded with 500", and the owner gets the status and the payload', async () => {
  const { realm, bob } = await setup();
  const bot = await makeBot(realm.owner, 'Crashy', endpoint.url);
  endpoint.answer = (_req, res) => {
    res.statusCode = 500;
    res.end('boom\n');
  };
  const id = await sendDm(bob, [bot.id], 'do it');
  const [failure] = await replyFrom(bob, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
  assert.is(failure, 'Failure! Third party responded with 500');
  const [notice] = await replyFrom(realm.owner, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
  const slug = [bob.id, bot.id].sort((a, b) => a - b).join(',');
  assert.is(
    notice,
    [
      `[A message](http://${realm.host}/#narrow/dm/${slug}/near/${id}) to your bot @_**Crashy** triggered an outgoing webhook.`,
      'The webhook got a response with status code *500*.',
      'The response contains the following payload:',
      '```',
      "b'boom\\n'",
      '```',
    ].join('\n'),
  );
  assert.is(endpoint.received.length, 1, 'an error status is not retried');
});

test('a timeout is retried MAX_REQUEST_RETRIES times with backoff, then the bot is reported unavailable', async () => {
  const { realm, bob, channelId } = await setup();
  const bot = await makeBot(realm.owner, 'Slow', endpoint.url);
  endpoint.answer = (_req, res) => setTimeout(() => res.end('{"content": "too late"}'), 1500);
  await send(bob, channelId, 'wait', '@**Slow** hurry');
  const [failure] = await replyFrom(bob, bot.id, [{ operator: 'channel', operand: channelId }]);
  assert.is(failure, 'Failure! Bot is unavailable');
  assert.is(endpoint.received.length, 4, 'one attempt and three retries');
  const [notice] = await replyFrom(realm.owner, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
  assert.match(notice, /triggered an outgoing webhook\.\nRequest timed out after 1 seconds\.$/);
});

test("the Slack-compatible interface posts Slack's form fields and posts its `text` back; it refuses direct messages", async () => {
  const { realm, bob, channelId } = await setup();
  const bot = await makeBot(realm.owner, 'Slacky', endpoint.url, 2);
  endpoint.answer = (_req, res) => res.end('{"text": "from slack"}');
  const id = await send(bob, channelId, 'slack', '@**Slacky** hi');
  const [content] = await replyFrom(bob, bot.id, [{ operator: 'channel', operand: channelId }]);
  assert.is(content, 'from slack');
  const req = endpoint.received[0]!;
  assert.is(req.headers['content-type'], 'application/x-www-form-urlencoded');
  const ts = String((await bob.client.get(`/messages/${id}`)).body.message.timestamp);
  assert.equal(
    [...new URLSearchParams(req.body)],
    [
      ['token', bot.token],
      ['team_id', `T${realm.id}`],
      ['team_domain', `${realm.host}`],
      ['channel_id', `C${channelId}`],
      ['channel_name', 'general'],
      ['thread_ts', ts],
      ['timestamp', ts],
      ['user_id', `U${bob.id}`],
      ['user_name', 'Bob'],
      ['text', '@**Slacky** hi'],
      ['trigger_word', 'mention'],
      ['service_id', String(bot.id)],
    ],
  );
  await sendDm(bob, [bot.id], 'private');
  const [refusal] = await replyFrom(bob, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
  assert.is(refusal, "Failure! Slack outgoing webhooks don't support direct messages.");
});

test('a call queued before a restart is made after it', async () => {
  const down = new BotEndpoint();
  await down.start();
  const port = down.port;
  await down.stop();
  const database = await freshDatabase();
  const first = await startTestServer({ DATABASE_URL: database, OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '1' });
  const realm = await newRealm(first);
  const bob = await realm.addUser({ name: 'Bob' });
  const bot = await makeBot(realm.owner, 'Later', `http://127.0.0.1:${port}/hook`);
  // The bot's server is down: the first attempt fails and the call waits for its retry.
  await sendDm(bob, [bot.id], 'are you there?');
  await eventually(async () => ((await first.app.prisma.outgoingWebhookCall.findFirst())?.attempts ? true : undefined));
  await first.stop();
  await down.start(port);
  const second = await startTestServer({ DATABASE_URL: database, OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '1' });
  try {
    const bobAgain = { ...bob, client: new Client(second.port, realm.host, { email: bob.email, apiKey: bob.apiKey }) };
    const [content] = await replyFrom(bobAgain, bot.id, [{ operator: 'dm', operand: [bot.id] }]);
    assert.is(content, 'pong');
    assert.is(JSON.parse(down.received[0]!.body).data, 'are you there?');
    assert.is(await second.app.prisma.outgoingWebhookCall.count(), 0);
  } finally {
    await second.stop();
    await down.stop();
  }
});

test('two servers on one database: each call is made once', async () => {
  const database = await freshDatabase();
  const servers = [
    await startTestServer({ DATABASE_URL: database, OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '1' }),
    await startTestServer({ DATABASE_URL: database, OUTGOING_WEBHOOK_TIMEOUT_SECONDS: '1' }),
  ];
  try {
    const realm = await newRealm(servers[0]);
    const bob = await realm.addUser({ name: 'Bob' });
    const channelId = await makeChannel(realm, 'general', [realm.owner, bob]);
    const bot = await makeBot(realm.owner, 'Once', endpoint.url);
    // Answers slowly, so both workers would be draining while a call is in flight.
    endpoint.answer = (req, res) => setTimeout(() => res.end(JSON.stringify({ content: `re: ${JSON.parse(req.body).data}` })), 200);
    const wake = servers.map((s) => () => s.app.outgoingWebhooks.wake(new Date()));
    for (let i = 0; i < 6; i++) {
      await send(bob, channelId, 't', `@**Once** ${i}`);
      for (const w of wake) w();
    }
    const replies = await replyFrom(bob, bot.id, [{ operator: 'channel', operand: channelId }], 6);
    assert.equal(
      [...replies].sort(),
      [0, 1, 2, 3, 4, 5].map((i) => `re: @**Once** ${i}`),
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.is(endpoint.received.length, 6);
  } finally {
    for (const s of servers) await s.stop();
  }
});

test.run();
