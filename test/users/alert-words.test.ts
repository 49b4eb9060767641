// Alert words (Zulip's test_alert_words.py): GET/POST/DELETE /users/me/alert_words, their limits
// and errors, `alert_words` events and register data, and the has_alert_word flag that new and
// edited messages get for the recipients whose words they contain.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue, type OpenQueue } from '../helpers/queues.ts';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { errorBody, makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

type Event = Record<string, any>;
const SUCCESS = { result: 'success', msg: '' };
const path = '/users/me/alert_words';
const add = (u: TestUser, words: unknown) => u.client.post(path, { alert_words: words });
const remove = (u: TestUser, words: unknown) => u.client.delete(path, { alert_words: words });

async function take(q: OpenQueue, count: number): Promise<Event[]> {
  const events: Event[] = [];
  while (events.length < count) events.push(...(await q.next()));
  assert.is(events.length, count, JSON.stringify(events));
  return events;
}

/** The ids of the user's messages with has_alert_word, as the `is:alerted` narrow finds them. */
async function alerted(u: TestUser): Promise<number[]> {
  const r = await u.client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'is', operand: 'alerted' }] });
  assert.is(r.status, 200, r.text);
  return (r.body.messages as Event[]).map((m) => m.id);
}

test("add, list and remove: cleaned, distinct ignoring case, events to the user's clients, register", async () => {
  const realm = await newRealm();
  const [ann, bob] = [await realm.addUser(), await realm.addUser()];
  assert.equal((await ann.client.get(path)).body, { ...SUCCESS, alert_words: [] });
  const q = await openQueue(ann, { event_types: ['alert_words'] });
  const bobs = await openQueue(bob, { event_types: ['alert_words'] });

  // Trimmed, blanks dropped, one spelling per word (the last given).
  const first = ['FOO', 'bar', 'Baz qux'];
  assert.equal((await add(ann, ['  Foo ', 'bar', 'FOO', '', 'Baz qux'])).body, { ...SUCCESS, alert_words: first });
  assert.equal(await take(q, 1), [{ type: 'alert_words', alert_words: first }]);
  assert.equal((await add(ann, ['foo', 'new'])).body, { ...SUCCESS, alert_words: [...first, 'new'] }, 'known words, in any case, are skipped');
  assert.equal(await take(q, 1), [{ type: 'alert_words', alert_words: [...first, 'new'] }]);
  const left = ['bar', 'Baz qux', 'new'];
  assert.equal((await remove(ann, ['Foo', 'missing'])).body, { ...SUCCESS, alert_words: left }, 'removal ignores case and unknown words');
  assert.equal(await take(q, 1), [{ type: 'alert_words', alert_words: left }]);
  assert.equal((await ann.client.get(path)).body, { ...SUCCESS, alert_words: left });
  assert.equal((await ann.client.post('/register', { fetch_event_types: ['alert_words'] })).body.alert_words, left);

  // Each user's own: bob's changes neither see nor touch ann's words.
  assert.equal((await remove(bob, ['bar'])).body, { ...SUCCESS, alert_words: [] });
  assert.equal((await add(bob, ['mine'])).body, { ...SUCCESS, alert_words: ['mine'] });
  assert.equal(await take(bobs, 2), [
    { type: 'alert_words', alert_words: [] },
    { type: 'alert_words', alert_words: ['mine'] },
  ]);
  assert.equal(await q.pending(), []);
  assert.equal((await ann.client.get(path)).body.alert_words, left);
});

test('errors: missing, not JSON, not a list of strings, longer than 100 characters', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const invalid = (msg: string) => errorBody(msg, 'BAD_REQUEST', { var_name: 'alert_words' });
  const cases: [Promise<{ status: number; body: unknown }>, object][] = [
    [ann.client.post(path, {}), errorBody("Missing 'alert_words' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'alert_words' })],
    [ann.client.delete(path, {}), errorBody("Missing 'alert_words' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'alert_words' })],
    [add(ann, 'foo'), invalid('Argument "alert_words" is not valid JSON.')],
    [add(ann, { foo: 1 }), invalid('alert_words is not a list')],
    [add(ann, ['ok', 7]), invalid('alert_words[1] is not a string')],
    [add(ann, ['ok', 'x'.repeat(101)]), invalid('alert_words[1] is too long (limit: 100 characters)')],
    [remove(ann, 'foo'), invalid('Argument "alert_words" is not valid JSON.')],
  ];
  for (const [reply, body] of cases) {
    const r = await reply;
    assert.equal([r.status, r.body], [400, body]);
  }
  assert.equal((await ann.client.get(path)).body.alert_words, [], 'a failed request adds nothing');
  assert.equal((await add(ann, ['🌹'.repeat(100)])).body.alert_words, ['🌹'.repeat(100)], 'the limit counts characters, not UTF-16 units');
});

test("has_alert_word: whole words ignoring case, outside code blocks, for each recipient's own words; edits check again", async () => {
  const realm = await newRealm();
  const [ann, bob, cat] = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
  const garden = await makeChannel(realm, 'Garden', [ann, bob, cat]);
  await add(bob, ['rose', 'C++', 'a.b', 'big deal', '(a+)+b']);
  const bobs = await openQueue(bob, { event_types: ['message'] });
  const cats = await openQueue(cat, { event_types: ['message'] });
  const flagged = new Map<string, boolean>();
  const idOf = new Map<string, number>();
  for (const content of [
    'A Rose, by any name',
    'roses everywhere',
    '```\nrose\n```',
    'I like c++!',
    'axb',
    'a.b',
    'no big  deal',
    'a BIG deal.',
    '(a+)+b?',
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!',
  ]) {
    const id = await send(ann, garden, 'flowers', content);
    const [event] = await take(bobs, 1);
    assert.is(event!.message.id, id);
    flagged.set(content, event!.flags.includes('has_alert_word'));
    idOf.set(content, id);
    assert.equal((await take(cats, 1))[0]!.flags, [], 'cat has no alert words');
  }
  assert.equal(
    Object.fromEntries(flagged),
    {
      'A Rose, by any name': true,
      'roses everywhere': false,
      '```\nrose\n```': false,
      'I like c++!': true,
      axb: false,
      'a.b': true,
      'no big  deal': false,
      'a BIG deal.': true,
      '(a+)+b?': true,
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!': false,
    },
    'words are text, never patterns',
  );

  const dm = await sendDm(ann, [bob.id], 'a rose for you');
  assert.equal((await take(bobs, 1))[0]!.flags, ['has_alert_word']);
  const own = await send(bob, garden, 'flowers', 'my rose');
  assert.equal((await take(bobs, 1))[0]!.flags, ['read', 'has_alert_word'], "the sender's own words count too");
  const alertedIds = [...flagged].filter(([, yes]) => yes).map(([content]) => idOf.get(content)!);
  assert.equal(await alerted(bob), [...alertedIds, dm, own]);
  assert.equal(await alerted(cat), []);

  // An edit sets the flag again from the new content.
  const edit = async (content: string, to: string) => assert.is((await ann.client.patch(`/messages/${idOf.get(content)}`, { content: to })).status, 200);
  await edit('A Rose, by any name', 'A tulip, by any name');
  await edit('roses everywhere', 'a rose everywhere');
  assert.equal(await alerted(bob), [idOf.get('roses everywhere')!, ...alertedIds.slice(1), dm, own]);

  // Words added later do not flag older messages.
  await add(cat, ['tulip']);
  assert.equal(await alerted(cat), []);
});

test.run();
