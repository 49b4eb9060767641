// Full-text search as Zulip's (narrow `search`): one test per rule. Words are stemmed, stop words
// left out, every word must occur in the topic or the content, quoted phrases occur as written, and
// the search combines with any other narrow.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, type TestUser } from '../helpers/server.ts';
import { makeChannel, send, sendDm } from './messages-helpers.ts';

async function setup() {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'search', [ann, bob]);
  const other = await makeChannel(realm, 'elsewhere', [ann, bob]);
  const ids = async (user: TestUser, narrow: unknown[]) => {
    const r = await user.client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow });
    assert.is(r.status, 200, r.text);
    return r.body.messages.map((m: { id: number }) => m.id);
  };
  return { realm, ann, bob, channel, other, ids };
}

test('stemming: a word finds its other forms, not the words that merely contain it', async () => {
  const { ann, channel, ids } = await setup();
  const deploying = await send(ann, channel, 't', 'We are deploying now');
  const deployed = await send(ann, channel, 't', 'It deployed fine');
  await send(ann, channel, 't', 'redeploy tomorrow, an unrelated word');
  assert.equal(await ids(ann, [{ operator: 'search', operand: 'deploy' }]), [deploying, deployed]);
  assert.equal(await ids(ann, [{ operator: 'search', operand: 'DEPLOYS' }]), [deploying, deployed]);
});

test('every word must match, in any order; a quoted phrase must occur as written', async () => {
  const { ann, channel, ids } = await setup();
  const a = await send(ann, channel, 't', 'the quick brown fox');
  const b = await send(ann, channel, 't', 'brown is the quick colour');
  const c = await send(ann, channel, 't', 'quick only');
  assert.equal(await ids(ann, [{ operator: 'search', operand: 'brown quick' }]), [a, b]);
  assert.equal(await ids(ann, [{ operator: 'search', operand: '"quick brown"' }]), [a]);
  assert.equal(await ids(ann, [{ operator: 'search', operand: '"brown quick"' }]), []);
  // Negated, each part is negated on its own, as Zulip does: neither the words nor the phrase.
  const inChannel = { operator: 'channel', operand: channel };
  assert.equal(await ids(ann, [inChannel, { operator: 'search', operand: '"quick brown"', negated: true }]), [c]);
});

test('stop words are left out: a search of stop words alone finds nothing', async () => {
  const { ann, channel, ids } = await setup();
  const a = await send(ann, channel, 't', 'the server is down');
  assert.equal(await ids(ann, [{ operator: 'search', operand: 'the' }]), []);
  assert.equal(await ids(ann, [{ operator: 'search', operand: 'the server' }]), [a]);
});

test('the topic is searched with the content, and highlighted in match_subject', async () => {
  const { ann, channel, ids } = await setup();
  const a = await send(ann, channel, 'Release planning', 'see you there');
  assert.equal(await ids(ann, [{ operator: 'search', operand: 'planning' }]), [a]);
  const r = await ann.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'search', operand: 'plan' }] });
  assert.equal(
    [r.body.messages[0].match_subject, r.body.messages[0].match_content],
    ['Release <span class="highlight">planning</span>', '<p>see you there</p>'],
  );
});

test('search combined with channel, topic, sender, is:starred, dm and a negated search', async () => {
  const { ann, bob, channel, other, ids } = await setup();
  const a = await send(ann, channel, 'alpha', 'kiwi fruit');
  const b = await send(bob, channel, 'beta', 'kiwi bird');
  const c = await send(ann, other, 'alpha', 'kiwi juice');
  const d = await sendDm(bob, [ann.id], 'kiwi for you');
  assert.equal(
    await ids(ann, [
      { operator: 'channel', operand: channel },
      { operator: 'search', operand: 'kiwi' },
    ]),
    [a, b],
  );
  assert.equal(
    await ids(ann, [
      { operator: 'channel', operand: channel },
      { operator: 'topic', operand: 'ALPHA' },
      { operator: 'search', operand: 'kiwi' },
    ]),
    [a],
  );
  assert.equal(
    await ids(ann, [
      { operator: 'sender', operand: bob.id },
      { operator: 'search', operand: 'kiwi' },
    ]),
    [b, d],
  );
  assert.equal(
    await ids(ann, [
      { operator: 'is', operand: 'dm' },
      { operator: 'search', operand: 'kiwi' },
    ]),
    [d],
  );
  await ann.client.post('/messages/flags', { messages: [c], op: 'add', flag: 'starred' });
  assert.equal(
    await ids(ann, [
      { operator: 'is', operand: 'starred' },
      { operator: 'search', operand: 'kiwi' },
    ]),
    [c],
  );
  assert.equal(
    await ids(ann, [
      { operator: 'search', operand: 'kiwi' },
      { operator: 'search', operand: 'bird', negated: true },
    ]),
    [a, c, d],
  );
});

test.run();
