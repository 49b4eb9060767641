// The services' own payloads (test/fixtures/webhooks/<integration>/, from the services through
// Zulip's fixtures; some trimmed to the fields the messages read) posted to a running server's
// /api/v1/external/<integration>: each event type gives the message text and topic Zulip's
// integration gives, and unknown events Zulip's UNSUPPORTED_WEBHOOK_EVENT_TYPE answer.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestRealm } from '../helpers/server.ts';
import { errorBody, makeChannel } from '../messages/messages-helpers.ts';

let realm: TestRealm;
let bot: { id: number; email: string; apiKey: string; fullName: string };
let channel: number;

test.before(async () => {
  realm = await newRealm();
  const r = await realm.owner.client.post('/bots', { full_name: 'Alerts', short_name: 'alerts', bot_type: 2 });
  assert.is(r.status, 200, r.text);
  bot = { id: r.body.user_id, email: (await realm.owner.client.get(`/users/${r.body.user_id}`)).body.user.email, apiKey: r.body.api_key, fullName: 'Alerts' };
  channel = await makeChannel(realm, 'hooks', [realm.owner]);
});

const fixture = (integration: string, name: string) => readFileSync(new URL(`../fixtures/webhooks/${integration}/${name}.json`, import.meta.url), 'utf8');

/** Posts a body to an integration's URL for the channel "hooks" (with `query` appended). */
const post = (integration: string, body: string, headers: Record<string, string> = {}, query = '', contentType = 'application/json') =>
  realm.owner.client.request('POST', `/api/v1/external/${integration}?api_key=${bot.apiKey}&stream=hooks${query}`, {
    body,
    contentType,
    headers: { Authorization: '', ...headers },
  });

/** The channel's newest `count` messages, oldest first, as [topic, content]. */
async function newest(count = 1): Promise<[string, string][]> {
  const narrow = [{ operator: 'channel', operand: channel }];
  const r = await realm.owner.client.get('/messages', { anchor: 'newest', num_before: count, num_after: 0, narrow, apply_markdown: false });
  assert.is(r.status, 200, r.text);
  return r.body.messages.slice(-count).map((m: { subject: string; content: string }) => [m.subject, m.content]);
}

/** Posts a fixture and returns the message it made, checking Zulip's success answer. */
async function hook(integration: string, name: string, headers: Record<string, string> = {}, query = '', url = integration): Promise<[string, string]> {
  const r = await post(url, fixture(integration, name), headers, query);
  assert.equal([r.status, r.body], [200, { result: 'success', msg: '' }], `${integration}/${name}`);
  return (await newest())[0]!;
}

const unsupported = (webhook: string, event: string) => ({
  result: 'error',
  msg: `The '${event}' event isn't currently supported by the ${webhook} webhook; ignoring`,
  code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE',
  webhook_name: webhook,
  event_type: event,
});

// GitLab

const gitlab = (name: string, event: string, query = '') => hook('gitlab', name, { 'X-Gitlab-Event': event }, query);
const AWESOME = 'https://gitlab.com/tomaszkolek0/my-awesome-project';
const PUSHED = `Tomasz Kolek [pushed](${AWESOME}/-/compare/5fcdd5551fc3085df79bece2c32b1400802ac407...eb6ae1e591e0819dc5bf187c6bfe18ec065a80e9) 2 commits to branch tomek.\n\n* b ([66abd2da288](${AWESOME}/commit/66abd2da28809ffa128ed0447965cf11d7f863a7))\n* c ([eb6ae1e591e](${AWESOME}/commit/eb6ae1e591e0819dc5bf187c6bfe18ec065a80e9))`;

test("gitlab: pushes, removed branches and tags; with the URL's topic a link to the project leads", async () => {
  assert.equal(await gitlab('push_hook', 'Push Hook'), ['my-awesome-project / tomek', PUSHED]);
  assert.equal(await gitlab('push_hook', 'Push Hook', '&topic=Specific%20topic'), ['Specific topic', `[[my-awesome-project](${AWESOME})] ${PUSHED}`]);
  assert.equal(await gitlab('push_hook__remove_branch', 'Push Hook'), ['my-awesome-project / tomek', 'Tomasz Kolek deleted branch tomek.']);
  assert.equal(await gitlab('tag_push_hook__add_tag', 'Tag Push Hook'), ['my-awesome-project', 'Tomasz Kolek pushed tag xyz.']);
  // `branches` leaves out pushes to other branches.
  const before = await newest();
  assert.equal((await post('gitlab', fixture('gitlab', 'push_hook'), { 'X-Gitlab-Event': 'Push Hook' }, '&branches=main,dev')).body, {
    result: 'success',
    msg: '',
  });
  assert.equal(await newest(), before);
});

test('gitlab: issues and merge requests opened, closed, merged, updated with commits', async () => {
  assert.equal(await gitlab('issue_hook__issue_created_with_assignee', 'Issue Hook'), [
    'my-awesome-project / issue #1 Issue title',
    `Tomasz Kolek created [issue #1](${AWESOME}/issues/1) (assigned to Tomasz Kolek):\n\n~~~ quote\nIssue description\n~~~`,
  ]);
  assert.equal(await gitlab('issue_hook__issue_closed', 'Issue Hook'), [
    'my-awesome-project / issue #1 Issue title_new',
    `Tomasz Kolek closed [issue #1](${AWESOME}/issues/1).`,
  ]);
  assert.equal(await gitlab('merge_request_hook__merge_request_created_with_assignee', 'Merge Request Hook'), [
    'my-awesome-project / MR #3 New Merge Request',
    `Tomasz Kolek created [MR #3](${AWESOME}/merge_requests/3) from \`tomek\` to \`master\` (assigned to Tomasz Kolek):\n\n~~~ quote\ndescription of merge request\n~~~`,
  ]);
  assert.equal(await gitlab('merge_request_hook__merge_request_merged', 'Merge Request Hook'), [
    'my-awesome-project / MR #3 New Merge Request',
    `Tomasz Kolek merged [MR #3](${AWESOME}/merge_requests/3) from \`tomek\` to \`master\`.`,
  ]);
  assert.equal(await gitlab('merge_request_hook__merge_request_added_commit', 'Merge Request Hook'), [
    'my-awesome-project / MR #3 New Merge Request',
    `Tomasz Kolek added commit(s) to [MR #3](${AWESOME}/merge_requests/3).`,
  ]);
  // A custom topic puts the title in the message; `use_merge_request_title=false` leaves it out of the topic.
  assert.equal(await gitlab('merge_request_hook__merge_request_merged', 'Merge Request Hook', '&topic=mrs'), [
    'mrs',
    `[[my-awesome-project](${AWESOME})] Tomasz Kolek merged [MR #3 New Merge Request](${AWESOME}/merge_requests/3) from \`tomek\` to \`master\`.`,
  ]);
  assert.equal(
    (await gitlab('merge_request_hook__merge_request_merged', 'Merge Request Hook', '&use_merge_request_title=false'))[0],
    'my-awesome-project / MR #3',
  );
});

test('gitlab: comments on merge requests, issues and commits; wiki pages, jobs, pipelines, the test hook', async () => {
  const TESTING = 'https://gitlab.com/sbansal1999/testing-zulip-gitlab-integration';
  assert.equal(await gitlab('note_hook__merge_request_note', 'Note Hook'), [
    'testing-zulip-gitlab-integration / MR #1 add new-feature',
    `Satyam Bansal [commented](${TESTING}/-/merge_requests/1#note_1406328457) on [MR #1](${TESTING}/-/merge_requests/1):\n\n~~~ quote\nI am not sure if this new feature is even required or not.\n~~~`,
  ]);
  assert.equal(await gitlab('note_hook__issue_note', 'Note Hook'), [
    'testing-zulip-gitlab-integration / issue #1 Add more lines',
    `Satyam Bansal [commented](${TESTING}/-/issues/1#note_1406279810) on [issue #1](${TESTING}/-/issues/1):\n\n~~~ quote\nThis is again a random comment.\n~~~`,
  ]);
  assert.equal(await gitlab('note_hook__commit_note', 'Note Hook'), [
    'testing-zulip-gitlab-integration',
    `Satyam Bansal [commented](${TESTING}/-/commit/82689ddf00fd7bdadb5c2afb3b94bd555edc9d01#note_1406241063) on [82689ddf00f](${TESTING}/-/commit/82689ddf00fd7bdadb5c2afb3b94bd555edc9d01):\n~~~ quote\nWow what a beautiful commit.\n~~~`,
  ]);
  assert.equal(await gitlab('wiki_page_hook__wiki_page_opened', 'Wiki Page Hook'), [
    'my-awesome-project',
    `Tomasz Kolek created [wiki page "how to"](${AWESOME}/wikis/how-to).`,
  ]);
  assert.equal(await gitlab('build_succeeded', 'Job Hook'), ['my-awesome-project / master', 'Build job_name from test stage changed status to success.']);
  const TK = 'https://gitlab.com/TomaszKolek/my-awesome-project';
  assert.equal(await gitlab('pipeline_hook__pipeline_succeeded', 'Pipeline Hook'), [
    'my-awesome-project / master',
    `[Pipeline (4414206)](${TK}/-/pipelines/4414206) changed status to success with build(s):\n* [job_name2](${TK}/-/jobs/4541113) - success\n* [job_name](${TK}/-/jobs/4541112) - success.`,
  ]);
  assert.equal(await gitlab('test_hook__issue_hook', 'Test Hook'), [
    'my-awesome-project',
    'Webhook for **my-awesome-project** has been configured successfully! :tada:',
  ]);
});

const LANTERN = 'https://gitlab.example.org/city/lantern';

test('gitlab: releases created and deleted, feature flags, merge request approvals by one of several approvers', async () => {
  assert.equal(await gitlab('release_hook__create', 'Release Hook'), [
    'lantern',
    `Release [Lantern 2.4](${LANTERN}/-/releases/v2.4.0) for tag v2.4.0 was created.\n~~~ quote\nDimming curves for winter nights.\n~~~`,
  ]);
  assert.equal(await gitlab('release_hook__delete', 'Release Hook'), ['lantern', 'Release Lantern 2.4 for tag v2.4.0 was deleted.']);
  assert.equal(await gitlab('feature_flag_hook__deactivated', 'Feature Flag Hook'), [
    'lantern',
    `aquill deactivated the feature flag [night-mode](${LANTERN}/-/feature_flags).`,
  ]);
  assert.equal(await gitlab('merge_request_hook__approval', 'Merge Request Hook'), [
    'lantern / MR #42 Winter dimming schedule',
    `Bo Tanaka approval [MR #42](${LANTERN}/-/merge_requests/42).`,
  ]);
  assert.equal(await gitlab('merge_request_hook__approval', 'Merge Request Hook', '&topic=reviews'), [
    'reviews',
    `[[lantern](${LANTERN})] Bo Tanaka approval [MR #42 Winter dimming schedule](${LANTERN}/-/merge_requests/42).`,
  ]);
});

test('gitlab: deployments by environment, comments on designs, access tokens about to expire (of a project or a group)', async () => {
  assert.equal(await gitlab('deployment_hook__running', 'Deployment Hook'), [
    'lantern / staging',
    `[Ada Quill](https://gitlab.example.org/aquill) started a new [deployment](${LANTERN}/-/jobs/88123):\n> [9c2e4d1](${LANTERN}/-/commit/9c2e4d1a7f3b5e6c8d0a1b2c3d4e5f6a7b8c9d0e) Ship the winter schedule`,
  ]);
  assert.equal(await gitlab('deployment_hook__success', 'Deployment Hook'), ['lantern / staging', `The [deployment](${LANTERN}/-/jobs/88123) was successful.`]);
  const blocked = await post('gitlab', fixture('gitlab', 'deployment_hook__blocked'), { 'X-Gitlab-Event': 'Deployment Hook' });
  assert.equal([blocked.status, blocked.body], [200, unsupported('GitLab', 'Deployment Hook blocked')]);
  const design = `${LANTERN}/-/issues/17/designs/lamp-icons.png`;
  assert.equal(await gitlab('note_hook__design_note', 'Note Hook'), [
    'lantern / design lamp-icons.png',
    `Bo Tanaka [commented](${design}#note_70311) on design [lamp-icons.png](${design}):\n\n~~~ quote\nThe lamp icon reads better a little larger.\n~~~`,
  ]);
  // The design's image needs a GitLab login, so it is not previewed, though the same link from a person is.
  const rendered = async () =>
    (
      await realm.owner.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: channel }] })
    ).body.messages.at(-1).content as string;
  assert.not.match(await rendered(), 'message_inline_image');
  assert.is(
    (await realm.owner.client.post('/messages', { type: 'stream', to: channel, topic: 'designs', content: `[lamp-icons.png](${design})` })).status,
    200,
  );
  assert.match(await rendered(), 'message_inline_image');
  assert.equal(await gitlab('resource_access_token_hook__project', 'Resource Access Token Hook'), [
    'lantern',
    `The access token [deploy-bot token](${LANTERN}/-/settings/access_tokens) will expire on Apr 02, 2026.`,
  ]);
  assert.equal(await gitlab('resource_access_token_hook__group', 'Resource Access Token Hook'), [
    'City Lighting',
    'The access token [audit token](https://gitlab.com/groups/city-lighting/-/settings/access_tokens) will expire on Apr 09, 2026.',
  ]);
});

test('gitlab: `branches` names branches exactly', async () => {
  const before = await newest();
  // "tomek" is within "tomeks" but is not one of its branches.
  assert.equal((await post('gitlab', fixture('gitlab', 'push_hook'), { 'X-Gitlab-Event': 'Push Hook' }, '&branches=tomeks,main')).body, {
    result: 'success',
    msg: '',
  });
  assert.equal(await newest(), before);
  assert.equal((await gitlab('push_hook', 'Push Hook', '&branches=main,%20tomek'))[0], 'my-awesome-project / tomek');
});

test('gitlab: an unknown event, and a request without the event header', async () => {
  const r = await post('gitlab', fixture('gitlab', 'push_hook'), { 'X-Gitlab-Event': 'Member Hook' });
  assert.equal([r.status, r.body], [200, unsupported('GitLab', 'Member Hook')]);
  const none = await post('gitlab', fixture('gitlab', 'push_hook'));
  assert.equal(
    [none.status, none.body],
    [400, { result: 'error', msg: "Missing the HTTP event header 'X-GitLab-Event'", code: 'MISSING_HTTP_EVENT_HEADER', header: 'X-GitLab-Event' }],
  );
});

// Gitea, Forgejo, Gogs

const gitea = (name: string, event: string, url = 'gitea') => hook('gitea', name, { 'X-Gitea-Event': event }, '', url);
const TRY = 'https://try.gitea.io/kostekIV/test';

test('gitea: pushes, new branches, pull requests opened, merged, assigned and edited', async () => {
  const commits = [
    '2ec0c971d04723523aa20f2b378f8b419b47d4ec',
    '6cb1701c8b0114ad716f4cd49153076e7109cb85',
    '6773eabc0778a3e38997c06a13f5f0c48b67e5dc',
    '337402cf675ce7082ddcd23d06a116c85241825a',
    '0a38cad3fac3a13bb78b738d13f15ce9cc3343fa',
  ];
  assert.equal(await gitea('push__5_commits', 'push'), [
    'test / d',
    `kostekIV [pushed](${TRY}/compare/21138d2ca0ce18f8e037696fdbe1b3f0c211f630...2ec0c971d04723523aa20f2b378f8b419b47d4ec) 5 commits to branch d.\n\n${commits.map((c) => `* commit ([${c.slice(0, 11)}](${TRY}/commit/${c}))`).join('\n')}`,
  ]);
  assert.equal(await gitea('create__branch', 'create'), ['test / test-branch', `kostekIV created [test-branch](${TRY}/src/test-branch) branch.`]);
  assert.equal(await gitea('pull_request__opened', 'pull_request'), [
    'test / PR #1905 New pr',
    `kostekIV opened [PR #4](${TRY}/pulls/4) from \`test-branch\` to \`master\`.`,
  ]);
  assert.equal(await gitea('pull_request__merged', 'pull_request'), [
    'test / PR #1905 New pr',
    `kostekIV merged [PR #4](${TRY}/pulls/4) from \`test-branch\` to \`master\`.`,
  ]);
  assert.equal(await gitea('pull_request__assigned', 'pull_request'), [
    'test / PR #1906 test 2',
    `kostekIV assigned [PR #5](${TRY}/pulls/5) from \`d\` to \`master\` (assigned to kostekIV).`,
  ]);
  assert.equal(await gitea('pull_request__edited', 'pull_request'), ['test / PR #1906 test 2', `kostekIV edited [PR #5](${TRY}/pulls/5).`]);
});

test('gitea: issues and comments; Forgejo posts to the same integration; unknown events', async () => {
  assert.equal(await gitea('issues__opened', 'issues'), [
    'test / issue #3 Test issue',
    `kostekIV opened [issue #3](${TRY}/issues/3):\n\n~~~ quote\nTest body\n~~~`,
  ]);
  assert.equal(await gitea('issues__closed', 'issues'), [
    'test / issue #3 Test issue 2',
    `kostekIV closed [issue #3](${TRY}/issues/3) (assigned to kostekIV):\n\n~~~ quote\nTest body\n~~~`,
  ]);
  assert.equal(await gitea('issue_comment__new', 'issue_comment'), [
    'test / issue #3 Test issue',
    `kostekIV [commented](${TRY}/issues/3#issuecomment-24400) on [issue #3](${TRY}/issues/3):\n\n~~~ quote\ntest comment\n~~~`,
  ]);
  assert.equal(await gitea('issue_comment__edited', 'issue_comment', 'forgejo'), [
    'test / issue #3 Test issue 2',
    `kostekIV edited a [comment](${TRY}/issues/3#issuecomment-24400) on [issue #3](${TRY}/issues/3):\n\n~~~ quote\nedit test comment\n~~~`,
  ]);
  const r = await post('gitea', fixture('gitea', 'issues__opened'), { 'X-Gitea-Event': 'wiki' });
  assert.equal([r.status, r.body], [200, unsupported('Gitea', 'wiki')]);
});

test('gogs: releases, and pull requests without their assignee', async () => {
  assert.equal(await hook('gogs', 'release__published', { 'X-Gogs-Event': 'release' }), [
    'zulip_test / v1.4 Title',
    'cestrell published release [Title](https://try.gogs.io/cestrell/zulip_test) for tag v1.4.',
  ]);
  assert.equal(await hook('gogs', 'pull_request__assigned', { 'X-Gogs-Event': 'pull_request' }), [
    'test / PR #1349 Test',
    'kostekIV assigned [PR #2](https://try.gogs.io/kostekIV/test/pulls/2) from `c` to `master`.',
  ]);
});

// Alerting and incidents

test('alertmanager: firing alerts listed under the label the URL names, one resolved alert on its line', async () => {
  const graph = 'http://cobalt:9090/graph?g0.expr=avg+by%28host%29+%28sensors_temp_input%7Bfeature%3D~%22core_%5B0-9%5D%2B%22%7D%29+%3E+15&g0.tab=0';
  assert.equal(await hook('alertmanager', 'alert', {}, '&name=topic&desc=description'), [
    'andromeda',
    `:alert: **FIRING**\n* CPU core temperature is 34.75C ([source](${graph}))\n* CPU core temperature is 17.625C ([source](${graph}))`,
  ]);
  assert.equal(await hook('alertmanager', 'single_alert', {}, '&name=topic&desc=description'), [
    'andromeda',
    `:squared_ok: **Resolved** CPU core temperature is 34.75C ([source](${graph}))`,
  ]);
  // By default the topic is the `instance` label, the text the `alertname`.
  assert.equal(await hook('alertmanager', 'single_alert'), ['(unknown)', `:squared_ok: **Resolved** High CPU Temperature ([source](${graph}))`]);
});

test('grafana: Grafana Alerting notifications and legacy alerts', async () => {
  assert.equal(await hook('grafana', 'alert_v8'), [
    '[TestAlert]',
    ":checkbox: **RESOLVED**\n\n**TestAlert**\n\nThis alert was fired at <time:2022-08-31T05:54:04+00:00>.\n\nThis alert was resolved at <time:2022-08-31T10:30:00+00:00>.\n\nLabels:\n- alertname: TestAlert\n- instance: Grafana\n\nValues:\n[ metric='foo' labels={instance=bar} value=10 ]\n\nAnnotations:\n- summary: Notification test\n\n[Silence](https://zuliptestingwh2.grafana.net/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DTestAlert&matcher=instance%3DGrafana)",
  ]);
  assert.equal(await hook('grafana', 'alert_v7'), [
    '[Alerting] Test notification',
    ':alert: **ALERTING**\n\n[Test rule](http://localhost:3000/)\n\nSomeone is testing the alert notification within grafana.\n\n**High value:** 100\n**Higher Value:** 200\n\n[Click to view visualization](https://grafana.com/assets/img/blog/mixed_styles.png)',
  ]);
  // exclude_events filters by the alert's state.
  const before = await newest();
  await post('grafana', fixture('grafana', 'alert_v7'), {}, `&exclude_events=${encodeURIComponent('["alerting"]')}`);
  assert.equal(await newest(), before);
});

test('pagerduty: v1 and v3 incidents; unknown incident events', async () => {
  assert.equal(await hook('pagerduty', 'trigger'), [
    'Incident 3',
    'Incident [3](https://zulip-test.pagerduty.com/incidents/P140S4Y) triggered by [Test service](https://zulip-test.pagerduty.com/services/PIL5CUQ) (assigned to [armooo](https://zulip-test.pagerduty.com/users/POBCFRJ)).\n\n``` quote\nfoo\n```',
  ]);
  assert.equal(await hook('pagerduty', 'triggered_v3'), [
    'Incident Test Incident 3 (#9)',
    'Incident [Test Incident 3 (#9)](https://pig208.pagerduty.com/incidents/PFQZPSY) triggered by [pig208](https://pig208.pagerduty.com/services/PA2P440) (assigned to [PIG 208](https://pig208.pagerduty.com/users/PJ0LVEB)).',
  ]);
  const v3 = JSON.parse(fixture('pagerduty', 'triggered_v3'));
  v3.event.event_type = 'incident.unsupported';
  const r = await post('pagerduty', JSON.stringify(v3));
  assert.equal([r.status, r.body], [200, unsupported('PagerDuty', 'incident.unsupported')]);
});

test('opsgenie: alert actions with what each carries, sent form-encoded as Opsgenie does', async () => {
  const ops = async (name: string) => {
    const r = await post('opsgenie', fixture('opsgenie', name), {}, '', 'application/x-www-form-urlencoded');
    assert.equal(r.body, { result: 'success', msg: '' });
    return (await newest())[0];
  };
  const LINK = '[Opsgenie alert for Integration1](https://app.opsgenie.com/alert/V2#/show/052652ac-5d1c-464a-812a-7dd18bbfba8c):';
  assert.equal(await ops('create'), [
    'Webhook',
    '[Opsgenie alert for Webhook](https://app.opsgenie.com/alert/V2#/show/ec03dad6-62c8-4c94-b38b-d88f398e900f):\n* **Type**: Create\n* **Message**: another alert\n* **Tags**: `vip`',
  ]);
  assert.equal(await ops('addnote'), [
    'Integration1',
    `${LINK}\n* **Type**: AddNote\n* **Note**: note to test alert\n* **Message**: test alert\n* **Tags**: \`tag1\`, \`tag2\``,
  ]);
  assert.equal(await ops('addtags'), [
    'Integration1',
    `${LINK}\n* **Type**: AddTags\n* **Tags added**: tag1,tag2,tag3\n* **Message**: test alert\n* **Tags**: \`tag1\`, \`tag2\`, \`tag3\``,
  ]);
  assert.equal(await ops('assignownership'), [
    'Integration1',
    `${LINK}\n* **Type**: AssignOwnership\n* **Assigned owner**: user2@ifountain.com\n* **Message**: test alert\n* **Tags**: \`tag1\`, \`tag2\``,
  ]);
  assert.equal(await ops('close'), ['Integration1', `${LINK}\n* **Type**: Close\n* **Message**: test alert`]);
  assert.equal(await ops('escalate'), [
    'Webhook_Test',
    '[Opsgenie alert for Webhook_Test](https://app.opsgenie.com/alert/V2#/show/7ba97e3a-d328-4b5e-8f9a-39e945a3869a):\n* **Type**: Escalate\n* **Escalation**: test_esc',
  ]);
  assert.equal((await hook('opsgenie', 'close', {}, '&eu_region=true'))[1], `${LINK.replace('app.', 'app.eu.')}\n* **Type**: Close\n* **Message**: test alert`);
});

test('sentry: exception and message events, issues created, assigned and resolved; the old Raven SDK refused', async () => {
  assert.equal(await hook('sentry', 'event_for_exception_python'), [
    'Exception: Custom exception!',
    '**New exception:** [Exception: Custom exception!](https://sentry.io/organizations/hypro999-personal-organization/issues/1635244907/events/599349254a1447a99774b5310711c1a8/)\n```quote\n**level:** error\n**timestamp:** <time:2020-04-28T13:56:05+00:00>\n**filename:** trigger-exception.py\n```\n\nTraceback:\n```python3\n\n\n     if __name__ == "__main__":\n         sentry_sdk.init(dsn=SECRET_DSN)\n         try:\n--->         raise Exception("Custom exception!")\n         except Exception as e:\n             sentry_sdk.capture_exception(e)\n\n```',
  ]);
  assert.equal(await hook('sentry', 'event_for_message_golang'), [
    'A test message event from golang.',
    '**New message event:** [A test message event from golang.](https://sentry.io/organizations/hypro999-personal-organization/issues/1638844654/events/01ecb45633bc4f5ca940ada671124c8f/)\n```quote\n**level:** info\n**timestamp:** <time:2020-04-30T06:14:13+00:00>\n```',
  ]);
  assert.equal(await hook('sentry', 'issue_created_for_exception'), [
    'Exception: Custom exception!',
    '**New issue created:** Exception: Custom exception!\n```quote\n**level:** error\n**timestamp:** <time:2020-04-28T13:56:05+00:00>\n**assignee:** No one\n```',
  ]);
  assert.equal(await hook('sentry', 'issue_assigned_to_team'), [
    'Exception: program has entered an invalid state.',
    'Issue **Exception: program has entered an invalid state.** has now been assigned to **team lone-wolf** by **Hemanth V. Alluri**.',
  ]);
  assert.equal(await hook('sentry', 'issue_resolved'), [
    'Exception: program has entered an invalid state.',
    'Issue **Exception: program has entered an invalid state.** was marked as resolved by **Hemanth V. Alluri**.',
  ]);
  const r = await post('sentry', fixture('sentry', 'raven_sdk_python_event'));
  assert.equal([r.status, r.body], [200, unsupported('Sentry', 'Raven SDK')]);
});

// Jira

test('jira: issues created, commented (Jira markup in Markdown, people by their name here), reassigned, moved, deleted', async () => {
  const othello = await realm.owner.client.post('/users', {
    email: 'othello@zulip.com',
    full_name: 'Othello, the Moor of Venice',
    password: 'othello-password',
  });
  assert.is(othello.status, 200, othello.text);
  const BUG = '[BUG-15: New bug with hook](http://lfranchi.com:8080/browse/BUG-15)';
  assert.equal(await hook('jira', 'created_v2'), ['BUG-15: New bug with hook', `Leo Franchi created ${BUG}:\n\n* **Priority**: Major\n* **Assignee**: no one`]);
  assert.equal(await hook('jira', 'commented_v2'), [
    'BUG-15: New bug with hook',
    `Leo Franchi commented on ${BUG} (assigned to **Othello, the Moor of Venice**):\n\n\`\`\` quote\nAdding a comment. Oh, what a comment it is!\n\`\`\``,
  ]);
  assert.equal(
    (await hook('jira', 'commented_markup_v2'))[1],
    `Leo Franchi commented on ${BUG}:\n\n\`\`\` quote\nThanks **Olivia Owner**, see **this** \`code\` and [Google](http://www.google.com) or [http://example.com](http://example.com).\n~~~ quote\nSomeone said somewhere\n~~~\n\`\`\``,
  );
  // A mention is matched as a name or the start of an address, never as a pattern.
  const pattern = JSON.parse(fixture('jira', 'commented_v2'));
  pattern.comment.body = 'Ping [~o%] and [~OWNER@]';
  assert.equal((await post('jira', JSON.stringify(pattern))).status, 200);
  assert.ok((await newest())[0]![1].includes('Ping **o%** and **Olivia Owner**'), (await newest())[0]![1]);
  assert.equal(await hook('jira', 'reassigned_v2'), [
    'BUG-15: New bug with hook',
    `Leo Franchi updated ${BUG} (assigned to **Othello, the Moor of Venice**):\n\n* Changed assignee to **Othello, the Moor of Venice**`,
  ]);
  assert.equal(await hook('jira', 'change_status_v1'), [
    'TEST-1: Fix That',
    'Leonardo Franchi [Administrator] updated [TEST-1: Fix That](https://zulipp.atlassian.net/browse/TEST-1):\n\n* Changed status from **To Do** to **In Progress**',
  ]);
  assert.equal(await hook('jira', 'deleted_v2'), ['BUG-15: New bug with hook', `Leo Franchi deleted ${BUG}.`]);
});

test('jira: the newer comment events; ignored events post nothing; unknown and anomalous payloads', async () => {
  const SP = '[SP-1: Add support for newer format Jira issue comment events](https://f20171170.atlassian.net/browse/SP-1)';
  assert.equal(await hook('jira', 'comment_created'), [
    'SP-1: Add support for newer format Jira issue comment events',
    `Hemanth V. Alluri commented on ${SP}\n\`\`\` quote\nSounds like it’s pretty important. I’ll get this fixed ASAP!\n\`\`\``,
  ]);
  assert.equal(
    (await hook('jira', 'comment_deleted'))[1],
    `Hemanth V. Alluri deleted their comment on ${SP}\n\`\`\` quote\n~~This is a very important issue! I’m on it!~~\n\`\`\``,
  );
  const before = await newest();
  assert.equal((await post('jira', JSON.stringify({ webhookEvent: 'sprint_started' }))).body, { result: 'success', msg: '' });
  assert.equal(await newest(), before);
  const unknown = await post('jira', JSON.stringify({ webhookEvent: 'board_created' }));
  assert.equal([unknown.status, unknown.body], [200, unsupported('Jira', 'board_created')]);
  const anomalous = await post('jira', JSON.stringify({ issue: {} }));
  assert.equal(
    [anomalous.status, anomalous.body],
    [400, { result: 'error', msg: 'Unable to parse request: Did Jira generate this event?', code: 'ANOMALOUS_WEBHOOK_PAYLOAD' }],
  );
});

// Slack-compatible

test('slack_incoming: blocks and attachments rendered as Zulip renders them', async () => {
  const slack = async (name: string) => {
    const r = await post('slack_incoming', fixture('slack_incoming', name));
    assert.equal(r.body, { result: 'success', msg: '', ok: true });
    return (await newest())[0];
  };
  assert.equal(await slack('actions'), [
    'C1H9RESGL',
    'Danny Torrence left the following *review* for your property:\n\n[Overlook Hotel](https://google.com) \n :star: \n Doors had too many axe holes, guest in room 237 was far too rowdy, whole place felt stuck in the 1920s.\n\n[Haunted hotel image](https://is5-ssl.mzstatic.com/image/thumb/Purple3/v4/d3/72/5c/d3725c8f-c642-5d69-1904-aa36e4297885/source/256x256bb.jpg)\n\n**Average Rating**\n1.0',
  ]);
  const alert = (port: number) =>
    `**Alert:** api-server down - \`critical\`\n**Description:** api-server at 1.2.3.4:${port} couldn't be scraped **Details:**\n   • **alertname:** \`InstanceDown\`\n   • **env:** \`prod\`\n   • **instance:** \`1.2.3.4:${port}\`\n   • **job:** \`api-server\`\n   • **severity:** \`critical\``;
  assert.equal(await slack('attachment'), [
    'prometheus-alerts',
    `## [[FIRING:2] InstanceDown for api-server (env="prod", severity="critical")](https://alertmanager.local//#/alerts?receiver=default)\n\n:chart_with_upwards_trend: **[Graph](http://generator.local/1)**   :notebook: **[Runbook](https://runbook.local/1)**\n\n**Alert details**:\n${alert(8080)}\n\n${alert(8081)}`,
  ]);
  const CAT = 'https://pbs.twimg.com/profile_images/625633822235693056/lNGUneLX_400x400.jpg';
  assert.equal(
    (await slack('attachment_blocks'))[1],
    `This is a section block with an accessory image.\n\n[cute cat](${CAT})\n\nThis is a section block with a button.\n\n| | |\n|-|-|\n| one | two |\n| three | four |\n| five |  |`,
  );
  assert.equal(
    (await slack('attachment_fields'))[1],
    'Build bla bla succeeded\n\n**Requested by**: Some user\n**Duration**: 00:02:03\n**Build pipeline**: ConsumerAddressModule\n**Title with null value**\n**Title without value**\nValue with null title\nValue without title',
  );
  assert.equal((await slack('attachment_pieces'))[1], `## Test\n\n[](${CAT})\n\n<time:2022-06-23T00:48:26+00:00>`);
});

// Zapier and IFTTT

test("zapier and ifttt: the topic and content they send; Zapier's auth check answers with the bot", async () => {
  assert.equal((await post('zapier', JSON.stringify({ topic: 'New lead', content: 'Ann from **Acme**' }))).body, { result: 'success', msg: '' });
  assert.equal(await newest(), [['New lead', 'Ann from **Acme**']]);
  assert.equal((await post('ifttt', JSON.stringify({ subject: 'Weather', content: 'Rain tomorrow' }))).body, { result: 'success', msg: '' });
  assert.equal(await newest(), [['Weather', 'Rain tomorrow']]);
  assert.equal((await post('zapier', JSON.stringify({ type: 'auth' }))).body, {
    result: 'success',
    msg: '',
    full_name: bot.fullName,
    email: bot.email,
    id: bot.id,
  });
  assert.equal((await post('zapier', JSON.stringify({ content: 'no topic' }))).body, errorBody("Topic can't be empty"));
  assert.equal((await post('ifttt', JSON.stringify({ topic: 'no content' }))).body, errorBody("Content can't be empty"));
});

test('a payload without the fields an integration reads is refused as malformed, and posts nothing', async () => {
  const before = await newest();
  const r = await post('gitlab', JSON.stringify({ object_kind: 'push' }), { 'X-Gitlab-Event': 'Push Hook' });
  assert.equal([r.status, r.body], [400, errorBody('Malformed payload')]);
  assert.equal(await newest(), before);
});

test.run();
