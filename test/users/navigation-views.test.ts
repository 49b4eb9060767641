// Navigation views: GET/POST /navigation_views, PATCH/DELETE /navigation_views/{fragment}, their
// errors, `navigation_view` events and register data (Zulip's test_navigation_views.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const path = (fragment: string) => `/navigation_views/${encodeURIComponent(fragment)}`;

test("add, update and remove: responses, events to the user's clients, register and GET agree", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const queue = await openQueue(ann, { event_types: ['navigation_view'] });
  assert.equal((await ann.client.post('/navigation_views', { fragment: 'narrow/is/starred', is_pinned: true })).body, SUCCESS);
  assert.equal((await ann.client.post('/navigation_views', { fragment: ' narrow/channel/1-general ', is_pinned: false, name: ' General ' })).body, SUCCESS);
  assert.equal(
    [...(await queue.next()), ...(await queue.pending())],
    [
      { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'narrow/is/starred', is_pinned: true, name: null } },
      { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'narrow/channel/1-general', is_pinned: false, name: 'General' } },
    ],
  );
  assert.equal((await ann.client.patch(path('narrow/channel/1-general'), { is_pinned: true, name: 'Everyone' })).body, SUCCESS);
  assert.equal(await queue.next(), [
    { type: 'navigation_view', op: 'update', fragment: 'narrow/channel/1-general', data: { name: 'Everyone', is_pinned: true } },
  ]);
  const views = [
    { fragment: 'narrow/is/starred', is_pinned: true, name: null },
    { fragment: 'narrow/channel/1-general', is_pinned: true, name: 'Everyone' },
  ];
  assert.equal((await ann.client.get('/navigation_views')).body, { ...SUCCESS, navigation_views: views });
  assert.equal((await ann.client.post('/register', { fetch_event_types: ['navigation_views'] })).body.navigation_views, views);
  assert.equal((await ann.client.delete(path('narrow/is/starred'))).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'navigation_view', op: 'remove', fragment: 'narrow/is/starred' }]);
  assert.equal((await ann.client.get('/navigation_views')).body.navigation_views, [views[1]]);
  assert.equal((await realm.owner.client.get('/navigation_views')).body.navigation_views, [], 'views are per user');
});

test('errors: names of built-in and custom views, duplicates, missing views, blank values', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  await ann.client.post('/navigation_views', { fragment: 'inbox', is_pinned: true });
  await ann.client.post('/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alerts' });
  const posts: [Record<string, unknown>, object][] = [
    [{ fragment: 'recent', is_pinned: true, name: 'Mine' }, errorBody('Built-in views cannot have a custom name.')],
    [{ fragment: 'narrow/is/dm', is_pinned: true }, errorBody('Custom views must have a valid name.')],
    [{ fragment: 'inbox', is_pinned: false }, errorBody('Navigation view already exists.')],
    [{ fragment: 'narrow/is/dm', is_pinned: true, name: 'Alerts' }, errorBody('Navigation view already exists.')],
    [{ fragment: '  ', is_pinned: true }, errorBody('fragment cannot be blank', 'BAD_REQUEST', { var_name: 'fragment' })],
    [{ fragment: 'narrow/is/dm', is_pinned: true, name: ' ' }, errorBody('name cannot be blank', 'BAD_REQUEST', { var_name: 'name' })],
    [{ fragment: 'narrow/is/dm', name: 'DMs' }, errorBody("Missing 'is_pinned' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'is_pinned' })],
  ];
  for (const [params, body] of posts) {
    const r = await ann.client.post('/navigation_views', params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  const builtInName = await ann.client.patch(path('inbox'), { name: 'Box' });
  assert.equal([builtInName.status, builtInName.body], [400, errorBody('Built-in views cannot have a custom name.')]);
  const takenName = await ann.client.patch(path('narrow/is/alerted'), { name: 'Alerts' });
  assert.equal([takenName.status, takenName.body], [400, errorBody('Navigation view already exists.')]);
  const missing = errorBody('Navigation view does not exist.');
  for (const r of [
    await ann.client.patch(path('narrow/is/dm'), { is_pinned: true }),
    await ann.client.delete(path('narrow/is/dm')),
    await bob.client.delete(path('inbox')),
  ]) {
    assert.equal([r.status, r.body], [404, missing]);
  }
  assert.equal((await ann.client.get('/navigation_views')).body.navigation_views, [
    { fragment: 'inbox', is_pinned: true, name: null },
    { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alerts' },
  ]);
});

test('a fragment with raw slashes in the path (as the Python library sends it) names the view', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  await ann.client.post('/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: false, name: 'Alerts' });
  const patched = await ann.client.patch('/navigation_views/narrow/is/alerted', { is_pinned: true });
  assert.equal([patched.status, patched.body], [200, SUCCESS]);
  assert.equal((await ann.client.get('/navigation_views')).body.navigation_views, [{ fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alerts' }]);
  const missing = await ann.client.delete('/navigation_views/narrow/is/alerted/extra');
  assert.equal([missing.status, missing.body], [404, errorBody('Navigation view does not exist.')]);
  const removed = await ann.client.delete('/navigation_views/narrow/is/alerted');
  assert.equal([removed.status, removed.body], [200, SUCCESS]);
  assert.equal((await ann.client.get('/navigation_views')).body.navigation_views, []);
});

test.run();
