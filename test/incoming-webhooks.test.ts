// POST /api/v1/external/{integration}: an incoming-webhook bot's URL posts a service's payload as a
// message (Zulip's check_send_webhook_message): to the channel (by name or id) and topic the URL
// names, else to the bot's owner; by the URL's api_key or Basic credentials. The generic JSON
// integration and the Slack-compatible one, and what is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestRealm } from './helpers/server.ts';
import { errorBody, makeChannel } from './messages-helpers.ts';

let realm: TestRealm;
let bot: { id: number; email: string; apiKey: string };
let channel: number;

test.before(async () => {
  realm = await newRealm();
  const r = await realm.owner.client.post('/bots', { full_name: 'Hooks', short_name: 'hooks', bot_type: 2 });
  assert.is(r.status, 200, r.text);
  bot = { id: r.body.user_id, email: (await realm.owner.client.get(`/users/${r.body.user_id}`)).body.user.email, apiKey: r.body.api_key };
  channel = await makeChannel(realm, 'integrations', [realm.owner]);
});

const hook = (path: string, body: string, contentType = 'application/json', headers: Record<string, string> = {}) =>
  realm.owner.client.request('POST', `/api/v1/external/${path}`, { body, contentType, headers: { Authorization: '', ...headers } });

async function newest(narrow: unknown[]) {
  const r = await realm.owner.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow, apply_markdown: false, allow_empty_topic_name: true });
  const [m] = r.body.messages;
  return { content: m.content, topic: m.subject, sender: m.sender_id, client: m.client };
}

test('json: the payload as a code block under "JSON", in the channel the URL names, or the URL\'s topic', async () => {
  const payload = { event: 'deploy', ok: true, name: 'café', list: [1, 2] };
  const r = await hook(`json?api_key=${bot.apiKey}&stream=integrations`, JSON.stringify(payload));
  assert.equal(r.body, { result: 'success', msg: '' });
  assert.equal(await newest([{ operator: 'channel', operand: channel }]), {
    content: '```json\n{\n  "event": "deploy",\n  "ok": true,\n  "name": "caf\\u00e9",\n  "list": [\n    1,\n    2\n  ]\n}\n```',
    topic: 'JSON', sender: bot.id, client: 'ZulipJSONWebhook',
  });
  assert.is((await hook(`json?api_key=${bot.apiKey}&stream=${channel}&topic=deploys`, '{"a":1}')).status, 200);
  assert.equal((await newest([{ operator: 'channel', operand: channel }])).topic, 'deploys', 'the channel by id, the topic from the URL');
});

test('without a channel the message goes to the bot\'s owner; Basic credentials do as the api_key', async () => {
  const basic = `Basic ${Buffer.from(`${bot.email}:${bot.apiKey}`).toString('base64')}`;
  assert.is((await hook('json', '{"to":"owner"}', 'application/json', { Authorization: basic })).status, 200);
  const dm = await newest([{ operator: 'dm', operand: [bot.id] }]);
  assert.equal([dm.sender, dm.content], [bot.id, '```json\n{\n  "to": "owner"\n}\n```']);
});

test('slack_incoming: Slack\'s text in Markdown, the channel as topic, as a JSON body or a payload field', async () => {
  const text = 'Deploy *done* in _prod_: <https://ci.example.com/1|build 1> ok';
  const r = await hook(`slack_incoming?api_key=${bot.apiKey}&stream=integrations`, JSON.stringify({ channel: '#alerts', text, icon_emoji: ':rocket:' }));
  assert.equal(r.body, { result: 'success', msg: '', ok: true });
  assert.equal(await newest([{ operator: 'channel', operand: channel }]), {
    content: ':rocket: Deploy **done** in *prod*: [build 1](https://ci.example.com/1) ok', topic: 'alerts', sender: bot.id, client: 'ZulipSlackIncomingWebhook',
  });
  const form = new URLSearchParams({ payload: JSON.stringify({ text: 'from a form' }) }).toString();
  assert.is((await hook(`slack_incoming?api_key=${bot.apiKey}&stream=integrations`, form, 'application/x-www-form-urlencoded')).status, 200);
  const last = await newest([{ operator: 'channel', operand: channel }]);
  // Zulip's "(no topic)" is the empty topic today.
  assert.equal([last.topic, last.content], ['', 'from a form']);
});

test('register lists the integrations, for clients that set up incoming-webhook bots', async () => {
  const r = await realm.owner.client.post('/register', { fetch_event_types: ['realm_incoming_webhook_bots'] });
  assert.equal(r.body.realm_incoming_webhook_bots, [
    { name: 'json', display_name: 'JSON formatter', all_event_types: null, config_options: [] },
    { name: 'slack_incoming', display_name: 'Slack-compatible webhook', all_event_types: null, config_options: [] },
  ]);
});

test('refused: a wrong key, no key, bad JSON, an unknown integration, a channel that does not exist', async () => {
  const wrong = await hook('json?api_key=0123456789abcdef0123456789abcdef&stream=integrations', '{}');
  assert.equal([wrong.status, wrong.body], [401, { result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' }]);
  assert.equal((await hook('json?stream=integrations', '{}')).body, errorBody("Missing 'api_key' argument"));
  assert.equal((await hook(`json?api_key=${bot.apiKey}&stream=integrations`, '{not json')).body, errorBody('Malformed JSON'));
  assert.equal((await hook(`json?api_key=${bot.apiKey}&stream=integrations`, '[1,2]')).body, errorBody('Malformed JSON'));
  assert.is((await hook(`nonexistent?api_key=${bot.apiKey}`, '{}')).status, 404);
  assert.is((await hook(`json?api_key=${bot.apiKey}&stream=nowhere`, '{}')).body.code, 'STREAM_DOES_NOT_EXIST');
});

test.run();
