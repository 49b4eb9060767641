// TeX as Zulip renders it: KaTeX 0.16's HTML and MathML (the version Zulip runs, whose class
// names Zulip clients' stylesheets expect), inline, in math fences, and math fences inside quote
// and spoiler fences.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderMarkdown } from '../../src/markdown/index.ts';
import { makeContext } from './markdown-helpers.ts';

const cases: Array<[string, string, string]> = [
  [
    'inline math',
    'a $$x^2$$ b',
    '<p>a <span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow><annotation encoding="application/x-tex">x^2</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:0.8141em;"></span><span class="mord"><span class="mord mathnormal">x</span><span class="msupsub"><span class="vlist-t"><span class="vlist-r"><span class="vlist" style="height:0.8141em;"><span style="top:-3.063em;margin-right:0.05em;"><span class="pstrut" style="height:2.7em;"></span><span class="sizing reset-size6 size3 mtight"><span class="mord mtight">2</span></span></span></span></span></span></span></span></span></span></span> b</p>',
  ],
  [
    'a math fence',
    '```math\n\\frac{1}{2}\n```',
    '<p><span class="katex-display"><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><mfrac><mn>1</mn><mn>2</mn></mfrac></mrow><annotation encoding="application/x-tex">\\frac{1}{2}</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:2.0074em;vertical-align:-0.686em;"></span><span class="mord"><span class="mopen nulldelimiter"></span><span class="mfrac"><span class="vlist-t vlist-t2"><span class="vlist-r"><span class="vlist" style="height:1.3214em;"><span style="top:-2.314em;"><span class="pstrut" style="height:3em;"></span><span class="mord"><span class="mord">2</span></span></span><span style="top:-3.23em;"><span class="pstrut" style="height:3em;"></span><span class="frac-line" style="border-bottom-width:0.04em;"></span></span><span style="top:-3.677em;"><span class="pstrut" style="height:3em;"></span><span class="mord"><span class="mord">1</span></span></span></span><span class="vlist-s">​</span></span><span class="vlist-r"><span class="vlist" style="height:0.686em;"><span></span></span></span></span></span><span class="mclose nulldelimiter"></span></span></span></span></span></span></p>',
  ],
  [
    'math inside a quote fence',
    '~~~quote\n```math\ny\n```\nafter\n~~~',
    '<blockquote>\n<p><span class="katex-display"><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><mi>y</mi></mrow><annotation encoding="application/x-tex">y</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:0.625em;vertical-align:-0.1944em;"></span><span class="mord mathnormal" style="margin-right:0.0359em;">y</span></span></span></span></span></p>\n<p>after</p>\n</blockquote>',
  ],
  [
    'math inside a spoiler',
    '```spoiler Answer\n```math\nz\n```\n```',
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>Answer</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p><span class="katex-display"><span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><mi>z</mi></mrow><annotation encoding="application/x-tex">z</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span class="base"><span class="strut" style="height:0.4306em;"></span><span class="mord mathnormal" style="margin-right:0.044em;">z</span></span></span></span></span></p>\n</div></div>',
  ],
  ['bad TeX in a fence shows the source', '```math\n\\frac{\n```', '<p><span class="tex-error">\\frac{</span></p>'],
];

for (const [name, input, expected] of cases) {
  test(name, () => {
    assert.is(renderMarkdown(input, makeContext()).html, expected);
  });
}

test.run();
