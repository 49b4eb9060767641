// The settings rendering depends on: the organization's default code block language and inline
// image previews, and the sender's translate_emoticons (applied when the sender's message is
// rendered, as Zulip's render_message_markdown does, never to other readers).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';

const render = async (client: { post: (path: string, body: Record<string, unknown>) => Promise<{ body: { rendered: string } }> }, content: string) =>
  (await client.post('/messages/render', { content })).body.rendered;

const slightSmile = '<span aria-label="slight smile" class="emoji emoji-1f642" role="img" title="slight smile">:slight_smile:</span>';

test('default_code_block_language: PATCH /realm, its event, register, and fences without a language', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const q = await openQueue(member, { event_types: ['realm'] });
  assert.is((await openQueue(member, { fetch_event_types: ['realm'] })).state.realm_default_code_block_language, '');
  const r = await realm.owner.client.patch('/realm', { default_code_block_language: 'py' });
  assert.equal(r.body, { result: 'success', msg: '', default_code_block_language: 'updated' });
  assert.equal(await q.pending(), [{ type: 'realm', op: 'update', property: 'default_code_block_language', value: 'py' }]);
  assert.is((await openQueue(member, { fetch_event_types: ['realm'] })).state.realm_default_code_block_language, 'py');

  assert.is(
    await render(member.client, '```\nx = 1\n```'),
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</code></pre></div>',
  );
  // A fence that names a language keeps it; a quote fence passes the default on to its fences.
  assert.is(
    await render(member.client, '```text\nx = 1\n```'),
    '<div class="codehilite" data-code-language="Text only"><pre><span></span><code>x = 1\n</code></pre></div>',
  );
  assert.is(
    await render(member.client, '```quote\n~~~\nx\n~~~\nafter\n```'),
    '<blockquote>\n<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span>\n</code></pre></div>\n<p>after</p>\n</blockquote>',
  );

  await realm.owner.client.patch('/realm', { default_code_block_language: '' });
  assert.is(await render(member.client, '```\nx = 1\n```'), '<div class="codehilite"><pre><span></span><code>x = 1\n</code></pre></div>');
});

test("translate_emoticons is the sender's: their messages and previews translate, others' do not", async () => {
  const realm = await newRealm();
  const ann = await realm.addUser({ name: 'Ann' });
  const bob = await realm.addUser({ name: 'Bob' });
  const channel = await makeChannel(realm, 'general', [ann, bob]);
  assert.is(await render(ann.client, 'hi :)'), '<p>hi :)</p>');
  assert.equal((await ann.client.patch('/settings', { translate_emoticons: true })).body.result, 'success');
  assert.is(await render(ann.client, 'hi :) `:)`'), `<p>hi ${slightSmile} <code>:)</code></p>`);
  assert.is(await render(bob.client, 'hi :)'), '<p>hi :)</p>');

  const id = await send(ann, channel, 'greetings', 'hello :)');
  const fetched = await bob.client.get(`/messages/${id}`);
  assert.is(fetched.body.message.content, `<p>hello ${slightSmile}</p>`, 'stored as the sender rendered it');
  // An edit renders for the message's sender again.
  await ann.client.patch(`/messages/${id}`, { content: 'bye :(' });
  assert.is(
    (await bob.client.get(`/messages/${id}`)).body.message.content,
    '<p>bye <span aria-label="frown" class="emoji emoji-1f641" role="img" title="frown">:frown:</span></p>',
  );
});

test('inline_image_preview: linked images preview unless the organization turns previews off', async () => {
  const realm = await newRealm();
  const preview =
    '<p><a href="https://example.com/cat.png">cat</a></p>\n<div class="message_inline_image"><a href="https://example.com/cat.png" title="cat"><img src="https://example.com/cat.png"></a></div>';
  assert.is(await render(realm.owner.client, '[cat](https://example.com/cat.png)'), preview);
  await realm.owner.client.patch('/realm', { inline_image_preview: false });
  assert.is(await render(realm.owner.client, '[cat](https://example.com/cat.png)'), '<p><a href="https://example.com/cat.png">cat</a></p>');
});

test.run();
