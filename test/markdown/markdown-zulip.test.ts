// Zulip's Markdown constructs beyond the basics, table by table, each asserting the exact HTML:
// code highlighting with Pygments' classes (the expected HTML is Pygments' own output for these
// inputs, as Zulip's codehilite wraps it), inline image/video/YouTube previews, Camo, emoticon
// translation, autolinks and timestamps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderMarkdown, topicLinks, type MarkdownContext } from '../../src/markdown/index.ts';
import { makeContext } from './markdown-helpers.ts';

const run = (cases: Array<[string, string, string]>, ctx: MarkdownContext) => {
  for (const [name, input, expected] of cases) {
    test(name, () => {
      assert.is(renderMarkdown(input, ctx).html, expected);
    });
  }
};

const emoji = (code: string, name: string) =>
  `<span aria-label="${name.replace(/_/g, ' ')}" class="emoji emoji-${code}" role="img" title="${name.replace(/_/g, ' ')}">:${name}:</span>`;

// Fences naming a language: Pygments' tokens and the lexer's display name; quotes stay raw
// because Zulip re-serializes the block through lxml.
run(
  [
    [
      'python fence',
      '```python\nimport os\n\n@cache\ndef f(x: int = 0x1F) -> str:\n    """Doc."""\n    return f"{x!r} {{}}" if x else \'no\'  # why\n```',
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="kn">import</span><span class="w"> </span><span class="nn">os</span>\n\n<span class="nd">@cache</span>\n<span class="k">def</span><span class="w"> </span><span class="nf">f</span><span class="p">(</span><span class="n">x</span><span class="p">:</span> <span class="nb">int</span> <span class="o">=</span> <span class="mh">0x1F</span><span class="p">)</span> <span class="o">-&gt;</span> <span class="nb">str</span><span class="p">:</span>\n<span class="w">    </span><span class="sd">"""Doc."""</span>\n    <span class="k">return</span> <span class="sa">f</span><span class="s2">"</span><span class="si">{</span><span class="n">x</span><span class="si">!r}</span><span class="s2"> </span><span class="se">{{}}</span><span class="s2">"</span> <span class="k">if</span> <span class="n">x</span> <span class="k">else</span> <span class="s1">\'no\'</span>  <span class="c1"># why</span>\n</code></pre></div>',
    ],
    [
      'py3 alias',
      '```py3\nprint("hi")\n```',
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="nb">print</span><span class="p">(</span><span class="s2">"hi"</span><span class="p">)</span>\n</code></pre></div>',
    ],
    [
      'javascript',
      '```js\nconst re = /a+b/g;\nlet s = `t ${1 + 2}`; // c\nexport default async function () { return null ?? "x"; }\n```',
      '<div class="codehilite" data-code-language="JavaScript"><pre><span></span><code><span class="kd">const</span><span class="w"> </span><span class="nx">re</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="sr">/a+b/g</span><span class="p">;</span>\n<span class="kd">let</span><span class="w"> </span><span class="nx">s</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="sb">`t </span><span class="si">${</span><span class="mf">1</span><span class="w"> </span><span class="o">+</span><span class="w"> </span><span class="mf">2</span><span class="si">}</span><span class="sb">`</span><span class="p">;</span><span class="w"> </span><span class="c1">// c</span>\n<span class="k">export</span><span class="w"> </span><span class="k">default</span><span class="w"> </span><span class="k">async</span><span class="w"> </span><span class="kd">function</span><span class="w"> </span><span class="p">()</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="k">return</span><span class="w"> </span><span class="kc">null</span><span class="w"> </span><span class="o">??</span><span class="w"> </span><span class="s2">"x"</span><span class="p">;</span><span class="w"> </span><span class="p">}</span>\n</code></pre></div>',
    ],
    [
      'typescript',
      '```ts\ninterface P<T> { readonly a?: T }\ntype U = P<string> | undefined;\n```',
      '<div class="codehilite" data-code-language="TypeScript"><pre><span></span><code><span class="kd">interface</span><span class="w"> </span><span class="nx">P</span><span class="o">&lt;</span><span class="nx">T</span><span class="o">&gt;</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="k">readonly</span><span class="w"> </span><span class="nx">a?</span><span class="o">:</span><span class="w"> </span><span class="kt">T</span><span class="w"> </span><span class="p">}</span>\n<span class="kr">type</span><span class="w"> </span><span class="nx">U</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="nx">P</span><span class="o">&lt;</span><span class="kt">string</span><span class="o">&gt;</span><span class="w"> </span><span class="o">|</span><span class="w"> </span><span class="kc">undefined</span><span class="p">;</span>\n</code></pre></div>',
    ],
    [
      'bash',
      '```sh\nfor f in *.txt; do\n  echo "$f: ${#f}" >> out.log\ndone\n```',
      '<div class="codehilite" data-code-language="Bash"><pre><span></span><code><span class="k">for</span><span class="w"> </span>f<span class="w"> </span><span class="k">in</span><span class="w"> </span>*.txt<span class="p">;</span><span class="w"> </span><span class="k">do</span>\n<span class="w">  </span><span class="nb">echo</span><span class="w"> </span><span class="s2">"</span><span class="nv">$f</span><span class="s2">: </span><span class="si">${#</span><span class="nv">f</span><span class="si">}</span><span class="s2">"</span><span class="w"> </span>&gt;&gt;<span class="w"> </span>out.log\n<span class="k">done</span>\n</code></pre></div>',
    ],
    [
      'sql',
      "```sql\nSELECT id, COUNT(*) FROM messages WHERE sender = 'x' GROUP BY id;\n```",
      '<div class="codehilite" data-code-language="SQL"><pre><span></span><code><span class="k">SELECT</span><span class="w"> </span><span class="n">id</span><span class="p">,</span><span class="w"> </span><span class="k">COUNT</span><span class="p">(</span><span class="o">*</span><span class="p">)</span><span class="w"> </span><span class="k">FROM</span><span class="w"> </span><span class="n">messages</span><span class="w"> </span><span class="k">WHERE</span><span class="w"> </span><span class="n">sender</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="s1">\'x\'</span><span class="w"> </span><span class="k">GROUP</span><span class="w"> </span><span class="k">BY</span><span class="w"> </span><span class="n">id</span><span class="p">;</span>\n</code></pre></div>',
    ],
    [
      'go',
      '```golang\nfunc main() {\n\tch := make(chan int, 3)\n\tgo func() { ch <- 1 }()\n}\n```',
      '<div class="codehilite" data-code-language="Go"><pre><span></span><code><span class="kd">func</span><span class="w"> </span><span class="nx">main</span><span class="p">()</span><span class="w"> </span><span class="p">{</span>\n<span class="w">    </span><span class="nx">ch</span><span class="w"> </span><span class="o">:=</span><span class="w"> </span><span class="nb">make</span><span class="p">(</span><span class="kd">chan</span><span class="w"> </span><span class="kt">int</span><span class="p">,</span><span class="w"> </span><span class="mi">3</span><span class="p">)</span>\n<span class="w">    </span><span class="k">go</span><span class="w"> </span><span class="kd">func</span><span class="p">()</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="nx">ch</span><span class="w"> </span><span class="o">&lt;-</span><span class="w"> </span><span class="mi">1</span><span class="w"> </span><span class="p">}()</span>\n<span class="p">}</span>\n</code></pre></div>',
    ],
    [
      'rust',
      '```rs\nfn main() {\n    let v: Vec<u8> = vec![1, 2];\n    println!("{:?}", v);\n}\n```',
      '<div class="codehilite" data-code-language="Rust"><pre><span></span><code><span class="k">fn</span><span class="w"> </span><span class="nf">main</span><span class="p">()</span><span class="w"> </span><span class="p">{</span>\n<span class="w">    </span><span class="kd">let</span><span class="w"> </span><span class="n">v</span><span class="p">:</span><span class="w"> </span><span class="nb">Vec</span><span class="o">&lt;</span><span class="kt">u8</span><span class="o">&gt;</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="fm">vec!</span><span class="p">[</span><span class="mi">1</span><span class="p">,</span><span class="w"> </span><span class="mi">2</span><span class="p">];</span>\n<span class="w">    </span><span class="fm">println!</span><span class="p">(</span><span class="s">"{:?}"</span><span class="p">,</span><span class="w"> </span><span class="n">v</span><span class="p">);</span>\n<span class="p">}</span>\n</code></pre></div>',
    ],
    [
      'java',
      '```java\npublic class A { @Override public String toString() { return "A" + 1L; } }\n```',
      '<div class="codehilite" data-code-language="Java"><pre><span></span><code><span class="kd">public</span><span class="w"> </span><span class="kd">class</span> <span class="nc">A</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="nd">@Override</span><span class="w"> </span><span class="kd">public</span><span class="w"> </span><span class="n">String</span><span class="w"> </span><span class="nf">toString</span><span class="p">()</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="k">return</span><span class="w"> </span><span class="s">"A"</span><span class="w"> </span><span class="o">+</span><span class="w"> </span><span class="mi">1L</span><span class="p">;</span><span class="w"> </span><span class="p">}</span><span class="w"> </span><span class="p">}</span>\n</code></pre></div>',
    ],
    [
      'c sharp',
      '```c#\nvar xs = new List<int> { 1 }; Console.WriteLine($"n={xs.Count}");\n```',
      '<div class="codehilite" data-code-language="C#"><pre><span></span><code><span class="kt">var</span><span class="w"> </span><span class="n">xs</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="k">new</span><span class="w"> </span><span class="n">List</span><span class="o">&lt;</span><span class="kt">int</span><span class="o">&gt;</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="mi">1</span><span class="w"> </span><span class="p">};</span><span class="w"> </span><span class="n">Console</span><span class="p">.</span><span class="n">WriteLine</span><span class="p">(</span><span class="s">$"n={xs.Count}"</span><span class="p">);</span>\n</code></pre></div>',
    ],
    [
      'html',
      '```html\n<p class="x">a &amp; b<br/></p>\n```',
      '<div class="codehilite" data-code-language="HTML"><pre><span></span><code><span class="p">&lt;</span><span class="nt">p</span> <span class="na">class</span><span class="o">=</span><span class="s">"x"</span><span class="p">&gt;</span>a <span class="ni">&amp;amp;</span> b<span class="p">&lt;</span><span class="nt">br</span><span class="p">/&gt;&lt;/</span><span class="nt">p</span><span class="p">&gt;</span>\n</code></pre></div>',
    ],
    [
      'css',
      '```css\na:hover { color: #fff; margin: 0 auto !important; }\n```',
      '<div class="codehilite" data-code-language="CSS"><pre><span></span><code><span class="nt">a</span><span class="p">:</span><span class="nd">hover</span><span class="w"> </span><span class="p">{</span><span class="w"> </span><span class="k">color</span><span class="p">:</span><span class="w"> </span><span class="mh">#fff</span><span class="p">;</span><span class="w"> </span><span class="k">margin</span><span class="p">:</span><span class="w"> </span><span class="mi">0</span><span class="w"> </span><span class="kc">auto</span><span class="w"> </span><span class="cp">!important</span><span class="p">;</span><span class="w"> </span><span class="p">}</span>\n</code></pre></div>',
    ],
    [
      'diff',
      '```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n```',
      '<div class="codehilite" data-code-language="Diff"><pre><span></span><code><span class="gd">--- a</span>\n<span class="gi">+++ b</span>\n<span class="gu">@@ -1 +1 @@</span>\n<span class="gd">-old</span>\n<span class="gi">+new</span>\n</code></pre></div>',
    ],
    [
      'kotlin',
      '```kotlin\nval s: String? = null\nfun f() = s?.length ?: 0\n```',
      '<div class="codehilite" data-code-language="Kotlin"><pre><span></span><code><span class="kd">val</span><span class="w"> </span><span class="nv">s</span><span class="p">:</span><span class="w"> </span><span class="kt">String?</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="kc">null</span>\n<span class="kd">fun</span><span class="w"> </span><span class="nf">f</span><span class="p">()</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="n">s</span><span class="o">?.</span><span class="na">length</span><span class="w"> </span><span class="o">?:</span><span class="w"> </span><span class="m">0</span>\n</code></pre></div>',
    ],
    [
      'json: keys are tags',
      '```json\n{"name": "zulip", "n": [1, 2.5, true, null]}\n```',
      '<div class="codehilite" data-code-language="JSON"><pre><span></span><code><span class="p">{</span><span class="nt">"name"</span><span class="p">:</span><span class="w"> </span><span class="s2">"zulip"</span><span class="p">,</span><span class="w"> </span><span class="nt">"n"</span><span class="p">:</span><span class="w"> </span><span class="p">[</span><span class="mi">1</span><span class="p">,</span><span class="w"> </span><span class="mf">2.5</span><span class="p">,</span><span class="w"> </span><span class="kc">true</span><span class="p">,</span><span class="w"> </span><span class="kc">null</span><span class="p">]}</span>\n</code></pre></div>',
    ],
    [
      'c: standard types are keyword types',
      '```c\n#include <stdint.h>\nsize_t n = sizeof(uint8_t);\n```',
      '<div class="codehilite" data-code-language="C"><pre><span></span><code><span class="cp">#include</span><span class="w"> </span><span class="cpf">&lt;stdint.h&gt;</span>\n<span class="kt">size_t</span><span class="w"> </span><span class="n">n</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="k">sizeof</span><span class="p">(</span><span class="kt">uint8_t</span><span class="p">);</span>\n</code></pre></div>',
    ],
    [
      'php starts inside <?php; builtins are names of functions',
      '```php\n$n = strlen($s) . "x";\n```',
      '<div class="codehilite" data-code-language="PHP"><pre><span></span><code><span class="nv">$n</span> <span class="o">=</span> <span class="nb">strlen</span><span class="p">(</span><span class="nv">$s</span><span class="p">)</span> <span class="o">.</span> <span class="s2">"x"</span><span class="p">;</span>\n</code></pre></div>',
    ],
    [
      'html+php: PHP inside HTML',
      '```html+php\n<b><?php echo $x; ?></b>\n```',
      '<div class="codehilite" data-code-language="HTML+PHP"><pre><span></span><code><span class="o">&lt;</span><span class="nx">b</span><span class="o">&gt;&lt;?</span><span class="nx">php</span> <span class="k">echo</span> <span class="nv">$x</span><span class="p">;</span> <span class="cp">?&gt;</span><span class="p">&lt;/</span><span class="nt">b</span><span class="p">&gt;</span>\n</code></pre></div>',
    ],
    [
      'dockerfile',
      '```dockerfile\nFROM node:20\nRUN npm ci && echo "ok"\n```',
      '<div class="codehilite" data-code-language="Docker"><pre><span></span><code><span class="k">FROM</span><span class="w"> </span><span class="s">node:20</span>\n<span class="k">RUN</span><span class="w"> </span>npm<span class="w"> </span>ci<span class="w"> </span><span class="o">&amp;&amp;</span><span class="w"> </span><span class="nb">echo</span><span class="w"> </span><span class="s2">"ok"</span>\n</code></pre></div>',
    ],
  ],
  makeContext(),
);

run(
  [
    [
      'unknown language: plain, tagged as typed',
      '```nosuchlang\na <b> "c"\n```',
      '<div class="codehilite" data-code-language="nosuchlang"><pre><span></span><code>a &lt;b&gt; "c"\n</code></pre></div>',
    ],
    [
      'a lexer we do not carry: plain, with its Pygments name',
      '```yaml\na: 1\n```',
      '<div class="codehilite" data-code-language="YAML"><pre><span></span><code>a: 1\n</code></pre></div>',
    ],
    [
      'language names are case-insensitive',
      '```PyThOn\nx\n```',
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span>\n</code></pre></div>',
    ],
    [
      'no language: quotes escaped as Pygments does',
      '```\nprint("a\'b")\n```',
      '<div class="codehilite"><pre><span></span><code>print(&quot;a&#39;b&quot;)\n</code></pre></div>',
    ],
    [
      '#!lang header picks the lexer and stays',
      '```\n#!python\nx = 1\n```',
      '<div class="codehilite"><pre><span></span><code><span class="ch">#!python</span>\n<span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</code></pre></div>',
    ],
    [
      ':::lang header picks the lexer and stays',
      '```\n:::bash\necho hi\n```',
      '<div class="codehilite"><pre><span></span><code>:::bash\n<span class="nb">echo</span><span class="w"> </span>hi\n</code></pre></div>',
    ],
    [
      'indented code: a :::lang header is hidden',
      '    :::python\n    x = 1',
      '<div class="codehilite"><pre><span></span><code><span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</code></pre></div>',
    ],
    [
      'indented code: a #!/path header stays',
      '    #!/usr/bin/python\n    x',
      '<div class="codehilite"><pre><span></span><code><span class="ch">#!/usr/bin/python</span>\n<span class="n">x</span>\n</code></pre></div>',
    ],
    [
      'a token spanning lines is closed and reopened at each newline',
      '```python\n"""a\nb"""\n```',
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="sd">"""a</span>\n<span class="sd">b"""</span>\n</code></pre></div>',
    ],
    [
      'an unclosed string runs into error tokens, as in Pygments',
      '```python\ns = "abc\nt\n```',
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">s</span> <span class="o">=</span> <span class="s2">"abc</span>\n<span class="n">t</span>\n</code></pre></div>',
    ],
    [
      'code stays escaped inside spans',
      '```js\nif (a < b && c > d) {}\n```',
      '<div class="codehilite" data-code-language="JavaScript"><pre><span></span><code><span class="k">if</span><span class="w"> </span><span class="p">(</span><span class="nx">a</span><span class="w"> </span><span class="o">&lt;</span><span class="w"> </span><span class="nx">b</span><span class="w"> </span><span class="o">&amp;&amp;</span><span class="w"> </span><span class="nx">c</span><span class="w"> </span><span class="o">&gt;</span><span class="w"> </span><span class="nx">d</span><span class="p">)</span><span class="w"> </span><span class="p">{}</span>\n</code></pre></div>',
    ],
  ],
  makeContext(),
);

const IMG = 'https://example.com/cat.png';
const img = (src: string, title?: string, href = src) =>
  `<div class="message_inline_image"><a href="${href}"${title ? ` title="${title}"` : ''}><img src="${src}"></a></div>`;

// Previews: after the paragraph, inside a list item, none in quotes, each URL once.
run(
  [
    ['a bare image link is replaced by its preview', IMG, img(IMG)],
    ['an image link in text: the preview follows the paragraph', `look ${IMG} here`, `<p>look <a href="${IMG}">${IMG}</a> here</p>\n${img(IMG)}`],
    ['a named image link keeps the link, the preview takes its name', `[a cat](${IMG})`, `<p><a href="${IMG}">a cat</a></p>\n${img(IMG, 'a cat')}`],
    [
      'two images of one paragraph keep their order',
      `${IMG} and https://example.com/dog.jpg`,
      `<p><a href="${IMG}">${IMG}</a> and <a href="https://example.com/dog.jpg">https://example.com/dog.jpg</a></p>\n${img(IMG)}${img('https://example.com/dog.jpg')}`,
    ],
    ['previews go before the next paragraph', `${IMG} x\n\nnext`, `<p><a href="${IMG}">${IMG}</a> x</p>\n${img(IMG)}<p>next</p>`],
    ['the same URL twice previews once', `${IMG} ${IMG}`, `<p><a href="${IMG}">${IMG}</a> <a href="${IMG}">${IMG}</a></p>\n${img(IMG)}`],
    ['in a list item, inside the item', `* one\n* two ${IMG}`, `<ul>\n<li>one</li>\n<li>two <a href="${IMG}">${IMG}</a>${img(IMG)}</li>\n</ul>`],
    ['a list item of only the link: the link goes', `* ${IMG}`, `<ul>\n<li>${img(IMG)}</li>\n</ul>`],
    ['none inside a quote', `> ${IMG}`, `<blockquote>\n<p><a href="${IMG}">${IMG}</a></p>\n</blockquote>`],
    [
      'in emphasis: at the end of the message',
      `*[cat](${IMG})* done\n\nmore`,
      `<p><em><a href="${IMG}">cat</a></em> done</p>\n<p>more</p>\n${img(IMG, 'cat')}`,
    ],
    ['no autolink right after emphasis markers', `*${IMG}*`, `<p><em>${IMG}</em></p>`],
    ['extensions are matched without case, query ignored', 'https://example.com/A.JPEG?size=2', img('https://example.com/A.JPEG?size=2')],
    [
      'not an image extension: no preview',
      'https://example.com/cat.png.html',
      '<p><a href="https://example.com/cat.png.html">https://example.com/cat.png.html</a></p>',
    ],
    ['pasteboard.co pages are not images', 'https://pasteboard.co/x.png', '<p><a href="https://pasteboard.co/x.png">https://pasteboard.co/x.png</a></p>'],
    [
      'GitHub blob pages preview the raw file',
      'https://github.com/zulip/zulip/blob/main/static/a.png',
      img('https://raw.githubusercontent.com/zulip/zulip/main/static/a.png', undefined, 'https://github.com/zulip/zulip/blob/main/static/a.png'),
    ],
    [
      'Wikipedia file pages preview the file, which replaces the link',
      'https://en.wikipedia.org/wiki/File:Cat.jpg',
      img('https://en.wikipedia.org/wiki/Special:FilePath/File:Cat.jpg'),
    ],
    [
      'Dropbox image links preview the raw file, at the end',
      'https://www.dropbox.com/s/abc/photo.png?dl=0 ok',
      '<p><a href="https://www.dropbox.com/s/abc/photo.png?dl=0">https://www.dropbox.com/s/abc/photo.png?dl=0</a> ok</p>\n' +
        '<div class="message_inline_image"><a href="https://www.dropbox.com/s/abc/photo.png?dl=0"><img src="https://www.dropbox.com/s/abc/photo.png?raw=1"></a></div>',
    ],
    [
      'a video',
      'https://example.com/clip.mp4',
      '<div class="message_inline_image message_inline_video"><a href="https://example.com/clip.mp4"><video preload="metadata" src="https://example.com/clip.mp4"></video></a></div>',
    ],
    [
      'a named video',
      '[clip](https://example.com/clip.webm)',
      '<p><a href="https://example.com/clip.webm">clip</a></p>\n<div class="message_inline_image message_inline_video"><a href="https://example.com/clip.webm" title="clip"><video preload="metadata" src="https://example.com/clip.webm"></video></a></div>',
    ],
    [
      'a YouTube link keeps its paragraph and adds the thumbnail',
      'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
      '<p><a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ">https://www.youtube.com/watch?v=dQw4w9WgXcQ</a></p>\n' +
        '<div class="youtube-video message_inline_image"><a data-id="dQw4w9WgXcQ" href="https://www.youtube.com/watch?v=dQw4w9WgXcQ"><img src="https://i.ytimg.com/vi/dQw4w9WgXcQ/mqdefault.jpg"></a></div>',
    ],
    [
      'youtu.be and shorts links',
      'https://youtu.be/abc_DEF-1 https://youtube.com/shorts/xyz',
      '<p><a href="https://youtu.be/abc_DEF-1">https://youtu.be/abc_DEF-1</a> <a href="https://youtube.com/shorts/xyz">https://youtube.com/shorts/xyz</a></p>\n' +
        '<div class="youtube-video message_inline_image"><a data-id="abc_DEF-1" href="https://youtu.be/abc_DEF-1"><img src="https://i.ytimg.com/vi/abc_DEF-1/mqdefault.jpg"></a></div>' +
        '<div class="youtube-video message_inline_image"><a data-id="xyz" href="https://youtube.com/shorts/xyz"><img src="https://i.ytimg.com/vi/xyz/mqdefault.jpg"></a></div>',
    ],
    ['links into the organization are not previewed', '[x](/#narrow/channel/1-Denmark)', '<p><a href="/#narrow/channel/1-Denmark">x</a></p>'],
    [
      'more than 24 different URLs: no previews at all',
      Array.from({ length: 25 }, (_, i) => `https://example.com/${i}.png`).join(' '),
      `<p>${Array.from({ length: 25 }, (_, i) => `<a href="https://example.com/${i}.png">https://example.com/${i}.png</a>`).join(' ')}</p>`,
    ],
  ],
  makeContext(),
);

run([['previews off: links only', IMG, `<p><a href="${IMG}">${IMG}</a></p>`]], makeContext({ inlineImagePreview: false }));

// Camo (Zulip's test key): external images and videos only; the links keep the original.
const camo = makeContext({ camo: { uri: 'https://camo.example.com/', key: 'dummy' } });
run(
  [
    [
      'an external image through Camo',
      'https://www.google.com/images/srpr/logo4w.png',
      '<div class="message_inline_image"><a href="https://www.google.com/images/srpr/logo4w.png"><img src="https://camo.example.com/56c362a24201593891955ff526b3b412c0f9fcd2/68747470733a2f2f7777772e676f6f676c652e636f6d2f696d616765732f737270722f6c6f676f34772e706e67"></a></div>',
    ],
    [
      'an external video through Camo',
      'http://v.io/a.mp4',
      '<div class="message_inline_image message_inline_video"><a href="http://v.io/a.mp4"><video preload="metadata" src="https://camo.example.com/75d44f1aff5e5ad7d00872e71ac58624f706e62d/687474703a2f2f762e696f2f612e6d7034"></video></a></div>',
    ],
    [
      "the organization's own and relative images are not",
      '[a](http://zulip.testserver/static/a.png) [b](/static/b.png)',
      '<p><a href="http://zulip.testserver/static/a.png">a</a> <a href="/static/b.png">b</a></p>\n' +
        '<div class="message_inline_image"><a href="http://zulip.testserver/static/a.png" title="a"><img src="http://zulip.testserver/static/a.png"></a></div>' +
        '<div class="message_inline_image"><a href="/static/b.png" title="b"><img src="/static/b.png"></a></div>',
    ],
  ],
  camo,
);

// Uploads with a thumbnail, or still being thumbnailed.
const uploads = makeContext({
  uploads: {
    imageByPathId: (pathId) =>
      pathId === '2/ab/done.png'
        ? { width: 1000, height: 600, contentType: 'image/png', thumbnailUrl: '/user_uploads/thumbnail/2/ab/done.png/840x560.webp', animated: false }
        : pathId === '2/ab/pending.tiff'
          ? { width: 10, height: 20, contentType: 'image/tiff', thumbnailUrl: null, animated: false }
          : pathId === '2/ab/scan.tiff'
            ? {
                width: 10,
                height: 20,
                contentType: 'image/tiff',
                thumbnailUrl: '/user_uploads/thumbnail/2/ab/scan.tiff/840x560.webp',
                animated: false,
                transcodedImage: '4032x3024.webp',
              }
            : undefined,
    isAudio: (pathId) => pathId === '2/ab/song.mp3',
  },
});
run(
  [
    [
      'an upload with its thumbnail',
      '[done.png](/user_uploads/2/ab/done.png)',
      '<p><a href="/user_uploads/2/ab/done.png">done.png</a></p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/done.png" title="done.png">' +
        '<img data-original-content-type="image/png" data-original-dimensions="1000x600" src="/user_uploads/thumbnail/2/ab/done.png/840x560.webp"></a></div>',
    ],
    [
      'an upload still being thumbnailed: the spinner',
      '[p](/user_uploads/2/ab/pending.tiff)',
      '<p><a href="/user_uploads/2/ab/pending.tiff">p</a></p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/pending.tiff" title="p">' +
        '<img class="image-loading-placeholder" data-original-content-type="image/tiff" data-original-dimensions="10x20" src="/static/images/loading/loader-black.svg"></a></div>',
    ],
    [
      'a type browsers cannot show names its transcoded version',
      '[s](/user_uploads/2/ab/scan.tiff)',
      '<p><a href="/user_uploads/2/ab/scan.tiff">s</a></p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/scan.tiff" title="s">' +
        '<img data-original-content-type="image/tiff" data-original-dimensions="10x20" data-transcoded-image="4032x3024.webp" src="/user_uploads/thumbnail/2/ab/scan.tiff/840x560.webp"></a></div>',
    ],
    ['an upload that is not an image has no preview', '[doc.png](/user_uploads/2/ab/other.png)', '<p><a href="/user_uploads/2/ab/other.png">doc.png</a></p>'],
  ],
  uploads,
);

// Zulip puts a thumbnail in by parsing the rendered message with BeautifulSoup and writing it back
// whole (rewrite_thumbnailed_images): the expected HTML is BeautifulSoup's own output.
run(
  [
    [
      'a message with a thumbnail is written back as BeautifulSoup writes it: entities decoded',
      'It\'s "done": [done.png](/user_uploads/2/ab/done.png)\n```\nprint("a\'b")\n```',
      '<p>It\'s "done": <a href="/user_uploads/2/ab/done.png">done.png</a></p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/done.png" title="done.png"><img data-original-content-type="image/png" data-original-dimensions="1000x600" src="/user_uploads/thumbnail/2/ab/done.png/840x560.webp"></a></div><div class="codehilite"><pre><span></span><code>print("a\'b")\n</code></pre></div>',
    ],
    [
      "…attributes holding quotes quoted with ', named entities decoded, only & < > escaped",
      '[a "quoted" title](/user_uploads/2/ab/done.png \'it"s\') &copy; &ampfoo; 5 > 3 & 2 < 4',
      '<p><a href="/user_uploads/2/ab/done.png" title=\'it"s\'>a "quoted" title</a> © &amp;ampfoo 5 &gt; 3 &amp; 2 &lt; 4</p>\n<div class="message_inline_image"><a href="/user_uploads/2/ab/done.png" title=\'a "quoted" title\'><img data-original-content-type="image/png" data-original-dimensions="1000x600" src="/user_uploads/thumbnail/2/ab/done.png/840x560.webp"></a></div>',
    ],
  ],
  uploads,
);

// `![alt](url)`: images and audio in the text.
run(
  [
    [
      'an image',
      'look: ![a cat](https://example.com/cat.png) ok',
      '<p>look: <img alt="a cat" data-original-src="https://example.com/cat.png" src="https://example.com/cat.png"> ok</p>',
    ],
    [
      'an image with a title, and one without alt text',
      '![foo](/url "the title") ![](/url)',
      '<p><img alt="foo" data-original-src="/url" src="/url" title="the title"> <img alt="" data-original-src="/url" src="/url"></p>',
    ],
    [
      'an uploaded image shows its thumbnail',
      '![d](/user_uploads/2/ab/done.png)',
      '<p><img alt="d" class="inline-image" data-original-content-type="image/png" data-original-dimensions="1000x600" data-original-src="/user_uploads/2/ab/done.png" src="/user_uploads/thumbnail/2/ab/done.png/840x560.webp"></p>',
    ],
    [
      'an uploaded image being thumbnailed shows the spinner',
      '![p](/user_uploads/2/ab/pending.tiff)',
      '<p><img alt="p" class="inline-image image-loading-placeholder" data-original-content-type="image/tiff" data-original-dimensions="10x20" data-original-src="/user_uploads/2/ab/pending.tiff" src="/static/images/loading/loader-black.svg"></p>',
    ],
    ['an upload that is no image stays text', '![x](/user_uploads/2/ab/other.png)', '<p>![x](/user_uploads/2/ab/other.png)</p>'],
    [
      'an audio file is a player',
      '![Song](/user_uploads/2/ab/song.mp3) ![b](https://example.com/b.m4a)',
      '<p><audio controls preload="metadata" src="/user_uploads/2/ab/song.mp3" title="Song"></audio> <audio controls preload="metadata" src="https://example.com/b.m4a" title="b"></audio></p>',
    ],
    [
      'audio with a link title is an image',
      '![b](https://example.com/b.mp3 "t")',
      '<p><img alt="b" data-original-src="https://example.com/b.mp3" src="https://example.com/b.mp3" title="t"></p>',
    ],
    ['an attribute whose value is its name is written bare', '[title](https://example.com "title")', '<p><a href="https://example.com" title>title</a></p>'],
  ],
  uploads,
);
run(
  [
    [
      'external audio and images through Camo',
      '![a](http://example.com/audio.mp3) ![x](http://e.com/a.png) [l](http://e.com/b.png)',
      '<p><audio controls data-original-url="http://example.com/audio.mp3" preload="metadata" src="https://camo.example.com/57cf2db553c3f6cc2af6781c11232e70983f4762/687474703a2f2f6578616d706c652e636f6d2f617564696f2e6d7033" title="a"></audio> ' +
        '<img alt="x" data-original-src="http://e.com/a.png" src="https://camo.example.com/6f1ca81af3221dc8b09fc0a4aaaa06d7db987d91/687474703a2f2f652e636f6d2f612e706e67"> <a href="http://e.com/b.png">l</a></p>\n' +
        '<div class="message_inline_image"><a href="http://e.com/b.png" title="l"><img src="https://camo.example.com/e2def1908f48254fe8473abbfd63462c2b2cf5b6/687474703a2f2f652e636f6d2f622e706e67"></a></div>',
    ],
  ],
  camo,
);

test("uploads named by images and audio count as the message's attachments", () => {
  assert.equal(renderMarkdown('![d](/user_uploads/2/ab/done.png) ![s](/user_uploads/2/ab/song.mp3)', uploads).uploadPathIds, [
    '2/ab/done.png',
    '2/ab/song.mp3',
  ]);
});

// Emoticons, for a sender who translates them.
run(
  [
    [
      'emoticons',
      ':) (: :( <3 :| :/ ;) :D :o :O :p :P',
      `<p>${[
        ['1f642', 'slight_smile'],
        ['1f642', 'slight_smile'],
        ['1f641', 'frown'],
        ['2764', 'heart'],
        ['1f610', 'neutral'],
        ['1f615', 'confused'],
        ['1f609', 'wink'],
        ['1f604', 'smile'],
        ['1f62e', 'open_mouth'],
        ['1f62e', 'open_mouth'],
        ['1f61b', 'stuck_out_tongue'],
        ['1f61b', 'stuck_out_tongue'],
      ]
        .map(([c, n]) => emoji(c!, n!))
        .join(' ')}</p>`,
    ],
    ['between punctuation', 'Yes!:)? (;))', `<p>Yes!${emoji('1f642', 'slight_smile')}? (${emoji('1f609', 'wink')})</p>`],
    ['not inside words, nor right after a link', 'a:)b http://x.io:)', '<p>a:)b <a href="http://x.io">http://x.io</a>:)</p>'],
    ['not in code', '`:)`', '<p><code>:)</code></p>'],
    ['each line', ':) a\n:) b', `<p>${emoji('1f642', 'slight_smile')} a<br>\n${emoji('1f642', 'slight_smile')} b</p>`],
  ],
  makeContext({ translateEmoticons: true }),
);
run([['emoticons stay for senders who do not translate', ':) <3', '<p>:) &lt;3</p>']], makeContext());

run(
  [
    [
      'an autolink with a query and no path',
      'see https://podcasts.example.com?feed=abc.',
      '<p>see <a href="https://podcasts.example.com?feed=abc">https://podcasts.example.com?feed=abc</a>.</p>',
    ],
    ['a trailing question mark is punctuation', 'really https://example.com?', '<p>really <a href="https://example.com">https://example.com</a>?</p>'],
    ['a UTC offset of a day or more is no time', '<time:2024-01-01T00:00:00+24:00>', '<p>&lt;time:2024-01-01T00:00:00+24:00&gt;</p>'],
  ],
  makeContext(),
);

// Where a linkifier may match: after whitespace (Unicode's too) or an opening delimiter, and not
// followed by a letter or digit, in messages and in topics alike.
const trac = makeContext({}, [{ id: 1, pattern: '#(?P<id>[0-9]{2,8})', url_template: 'https://trac.example.com/ticket/{id}' }]);
const TICKET = '<a href="https://trac.example.com/ticket/123">#123</a>';
for (const [input, linked] of [
  ['Hello #123 World', true],
  ['Hello #123World', false],
  ['Hello#123 World', false],
  ['Hello\u00a0#123\u00a0World', true],
  ['チケットは#123です', false],
  ['チケットは #123です', false],
  ['チケットは#123 です', false],
  ['チケットは #123 です', true],
  ['(#123)', true],
  ['#123>', true],
  ['"#123"', true],
  ['#123@', true],
  [')#123(', false],
  ['##123', false],
] as const) {
  test(`linkifier boundaries: ${JSON.stringify(input)}`, () => {
    const html = renderMarkdown(input, trac).html;
    assert.is(html.includes(TICKET), linked, html);
    assert.equal(topicLinks(input, trac.linkifiers), linked ? [{ text: '#123', url: 'https://trac.example.com/ticket/123' }] : []);
  });
}

test.run();
