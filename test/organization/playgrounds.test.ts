// Code playgrounds: POST /realm/playgrounds, DELETE /realm/playgrounds/{id} (Zulip's
// test_realm_playgrounds.py), their `realm_playgrounds` events and register data.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const PYTHON = { name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' };
/** Zulip's ValidationFailureError: the first message, and every message by field. */
const validationFailure = (errors: Record<string, string[]>) => errorBody(Object.values(errors)[0]![0]!, 'BAD_REQUEST', { errors });

test('add and remove: ids, events with the whole list to every user, register agrees', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const queue = await openQueue(member, { event_types: ['realm_playgrounds'] });
  const added = await admin.client.post('/realm/playgrounds', {
    name: '  Python playground ',
    pygments_language: ' Python',
    url_template: 'https://python.example.com?code={code} ',
  });
  assert.is(added.status, 200, added.text);
  const first = { id: added.body.id, ...PYTHON };
  assert.equal(added.body, { ...SUCCESS, id: first.id });
  assert.equal(await queue.next(), [{ type: 'realm_playgrounds', realm_playgrounds: [first] }]);
  // Another playground for the same language, under another name.
  const second = { name: 'Python 2', pygments_language: 'Python', url_template: 'https://py2.example.com/run{?code}' };
  const other = await admin.client.post('/realm/playgrounds', second);
  assert.equal(other.body, { ...SUCCESS, id: other.body.id });
  const both = [first, { id: other.body.id, ...second }];
  assert.equal(await queue.next(), [{ type: 'realm_playgrounds', realm_playgrounds: both }]);
  assert.equal((await member.client.post('/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds, both);
  assert.equal((await admin.client.delete(`/realm/playgrounds/${first.id}`)).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'realm_playgrounds', realm_playgrounds: [both[1]] }]);
  assert.equal((await member.client.post('/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds, [both[1]]);
});

test('spectators see the playgrounds too', async () => {
  const realm = await newRealm();
  assert.equal((await realm.owner.client.patch('/realm', { enable_spectator_access: true })).status, 200);
  const { id } = (await realm.owner.client.post('/realm/playgrounds', PYTHON)).body;
  const r = await realm.anonymous.post('/register', { fetch_event_types: ['realm_playgrounds'] });
  assert.equal(r.body.realm_playgrounds, [{ id, ...PYTHON }]);
});

test("validation as Zulip's model does it: template, language, blanks, duplicates; nothing is written", async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  await o.post('/realm/playgrounds', PYTHON);
  const cases: [Record<string, string>, Record<string, unknown>][] = [
    [{ pygments_language: 'a$b$c' }, errorBody('Invalid characters in pygments language')],
    [{ pygments_language: 'x'.repeat(41) }, errorBody('pygments_language is too long (limit: 40 characters)')],
    [{ url_template: 'https://template.com{?test,code}' }, validationFailure({ __all__: ['"code" should be the only variable present in the URL template'] })],
    [{ url_template: 'https://template.com?test={test' }, validationFailure({ url_template: ['Invalid URL template.'] })],
    [{ url_template: 'https://template.com{?test}' }, validationFailure({ __all__: ['Missing the required variable "code" in the URL template'] })],
    [{ url_template: 'https://template.com' }, validationFailure({ __all__: ['Missing the required variable "code" in the URL template'] })],
    [{ name: '  ' }, validationFailure({ name: ['This field cannot be blank.'] })],
    [
      { url_template: ' ', pygments_language: '' },
      validationFailure({
        url_template: ['This field cannot be blank.'],
        pygments_language: ['This field cannot be blank.'],
        __all__: ['Missing the required variable "code" in the URL template'],
      }),
    ],
    [{ name: PYTHON.name }, validationFailure({ __all__: ['Realm playground with this Realm, Pygments language and Name already exists.'] })],
    [
      { name: PYTHON.name, url_template: 'https://x.test/{a}' },
      validationFailure({
        __all__: ['Missing the required variable "code" in the URL template', 'Realm playground with this Realm, Pygments language and Name already exists.'],
      }),
    ],
  ];
  for (const [params, body] of cases) {
    const r = await o.post('/realm/playgrounds', { ...PYTHON, name: 'Fresh', ...params });
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  const missing = await o.post('/realm/playgrounds', { name: 'No template', pygments_language: 'Python' });
  assert.equal([missing.status, missing.body], [400, errorBody("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'url_template' })]);
  // The language is case-sensitive, as the unique index is: this one is new.
  assert.equal((await o.post('/realm/playgrounds', { ...PYTHON, pygments_language: 'python' })).status, 200);
  assert.is((await o.post('/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds.length, 2);
});

test("errors: administrators only; unknown playgrounds; other organizations' playgrounds are unknown", async () => {
  const realm = await newRealm();
  const moderator = await realm.addUser({ role: Role.MODERATOR });
  const { id } = (await realm.owner.client.post('/realm/playgrounds', PYTHON)).body;
  const denied = errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
  for (const r of [await moderator.client.post('/realm/playgrounds', { ...PYTHON, name: 'Mine' }), await moderator.client.delete(`/realm/playgrounds/${id}`)]) {
    assert.equal([r.status, r.body], [400, denied]);
  }
  for (const path of [`/realm/playgrounds/${id + 1000}`, '/realm/playgrounds/abc']) {
    const r = await realm.owner.client.delete(path);
    assert.equal([r.status, r.body], [400, errorBody('Invalid playground')], path);
  }
  const elsewhere = await newRealm();
  const foreign = await elsewhere.owner.client.delete(`/realm/playgrounds/${id}`);
  assert.equal([foreign.status, foreign.body], [400, errorBody('Invalid playground')]);
  assert.equal((await realm.owner.client.post('/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds, [{ id, ...PYTHON }]);
});

test.run();
