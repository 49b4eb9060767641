// The round trip through BeautifulSoup that Zulip gives a message when it puts its thumbnails in
// (rewrite_thumbnailed_images): each expected string is what BeautifulSoup 4 (html.parser, Zulip's
// html_formatter) writes for the input.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asBeautifulSoupWrites } from '../../src/markdown/soup.ts';

const CASES: [name: string, html: string, expected: string][] = [
  [
    'entities in text are decoded; only & < > are escaped',
    '<p>a &#39;b&#39; &quot;c&quot; &amp; &lt;d&gt; &#x27;e&#x27; &#9731;</p>',
    "<p>a 'b' \"c\" &amp; &lt;d&gt; 'e' ☃</p>",
  ],
  ['named entities: known ones decoded, unknown ones lose their semicolon', '<p>&copy; &copy &notin; &ampfoo; &foo;</p>', '<p>© © ∉ &amp;ampfoo &amp;foo</p>'],
  ['numeric references to C1 code points mean Windows-1252', '<p>&#128; &#150; &#0;</p>', '<p>€ – �</p>'],
  [
    'attributes: sorted, lower-cased, a value with " quoted with \'',
    '<a title="say &quot;hi&quot;" HREF="x?a=1&amp;b=2">l</a>',
    '<a href="x?a=1&amp;b=2" title=\'say "hi"\'>l</a>',
  ],
  [
    'attributes: a value with both quotes keeps " as &quot;; an empty value is bare',
    '<a title="&quot;it&#39;s&quot;" class="">l</a><audio controls src="a"></audio>',
    '<a class="" title="&quot;it\'s&quot;">l</a><audio controls src="a"></audio>',
  ],
  ['attribute values are unescaped as html.unescape does', '<a href="/?a=&copy;&ampfoo;&amp;x">l</a>', '<a href="/?a=©&amp;foo;&amp;x">l</a>'],
  ['a class list is written with single spaces', '<span class="a   b\tc">x</span>', '<span class="a b c">x</span>'],
  [
    'self-closed elements get an end tag, void ones none',
    '<svg viewBox="0 0 1 1"><path d=\'M0\'/></svg><br/><img src="x"/>',
    '<svg viewbox="0 0 1 1"><path d="M0"></path></svg><br><img src="x">',
  ],
  ['surrounding whitespace is stripped', '\n  <p>x</p>\n ', '<p>x</p>'],
];

for (const [name, html, expected] of CASES) {
  test(name, () => {
    assert.is(asBeautifulSoupWrites(html), expected);
  });
}

test.run();
