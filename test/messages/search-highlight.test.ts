// Search results (GET /messages and GET /messages/matches_narrow with a `search` term) carry
// match_content and match_subject: the rendered content and escaped topic with the matched words in
// <span class="highlight">, never inside a tag or an entity (Zulip's get_search_fields).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';
import { makeChannel, send } from './messages-helpers.ts';

const hl = (s: string) => `<span class="highlight">${s}</span>`;

test('GET /messages: search results carry highlighted match_content and match_subject; other narrows do not', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'search', [ann]);
  const id = await send(ann, channel, 'Hello <world>', 'Hello **world**, hello again');
  const search = (narrow: unknown[], extra: Record<string, unknown> = {}) =>
    ann.client.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow, ...extra });
  const [m] = (await search([{ operator: 'search', operand: 'HELLO' }])).body.messages;
  assert.equal(
    [m.id, m.match_content, m.match_subject],
    [id, `<p>${hl('Hello')} <strong>world</strong>, ${hl('hello')} again</p>`, `${hl('Hello')} &lt;world&gt;`],
  );
  assert.is(m.content, '<p>Hello <strong>world</strong>, hello again</p>', 'content itself is untouched');
  const [plain] = (await search([{ operator: 'channel', operand: channel }])).body.messages;
  assert.is('match_content' in plain || 'match_subject' in plain, false);
  const [byIds] = (await ann.client.get('/messages', { message_ids: [id], narrow: [{ operator: 'search', operand: 'world' }] })).body.messages;
  assert.equal([byIds.match_content, byIds.match_subject], [`<p>Hello <strong>${hl('world')}</strong>, hello again</p>`, `Hello &lt;${hl('world')}&gt;`]);
  const [negated] = (await search([{ operator: 'search', operand: 'nowhere', negated: true }])).body.messages;
  assert.equal([negated.match_content, negated.match_subject], [m.content, 'Hello &lt;world&gt;']);
  const [markdown] = (await search([['search', 'world']], { apply_markdown: false })).body.messages;
  assert.equal([markdown.content, markdown.match_content], ['Hello **world**, hello again', `<p>Hello <strong>${hl('world')}</strong>, hello again</p>`]);
});

test('whole words as the search stemmed them, phrases word by word, entities and links: the markup stays whole', async () => {
  const realm = await newRealm();
  const ann = await realm.addUser();
  const channel = await makeChannel(realm, 'search', [ann]);
  const match = async (content: string, operand: string) => {
    const id = await send(ann, channel, 'topic', content);
    const r = await ann.client.get('/messages/matches_narrow', { msg_ids: [id], narrow: [{ operator: 'search', operand }] });
    return r.body.messages[id]?.match_content as string | undefined;
  };
  assert.is(await match('testing the contest', 'test'), `<p>${hl('testing')} the contest</p>`);
  assert.is(await match('say hello world now', '"hello world"'), `<p>say ${hl('hello')} ${hl('world')} now</p>`);
  assert.is(await match('Café au lait', 'café'), `<p>${hl('Café')} au lait</p>`);
  assert.is(await match('fish & chips <tag>', 'tag'), `<p>fish &amp; chips &lt;${hl('tag')}&gt;</p>`);
  assert.is(await match('fish & chips', '&'), undefined, 'no word to search: nothing matches');
  assert.is(await match('[the docs](https://example.com/hello)', 'hello'), undefined, 'a link target is no text');
  assert.is(await match('[hello docs](https://example.com/hello)', 'hello'), `<p><a href="https://example.com/hello">${hl('hello')} docs</a></p>`);
  assert.is(await match('a *b* c', 'b'), `<p>a <em>${hl('b')}</em> c</p>`);
});

test.run();
