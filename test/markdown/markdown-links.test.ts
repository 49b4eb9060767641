import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { emojiCodeByName, emojiCodeOfText, emojiNameByCode, isValidEmojiCode } from '../../src/emoji/index.ts';
import { compileLinkifiers, type Linkifier, LinkifierValidationError, renderMarkdown, topicLinks, validateLinkifier } from '../../src/markdown/index.ts';
import { makeContext } from './markdown-helpers.ts';

const ctx = makeContext();
const html = (input: string) => renderMarkdown(input, ctx).html;
const a = (url: string) =>
  `<a href="${url.startsWith('http') || url.includes('://') ? url : url.includes('@') ? 'mailto:' + url : 'http://' + url}">${url}</a>`;

// Autolinks: [input, expected with %s for the link, linked text] (Zulip's linkify cases).
const autolinks: Array<[string, string, string]> = [
  ['http://www.google.com', '<p>%s</p>', 'http://www.google.com'],
  ['http://www.theregister.co.uk/foo/bar', '<p>%s</p>', 'http://www.theregister.co.uk/foo/bar'],
  [' some text https://www.google.com/', '<p>some text %s</p>', 'https://www.google.com/'],
  ['with short example.com url', '<p>with short %s url</p>', 'example.com'],
  ['t.co', '<p>%s</p>', 't.co'],
  ['readme.md', '<p>readme.md</p>', ''],
  ['python class views.py is', '<p>python class views.py is</p>', ''],
  ['with www www.zulip.com/foo ok?', '<p>with www %s ok?</p>', 'www.zulip.com/foo'],
  ['allow questions like foo.com?', '<p>allow questions like %s?</p>', 'foo.com'],
  ['"is.gd/foo/ "', '<p>"%s "</p>', 'is.gd/foo/'],
  ['end of sentence https://t.co.', '<p>end of sentence %s.</p>', 'https://t.co'],
  ['(Something like http://foo.com/blah_blah)', '<p>(Something like %s)</p>', 'http://foo.com/blah_blah'],
  ['end with a quote www.google.com"', '<p>end with a quote %s"</p>', 'www.google.com'],
  ['from http://supervisord.org/running.html:', '<p>from %s:</p>', 'http://supervisord.org/running.html'],
  ['at https://zulip.com/api. Check it!', '<p>at %s. Check it!</p>', 'https://zulip.com/api'],
  ['I spent a year at ucl.ac.uk', '<p>I spent a year at %s</p>', 'ucl.ac.uk'],
  ['http://localhost:9991/?show_debug=1', '<p>%s</p>', 'http://localhost:9991/?show_debug=1'],
  ['(http://en.wikipedia.org/wiki/Each-way_(bet))', '<p>(%s)</p>', 'http://en.wikipedia.org/wiki/Each-way_(bet)'],
  ['http://en.wikipedia.org/wiki/Qt_(framework)', '<p>%s</p>', 'http://en.wikipedia.org/wiki/Qt_(framework)'],
  [
    'https://jira.atlassian.com/browse/JRA-31953?page=com.atlassian.jira:comment-tabpanel',
    '<p>%s</p>',
    'https://jira.atlassian.com/browse/JRA-31953?page=com.atlassian.jira:comment-tabpanel',
  ],
  ['http://www.postgresql.org/message-id/14040.1364490185@sss.pgh.pa.us', '<p>%s</p>', 'http://www.postgresql.org/message-id/14040.1364490185@sss.pgh.pa.us'],
  ['javascript:alert("hi");.com', '<p>javascript:alert("hi");.com</p>', ''],
  ['javascript:foo.com', '<p>javascript:%s</p>', 'foo.com'],
  ['javascript://foo.com', '<p>javascript://foo.com</p>', ''],
  ['foobarscript://foo.com', '<p>foobarscript://foo.com</p>', ''],
  ['about:blank.com', '<p>about:%s</p>', 'blank.com'],
  ['[foo](javascript:foo.com)', '<p>[foo](javascript:%s)</p>', 'foo.com'],
  ['[foo](javascript://foo.com)', '<p>[foo](javascript://foo.com)</p>', ''],
  ['aim:addbuddy?screenname=foo', '<p>aim:addbuddy?screenname=foo</p>', ''],
  ['itms://itunes.com/apps/appname', '<p>itms://itunes.com/apps/appname</p>', ''],
  ['1 [](foo://) 3 [](foo://) 5', '<p>1 [](foo://) 3 [](foo://) 5</p>', ''],
  ['javascript:<i>"foo&bar"</i>', '<p>javascript:&lt;i&gt;"foo&amp;bar"&lt;/i&gt;</p>', ''],
  ['http://zulip.testserver/#narrow/stream/1-Denmark', '<p><a href="#narrow/stream/1-Denmark">http://zulip.testserver/#narrow/stream/1-Denmark</a></p>', ''],
  ['a@b.com', '<p>%s</p>', 'a@b.com'],
  ['<a@b.com>', '<p>&lt;%s&gt;</p>', 'a@b.com'],
  ['a@b.com/foo', '<p>a@b.com/foo</p>', ''],
  ['http://example.com/something?with,commas,in,url, but not at end', '<p>%s, but not at end</p>', 'http://example.com/something?with,commas,in,url'],
  [
    ' some text https://www.google.com/baz_(match)?with=foo&bar=baz with extras',
    '<p>some text <a href="https://www.google.com/baz_(match)?with=foo&amp;bar=baz">https://www.google.com/baz_(match)?with=foo&amp;bar=baz</a> with extras</p>',
    '',
  ],
  ['https://metacpan.org/module/Image::Resize::OpenCV', '<p>%s</p>', 'https://metacpan.org/module/Image::Resize::OpenCV'],
  ['a.commandstuff()', '<p>a.commandstuff()</p>', ''],
  ['love...it', '<p>love...it</p>', ''],
  ['sorry,http://example.com/', '<p>sorry,%s</p>', 'http://example.com/'],
  [
    'six nested parens https://zulip.com/(we_like_((t(d(o(___)o)o))o_nest_)_nest)_nest',
    '<p>six nested parens %s</p>',
    'https://zulip.com/(we_like_((t(d(o(___)o)o))o_nest_)_nest)_nest',
  ],
  [
    'eight is too many https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest',
    '<p>eight is too many https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest</p>',
    '',
  ],
  [
    'nested with autodetection zulip.us/(we_like_(to_n(e)st_)_n(es)t)_nest',
    '<p>nested with autodetection %s</p>',
    'zulip.us/(we_like_(to_n(e)st_)_n(es)t)_nest',
  ],
  [
    'bitcoin:1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
    '<p><a href="bitcoin:1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2">bitcoin:1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2</a></p>',
    '',
  ],
  ['**bold**http://x.com', '<p><strong>bold</strong>http://x.com</p>', ''],
  // Desktop apps' links, and links right after letters of other scripts (current Zulip).
  ['obsidian://open?vault=MyVault', '<p>%s</p>', 'obsidian://open?vault=MyVault'],
  ['see zotero://select/library/items/C495WKPX', '<p>see %s</p>', 'zotero://select/library/items/C495WKPX'],
  ['hansoft://Project/Task/12345', '<p>%s</p>', 'hansoft://Project/Task/12345'],
  ['asanadesktop://task/123456789', '<p>%s</p>', 'asanadesktop://task/123456789'],
  ['slack://open?team=T1', '<p>slack://open?team=T1</p>', ''],
  ['日本語https://google.com', '<p>日本語%s</p>', 'https://google.com'],
  ['Приветhttps://google.com', '<p>Привет%s</p>', 'https://google.com'],
  ['foohttps://google.com', '<p>foohttps://google.com</p>', ''],
  ['[message](mid:960830.1639@XIson.com)', '<p><a href="mid:960830.1639@XIson.com">message</a></p>', ''],
  ['[Asana Task](asanadesktop://task/123456789)', '<p><a href="asanadesktop://task/123456789">Asana Task</a></p>', ''],
  ['[x](slack://open)', '<p>[x](slack://open)</p>', ''],
];

for (const [input, expected, url] of autolinks) {
  test(`autolink: ${input}`, () => {
    assert.is(html(input), url ? expected.replace('%s', a(url)) : expected);
  });
}

const issues: Linkifier = { id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' };
const repo: Linkifier = {
  id: 2,
  pattern: '(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)',
  url_template: 'https://github.com/{org}/{repo}/issues/{id}',
};
const withLinkifiers = (list: Linkifier[]) => makeContext({}, list);

test('linkifier', () => {
  assert.is(renderMarkdown('See #123 now', withLinkifiers([issues])).html, '<p>See <a href="https://trac.example.com/ticket/123">#123</a> now</p>');
});

test('linkifier needs a boundary on both sides', () => {
  const c = withLinkifiers([issues]);
  assert.is(
    renderMarkdown('abc#123 #123abc (#123) #123.', c).html,
    '<p>abc#123 #123abc (<a href="https://trac.example.com/ticket/123">#123</a>) <a href="https://trac.example.com/ticket/123">#123</a>.</p>',
  );
});

test('linkifier does not apply inside code or links', () => {
  const c = withLinkifiers([issues]);
  assert.is(
    renderMarkdown('`#123` [see #123](http://x.com) http://x.com/#123', c).html,
    '<p><code>#123</code> <a href="http://x.com">see #123</a> <a href="http://x.com/#123">http://x.com/#123</a></p>',
  );
});

test('overlapping linkifiers: the earlier one wins', () => {
  const c = withLinkifiers([repo, issues]);
  assert.is(
    renderMarkdown('zulip/zulip#123 and #7', c).html,
    '<p><a href="https://github.com/zulip/zulip/issues/123">zulip/zulip#123</a> and <a href="https://trac.example.com/ticket/7">#7</a></p>',
  );
});

test('linkifier values are percent-encoded', () => {
  const c = withLinkifiers([{ id: 3, pattern: 'wiki:(?P<page>\\S+)', url_template: 'https://wiki.example.com/{page}' }]);
  assert.is(renderMarkdown('wiki:a/b&c"d', c).html, '<p><a href="https://wiki.example.com/a%2Fb%26c%22d">wiki:a/b&amp;c"d</a></p>');
});

test('linkifier with reserved expansion and unicode', () => {
  const c = withLinkifiers([{ id: 4, pattern: 'go/(?P<path>[\\pL/]+)', url_template: 'https://go.example.com/{+path}' }]);
  assert.is(renderMarkdown('go/é/x', c).html, '<p><a href="https://go.example.com/%C3%A9/x">go/é/x</a></p>');
});

test('linkifier to a javascript: URL is not linked', () => {
  const c = withLinkifiers([{ id: 5, pattern: 'js(?P<x>[0-9]+)', url_template: 'javascript:alert({x})' }]);
  assert.is(renderMarkdown('js1', c).html, '<p>js1</p>');
});

test('linkifier inside a mention name is not applied', () => {
  const c = withLinkifiers([{ id: 6, pattern: 'Hamlet', url_template: 'https://example.com/hamlet' }]);
  assert.is(
    renderMarkdown('@**King Hamlet** Hamlet', c).html,
    '<p><span class="user-mention" data-user-id="4">@King Hamlet</span> <a href="https://example.com/hamlet">Hamlet</a></p>',
  );
});

test('compiled linkifiers are cached by content', () => {
  assert.is(compileLinkifiers([issues, repo]), compileLinkifiers([{ ...issues }, { ...repo }]));
});

test('topic links', () => {
  const c = compileLinkifiers([repo, issues]);
  assert.equal(topicLinks('zulip/zulip#123 and #7 and https://a.com/x, b.org', c), [
    { text: 'zulip/zulip#123', url: 'https://github.com/zulip/zulip/issues/123' },
    { text: '#7', url: 'https://trac.example.com/ticket/7' },
    { text: 'https://a.com/x', url: 'https://a.com/x' },
    { text: 'b.org', url: 'https://b.org' },
  ]);
  assert.equal(topicLinks('nothing here', c), []);
  assert.equal(topicLinks('#1 #2', compileLinkifiers([issues])), [
    { text: '#1', url: 'https://trac.example.com/ticket/1' },
    { text: '#2', url: 'https://trac.example.com/ticket/2' },
  ]);
});

function validationError(input: Parameters<typeof validateLinkifier>[0]): string {
  try {
    validateLinkifier(input);
  } catch (error) {
    assert.instance(error, LinkifierValidationError);
    return (error as Error).message;
  }
  return '';
}

test('valid linkifier', () => {
  assert.is(validationError({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.com/{id}' }), '');
});

test("bad regex: RE2 refuses it, with RE2's message", () => {
  const cases: Array<[string, string]> = [
    ['#(?P<id>[0-9]+', 'missing ): #(?P<id>[0-9]+'],
    ['(?P<id>x)\\1', 'invalid escape sequence: \\1'],
    ['(?=x)(?P<id>x)', 'invalid perl operator: (?='],
    ['(?<!x)(?P<id>x)', 'invalid perl operator: (?<!'],
    ['(?P<id>x{1001})', 'invalid repetition size: {1001}'],
    ['(?P<id>[z-a])', 'invalid character class range: z-a'],
    ['(?P<id>x))', 'unexpected ): (?P<id>x))'],
    ['(?P<id>*)', 'no argument for repetition operator: *'],
    ['(?P<id>x)\\', 'trailing \\'],
  ];
  for (const [pattern, message] of cases) {
    assert.is(validationError({ pattern, url_template: 'https://x.com/{id}' }), `Bad regular expression: ${message}`, pattern);
  }
});

test('RE2 syntax JavaScript lacks is accepted and applied', () => {
  for (const pattern of ['(?U)#(?P<id>[0-9]+)', '\\pN(?P<id>[[:digit:]]+)', '\\Q#\\E(?P<id>\\d+)\\z']) {
    assert.is(validationError({ pattern, url_template: 'https://x.com/{id}' }), '', pattern);
  }
  const c = withLinkifiers([{ id: 7, pattern: '(?i)jira-(?P<id>\\d+)', url_template: 'https://jira.example.com/{id}' }]);
  assert.is(renderMarkdown('see Jira-12.', c).html, '<p>see <a href="https://jira.example.com/12">Jira-12</a>.</p>');
});

test('a linkifier runs in linear time: (a+)+b over 10,000 characters', () => {
  const c = withLinkifiers([{ id: 8, pattern: '(?P<id>(a+)+b)', url_template: 'https://x.com/{id}' }]);
  // A backtracking engine takes 2^n steps to give up on a run without its `b`.
  const run = 'a'.repeat(10_000);
  assert.is(renderMarkdown(run, c).html, `<p>${run}</p>`);
  assert.is(renderMarkdown(`x ${run}b`, c).html, `<p>x <a href="https://x.com/${run}b">${run}b</a></p>`);
  assert.equal(topicLinks(`${run}!`, c.linkifiers), []);
  assert.equal(topicLinks('aab', c.linkifiers), [{ text: 'aab', url: 'https://x.com/aab' }]);
});

test('invalid url template', () => {
  assert.is(validationError({ pattern: '(?P<id>[0-9]+)', url_template: 'https://x.com/{id' }), 'Invalid URL template.');
  assert.is(validationError({ pattern: '(?P<id>[0-9]+)', url_template: 'https://x.com/{!id}' }), 'Invalid URL template.');
});

test('template and pattern variables must agree', () => {
  assert.is(
    validationError({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.com/{id}/{other}' }),
    "Group 'other' in URL template is not present in linkifier pattern.",
  );
  assert.is(
    validationError({ pattern: '(?P<a>[a-z]+)#(?P<id>[0-9]+)', url_template: 'https://x.com/{id}' }),
    "Group 'a' in linkifier pattern is not present in URL template.",
  );
});

test('example input and reverse template round trip', () => {
  const base = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' };
  assert.is(validationError({ ...base, example_input: '#123', reverse_template: '#{id}' }), '');
  assert.is(validationError({ ...base, example_input: 'x123' }), 'The example input does not match the linkifier pattern.');
  assert.match(
    validationError({ ...base, example_input: '#123', reverse_template: 'issue {id}' }),
    /^The reverse template does not turn https:\/\/github.com\/zulip\/zulip\/issues\/123 back into the example input: got 'issue 123', expected '#123'\.$/,
  );
  assert.is(validationError({ ...base, reverse_template: '#{id}' }), 'A reverse template requires an example input.');
  assert.is(
    validationError({ ...base, example_input: '#1', reverse_template: '#{nope}' }),
    "Group 'nope' in reverse template is not present in linkifier pattern.",
  );
});

test('reverse template escapes braces', () => {
  const base = { pattern: '\\{(?P<id>[0-9]+)\\}', url_template: 'https://x.com/{id}' };
  assert.is(validationError({ ...base, example_input: '{12}', reverse_template: '{{{id}}}' }), '');
  assert.is(validationError({ ...base, example_input: '{12}', reverse_template: '{id' }), 'Invalid reverse template.');
});

test('alternative url templates', () => {
  const base = { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/z/z/issues/{id}', example_input: '#5', reverse_template: '#{id}' };
  assert.is(validationError({ ...base, alternative_url_templates: ['https://github.com/z/z/pull/{id}'] }), '');
  assert.is(validationError({ ...base, alternative_url_templates: ['https://x.com/{id'] }), 'Invalid alternative URL template: https://x.com/{id');
  assert.is(
    validationError({ ...base, alternative_url_templates: ['https://x.com/{zzz}'] }),
    "Group 'zzz' in URL template is not present in linkifier pattern.",
  );
  assert.is(
    validationError({ pattern: base.pattern, url_template: base.url_template, alternative_url_templates: ['https://github.com/z/z/pull/{id}'] }),
    'Alternative URL templates require a reverse template.',
  );
});

test('emoji table', () => {
  assert.is(emojiCodeByName('+1'), '1f44d');
  assert.is(emojiCodeByName('thumbs_up'), '1f44d');
  assert.is(emojiNameByCode('1f44d'), '+1');
  assert.is(emojiNameByCode('1f4a9'), 'poop');
  assert.is(emojiCodeByName('hash'), '0023-20e3');
  assert.ok(isValidEmojiCode('1f600'));
  assert.not.ok(isValidEmojiCode('1f600-fe0f'));
  assert.not.ok(isValidEmojiCode('1f3fb'));
  assert.is(emojiCodeByName('skin-tone-2'), undefined);
  assert.is(emojiCodeOfText('❤️'), '2764');
  assert.is(emojiCodeOfText('🇺🇸'), '1f1fa-1f1f8');
  assert.is(emojiNameByCode('1f1fa-1f1f8'), 'flag_united_states');
});

// Names as current Zulip has them (Zulip 11 moved smile to 😄 and slight_smile to 🙂; curated names
// come before CLDR's): [name, code it means (null: no such name), the emoji's canonical name].
const NAMES: [name: string, code: string | null, canonical: string | null][] = [
  ['smile', '1f604', 'smile'],
  ['slight_smile', '1f642', 'slight_smile'],
  ['big_smile', null, null],
  ['smiling_face', '263a', 'smiling_face'],
  ['relaxed', '263a', 'smiling_face'],
  ['grinning', '1f600', 'grinning'],
  ['gold', '1f947', 'first_place'],
  ['number_one', '1f947', 'first_place'],
  ['kitten', '1f431', 'kitten'],
  ['cat_face', null, null],
  ['working_on_it', '1f6e0', 'working_on_it'],
  ['coffee', '2615', 'coffee'],
  ['mine', '26cf', 'mine'],
];
for (const [name, code, canonical] of NAMES) {
  test(`emoji name ${name}: the table, :${name}:, and the character`, () => {
    assert.is(emojiCodeByName(name) ?? null, code);
    const typed = renderMarkdown(`:${name}:`, makeContext()).html;
    if (code === null || canonical === null) {
      assert.is(typed, `<p>:${name}:</p>`);
      return;
    }
    assert.is(emojiNameByCode(code), canonical);
    const span = (shown: string) => {
      const title = shown.replace(/_/g, ' ');
      return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${shown}:</span>`;
    };
    assert.is(typed, `<p>${span(name)}</p>`);
    // Characters shown as text by default are emoji with U+FE0F after them.
    const character = String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16))).replace(/^\P{Emoji_Presentation}$/u, '$&\uFE0F');
    assert.is(renderMarkdown(character, makeContext()).html, `<p>${span(canonical)}</p>`);
  });
}

test.run();
