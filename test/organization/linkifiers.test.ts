// Linkifiers over HTTP: list, add, edit, remove, reorder; validation, administrators only, events.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compiledLinkifiers } from '../../src/queries/linkifiers.ts';
import { captureEvents } from '../helpers/events.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

const ok = { result: 'success', msg: '' };
const err = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code, ...extra });
const invalid = (field: string, msg: string) => err(msg, 'BAD_REQUEST', { errors: { [field]: [msg] } });
const notAdmin = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');

const ISSUES = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' };
const entry = (id: number, l: { pattern: string; url_template: string }, extra: Record<string, unknown> = {}) => ({
  id,
  pattern: l.pattern,
  url_template: l.url_template,
  example_input: null,
  reverse_template: null,
  alternative_url_templates: [],
  ...extra,
});

async function add(user: TestUser, params: Record<string, unknown>): Promise<number> {
  const r = await user.client.post('/realm/filters', params);
  assert.is(r.status, 200, r.text);
  return r.body.id;
}

async function list(realm: TestRealm): Promise<unknown[]> {
  const r = await realm.owner.client.get('/realm/linkifiers');
  assert.is(r.status, 200, r.text);
  return r.body.linkifiers;
}

const ids = async (realm: TestRealm) => (await list(realm)).map((l) => (l as { id: number }).id);

test('GET /realm/linkifiers: empty, then every field in order; members may read', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  assert.equal((await member.client.get('/realm/linkifiers')).body, { ...ok, linkifiers: [] });
  const a = await add(realm.owner, ISSUES);
  const full = {
    pattern: '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)',
    url_template: 'https://github.com/{org}/{repo}/issues/{id}',
    example_input: 'zulip/zulip#12',
    reverse_template: '{org}/{repo}#{id}',
    alternative_url_templates: ['https://github.com/{org}/{repo}/pull/{id}'],
  };
  const b = await add(realm.owner, full);
  assert.ok(b > a);
  const r = await member.client.get('/realm/linkifiers');
  assert.is(r.status, 200);
  assert.equal(r.body, { ...ok, linkifiers: [entry(a, ISSUES), { id: b, ...full }] });
});

test('POST /realm/filters: pattern and template are stripped; URL templates of every RFC 6570 level', async () => {
  const realm = await newRealm();
  const id = await add(realm.owner, { pattern: '  PR (?P<id>[0-9]+) ', url_template: ' https://example.com/~user/web#view_type=type&id={id}\n' });
  const rich = {
    pattern:
      'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
    url_template: 'https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}',
  };
  const richId = await add(realm.owner, rich);
  assert.equal(await list(realm), [
    entry(id, { pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://example.com/~user/web#view_type=type&id={id}' }),
    entry(richId, rich),
  ]);
});

test('POST /realm/filters: every validation error, and nothing is stored', async () => {
  const realm = await newRealm();
  const existing = await add(realm.owner, ISSUES);
  const events = captureEvents(realm.server.app, realm.id);
  const reverse = { ...ISSUES, example_input: '#123', reverse_template: '#{id}' };
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [{ pattern: '  ', url_template: 'https://x.com/' }, invalid('pattern', 'This field cannot be blank.')],
    [{ pattern: 'abc', url_template: '' }, invalid('url_template', 'This field cannot be blank.')],
    [{ pattern: 'ZUL-(?P<id>\\d+)', url_template: '$fgfg' }, invalid('url_template', "Group 'id' in linkifier pattern is not present in URL template.")],
    [
      { pattern: 'ZUL-(?P<id>\\d+)-(?P<hello>\\d+)', url_template: 'https://x.com/{hello}' },
      invalid('url_template', "Group 'id' in linkifier pattern is not present in URL template."),
    ],
    [
      { pattern: 'ZUL-(?P<id>\\d+)', url_template: 'https://x.com/{hello}' },
      invalid('url_template', "Group 'hello' in URL template is not present in linkifier pattern."),
    ],
    [{ pattern: '#(?P<id>[123])', url_template: '{id' }, invalid('url_template', 'Invalid URL template.')],
    [{ pattern: '#(?P<id>[123])', url_template: 'https://example.com/{bar++}' }, invalid('url_template', 'Invalid URL template.')],
    [{ ...ISSUES, example_input: 'x123' }, invalid('example_input', 'The example input does not match the linkifier pattern.')],
    [{ ...ISSUES, reverse_template: '#{id}' }, invalid('example_input', 'A reverse template requires an example input.')],
    [{ ...reverse, reverse_template: '#{nope}' }, invalid('reverse_template', "Group 'nope' in reverse template is not present in linkifier pattern.")],
    [{ ...reverse, reverse_template: '#{id' }, invalid('reverse_template', 'Invalid reverse template.')],
    [
      { ...reverse, reverse_template: 'issue {id}' },
      invalid(
        'url_template',
        "The reverse template does not turn https://github.com/zulip/zulip/issues/123 back into the example input: got 'issue 123', expected '#123'.",
      ),
    ],
    [
      { ...ISSUES, alternative_url_templates: ['https://github.com/zulip/zulip/pull/{id}'] },
      invalid('alternative_url_templates', 'Alternative URL templates require a reverse template.'),
    ],
    [
      { ...reverse, alternative_url_templates: ['https://x.com/{id'] },
      invalid('alternative_url_templates', 'Invalid alternative URL template: https://x.com/{id'),
    ],
    [
      { ...reverse, alternative_url_templates: ['https://x.com/{zzz}'] },
      invalid('alternative_url_templates', "Group 'zzz' in URL template is not present in linkifier pattern."),
    ],
    [{ ...ISSUES, url_template: 'https://elsewhere.example.com/{id}' }, invalid('__all__', 'Realm filter with this Realm and Pattern already exists.')],
    [
      { ...reverse, alternative_url_templates: JSON.stringify('https://x.com/{id}') },
      err('alternative_url_templates is not a list', 'BAD_REQUEST', { var_name: 'alternative_url_templates' }),
    ],
    [{ url_template: 'https://x.com/' }, err("Missing 'pattern' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'pattern' })],
    [{ pattern: 'abc' }, err("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'url_template' })],
  ];
  for (const [params, expected] of cases) {
    const r = await realm.owner.client.post('/realm/filters', params);
    assert.is(r.status, 400, JSON.stringify(params));
    assert.equal(r.body, expected, JSON.stringify(params));
  }
  // RE2's messages, as Zulip gives them.
  const badPatterns: Array<[string, string]> = [
    ['(foo', 'missing ): (foo'],
    ['ZUL-(?P<id>\\d????)', 'bad repetition operator: ????'],
    ['(?P<a>x)\\1', 'invalid escape sequence: \\1'],
  ];
  for (const [pattern, message] of badPatterns) {
    const r = await realm.owner.client.post('/realm/filters', { pattern, url_template: 'https://x.com/' });
    assert.is(r.status, 400);
    assert.equal(r.body, invalid('pattern', `Bad regular expression: ${message}`));
  }
  events.stop();
  assert.equal(events.envelopes, []);
  assert.equal(await ids(realm), [existing]);
});

test('the same pattern may exist in two organizations', async () => {
  const [one, two] = [await newRealm(), await newRealm()];
  await add(one.owner, ISSUES);
  await add(two.owner, ISSUES);
  assert.is((await list(two)).length, 1);
});

test('writes are for administrators: members and moderators get the error and nothing changes', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: 200 });
  const id = await add(admin, ISSUES);
  const before = await list(realm);
  const events = captureEvents(realm.server.app, realm.id);
  for (const role of [300, 400, 600]) {
    const user = await realm.addUser({ role });
    const replies = [
      await user.client.post('/realm/filters', { pattern: 'x(?P<id>[0-9]+)', url_template: 'https://x.com/{id}' }),
      await user.client.patch(`/realm/filters/${id}`, { pattern: 'y(?P<id>[0-9]+)', url_template: 'https://y.com/{id}' }),
      await user.client.delete(`/realm/filters/${id}`),
      await user.client.delete(`/realm/filters/${id + 1000}`),
      await user.client.patch('/realm/linkifiers', { ordered_linkifier_ids: [id] }),
    ];
    for (const r of replies) {
      assert.is(r.status, 400);
      assert.equal(r.body, notAdmin);
    }
  }
  events.stop();
  assert.equal(events.ofType('realm_linkifiers'), []);
  assert.equal(await list(realm), before);
});

test('PATCH /realm/filters/{id}: replaces pattern and template, keeps or clears the optional fields', async () => {
  const realm = await newRealm();
  const id = await add(realm.owner, { ...ISSUES, example_input: '#1', reverse_template: '#{id}' });
  const patch = (params: Record<string, unknown>) => realm.owner.client.patch(`/realm/filters/${id}`, params);

  const moved = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' };
  assert.equal((await patch(moved)).body, ok);
  assert.equal(await list(realm), [entry(id, moved, { example_input: '#1', reverse_template: '#{id}' })]);

  const alternatives = ['https://trac.example.com/t/{id}'];
  assert.equal((await patch({ ...moved, alternative_url_templates: alternatives })).body, ok);
  assert.equal(await list(realm), [entry(id, moved, { example_input: '#1', reverse_template: '#{id}', alternative_url_templates: alternatives })]);

  // A reverse template cannot outlive its example: both are cleared together.
  const r = await patch({ ...moved, example_input: '' });
  assert.equal(r.body, invalid('example_input', 'A reverse template requires an example input.'));
  assert.equal((await patch({ ...moved, example_input: '', reverse_template: '', alternative_url_templates: [] })).body, ok);
  assert.equal(await list(realm), [entry(id, moved)]);
});

test('PATCH /realm/filters/{id}: errors leave the linkifier as it was', async () => {
  const realm = await newRealm();
  const other = await newRealm();
  const foreign = await add(other.owner, ISSUES);
  const id = await add(realm.owner, ISSUES);
  const taken = await add(realm.owner, { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://t.com/{id}' });
  const before = await list(realm);
  const cases: Array<[number | string, Record<string, unknown>, unknown]> = [
    [id, { pattern: 'ZUL-(?P<id>\\d+)', url_template: '$fgfg' }, invalid('url_template', "Group 'id' in linkifier pattern is not present in URL template.")],
    [id, { pattern: '#(?P<id>[123])', url_template: '{id' }, invalid('url_template', 'Invalid URL template.')],
    [id, { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://t.com/{id}' }, invalid('__all__', 'Realm filter with this Realm and Pattern already exists.')],
    [id, { pattern: '#(?P<id>[0-9]+)' }, err("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'url_template' })],
    [taken + 1000, ISSUES, err('Linkifier not found.')],
    [foreign, ISSUES, err('Linkifier not found.')],
    ['abc', ISSUES, err('Linkifier not found.')],
  ];
  for (const [target, params, expected] of cases) {
    const r = await realm.owner.client.patch(`/realm/filters/${target}`, params);
    assert.is(r.status, 400, `${target} ${JSON.stringify(params)}`);
    assert.equal(r.body, expected, `${target} ${JSON.stringify(params)}`);
  }
  assert.equal(await list(realm), before);
  // Saving a linkifier under its own pattern is not a duplicate.
  assert.equal((await realm.owner.client.patch(`/realm/filters/${id}`, { ...ISSUES, url_template: 'https://x.com/{id}' })).body, ok);
  assert.equal((await list(other)).length, 1);
});

test('DELETE /realm/filters/{id}: missing or foreign ids, then the rest keep their order', async () => {
  const realm = await newRealm();
  const other = await newRealm();
  const foreign = await add(other.owner, ISSUES);
  const [a, b, c] = [
    await add(realm.owner, { ...ISSUES, pattern: 'A(?P<id>[0-9]+)' }),
    await add(realm.owner, ISSUES),
    await add(realm.owner, { ...ISSUES, pattern: 'C(?P<id>[0-9]+)' }),
  ];
  for (const target of [c + 1000, foreign]) {
    const r = await realm.owner.client.delete(`/realm/filters/${target}`);
    assert.is(r.status, 400);
    assert.equal(r.body, err('Linkifier not found.'));
  }
  assert.equal((await realm.owner.client.delete(`/realm/filters/${b}`)).body, ok);
  assert.equal(await ids(realm), [a, c]);
  assert.equal((await realm.owner.client.delete(`/realm/filters/${b}`)).body, err('Linkifier not found.'));
  assert.equal(await ids(other), [foreign]);
});

test('PATCH /realm/linkifiers: reorders; new linkifiers go last; the list must be exact', async () => {
  const realm = await newRealm();
  const reorder = (list: unknown) => realm.owner.client.patch('/realm/linkifiers', { ordered_linkifier_ids: list });
  const events = captureEvents(realm.server.app, realm.id);
  assert.equal((await reorder([])).body, ok);
  assert.equal(events.envelopes, [], 'nothing to reorder, no event');
  events.stop();

  const [a, b, c] = [
    await add(realm.owner, { pattern: '1#(?P<id>[123])', url_template: 'https://filter.com/foo/{id}' }),
    await add(realm.owner, { pattern: '2#(?P<id>[123])', url_template: 'https://filter.com/bar/{id}' }),
    await add(realm.owner, { pattern: '3#(?P<id>[123])', url_template: 'https://filter.com/baz/{id}' }),
  ];
  assert.equal(await ids(realm), [a, b, c]);
  assert.equal((await reorder([c, b, a])).body, ok);
  assert.equal(await ids(realm), [c, b, a]);

  const d = await add(realm.owner, { pattern: '3#123', url_template: 'https://example.com' });
  assert.equal(await ids(realm), [c, b, a, d]);
  assert.equal((await realm.owner.client.delete(`/realm/filters/${a}`)).body, ok);
  assert.equal(await ids(realm), [c, b, d]);

  const exactlyOnce = err('The ordered list must enumerate all existing linkifiers exactly once');
  const cases: Array<[unknown, unknown]> = [
    [[a, d, c, b], exactlyOnce],
    [[d, c], exactlyOnce],
    [[d, c, b + 1000], exactlyOnce],
    [[d, c, b, d], err('The ordered list must not contain duplicated linkifiers')],
    ['[1,', err('Argument "ordered_linkifier_ids" is not valid JSON.', 'BAD_REQUEST', { var_name: 'ordered_linkifier_ids' })],
    [{ a: 1 }, err('ordered_linkifier_ids is not a list', 'BAD_REQUEST', { var_name: 'ordered_linkifier_ids' })],
  ];
  for (const [value, expected] of cases) {
    const r = await reorder(value);
    assert.is(r.status, 400, JSON.stringify(value));
    assert.equal(r.body, expected, JSON.stringify(value));
  }
  assert.equal(await ids(realm), [c, b, d]);
  assert.equal((await reorder([d, b, c])).body, ok);
  assert.equal(await ids(realm), [d, b, c]);
});

test('every change sends the full list to every active user of the organization only', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const bot = await realm.addUser({ bot: true });
  const gone = await realm.addUser();
  await realm.server.app.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } });
  const other = await newRealm();
  const otherEvents = captureEvents(realm.server.app, other.id);
  const events = captureEvents(realm.server.app, realm.id);
  const audience = [realm.owner.id, member.id, bot.id];

  const a = await add(realm.owner, ISSUES);
  const second = { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://t.com/{id}' };
  const b = await add(realm.owner, { ...second, example_input: 'T4', reverse_template: 'T{id}' });
  const edited = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.com/{id}' };
  assert.equal((await realm.owner.client.patch(`/realm/filters/${a}`, edited)).body, ok);
  assert.equal((await realm.owner.client.patch('/realm/linkifiers', { ordered_linkifier_ids: [b, a] })).body, ok);
  assert.equal((await realm.owner.client.delete(`/realm/filters/${b}`)).body, ok);
  events.stop();
  otherEvents.stop();

  const bEntry = entry(b, second, { example_input: 'T4', reverse_template: 'T{id}' });
  const expected = [[entry(a, ISSUES)], [entry(a, ISSUES), bEntry], [entry(a, edited), bEntry], [bEntry, entry(a, edited)], [entry(a, edited)]];
  assert.equal(
    events.envelopes.map((e) => [e.event, e.userIds]),
    expected.map((l) => [{ type: 'realm_linkifiers', realm_linkifiers: l }, audience]),
  );
  assert.equal(otherEvents.envelopes, []);
});

test('the compiled set follows every change', async () => {
  const realm = await newRealm();
  const app = realm.server.app;
  const patterns = async () => (await compiledLinkifiers(app, realm.id)).list.map((l) => l.pattern);
  assert.equal(await patterns(), []);
  const a = await add(realm.owner, ISSUES);
  assert.is(await compiledLinkifiers(app, realm.id), await compiledLinkifiers(app, realm.id), 'cached between changes');
  const b = await add(realm.owner, { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://t.com/{id}' });
  assert.equal(await patterns(), [ISSUES.pattern, 'T(?P<id>[0-9]+)']);
  await realm.owner.client.patch('/realm/linkifiers', { ordered_linkifier_ids: [b, a] });
  assert.equal(await patterns(), ['T(?P<id>[0-9]+)', ISSUES.pattern]);
  await realm.owner.client.patch(`/realm/filters/${a}`, { pattern: 'I(?P<id>[0-9]+)', url_template: 'https://i.com/{id}' });
  assert.equal(await patterns(), ['T(?P<id>[0-9]+)', 'I(?P<id>[0-9]+)']);
  await realm.owner.client.delete(`/realm/filters/${b}`);
  assert.equal(await patterns(), ['I(?P<id>[0-9]+)']);
});

test('topic_links: linkifiers apply to topics in fetched messages and in events', async () => {
  const realm = await newRealm();
  await add(realm.owner, ISSUES);
  const sub = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'dev' }] });
  assert.is(sub.status, 200, sub.text);
  const reg = await realm.owner.client.post('/register', { event_types: ['message', 'update_message'] });
  const sent = await realm.owner.client.post('/messages', { type: 'stream', to: 'dev', topic: 'fix #42', content: 'x' });
  const link = { text: '#42', url: 'https://github.com/zulip/zulip/issues/42' };
  const fetched = await realm.owner.client.get(`/messages/${sent.body.id}`);
  assert.equal(fetched.body.message.topic_links, [link]);
  await realm.owner.client.patch(`/messages/${sent.body.id}`, { topic: 'now #7' });
  const events = (await realm.owner.client.get('/events', { queue_id: reg.body.queue_id, last_event_id: -1, dont_block: true })).body.events;
  assert.equal(events[0].message.topic_links, [link]);
  assert.equal(events[1].topic_links, [{ text: '#7', url: 'https://github.com/zulip/zulip/issues/7' }]);
});

test('a catastrophic pattern cannot stall the server: (a+)+b over a 10,000-character message', async () => {
  const realm = await newRealm();
  await add(realm.owner, { pattern: '(?P<id>(a+)+b)', url_template: 'https://x.com/{id}' });
  await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'dev' }] });
  // A backtracking engine would take 2^10000 steps over this run; RE2 takes one pass.
  const run = 'a'.repeat(10_000);
  const topic = 'a'.repeat(59) + '!';
  const sent = await realm.owner.client.post('/messages', { type: 'stream', to: 'dev', topic, content: run });
  assert.is(sent.status, 200, sent.text);
  const linked = await realm.owner.client.post('/messages', { type: 'stream', to: 'dev', topic: 'x aab', content: `${run.slice(1)}b` });
  const [plain, link] = await Promise.all([sent, linked].map((m) => realm.owner.client.get(`/messages/${m.body.id}`)));
  assert.is(plain!.body.message.content, `<p>${run}</p>`);
  assert.equal(plain!.body.message.topic_links, []);
  assert.is(link!.body.message.content, `<p><a href="https://x.com/${run.slice(1)}b">${run.slice(1)}b</a></p>`);
  assert.equal(link!.body.message.topic_links, [{ text: 'aab', url: 'https://x.com/aab' }]);
});

test.run();
