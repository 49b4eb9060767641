import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderMarkdown } from '../../src/markdown/index.ts';
import { makeContext } from './markdown-helpers.ts';

const ctx = makeContext();
const render = (input: string) => renderMarkdown(input, ctx);
const html = (input: string) => render(input).html;

test('user mention', () => {
  const r = render('@**King Hamlet** hi');
  assert.is(r.html, '<p><span class="user-mention" data-user-id="4">@King Hamlet</span> hi</p>');
  assert.equal([...r.mentionedUserIds], [4]);
});

test('user mention is case-insensitive and shows the real name', () => {
  assert.is(html('@**king hamlet**'), '<p><span class="user-mention" data-user-id="4">@King Hamlet</span></p>');
});

test('mention by name and id', () => {
  assert.is(html('@**King Hamlet|4**'), '<p><span class="user-mention" data-user-id="4">@King Hamlet</span></p>');
  assert.is(html('@**|4**'), '<p><span class="user-mention" data-user-id="4">@King Hamlet</span></p>');
});

test('name that does not match the id is not a mention', () => {
  const r = render('@**Othello|4**');
  assert.is(r.html, '<p>@<strong>Othello|4</strong></p>');
  assert.is(r.mentionedUserIds.size, 0);
});

test('ambiguous names need the id', () => {
  const r = render('@**Twin** @**Twin|8**');
  assert.is(r.html, '<p>@<strong>Twin</strong> <span class="user-mention" data-user-id="8">@Twin</span></p>');
  assert.equal([...r.mentionedUserIds], [8]);
});

test('silent mention', () => {
  const r = render('@_**King Hamlet**');
  assert.is(r.html, '<p><span class="user-mention silent" data-user-id="4">King Hamlet</span></p>');
  assert.is(r.mentionedUserIds.size, 0);
});

test('deactivated user is mentioned silently', () => {
  const r = render('@**Othello**');
  assert.is(r.html, '<p><span class="user-mention silent" data-user-id="6">Othello</span></p>');
  assert.is(r.mentionedUserIds.size, 0);
});

test('unknown user stays text', () => {
  const r = render('@**Nobody Here**');
  assert.is(r.html, '<p>@<strong>Nobody Here</strong></p>');
  assert.is(r.mentionedUserIds.size, 0);
});

test('mention name is escaped', () => {
  assert.is(html('@**<b>Evil</b> & Co**'), '<p><span class="user-mention" data-user-id="9">@&lt;b&gt;Evil&lt;/b&gt; &amp; Co</span></p>');
});

test('mention needs a boundary before it', () => {
  assert.is(html('email@**King Hamlet**'), '<p>email@<strong>King Hamlet</strong></p>');
  assert.is(html('(@**King Hamlet**)'), '<p>(<span class="user-mention" data-user-id="4">@King Hamlet</span>)</p>');
});

test('mentions in code are not mentions', () => {
  const r = render('`@**King Hamlet**`\n\n```\n@**King Hamlet**\n```');
  assert.is(r.html, '<p><code>@**King Hamlet**</code></p>\n<div class="codehilite"><pre><span></span><code>@**King Hamlet**\n</code></pre></div>');
  assert.is(r.mentionedUserIds.size, 0);
});

test('mentions in quotes are silent', () => {
  const r = render('> @**King Hamlet** and @*support*\n\n```quote\n@**all**\n```');
  assert.is(
    r.html,
    '<blockquote>\n<p><span class="user-mention silent" data-user-id="4">King Hamlet</span> and <span class="user-group-mention silent" data-user-group-id="31">support</span></p>\n</blockquote>\n<blockquote>\n<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>\n</blockquote>',
  );
  assert.is(r.mentionedUserIds.size, 0);
  assert.is(r.mentionedGroupIds.size, 0);
  assert.is(r.wildcardMention, false);
});

test('stream wildcards', () => {
  for (const w of ['all', 'everyone', 'channel', 'stream']) {
    const r = render(`@**${w}**`);
    assert.is(r.html, `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${w}</span></p>`);
    assert.ok(r.wildcardMention);
    assert.not.ok(r.topicWildcardMention);
  }
});

test('silent wildcard does not notify', () => {
  const r = render('@_**all**');
  assert.is(r.html, '<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>');
  assert.not.ok(r.wildcardMention);
});

test('topic wildcard', () => {
  const r = render('@**topic**');
  assert.is(r.html, '<p><span class="topic-mention">@topic</span></p>');
  assert.ok(r.topicWildcardMention);
  assert.not.ok(r.wildcardMention);
});

test('group mention', () => {
  const r = render('@*support* @*Support*');
  assert.is(
    r.html,
    '<p><span class="user-group-mention" data-user-group-id="31">@support</span> <span class="user-group-mention" data-user-group-id="31">@support</span></p>',
  );
  assert.equal([...r.mentionedGroupIds], [31]);
});

test('silent and deactivated group mentions', () => {
  const r = render('@_*support* @*Old team*');
  assert.is(
    r.html,
    '<p><span class="user-group-mention silent" data-user-group-id="31">support</span> <span class="user-group-mention silent" data-user-group-id="32">Old team</span></p>',
  );
  assert.is(r.mentionedGroupIds.size, 0);
});

test('unknown group stays emphasis', () => {
  assert.is(html('@*nobody*'), '<p>@<em>nobody</em></p>');
});

test('channel link', () => {
  assert.is(html('#**Denmark**'), '<p><a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a></p>');
  assert.is(html('#**Verona street**'), '<p><a class="stream" data-stream-id="2" href="/#narrow/channel/2-Verona-street">#Verona street</a></p>');
  assert.is(html('#**a.b**'), '<p><a class="stream" data-stream-id="3" href="/#narrow/channel/3-a.2Eb">#a.b</a></p>');
});

test('unknown channel stays text', () => {
  assert.is(html('#**Nowhere**'), '<p>#<strong>Nowhere</strong></p>');
});

test('topic link', () => {
  assert.is(
    html('#**Denmark>some topic**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/some.20topic">#Denmark &gt; some topic</a></p>',
  );
  assert.is(
    html('#**Denmark>with id**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/with.20id/with/77">#Denmark &gt; with id</a></p>',
  );
});

test('empty topic link', () => {
  assert.is(
    html('#**Denmark>**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/">#Denmark &gt; <em>general chat</em></a></p>',
  );
});

test('message link', () => {
  assert.is(html('#**Denmark>t@123**'), '<p><a class="message-link" href="/#narrow/channel/1-Denmark/topic/t/near/123">#Denmark &gt; t @ 💬</a></p>');
  assert.is(
    html('#**Denmark>@123**'),
    '<p><a class="message-link" href="/#narrow/channel/1-Denmark/topic//near/123">#Denmark &gt; <em>general chat</em> @ 💬</a></p>',
  );
});

test('topic with special characters is encoded', () => {
  assert.is(
    html('#**Denmark>a/b?c&d.e**'),
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/a.2Fb.3Fc.26d.2Ee">#Denmark &gt; a/b?c&amp;d.e</a></p>',
  );
});

test('links are collected in order', () => {
  const r = render('see http://a.com and [b](https://b.com/x) and #**Denmark** and http://a.com');
  assert.equal(r.links, ['http://a.com', 'https://b.com/x', '/#narrow/channel/1-Denmark']);
});

test('uploads are collected', () => {
  const r = render(
    '[a](/user_uploads/2/ab/a.pdf) http://zulip.testserver/user_uploads/2/cd/b.png https://other.example/user_uploads/2/x/c.png [d](user_uploads/bad)',
  );
  assert.equal(r.uploadPathIds, ['2/ab/a.pdf', '2/cd/b.png']);
});

test('me message', () => {
  assert.ok(render('/me is away').isMeMessage);
  assert.not.ok(render('me /me').isMeMessage);
  assert.is(html('/me is away'), '<p>/me is away</p>');
});

test('result of a message without syntax', () => {
  const r = render('hello');
  assert.equal(r, {
    html: '<p>hello</p>',
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    wildcardMention: false,
    topicWildcardMention: false,
    uploadPathIds: [],
    links: [],
    isMeMessage: false,
    alertWordText: 'hello\n\n',
  });
});

test('emoticons are translated when the sender asks for it', () => {
  const c = makeContext({ translateEmoticons: true });
  const e = (code: string, name: string) => {
    const title = name.replace(/_/g, ' ');
    return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${name}:</span>`;
  };
  assert.is(
    renderMarkdown(':) foo :( bar <3 with space : ) real', c).html,
    `<p>${e('1f642', 'slight_smile')} foo ${e('1f641', 'frown')} bar ${e('2764', 'heart')} with space : ) real</p>`,
  );
  assert.is(renderMarkdown('a:) ;)b', c).html, '<p>a:) ;)b</p>');
  assert.is(renderMarkdown('Translate this !:)?', c).html, `<p>Translate this !${e('1f642', 'slight_smile')}?</p>`);
  assert.is(renderMarkdown('`:)`', c).html, '<p><code>:)</code></p>');
  assert.is(renderMarkdown(':)', makeContext()).html, '<p>:)</p>');
});

test('default code block language', () => {
  const c = makeContext({ defaultCodeBlockLanguage: 'python' });
  assert.is(
    renderMarkdown('```\nx\n```', c).html,
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span>\n</code></pre></div>',
  );
});

test('tex renders with katex', () => {
  const out = html('$$1 \\oplus 0 = 1$$');
  assert.ok(
    out.startsWith('<p><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><mn>1</mn><mo>⊕</mo>'),
  );
  assert.ok(out.endsWith('</span></p>'));
  const display = html('```math\na^2\n```');
  assert.ok(display.startsWith('<p><span class="katex-display"><span class="katex">'));
  const money = html('We have $5 and ($$x$$)');
  assert.ok(money.startsWith('<p>We have $5 and (<span class="katex">'));
  assert.ok(money.endsWith('</span>)</p>'));
});

test('tex source cannot inject html', () => {
  const out = html("$$<script>alert('x')</script>$$");
  assert.not.ok(out.includes('<script>'));
  assert.ok(out.includes('&lt;script&gt;'));
});

test.run();
