// render: renders/s of the Zulip-flavoured Markdown renderer, in this process (no server), for a
// mix of typical messages, with no linkifier and with a set of 10.
import { compileLinkifiers, renderMarkdown, type Linkifier, type MarkdownContext } from '../../src/markdown/index.ts';
import type { BenchOptions } from '../lib/options.ts';
import { SelfCpu } from '../lib/proc-sampler.ts';
import type { CaseResult } from '../lib/results.ts';
import { percentiles } from '../lib/stats.ts';

const MESSAGES = [
  'Sounds good, see you at the standup tomorrow.',
  '@**Alice Smith** can you take a look at #4521? It breaks **every** build on `main`.',
  'Deployed to staging: https://staging.example.com/release/2024-10 (see the [changelog](https://example.com/changes)).',
  '```python\ndef retry(fn, times=3):\n    for _ in range(times):\n        if fn():\n            return True\n    return False\n```',
  '> the new dashboard is slow\n\nConfirmed, tracked as JIRA-1024 and zulip/zulip#30000 :thumbs_up:',
  "Plan for the week:\n* finish ENG-77\n* review @**Bob Jones**'s patch\n* ask #**design** about the icons",
  'lgtm :tada: merging once CI is green; ping @*backend* if anything looks off in CVE-2024-3094.',
  'Meeting moved to <time:2024-10-14T15:00:00+02:00>, notes in go/notes-q4 and RT#8812.',
];

const LINKIFIERS: Linkifier[] = [
  { id: 1, pattern: '#(?P<id>[0-9]{2,8})', url_template: 'https://github.com/zulip/zulip/issues/{id}' },
  { id: 2, pattern: '(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', url_template: 'https://github.com/{org}/{repo}/issues/{id}' },
  { id: 3, pattern: 'JIRA-(?P<id>[0-9]+)', url_template: 'https://jira.example.com/browse/JIRA-{id}' },
  { id: 4, pattern: 'ENG-(?P<id>[0-9]+)', url_template: 'https://linear.example.com/issue/ENG-{id}' },
  { id: 5, pattern: 'CVE-(?P<year>[0-9]{4})-(?P<id>[0-9]+)', url_template: 'https://nvd.nist.gov/vuln/detail/CVE-{year}-{id}' },
  { id: 6, pattern: 'go/(?P<path>[a-z0-9-]+)', url_template: 'https://go.example.com/{path}' },
  { id: 7, pattern: 'RT#(?P<id>[0-9]+)', url_template: 'https://rt.example.com/Ticket/Display.html?id={id}' },
  { id: 8, pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/pull/{id}' },
  { id: 9, pattern: 'sha:(?P<sha>[0-9a-f]{7,40})', url_template: 'https://github.com/zulip/zulip/commit/{sha}' },
  { id: 10, pattern: 'ticket:(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' },
];

const USERS = [
  { id: 1, fullName: 'Alice Smith', isActive: true },
  { id: 2, fullName: 'Bob Jones', isActive: true },
];

function context(linkifiers: Linkifier[]): MarkdownContext {
  return {
    realmUrl: 'https://chat.example.com',
    users: {
      byId: (id) => USERS.find((u) => u.id === id),
      byName: (name) => USERS.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
    },
    groups: { byName: (name) => (name === 'backend' ? { id: 7, name } : undefined) },
    channels: { byName: (name) => (name === 'design' ? { id: 3, name } : undefined), byId: (id) => (id === 3 ? { id, name: 'design' } : undefined) },
    realmEmoji: { byName: () => undefined },
    linkifiers: compileLinkifiers(linkifiers),
  };
}

/** Renders the mix round-robin for `durationMs`, timing each render. */
function measure(ctx: MarkdownContext, durationMs: number): CaseResult {
  const cpu = new SelfCpu();
  const samples: number[] = [];
  const startedAt = performance.now();
  let errors = 0;
  const errorSamples: string[] = [];
  while (performance.now() - startedAt < durationMs) {
    const content = MESSAGES[samples.length % MESSAGES.length]!;
    const t = performance.now();
    try {
      renderMarkdown(content, ctx);
    } catch (err) {
      errors++;
      if (errorSamples.length < 5) errorSamples.push(String(err));
    }
    samples.push(performance.now() - t);
  }
  const seconds = (performance.now() - startedAt) / 1000;
  return {
    kind: 'render',
    target: 'server',
    count: ctx.linkifiers.list.length,
    latencyMs: percentiles(samples),
    throughput: samples.length / seconds,
    expected: samples.length,
    delivered: samples.length - errors,
    errors,
    errorSamples,
    loaderCpuPercent: cpu.percent(),
    seconds,
  };
}

/** Renders before measuring, so that neither case pays for JIT compilation. */
const WARM_UP_ROUNDS = 300;

export async function renderScenario(opts: BenchOptions): Promise<CaseResult[]> {
  const contexts = [context([]), context(LINKIFIERS)];
  for (let i = 0; i < WARM_UP_ROUNDS; i++) for (const ctx of contexts) for (const m of MESSAGES) renderMarkdown(m, ctx);
  return contexts.map((ctx) => measure(ctx, opts.durationS * 1000));
}
