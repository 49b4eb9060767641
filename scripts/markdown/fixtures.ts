// Renders every case of Zulip's Markdown test fixtures (zerver/tests/fixtures/markdown_test_cases.json
// in zulip/zulip, kept outside this repository) with our renderer and lists the ones that differ.
//
//   npx tsx scripts/markdown/fixtures.ts path/to/markdown_test_cases.json [--diff] [--only NAME]
//
// The context is the one Zulip's test_markdown_fixtures renders in: realm zulip.testserver, the
// test settings' Camo proxy (key "dummy"), user 7 "Zoe" for the mention cases, and the sender's
// translate_emoticons only for the cases that ask for it.
import { readFileSync } from 'node:fs';
import { compileLinkifiers, renderMarkdown, type MarkdownContext } from '../../src/markdown/index.ts';

interface RegularCase {
  name: string;
  input: string;
  expected_output: string;
  translate_emoticons?: boolean;
  ignore?: boolean;
}
type LinkifyCase = [input: string, template: string, url: string];

const args = process.argv.slice(2);
const path = args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--only');
if (!path) {
  console.error('usage: tsx scripts/markdown/fixtures.ts markdown_test_cases.json [--diff] [--only NAME]');
  process.exit(2);
}
const showDiff = args.includes('--diff');
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const fixtures = JSON.parse(readFileSync(path, 'utf8')) as { regular_tests: RegularCase[]; linkify_tests: LinkifyCase[] };

const zoe = { id: 7, fullName: 'Zoe', isActive: true };
const base: MarkdownContext = {
  realmUrl: 'http://zulip.testserver',
  users: { byId: (id) => (id === zoe.id ? zoe : undefined), byName: (name) => (name.toLowerCase() === 'zoe' ? [zoe] : []) },
  groups: { byName: () => undefined },
  channels: { byName: () => undefined, byId: () => undefined },
  realmEmoji: { byName: () => undefined },
  linkifiers: compileLinkifiers([]),
  camo: { uri: 'https://external-content.zulipcdn.net/external_content/', key: 'dummy' },
};

/** test_markdown_fixtures' `replaced`: the template with the URL linked as Zulip's linkifier links it. */
function linkified(template: string, url: string): string {
  if (!template.includes('%s')) return template;
  const href = url.startsWith('http') || url.includes('://') ? url : url.includes('@') ? `mailto:${url}` : `http://${url}`;
  return template.replace('%s', `<a href="${href}">${url}</a>`);
}

const cases = [
  ...fixtures.regular_tests
    .filter((c) => !c.ignore)
    .map((c) => ({ name: c.name, input: c.input, expected: c.expected_output, ctx: c.translate_emoticons ? { ...base, translateEmoticons: true } : base })),
  ...fixtures.linkify_tests.map(([input, template, url], i) => ({ name: `linkify #${i + 1}: ${input}`, input, expected: linkified(template, url), ctx: base })),
].filter((c) => only === undefined || c.name === only);

const misses: string[] = [];
for (const c of cases) {
  let actual: string;
  try {
    actual = renderMarkdown(c.input, c.ctx).html;
  } catch (error) {
    actual = `(threw ${String(error)})`;
  }
  if (actual === c.expected) continue;
  misses.push(c.name);
  console.log(`MISS ${c.name}`);
  if (showDiff) console.log(`  input:    ${JSON.stringify(c.input)}\n  expected: ${JSON.stringify(c.expected)}\n  actual:   ${JSON.stringify(actual)}`);
}
console.log(`${cases.length - misses.length} of ${cases.length} render identically (${misses.length} differ)`);
