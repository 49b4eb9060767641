// POST /api/v1/external/{integration}: an incoming-webhook bot's URL posts a service's payload as a
// message (Zulip's check_send_webhook_message): to the channel (by name or id) and topic the URL
// names, else to the bot's owner; by the URL's api_key or Basic credentials. The generic JSON
// integration and the Slack-compatible one, and what is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestRealm } from '../helpers/server.ts';
import { errorBody, makeChannel } from '../messages/messages-helpers.ts';

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
  const r = await realm.owner.client.get('/messages', {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    narrow,
    apply_markdown: false,
    allow_empty_topic_name: true,
  });
  const [m] = r.body.messages;
  return { content: m.content, topic: m.subject, sender: m.sender_id, client: m.client };
}

test('json: the payload as a code block under "JSON", in the channel the URL names, or the URL\'s topic', async () => {
  const payload = { event: 'deploy', ok: true, name: 'café', list: [1, 2] };
  const r = await hook(`json?api_key=${bot.apiKey}&stream=integrations`, JSON.stringify(payload));
  assert.equal(r.body, { result: 'success', msg: '' });
  assert.equal(await newest([{ operator: 'channel', operand: channel }]), {
    content: '```json\n{\n  "event": "deploy",\n  "ok": true,\n  "name": "caf\\u00e9",\n  "list": [\n    1,\n    2\n  ]\n}\n```',
    topic: 'JSON',
    sender: bot.id,
    client: 'ZulipJSONWebhook',
  });
  assert.is((await hook(`json?api_key=${bot.apiKey}&stream=${channel}&topic=deploys`, '{"a":1}')).status, 200);
  assert.equal((await newest([{ operator: 'channel', operand: channel }])).topic, 'deploys', 'the channel by id, the topic from the URL');
});

test("without a channel the message goes to the bot's owner; Basic credentials do as the api_key", async () => {
  const basic = `Basic ${Buffer.from(`${bot.email}:${bot.apiKey}`).toString('base64')}`;
  assert.is((await hook('json', '{"to":"owner"}', 'application/json', { Authorization: basic })).status, 200);
  const dm = await newest([{ operator: 'dm', operand: [bot.id] }]);
  assert.equal([dm.sender, dm.content], [bot.id, '```json\n{\n  "to": "owner"\n}\n```']);
});

test("slack_incoming: Slack's text in Markdown, the channel as topic, as a JSON body or a payload field", async () => {
  const text = 'Deploy *done* in _prod_: <https://ci.example.com/1|build 1> ok';
  const r = await hook(`slack_incoming?api_key=${bot.apiKey}&stream=integrations`, JSON.stringify({ channel: '#alerts', text, icon_emoji: ':rocket:' }));
  assert.equal(r.body, { result: 'success', msg: '', ok: true });
  assert.equal(await newest([{ operator: 'channel', operand: channel }]), {
    content: ':rocket: Deploy **done** in *prod*: [build 1](https://ci.example.com/1) ok',
    topic: 'alerts',
    sender: bot.id,
    client: 'ZulipSlackIncomingWebhook',
  });
  const form = new URLSearchParams({ payload: JSON.stringify({ text: 'from a form' }) }).toString();
  assert.is((await hook(`slack_incoming?api_key=${bot.apiKey}&stream=integrations`, form, 'application/x-www-form-urlencoded')).status, 200);
  const last = await newest([{ operator: 'channel', operand: channel }]);
  // Zulip's "(no topic)" is the empty topic today.
  assert.equal([last.topic, last.content], ['', 'from a form']);
});

const repo = { name: 'public-repo', full_name: 'baxterthehacker/public-repo', html_url: 'https://github.com/baxterthehacker/public-repo' };
const sender = { login: 'baxterthehacker' };
const github = (event: string, payload: Record<string, unknown>, query = '') =>
  hook(`github?api_key=${bot.apiKey}&stream=integrations${query}`, JSON.stringify({ sender, repository: repo, ...payload }), 'application/json', {
    'X-GitHub-Event': event,
  });
const lastInChannel = () => newest([{ operator: 'channel', operand: channel }]);

test('github: ping, pushes of commits (by several committers, beyond 20) and tags', async () => {
  assert.equal((await github('ping', { zen: 'Keep it logically awesome.', hook_id: 1 })).body, { result: 'success', msg: '' });
  assert.equal(await lastInChannel(), {
    content: 'GitHub webhook has been successfully configured by baxterthehacker.',
    topic: 'public-repo',
    sender: bot.id,
    client: 'ZulipGitHubWebhook',
  });

  const commit = (n: number, author: Record<string, string>) => ({
    id: `${n}`.padStart(40, 'a'),
    url: `https://github.com/baxterthehacker/public-repo/commit/${n}`,
    message: `Change ${n}\n\nWith details`,
    author,
  });
  const compare = 'https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f';
  await github('push', {
    ref: 'refs/heads/changes',
    compare,
    created: false,
    deleted: false,
    forced: false,
    commits: [commit(1, { name: 'Baxter', username: 'baxterthehacker' })],
  });
  assert.equal(await lastInChannel(), {
    content: `baxterthehacker [pushed](${compare}) 1 commit to branch changes.\n\n* Change 1 ([aaaaaaaaaaa](https://github.com/baxterthehacker/public-repo/commit/1))`,
    topic: 'public-repo / changes',
    sender: bot.id,
    client: 'ZulipGitHubWebhook',
  });
  const many = Array.from({ length: 22 }, (_, i) => commit(i, i % 2 ? { name: 'Zed' } : { name: 'Anna', username: 'anna' }));
  await github('push', { ref: 'refs/heads/main', compare, created: false, deleted: false, forced: true, commits: many });
  const pushed = (await lastInChannel()).content as string;
  assert.ok(
    pushed.startsWith(`baxterthehacker [force pushed](${compare}) 22 commits to branch main. Commits by Zed (11) and anna (11).\n\n* Change 0 (`),
    pushed,
  );
  assert.ok(pushed.endsWith('\n[and 2 more commit(s)]'), pushed);
  await github('push', { ref: 'refs/tags/v1.0', created: true, deleted: false, forced: false, commits: [] });
  assert.equal((await lastInChannel()).content, 'baxterthehacker pushed tag v1.0.');
  // `branches` leaves out pushes to other branches.
  await github(
    'push',
    { ref: 'refs/heads/other', compare, created: false, deleted: false, forced: false, commits: [commit(3, { name: 'B' })] },
    '&branches=main,changes',
  );
  assert.equal((await lastInChannel()).content, 'baxterthehacker pushed tag v1.0.');
});

test('github: pull requests, issues and comments, with the topic naming the item; unknown events and missing headers', async () => {
  const pr = {
    number: 1,
    title: 'Update the README with new information',
    html_url: 'https://github.com/baxterthehacker/public-repo/pull/1',
    body: 'This is a pretty simple change.',
    head: { label: 'baxterthehacker:changes' },
    base: { label: 'baxterthehacker:master' },
    assignee: null,
    merged: false,
  };
  await github('pull_request', { action: 'opened', pull_request: pr });
  assert.equal(await lastInChannel(), {
    content:
      'baxterthehacker opened [PR #1](https://github.com/baxterthehacker/public-repo/pull/1) from `baxterthehacker:changes` to `baxterthehacker:master`:\n\n~~~ quote\nThis is a pretty simple change.\n~~~',
    topic: 'public-repo / PR #1 Update the README with new information',
    sender: bot.id,
    client: 'ZulipGitHubWebhook',
  });
  await github('pull_request', { action: 'closed', pull_request: { ...pr, merged: true } });
  assert.equal((await lastInChannel()).content, 'baxterthehacker merged [PR #1](https://github.com/baxterthehacker/public-repo/pull/1).');
  // With the topic fixed by the URL, the title goes into the message.
  await github('pull_request', { action: 'closed', pull_request: pr }, '&topic=prs');
  assert.equal(
    (await lastInChannel()).content,
    'baxterthehacker closed without merge [PR #1 Update the README with new information](https://github.com/baxterthehacker/public-repo/pull/1).',
  );

  const issue = {
    number: 2,
    title: 'Spelling error in the README file',
    html_url: 'https://github.com/baxterthehacker/public-repo/issues/2',
    body: 'It looks like you accidently spelled commit wrong.',
  };
  await github('issues', { action: 'opened', issue });
  assert.equal(await lastInChannel(), {
    content:
      'baxterthehacker opened [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nIt looks like you accidently spelled commit wrong.\n~~~',
    topic: 'public-repo / issue #2 Spelling error in the README file',
    sender: bot.id,
    client: 'ZulipGitHubWebhook',
  });
  await github('issues', { action: 'assigned', issue, assignee: { login: 'octocat' } });
  assert.equal((await lastInChannel()).content, 'baxterthehacker assigned octocat to [issue #2](https://github.com/baxterthehacker/public-repo/issues/2).');
  await github('issue_comment', {
    action: 'created',
    issue,
    comment: {
      html_url: 'https://github.com/baxterthehacker/public-repo/issues/2#issuecomment-99262140',
      body: "You are totally right! I'll get this fixed right away.",
    },
  });
  assert.equal(
    (await lastInChannel()).content,
    "baxterthehacker [commented](https://github.com/baxterthehacker/public-repo/issues/2#issuecomment-99262140) on [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nYou are totally right! I'll get this fixed right away.\n~~~",
  );
  // only_events and exclude_events filter by Zulip's event names.
  await github('issues', { action: 'closed', issue }, `&exclude_events=${encodeURIComponent('["iss*"]')}`);
  assert.ok(!(await lastInChannel()).content.startsWith('baxterthehacker closed'));

  const unknown = await github('fork', { action: 'whatever' });
  assert.equal(
    [unknown.status, unknown.body],
    [
      200,
      {
        result: 'error',
        msg: "The 'fork:whatever' event isn't currently supported by the GitHub webhook; ignoring",
        code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE',
        webhook_name: 'GitHub',
        event_type: 'fork:whatever',
      },
    ],
  );
  assert.equal((await github('milestone', { action: 'created' })).body, { result: 'success', msg: '' }, 'an event Zulip ignores posts nothing');
  const noHeader = await hook(`github?api_key=${bot.apiKey}&stream=integrations`, '{}');
  assert.equal(
    [noHeader.status, noHeader.body],
    [400, { result: 'error', msg: "Missing the HTTP event header 'X-GitHub-Event'", code: 'MISSING_HTTP_EVENT_HEADER', header: 'X-GitHub-Event' }],
  );
});

test('register lists the integrations, for clients that set up incoming-webhook bots', async () => {
  const r = await realm.owner.client.post('/register', { fetch_event_types: ['realm_incoming_webhook_bots'] });
  const listed = r.body.realm_incoming_webhook_bots as { name: string; display_name: string; all_event_types: string[] | null; config_options: unknown[] }[];
  assert.equal(
    listed.map((i) => i.name),
    ['alertmanager', 'gitea', 'github', 'gitlab', 'gogs', 'grafana', 'ifttt', 'jira', 'json', 'opsgenie', 'pagerduty', 'sentry', 'slack_incoming', 'zapier'],
  );
  assert.equal(
    listed.find((i) => i.name === 'github'),
    {
      name: 'github',
      display_name: 'GitHub',
      config_options: [],
      all_event_types: ['ping', 'push_commits', 'push_tags', 'opened_pull_request', 'updated_pull_request', 'closed_pull_request', 'issues', 'issue_comment'],
    },
  );
  assert.equal(
    listed.find((i) => i.name === 'json'),
    { name: 'json', display_name: 'JSON formatter', all_event_types: null, config_options: [] },
  );
});

test('/integrations/ lists every integration with the URL to give the service, without logging in', async () => {
  const r = await realm.anonymous.request('GET', '/integrations/');
  assert.is(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/html/);
  // The organization's own address.
  const base = /<code>(https?:\/\/[^<]*?)\/api\/v1\/external\/alertmanager\?/.exec(r.text)![1]!;
  assert.ok(base.includes(realm.subdomain), base);
  for (const name of [
    'github',
    'gitlab',
    'gitea',
    'forgejo',
    'jira',
    'sentry',
    'grafana',
    'alertmanager',
    'pagerduty',
    'opsgenie',
    'zapier',
    'ifttt',
    'json',
    'slack_incoming',
  ]) {
    assert.ok(r.text.includes(`<code>${base}/api/v1/external/${name}?api_key=BOT_API_KEY&amp;stream=CHANNEL</code>`), name);
  }
  assert.ok(r.text.includes('<dt id="gitlab">GitLab</dt>'));
  assert.ok(r.text.includes('Events: Push Hook, Tag Push Hook'));
});

test('refused: a wrong key, no key, bad JSON, an unknown integration', async () => {
  const wrong = await hook('json?api_key=0123456789abcdef0123456789abcdef&stream=integrations', '{}');
  assert.equal([wrong.status, wrong.body], [401, { result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' }]);
  assert.equal((await hook('json?stream=integrations', '{}')).body, errorBody("Missing 'api_key' argument"));
  assert.equal((await hook(`json?api_key=${bot.apiKey}&stream=integrations`, '{not json')).body, errorBody('Malformed JSON'));
  assert.equal((await hook(`json?api_key=${bot.apiKey}&stream=integrations`, '[1,2]')).body, errorBody('Malformed JSON'));
  assert.is((await hook(`nonexistent?api_key=${bot.apiKey}`, '{}')).status, 404);
});

/** The owner's newest direct message: who sent it and what it says. */
async function ownerNewestDm() {
  const r = await realm.owner.client.get('/messages', {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    narrow: [{ operator: 'is', operand: 'dm' }],
    apply_markdown: false,
  });
  const m = r.body.messages.at(-1);
  return { id: m.id, sender: m.sender_full_name, content: m.content };
}

test("a channel that does not exist: success for the service, and Notification Bot tells the bot's owner, once in five minutes; an empty channel gets the message, and the owner a notice", async () => {
  const r = await hook(`json?api_key=${bot.apiKey}&stream=nowhere`, '{}');
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '' }]);
  const told = await ownerNewestDm();
  assert.equal(
    [told.sender, told.content],
    [
      'Notification Bot',
      `Your bot \`${bot.email}\` tried to send a message to channel #**nowhere**, but that channel does not exist. Click [here](#channels/new) to create it.`,
    ],
  );
  // A flood of them tells the owner once.
  await Promise.all([1, 2, 3].map(() => hook(`json?api_key=${bot.apiKey}&stream=nowhere`, '{}')));
  assert.is((await ownerNewestDm()).id, told.id);

  // By id, for another bot of the same owner.
  const other = await realm.owner.client.post('/bots', { full_name: 'Other hooks', short_name: 'otherhooks', bot_type: 2 });
  const otherEmail = (await realm.owner.client.get(`/users/${other.body.user_id}`)).body.user.email;
  assert.equal((await hook(`json?api_key=${other.body.api_key}&stream=987654`, '{}')).body, { result: 'success', msg: '' });
  assert.equal(
    (await ownerNewestDm()).content,
    `Your bot \`${otherEmail}\` tried to send a message to channel ID 987654, but there is no channel with that ID.`,
  );

  // A channel nobody is subscribed to: the message is posted, and the owner hears of it.
  const empty = await makeChannel(realm, 'unheard', [realm.owner]);
  assert.is((await realm.owner.client.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['unheard']) })).status, 200);
  const third = await realm.owner.client.post('/bots', { full_name: 'Third hooks', short_name: 'thirdhooks', bot_type: 2 });
  const thirdEmail = (await realm.owner.client.get(`/users/${third.body.user_id}`)).body.user.email;
  assert.equal((await hook(`json?api_key=${third.body.api_key}&stream=unheard`, '{"a":1}')).body, { result: 'success', msg: '' });
  assert.equal(
    (await ownerNewestDm()).content,
    `Your bot \`${thirdEmail}\` tried to send a message to channel #**unheard**. The channel exists but does not have any subscribers.`,
  );
  assert.equal((await newest([{ operator: 'channel', operand: empty }])).content, '```json\n{\n  "a": 1\n}\n```');
});

test.run();
