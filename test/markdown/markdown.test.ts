import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderMarkdown } from '../../src/markdown/index.ts';
import { makeContext } from './markdown-helpers.ts';

const ctx = makeContext();
const render = (input: string) => renderMarkdown(input, ctx).html;
const emoji = (code: string, name: string) =>
  `<span aria-label="${name.replace(/_/g, ' ')}" class="emoji emoji-${code}" role="img" title="${name.replace(/_/g, ' ')}">:${name}:</span>`;
const cases: Array<[string, string, string]> = [
  // [name, input, expected html]
  ['empty', '', ''],
  ['whitespace only', '   \n  ', ''],
  ['basic paragraph', 'test_input', '<p>test_input</p>'],
  ['apostrophe stays', "it's lunch time", "<p>it's lunch time</p>"],
  ['nl2br', 'test\nbar', '<p>test<br>\nbar</p>'],
  ['trailing spaces kept', 'test  ', '<p>test  </p>'],
  ['two paragraphs', 'a\n\nb', '<p>a</p>\n<p>b</p>'],
  ['two space indent is not code', '  notcode', '<p>notcode</p>'],
  [
    'ampersands',
    '& &amp; &amp;amp;\n~~~~\n& &amp; &amp;amp;\n~~~~\n    & &amp; &amp;amp;',
    '<p>&amp; &amp; &amp;amp;</p>\n<div class="codehilite"><pre><span></span><code>&amp; &amp;amp; &amp;amp;amp;\n</code></pre></div>\n<div class="codehilite"><pre><span></span><code>&amp; &amp;amp; &amp;amp;amp;\n</code></pre></div>',
  ],
  // emphasis
  ['emphasis', '*foo*', '<p><em>foo</em></p>'],
  ['underscore disabled', '_foo_', '<p>_foo_</p>'],
  ['double underscore disabled', '__foo__', '<p>__foo__</p>'],
  ['pointer code is not emphasis', 'const char *x = (char *)y', '<p>const char *x = (char *)y</p>'],
  ['emphasis with space', 'A *foo bar* is a *baz quux*', '<p>A <em>foo bar</em> is a <em>baz quux</em></p>'],
  ['emphasis escapes html', '*<h1>Hello world</h1>*', '<p><em>&lt;h1&gt;Hello world&lt;/h1&gt;</em></p>'],
  ['strong', '**foo**', '<p><strong>foo</strong></p>'],
  ['strong em', '***foo***', '<p><strong><em>foo</em></strong></p>'],
  ['strong emoji', '**:smile:**', `<p><strong>${emoji('1f604', 'smile')}</strong></p>`],
  [
    'multiline strong is not strong',
    "You can check out **any time you'd like\nBut you can never leave**",
    "<p>You can check out **any time you'd like<br>\nBut you can never leave**</p>",
  ],
  ['strikethrough', 'I like ~~software~~ hardware', '<p>I like <del>software</del> hardware</p>'],
  ['strikethrough with spaces', 'I ~~ like software ~~ love hardware', '<p>I <del> like software </del> love hardware</p>'],
  ['strikethrough link', '~~test http://xx.xx link~~', '<p><del>test <a href="http://xx.xx">http://xx.xx</a> link</del></p>'],
  ['lone stars', 'a * b ** c', '<p>a * b ** c</p>'],
  // code
  ['inline code spaces', '` outer ` ```    space    ```', '<p><code> outer </code> <code>    space    </code></p>'],
  ['inline code entities', '`<&nbsp;>`', '<p><code>&lt;&amp;nbsp;&gt;</code></p>'],
  ['inline code protects mention', '`@**King Hamlet**`', '<p><code>@**King Hamlet**</code></p>'],
  [
    'fenced and inline backticks',
    '\n```\nfenced code\n```\n\n```inline code```\n',
    '<div class="codehilite"><pre><span></span><code>fenced code\n</code></pre></div>\n<p><code>inline code</code></p>',
  ],
  [
    'fenced multiline',
    'Hamlet once said\n~~~~\ndef func():\n    x = 1\n\n    y = 2\n\n    z = 3\n~~~~\nAnd all was good.',
    '<p>Hamlet once said</p>\n<div class="codehilite"><pre><span></span><code>def func():\n    x = 1\n\n    y = 2\n\n    z = 3\n</code></pre></div>\n<p>And all was good.</p>',
  ],
  [
    'fenced trailing whitespace',
    'Hamlet once said\n~~~~\ndef func():\n    x = 1\n\n    y = 2\t\t\n\n    z = 3       \n~~~~\nAnd all was good.',
    '<p>Hamlet once said</p>\n<div class="codehilite"><pre><span></span><code>def func():\n    x = 1\n\n    y = 2\n\n    z = 3\n</code></pre></div>\n<p>And all was good.</p>',
  ],
  [
    'invented language',
    '``` inventedlanguage\ndef speak(self):\n    x = 1\n```',
    '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>',
  ],
  [
    'language alias',
    '``` py2\nx\n```',
    '<div class="codehilite" data-code-language="Python 2.x"><pre><span></span><code><span class="n">x</span>\n</code></pre></div>',
  ],
  [
    'dot language',
    '~~~~.python \nx\n~~~~',
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span>\n</code></pre></div>',
  ],
  [
    'code quotes escaped without language',
    '```\nprint("hi \'x\'")\n```',
    '<div class="codehilite"><pre><span></span><code>print(&quot;hi &#39;x&#39;&quot;)\n</code></pre></div>',
  ],
  [
    'code quotes raw with language',
    '```js\nalert("hi")\n```',
    '<div class="codehilite" data-code-language="JavaScript"><pre><span></span><code><span class="nx">alert</span><span class="p">(</span><span class="s2">"hi"</span><span class="p">)</span>\n</code></pre></div>',
  ],
  ['four space code', '    def foo(): pass', '<div class="codehilite"><pre><span></span><code>def foo(): pass\n</code></pre></div>'],
  [
    'code in fence keeps html escaped',
    '~~~\n<h1>stay normal</h1>\n~~~',
    '<div class="codehilite"><pre><span></span><code>&lt;h1&gt;stay normal&lt;/h1&gt;\n</code></pre></div>',
  ],
  ['list inside code fence', '~~~\nint x = 3\n* 4;\n~~~', '<div class="codehilite"><pre><span></span><code>int x = 3\n* 4;\n</code></pre></div>'],
  ['malformed fence', '~~~~~~~~xxxxxxxxx:  xxxxxxxxxxxx xxxxx x xxxxxxxx~~~~~~', '<p>~~~~~~~~xxxxxxxxx:  xxxxxxxxxxxx xxxxx x xxxxxxxx~~~~~~</p>'],
  ['unclosed fence runs to the end', 'a\n```\nb', '<p>a</p>\n<div class="codehilite"><pre><span></span><code>b\n</code></pre></div>'],
  ['empty fence renders nothing', '```\n```', ''],
  ['default code language', '```\nx\n```', '<div class="codehilite"><pre><span></span><code>x\n</code></pre></div>'],
  // headings, hr
  ['heading', '# Hello world', '<h1>Hello world</h1>'],
  ['heading needs space', '#Hello world', '<p>#Hello world</p>'],
  ['heading many spaces', '#  Hello world', '<h1>Hello world</h1>'],
  ['heading 6', '###### Hello world', '<h6>Hello world</h6>'],
  ['heading 7 is text', '####### Hello world', '<p>####### Hello world</p>'],
  ['heading then text', '## Title\ntext', '<h2>Title</h2>\n<p>text</p>'],
  ['setext disabled', 'Title\n===', '<p>Title<br>\n===</p>'],
  ['hr', 'a\n\n---\n\nb', '<p>a</p>\n<hr>\n<p>b</p>'],
  [
    'reference links disabled',
    'Hello [world]\n\n[world]: https://google.com',
    '<p>Hello [world]</p>\n<p>[world]: <a href="https://google.com">https://google.com</a></p>',
  ],
  // lists
  [
    'ulist',
    'Some text with a list:\n\n* One item\n* Two items\n* Three items',
    '<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>',
  ],
  ['ulist dash', '- One\n- Two', '<ul>\n<li>One</li>\n<li>Two</li>\n</ul>'],
  [
    'ulist mixed bullets',
    'Combine four lists:\n\n* One\n- Two\n+ Three\n- Four\n- Five',
    '<p>Combine four lists:</p>\n<ul>\n<li>One</li>\n<li>Two</li>\n<li>Three</li>\n<li>Four</li>\n<li>Five</li>\n</ul>',
  ],
  [
    'hanging list',
    'Some text with a hanging list:\n* One item\n* Two items\n* Three items',
    '<p>Some text with a hanging list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>',
  ],
  [
    'loose list',
    'Plain list\n\n* Alpha\n\n* Beta\n\nThen hang it off:\n* Ypsilon\n* Zeta',
    '<p>Plain list</p>\n<ul>\n<li>\n<p>Alpha</p>\n</li>\n<li>\n<p>Beta</p>\n</li>\n</ul>\n<p>Then hang it off:</p>\n<ul>\n<li>Ypsilon</li>\n<li>Zeta</li>\n</ul>',
  ],
  [
    'nested ulist',
    'Nested list\n* I am outer list\n  * I am inner nested list first item\n  * I am inner nested list second item',
    '<p>Nested list</p>\n<ul>\n<li>I am outer list<ul>\n<li>I am inner nested list first item</li>\n<li>I am inner nested list second item</li>\n</ul>\n</li>\n</ul>',
  ],
  ['list continuation keeps indent', '* I am outer list\n  I am something inside', '<ul>\n<li>I am outer list<br>\n  I am something inside</li>\n</ul>'],
  [
    'list codeblock interference',
    "* One \n  * Two\n\n    Two continued\n    This shouldn't be a code block\n",
    "<ul>\n<li>One <ul>\n<li>\n<p>Two</p>\n<p>Two continued<br>\nThis shouldn't be a code block</p>\n</li>\n</ul>\n</li>\n</ul>",
  ],
  [
    'list in four space code',
    'para:\n\n    1. list-1\n    2. list-2\n      1. list-2a\n    3. list-3\n',
    '<p>para:</p>\n<div class="codehilite"><pre><span></span><code>1. list-1\n2. list-2\n  1. list-2a\n3. list-3\n</code></pre></div>',
  ],
  [
    'complexly nested ol',
    'This is a heavily nested OL\n1. level-1\n  2. level-2\n    3. level-3\n    3. level-3a\n  2. level-2a\n2. level-1a\n',
    '<p>This is a heavily nested OL</p>\n<ol>\n<li>level-1<ol start="2">\n<li>level-2<ol start="3">\n<li>level-3</li>\n<li>level-3a</li>\n</ol>\n</li>\n<li>level-2a</li>\n</ol>\n</li>\n<li>level-1a</li>\n</ol>',
  ],
  ['numbered list', '1. A\n2. B\n  3. C', '<ol>\n<li>A</li>\n<li>B<ol start="3">\n<li>C</li>\n</ol>\n</li>\n</ol>'],
  ['renumbered list', '1. A\n1. B\n  1. C\n1. D', '<ol>\n<li>A</li>\n<li>B<ol>\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>'],
  ['list start', '3. A\n3. B\n3. C\n3. D', '<ol start="3">\n<li>A</li>\n<li>B</li>\n<li>C</li>\n<li>D</li>\n</ol>'],
  ['two renumbered lists', '1. A\n3. B\n  2. C\n1. D', '<ol>\n<li>A</li>\n<li>B<ol start="2">\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>'],
  [
    'renumbered blank lines',
    '1. A\n\n1. B\n\n1. C\n\n1. D\nordinary paragraph\n1. AA\n\n1. BB',
    '<ol>\n<li>\n<p>A</p>\n</li>\n<li>\n<p>B</p>\n</li>\n<li>\n<p>C</p>\n</li>\n<li>\n<p>D<br>\nordinary paragraph</p>\n</li>\n<li>\n<p>AA</p>\n</li>\n<li>\n<p>BB</p>\n</li>\n</ol>',
  ],
  [
    'list with inline code',
    'what I did:\n\n* run `cmake-gui ..` in `c:\\zulip`\n* opened vs2013 \n',
    '<p>what I did:</p>\n<ul>\n<li>run <code>cmake-gui ..</code> in <code>c:\\zulip</code></li>\n<li>opened vs2013 </li>\n</ul>',
  ],
  // quotes
  [
    'fenced quote',
    'Hamlet said:\n~~~ quote\nTo be or **not** to be.\n\nThat is the question\n~~~',
    '<p>Hamlet said:</p>\n<blockquote>\n<p>To be or <strong>not</strong> to be.</p>\n<p>That is the question</p>\n</blockquote>',
  ],
  [
    'fenced nested quote',
    'Hamlet said:\n~~~ quote\nPolonius said:\n> This above all: to thine ownself be true,\nAnd it must follow, as the night the day,\nThou canst not then be false to any man.\n\nWhat good advice!\n~~~',
    '<p>Hamlet said:</p>\n<blockquote>\n<p>Polonius said:</p>\n<blockquote>\n<p>This above all: to thine ownself be true,<br>\nAnd it must follow, as the night the day,<br>\nThou canst not then be false to any man.</p>\n</blockquote>\n<p>What good advice!</p>\n</blockquote>',
  ],
  [
    'complexly nested quote',
    "I heard about this second hand...\n~~~ quote\n\nHe said:\n~~~ quote\nThe customer is complaining.\n\nThey looked at this code:\n``` \ndef hello(): print 'hello\n```\nThey would prefer:\n~~~\ndef hello()\n  puts 'hello'\nend\n~~~\n\nPlease advise.\n~~~\n\nShe said:\n~~~ quote\nJust send them this:\n```\necho \"hello\n\"\n```\n~~~",
    '<p>I heard about this second hand...</p>\n<blockquote>\n<p>He said:</p>\n<blockquote>\n<p>The customer is complaining.</p>\n<p>They looked at this code:</p>\n<div class="codehilite"><pre><span></span><code>def hello(): print &#39;hello\n</code></pre></div>\n<p>They would prefer:</p>\n</blockquote>\n<p>def hello()<br>\n  puts \'hello\'<br>\nend</p>\n</blockquote>\n<p>Please advise.</p>\n<div class="codehilite"><pre><span></span><code>She said:\n~~~ quote\nJust send them this:\n```\necho &quot;hello\n&quot;\n```\n</code></pre></div>',
  ],
  ['empty single blockquote', '>', '<p>&gt;</p>'],
  [
    'empty multiple blockquote',
    '>>>>>',
    '<blockquote>\n<blockquote>\n<blockquote>\n<blockquote>\n<p>&gt;</p>\n</blockquote>\n</blockquote>\n</blockquote>\n</blockquote>',
  ],
  ['blockquote after empty lines', '>\n>\ntext', '<blockquote>\n<p>text</p>\n</blockquote>'],
  [
    'separate blockquotes',
    '> Hello World!\n\n> Hello Universe!',
    '<blockquote>\n<p>Hello World!</p>\n</blockquote>\n<blockquote>\n<p>Hello Universe!</p>\n</blockquote>',
  ],
  [
    'fenced quote then quote',
    '```quote\nText in\nmultiple lines.\n```\n\n> Text in a single line.',
    '<blockquote>\n<p>Text in<br>\nmultiple lines.</p>\n</blockquote>\n<blockquote>\n<p>Text in a single line.</p>\n</blockquote>',
  ],
  [
    'quote and reply',
    'Hamlet said:\n~~~quote\nCan we talk ?\n~~~\n> Yes !!\n\nWelcome to Open Source.',
    '<p>Hamlet said:</p>\n<blockquote>\n<p>Can we talk ?</p>\n</blockquote>\n<blockquote>\n<p>Yes !!</p>\n</blockquote>\n<p>Welcome to Open Source.</p>',
  ],
  ['quote with heading', '```quote\n# line 1\n#line 2\n```', '<blockquote>\n<h1>line 1</h1>\n<p>#line 2</p>\n</blockquote>'],
  [
    'lists around quote',
    'Before:\n* One.\n* Two.\n\n```quote\nLists should work after a quote\n```\n\nAfter:\n* One.\n* Two.',
    '<p>Before:</p>\n<ul>\n<li>One.</li>\n<li>Two.</li>\n</ul>\n<blockquote>\n<p>Lists should work after a quote</p>\n</blockquote>\n<p>After:</p>\n<ul>\n<li>One.</li>\n<li>Two.</li>\n</ul>',
  ],
  [
    'hanging list in quote',
    '```quote\nSome text with a hanging list inside quote:\n* one\n* two\n* three\n```',
    '<blockquote>\n<p>Some text with a hanging list inside quote:</p>\n<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>\n</blockquote>',
  ],
  // tables
  [
    'table',
    'This is a table:\n\nFirst header  | Second header\n------------- | -------------\nContent cell  | Content cell\nContent cell  | Content cell\n',
    '<p>This is a table:</p>\n<table>\n<thead>\n<tr>\n<th>First header</th>\n<th>Second header</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>Content cell</td>\n<td>Content cell</td>\n</tr>\n<tr>\n<td>Content cell</td>\n<td>Content cell</td>\n</tr>\n</tbody>\n</table>',
  ],
  [
    'table alignment and inline',
    '| a | b | c |\n|:--|:-:|--:|\n| *x* | `y|z` | 3 |',
    '<table>\n<thead>\n<tr>\n<th style="text-align: left;">a</th>\n<th style="text-align: center;">b</th>\n<th style="text-align: right;">c</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td style="text-align: left;"><em>x</em></td>\n<td style="text-align: center;"><code>y|z</code></td>\n<td style="text-align: right;">3</td>\n</tr>\n</tbody>\n</table>',
  ],
  [
    'table without body',
    'a | b\n--|--',
    '<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td></td>\n<td></td>\n</tr>\n</tbody>\n</table>',
  ],
  // spoilers
  [
    'spoiler',
    '```spoiler header\ncontent\n```\noutside spoiler\n',
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>',
  ],
  [
    'spoiler empty header',
    '```spoiler\ncontent\n```\noutside spoiler\n',
    '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>',
  ],
  [
    'spoiler script tags',
    '```spoiler <script>alert(1)</script>\n<script>alert(1)</script>\n```',
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div></div>',
  ],
  [
    'spoiler in quote',
    '~~~quote\n```spoiler header\ncontent\n```\noutside spoiler\n~~~\noutside quote',
    '<blockquote>\n<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>\n</blockquote>\n<p>outside quote</p>',
  ],
  [
    'spoiler header markdown',
    '```spoiler [Header](https://example.com) :slight_smile:\ncontent\n```',
    `<div class="spoiler-block"><div class="spoiler-header">\n<p><a href="https://example.com">Header</a> ${emoji('1f642', 'slight_smile')}</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>`,
  ],
  // tex
  ['tex escaped in code', '`$$a$$`', '<p><code>$$a$$</code></p>'],
  ['tex newline prohibited', '$$x=3\ny=4$$', '<p>$$x=3<br>\ny=4$$</p>'],
  ['tex dollar smiley', '$$_$$ is a fun money-related smiley!', '<p>$$_$$ is a fun money-related smiley!</p>'],
  ['tex multiple dollars', 'We are going to make some $$$ or maybe even $$$$!', '<p>We are going to make some $$$ or maybe even $$$$!</p>'],
  ['tex non matching', '$foo is$$', '<p>$foo is$$</p>'],
  ['tex inline error', '$$\\error{**a**}$$', '<p><span class="tex-error">$$\\error{**a**}$$</span></p>'],
  ['tex display error', '~~~math\n\\error{**a**}\n~~~', '<p><span class="tex-error">\\error{**a**}</span></p>'],
  [
    'tex error escapes',
    "$$\\<script type='text/javascript'>alert('xss');</script>$$\n\n~~~math\n\\<script type='text/javascript'>alert('xss');</script>\n~~~",
    '<p><span class="tex-error">$$\\&lt;script type=\'text/javascript\'&gt;alert(\'xss\');&lt;/script&gt;$$</span></p>\n<p><span class="tex-error">\\&lt;script type=&#x27;text/javascript&#x27;&gt;alert(&#x27;xss&#x27;);&lt;/script&gt;</span></p>',
  ],
  // timestamps
  ['timestamp', '<time:Jun 5th 2017, 10:30PM>', '<p><time datetime="2017-06-05T22:30:00Z">Jun 5th 2017, 10:30PM</time></p>'],
  ['timestamp date', '<time:31 Dec 2017>', '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017</time></p>'],
  ['timestamp invalid', '<time:<alert(1)>>', '<p>&lt;time:&lt;alert(1)&gt;&gt;</p>'],
  ['timestamp timezone', '<time:31 Dec 2017 5:30 am IST>', '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017 5:30 am IST</time></p>'],
  ['timestamp markdown is not a time', '<time:**hello world**>', '<p>&lt;time:**hello world**&gt;</p>'],
  ['timestamp unix', "Let's meet at <time:1496701800>.", '<p>Let\'s meet at <time datetime="2017-06-05T22:30:00Z">1496701800</time>.</p>'],
  ['timestamp iso', '<time:2024-02-29T10:00:00+02:00>', '<p><time datetime="2024-02-29T08:00:00Z">2024-02-29T10:00:00+02:00</time></p>'],
  // html safety
  ['safe html', '<h1>stay normal</h1> thanks', '<p>&lt;h1&gt;stay normal&lt;/h1&gt; thanks</p>'],
  ['script tag', '<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
  ['nested script tag', '<<script>script>evil()<</script>/script>', '<p>&lt;&lt;script&gt;script&gt;evil()&lt;&lt;/script&gt;/script&gt;</p>'],
  [
    'messed up script tags',
    '<scr<script></script>ipt type="text/javascript">alert("foo");</<script></script>script<del></del>>',
    '<p>&lt;scr&lt;script&gt;&lt;/script&gt;ipt type="text/javascript"&gt;alert("foo");&lt;/&lt;script&gt;&lt;/script&gt;script&lt;del&gt;&lt;/del&gt;&gt;</p>',
  ],
  ['unclosed tag', '<script src=http://xx.com/xss.js<b>', '<p>&lt;script src=http://xx.com/xss.js&lt;b&gt;</p>'],
  ['unclosed tag and quotes', '<script src="http://xx.com/xss.js"<b>', '<p>&lt;script src="http://xx.com/xss.js"&lt;b&gt;</p>'],
  [
    'edge case link inside bold',
    '<h1>**<h1>[<h2>Static types in Python</h2>](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)</h1>**</h1>',
    '<p>&lt;h1&gt;<strong>&lt;h1&gt;<a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">&lt;h2&gt;Static types in Python&lt;/h2&gt;</a>&lt;/h1&gt;</strong>&lt;/h1&gt;</p>',
  ],
  ['javascript link not linked', '[foo](javascript:alert(1))', '<p>[foo](javascript:alert(1))</p>'],
  ['javascript link with html', '[foo](javascript:<i>"foo&bar"</i>)', '<p>[foo](javascript:&lt;i&gt;"foo&amp;bar"&lt;/i&gt;)</p>'],
  ['data url not linked', '[x](data:text/html,<script>)', '<p>[x](data:text/html,&lt;script&gt;)</p>'],
  ['quote in href escaped', '[x](http://a.com/"onmouseover="alert(1))', '<p><a href="http://a.com/&quot;onmouseover=&quot;alert(1">x</a>)</p>'],
  // links
  ['link with text', '[hello](https://github.com)', '<p><a href="https://github.com">hello</a></p>'],
  ['link without text', '[](https://github.com)', '<p><a href="https://github.com">https://github.com</a></p>'],
  ['link with empty text', '[  ](https://github.com)', '<p><a href="https://github.com">https://github.com</a></p>'],
  ['link with title', '[a](http://x.com "T t")', '<p><a href="http://x.com" title="T t">a</a></p>'],
  [
    'link inside bold',
    '**[Static types in Python](https://blog.zulip.com/2016)**',
    '<p><strong><a href="https://blog.zulip.com/2016">Static types in Python</a></strong></p>',
  ],
  ['link inside italic', '*[Static](https://blog.zulip.com/2016)*', '<p><em><a href="https://blog.zulip.com/2016">Static</a></em></p>'],
  ['link text is not markdown', '[**b** :smile:](http://x.com)', '<p><a href="http://x.com">**b** :smile:</a></p>'],
  ['link with code text', '[`c`](http://x.com)', '<p><a href="http://x.com"><code>c</code></a></p>'],
  ['link with parens', '[w](https://en.wikipedia.org/wiki/Qt_(framework))', '<p><a href="https://en.wikipedia.org/wiki/Qt_(framework)">w</a></p>'],
  ['fragment link made relative', '[foo](http://zulip.testserver/#narrow/stream/1-Denmark)', '<p><a href="#narrow/stream/1-Denmark">foo</a></p>'],
  ['not a fragment link', '[foo](http://zulip.testserver/https://example.com)', '<p><a href="http://zulip.testserver/https://example.com">foo</a></p>'],
  [
    'tel and sms links',
    '[call me](tel:+14155551234) [or maybe not](sms:+14155551234)',
    '<p><a href="tel:+14155551234">call me</a> <a href="sms:+14155551234">or maybe not</a></p>',
  ],
  [
    'link interference',
    '[xxxxx #xx](http://xxxxxxxxx:xxxx/xxx/xxxxxx%78xxxx/xx/):**xxxxxxx**',
    '<p><a href="http://xxxxxxxxx:xxxx/xxx/xxxxxx%78xxxx/xx/">xxxxx #xx</a>:<strong>xxxxxxx</strong></p>',
  ],
  ['upload link relative', '[file.pdf](/user_uploads/2/ab/cd/file.pdf)', '<p><a href="/user_uploads/2/ab/cd/file.pdf">file.pdf</a></p>'],
  // The rewritten link no longer starts with `/user_uploads/`, so Zulip previews it by its extension.
  [
    'absolute upload link made relative',
    'http://zulip.testserver/user_uploads/2/ab/x.png',
    '<p><a href="user_uploads/2/ab/x.png">http://zulip.testserver/user_uploads/2/ab/x.png</a></p>\n<div class="message_inline_image"><a href="user_uploads/2/ab/x.png" title="http://zulip.testserver/user_uploads/2/ab/x.png"><img src="user_uploads/2/ab/x.png"></a></div>',
  ],
  // emoji
  [
    'many emoji',
    'test :smile: again :poop:\n:) foo:)bar x::y::z :wasted waste: :fakeemojithisshouldnotrender:',
    `<p>test ${emoji('1f604', 'smile')} again ${emoji('1f4a9', 'poop')}<br>\n:) foo:)bar x::y::z :wasted waste: :fakeemojithisshouldnotrender:</p>`,
  ],
  ['zulip emoji', ':zulip:', '<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>'],
  ['realm emoji', ':green_tick:', '<p><img alt=":green_tick:" class="emoji" src="/user_avatars/2/emoji/images/1.png" title="green tick"></p>'],
  ['deactivated realm emoji', ':old_emoji:', '<p>:old_emoji:</p>'],
  ['airplane', ':airplane:', `<p>${emoji('2708', 'airplane')}</p>`],
  ['emoji sequence', '🤷\u200d♀️', `<p>${emoji('1f937-200d-2640', 'woman_shrugging')}</p>`],
  ['emoji sequence two', '👁\u200d🗨 #️⃣', `<p>${emoji('1f441-200d-1f5e8', 'eye_in_speech_bubble')} ${emoji('0023-20e3', 'hash')}</p>`],
  ['purple lemon unknown', 'normal lemon 🍋, purple lemon? 🍋\u200d🟪', `<p>normal lemon ${emoji('1f34b', 'lemon')}, purple lemon? 🍋\u200d🟪</p>`],
  ['emoji without space', ':cat:hello:dog::rabbit:', `<p>${emoji('1f408', 'cat')}hello${emoji('1f415', 'dog')}${emoji('1f407', 'rabbit')}</p>`],
  ['not emoji', ':not_an_emoji:', '<p>:not_an_emoji:</p>'],
  ['unicode emoji', '\ud83d\udca9\ud83d\udca9', `<p>${emoji('1f4a9', 'poop')}${emoji('1f4a9', 'poop')}</p>`],
  ['holiday tree', 'Merry Christmas!!\ud83c\udf84', `<p>Merry Christmas!!${emoji('1f384', 'holiday_tree')}</p>`],
  ['anchor and division', '\u2693\u2797', `<p>${emoji('2693', 'anchor')}${emoji('2797', 'division')}</p>`],
  ['up arrow with selector', 'Black upward arrow \u2b06\ufe0f', `<p>Black upward arrow ${emoji('2b06', 'up')}</p>`],
  ['text presentation arrow stays', 'a \u2194 b', '<p>a \u2194 b</p>'],
  ['digits are not emoji', 'a1b2c3 😀', `<p>a1b2c3 ${emoji('1f600', 'grinning')}</p>`],
  ['emoji pipeline newline', 'The winner is:\nsmiley:smiley:', `<p>The winner is:<br>\nsmiley${emoji('1f603', 'smiley')}</p>`],
  ['emoji pipeline emphasis', 'Testing *:smiley*: :sm*iley*: Testing', '<p>Testing <em>:smiley</em>: :sm<em>iley</em>: Testing</p>'],
  ['emoji pipeline link', 'Visit https:smiley://google.com.', `<p>Visit https${emoji('1f603', 'smiley')}//google.com.</p>`],
  ['skin tones banned', ':skin-tone-2: :skin-tone-3:', '<p>:skin-tone-2: :skin-tone-3:</p>'],
  ['zwj names banned', 'Emojis like :man-girl-girl: have ZWJ', '<p>Emojis like :man-girl-girl: have ZWJ</p>'],
  ['invalid then valid emoji', 'This is :invalidemoji: then :smile:', `<p>This is :invalidemoji: then ${emoji('1f604', 'smile')}</p>`],
  ['emoji in code', '`:smile:`', '<p><code>:smile:</code></p>'],
];

for (const [name, input, expected] of cases) {
  test(name, () => {
    assert.is(render(input), expected);
  });
}

test('10,000 emoji (the most a message holds) are replaced in one pass, each as one would be', () => {
  const one = render('😀');
  assert.is(
    render('😀'.repeat(10_000)),
    one.replace(/^<p>(.*)<\/p>$/, (_m, e: string) => `<p>${e.repeat(10_000)}</p>`),
  );
  assert.is(render('a😀b 👨‍👩‍👧'), `<p>a${emoji('1f600', 'grinning')}b ${emoji('1f468-200d-1f469-200d-1f467', 'family_man_woman_girl')}</p>`);
});

test('fenced blocks nest: a spoiler in a quote in a spoiler, and 1,000 unclosed spoilers', () => {
  assert.is(
    render('````spoiler Outer\n```quote\n~~~spoiler\ninner **x**\n~~~\n> after\n```\n````'),
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>Outer</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<blockquote>\n<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>inner <strong>x</strong></p>\n</div></div>\n<blockquote>\n<p>after</p>\n</blockquote>\n</blockquote>\n</div></div>',
  );
  const spoiler = '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n';
  assert.is(render('```spoiler\n'.repeat(1000) + 'x'), spoiler.repeat(1000) + '<p>x</p>' + '\n</div></div>'.repeat(1000));
});

test.run();
