// Saved snippets: GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{id}, their errors and
// `saved_snippets` events (mirrors Zulip's test_saved_snippets.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody } from './messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const SNIPPET_NOT_FOUND = errorBody('Saved snippet does not exist.', 'BAD_REQUEST');
const now = () => Math.floor(Date.now() / 1000);

async function create(u: TestUser, title: string, content: string): Promise<number> {
  const r = await u.client.post('/saved_snippets', { title, content });
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['msg', 'result', 'saved_snippet_id']);
  return r.body.saved_snippet_id;
}

async function list(u: TestUser) {
  const r = await u.client.get('/saved_snippets');
  assert.is(r.status, 200, r.text);
  return r.body.saved_snippets as { id: number; title: string; content: string; date_created: number }[];
}

test("POST and GET /saved_snippets: stripped title and content, only the owner's", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const before = now();
  const first = await create(bob, '  Welcome  ', '\nWelcome to the organization.\n');
  const second = await create(bob, 'Bye', 'See you');
  const snippets = await list(bob);
  assert.equal(
    snippets.map(({ date_created: _d, ...s }) => s),
    [
      { id: first, title: 'Welcome', content: 'Welcome to the organization.' },
      { id: second, title: 'Bye', content: 'See you' },
    ],
  );
  assert.ok(snippets.every((s) => s.date_created >= before && s.date_created <= now()));
  assert.equal(await list(realm.owner), []);
});

test('POST /saved_snippets errors: blank, too long, missing', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const cases: [Record<string, string>, Record<string, unknown>][] = [
    [{ title: '   ', content: 'x' }, errorBody('title cannot be blank', 'BAD_REQUEST', { var_name: 'title' })],
    [{ title: 'x', content: ' \n ' }, errorBody('content cannot be blank', 'BAD_REQUEST', { var_name: 'content' })],
    [{ title: 't'.repeat(61), content: 'x' }, errorBody('title is too long (limit: 60 characters)', 'BAD_REQUEST', { var_name: 'title' })],
    [{ title: 'x', content: 'c'.repeat(10001) }, errorBody('content is too long (limit: 10000 characters)', 'BAD_REQUEST', { var_name: 'content' })],
    [{ content: 'x' }, errorBody("Missing 'title' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'title' })],
    [{ title: 'x' }, errorBody("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'content' })],
  ];
  for (const [params, body] of cases) {
    const r = await bob.client.post('/saved_snippets', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  assert.ok((await create(bob, `  ${'t'.repeat(60)}  `, 'x')) > 0, 'the limit applies after stripping');
  assert.is((await list(bob)).length, 1);
});

test('PATCH /saved_snippets/{id}: either field, nothing to change, 404s and validation', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const id = await create(bob, 'Title', 'Content');
  assert.equal((await bob.client.patch(`/saved_snippets/${id}`, { title: ' New title ' })).body, SUCCESS);
  assert.equal((await bob.client.patch(`/saved_snippets/${id}`, { content: 'New content' })).body, SUCCESS);
  assert.equal((await bob.client.patch(`/saved_snippets/${id}`, {})).body, SUCCESS);
  assert.equal(
    (await list(bob)).map((s) => [s.title, s.content]),
    [['New title', 'New content']],
  );
  for (const [who, path] of [
    [bob, '/saved_snippets/999999'],
    [realm.owner, `/saved_snippets/${id}`],
    [bob, '/saved_snippets/x'],
  ] as const) {
    const r = await who.client.patch(path, { title: 'Stolen' });
    assert.equal([r.status, r.body], [404, SNIPPET_NOT_FOUND], path);
  }
  const blank = await bob.client.patch(`/saved_snippets/${id}`, { title: '' });
  assert.equal([blank.status, blank.body], [400, errorBody('title cannot be blank', 'BAD_REQUEST', { var_name: 'title' })]);
  assert.equal(
    (await list(bob)).map((s) => s.title),
    ['New title'],
  );
});

test("DELETE /saved_snippets/{id}; missing or someone else's is a 404", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const id = await create(bob, 'Title', 'Content');
  const stolen = await realm.owner.client.delete(`/saved_snippets/${id}`);
  assert.equal([stolen.status, stolen.body], [404, SNIPPET_NOT_FOUND]);
  assert.equal((await bob.client.delete(`/saved_snippets/${id}`)).body, SUCCESS);
  const again = await bob.client.delete(`/saved_snippets/${id}`);
  assert.equal([again.status, again.body], [404, SNIPPET_NOT_FOUND]);
  assert.equal(await list(bob), []);
});

test("saved_snippets events: add, update and remove reach only the owner's queues; register has the snippets", async () => {
  const realm = await newRealm();
  const bob = await realm.addUser();
  const mine = await openQueue(bob, { event_types: ['saved_snippets'] });
  const theirs = await openQueue(realm.owner, { event_types: ['saved_snippets'] });
  const id = await create(bob, 'Title', 'Content');
  const [added] = await mine.next();
  const dateCreated = added!.saved_snippet.date_created;
  assert.equal(added, { type: 'saved_snippets', op: 'add', saved_snippet: { id, title: 'Title', content: 'Content', date_created: dateCreated } });
  await bob.client.patch(`/saved_snippets/${id}`, { content: 'Changed' });
  assert.equal(await mine.next(), [
    { type: 'saved_snippets', op: 'update', saved_snippet: { id, title: 'Title', content: 'Changed', date_created: dateCreated } },
  ]);
  const registered = await openQueue(bob, { fetch_event_types: ['saved_snippets'], event_types: ['saved_snippets'] });
  assert.equal(registered.state.saved_snippets, [{ id, title: 'Title', content: 'Changed', date_created: dateCreated }]);
  await bob.client.delete(`/saved_snippets/${id}`);
  assert.equal(await mine.next(), [{ type: 'saved_snippets', op: 'remove', saved_snippet_id: id }]);
  assert.equal(await theirs.pending(), []);
});

test.run();
