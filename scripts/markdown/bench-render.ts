// Renders per second for a typical ~200-character chat message (not a test).
// Run: npx tsx scripts/markdown/bench-render.ts
import { compileLinkifiers, renderMarkdown, type MarkdownContext } from '../../src/markdown/index.ts';

const users = [{ id: 4, fullName: 'King Hamlet', isActive: true }];
const ctx: MarkdownContext = {
  realmUrl: 'http://localhost:9991',
  users: { byId: (id) => users.find((u) => u.id === id), byName: (n) => users.filter((u) => u.fullName.toLowerCase() === n.toLowerCase()) },
  groups: { byName: () => undefined },
  channels: { byName: (n) => (n === 'design' ? { id: 3, name: 'design' } : undefined), byId: () => undefined },
  realmEmoji: { byName: () => undefined },
  linkifiers: compileLinkifiers([{ id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' }]),
};

const message =
  '@**King Hamlet** thanks! I pushed the fix for #1234 to `main`, see https://github.com/zulip/zulip/pull/1235 :tada:\n' +
  'Next: **review** the *layout* change in #**design** before Friday.';

const seconds = Number(process.argv[2] ?? 3);
for (let i = 0; i < 2000; i++) renderMarkdown(message, ctx);
let count = 0;
const start = process.hrtime.bigint();
const deadline = start + BigInt(seconds * 1e9);
while (process.hrtime.bigint() < deadline) {
  for (let i = 0; i < 100; i++) renderMarkdown(message, ctx);
  count += 100;
}
const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
console.log(`${message.length}-char message: ${Math.round(count / elapsed)} renders/s (${((elapsed / count) * 1e6).toFixed(1)} µs each)`);
console.log(renderMarkdown(message, ctx).html);
