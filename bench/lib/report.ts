// Terminal tables, the JSON record and the SVG chart of one bench run.
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { caseLabel, historyScaling, ratios, scaling, type CaseResult, type Ratio } from './results.ts';
import { num, renderTable } from './table.ts';
import { renderSvg, type BarPanel } from './svg-chart.ts';
import { openFileLimit, type BenchOptions } from './options.ts';

/** Share of the last minute some task waited for a CPU (Linux PSI); high means noisy figures. */
function cpuPressureAvg60(): number | undefined {
  try {
    const match = /some avg10=[\d.]+ avg60=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function machineFacts() {
  const cpus = os.cpus();
  return {
    loadAverage1m: os.loadavg()[0],
    cpuPressurePercent60s: cpuPressureAvg60(),
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    totalMemoryMB: Math.round(os.totalmem() / 2 ** 20),
    openFileLimit: openFileLimit(),
  };
}

const isIdle = (r: CaseResult) => r.kind.startsWith('idle');

/** The capacity ramp: one row a step, then where each step's time went by request kind. */
function renderCapacity(steps: CaseResult[]): string {
  const out = [
    "capacity (steady state of each step; health: p99 of every request kind and of deliveries <= 500 ms, no error; CPU: % of one core, db: the server's own PostgreSQL):\n" +
      renderTable(
        [
          'people',
          'WS',
          'health',
          'req/s',
          'deliv/s',
          'deliv p50',
          'deliv p99',
          'srv CPU%',
          'db CPU%',
          'CPU%/1k people',
          'KB/person RSS',
          'KB/person heap',
          'loader CPU%',
          'pool wait ms',
        ],
        steps.map((r) => {
          const c = r.capacity!;
          return [
            String(c.people),
            String(c.webSockets),
            c.healthy ? 'held' : c.broken.join('; '),
            num(c.requestsPerS, 0),
            num(c.deliveriesPerS, 0),
            num(c.deliveries?.p50, 1),
            num(c.deliveries?.p99, 1),
            num(r.serverCpuPercent, 0),
            num(r.dbCpuPercent, 0),
            num(c.serverCpuPer1000People, 1),
            num(c.memoryPerPersonKB.rss, 1),
            num(c.memoryPerPersonKB.heap, 1),
            num(r.loaderCpuPercent, 0),
            num(c.maxPoolWaitMs, 0),
          ];
        }),
      ),
  ];
  const held = steps.filter((r) => r.capacity!.healthy).at(-1);
  out.push(held ? `most people held: ${held.capacity!.people}` : 'no step held');
  for (const r of steps) {
    const c = r.capacity!;
    const total = c.requests.reduce((s, q) => s + q.totalMs, 0);
    out.push(
      `${c.people} people, where the requests' time went (join: ${c.join.seconds.toFixed(0)} s, ${c.join.errors} errors${c.join.requests.map((q) => `, ${q.kind} p99 ${num(q.p99, 0)} ms`).join('')}):\n` +
        renderTable(
          ['request', 'count', 'errors', 'p50 ms', 'p99 ms', 'share of time %'],
          c.requests.map((q) => [
            q.kind,
            String(q.count),
            String(q.errors),
            num(q.p50, 1),
            num(q.p99, 1),
            num(total ? (q.totalMs / total) * 100 : undefined, 1),
          ]),
        ),
    );
  }
  return out.join('\n\n');
}

/**
 * CPU the server and its database spent per message accepted or event delivered, in ms: what
 * decides how far more cores would take it, whatever the machine left it meanwhile.
 */
function cpuMsPerItem(r: CaseResult): number | undefined {
  if (r.serverCpuPercent === undefined || !r.delivered) return undefined;
  return (((r.serverCpuPercent + (r.dbCpuPercent ?? 0)) / 100) * r.seconds * 1000) / r.delivered;
}

export function renderTables(results: CaseResult[]): string {
  const out: string[] = [];
  const capacity = results.filter((r) => r.capacity);
  if (capacity.length) out.push(renderCapacity(capacity));
  const failover = results.filter((r) => r.failover);
  if (failover.length) out.push(renderFailover(failover));
  const active = results.filter((r) => !isIdle(r) && !r.capacity && !r.failover);
  if (active.length) {
    out.push(
      renderTable(
        ['case', 'target', 'p50 ms', 'p99 ms', 'max ms', 'per s', 'delivered', 'errors', 'srv CPU%', 'srv RSS MB', 'db PSS MB', 'loader CPU%'],
        active.map((r) => [
          caseLabel(r),
          r.target,
          num(r.latencyMs?.p50, 2),
          num(r.latencyMs?.p99, 2),
          num(r.latencyMs?.max, 2),
          num(r.throughput, 0),
          `${r.delivered ?? '-'}/${r.expected ?? '-'}`,
          String(r.errors),
          num(r.serverCpuPercent, 0),
          num(r.serverRssPeakMB, 0),
          num(r.dbPssPeakMB, 0),
          num(r.loaderCpuPercent, 0),
        ]),
      ),
    );
  }
  const idle = results.filter(isIdle);
  if (idle.length) {
    out.push(
      renderTable(
        ['case', 'target', 'RSS KB/item', 'heap KB/item', 'srv RSS MB', 'errors'],
        idle.map((r) => [caseLabel(r), r.target, num(r.perItemKB?.rss, 2), num(r.perItemKB?.heap, 2), num(r.serverRssPeakMB, 0), String(r.errors)]),
      ),
    );
  }
  const rs = ratios(results);
  if (rs.length) {
    out.push(
      'server / baseline:\n' +
        renderTable(
          ['case', 'throughput x', 'p50 x', 'p99 x', 'RSS/item x'],
          rs.map((r) => [r.label, num(r.throughput, 3), num(r.p50, 2), num(r.p99, 2), num(r.rssPerItem, 2)]),
        ),
    );
  }
  const cluster = results.filter((r) => r.nodes !== undefined && !r.failover);
  if (cluster.length) {
    const scaled = new Map(scaling(results).map((r) => [r.label, r]));
    out.push(
      'cluster (CPU: % of one core; CPU ms: nodes and PostgreSQL per message sent or event delivered; x: the figure / the same case on 1 node):\n' +
        renderTable(
          ['case', 'node CPU%', 'PostgreSQL CPU%', 'CPU ms', 'throughput x', 'p50 x', 'p99 x'],
          cluster.map((r) => {
            const x = scaled.get(caseLabel(r));
            return [
              caseLabel(r),
              r.nodeCpuPercent?.map((c) => num(c, 0)).join(' + ') ?? '-',
              num(r.dbCpuPercent, 0),
              num(cpuMsPerItem(r), 2),
              num(x?.throughput, 2),
              num(x?.p50, 2),
              num(x?.p99, 2),
            ];
          }),
        ),
    );
  }
  const grown = historyScaling(results);
  if (grown.length) {
    out.push(
      'history (x: the figure / the same request on the smallest history):\n' +
        renderTable(
          ['case', 'throughput x', 'p50 x', 'p99 x'],
          grown.map((r) => [r.label, num(r.throughput, 2), num(r.p50, 2), num(r.p99, 2)]),
        ),
    );
  }
  const failing = results.filter((r) => r.errorSamples.length);
  for (const r of failing) out.push(`errors in ${r.target} ${caseLabel(r)}:\n  ${r.errorSamples.join('\n  ')}`);
  return out.join('\n\n');
}

/** cluster --kill: one row per failure; lost, duplicated, out of order and re-registered must be 0. */
function renderFailover(results: CaseResult[]): string {
  return (
    'failures under load (clients: long-polls + WebSockets; lost: acknowledged messages a client never got, summed over clients):\n' +
    renderTable(
      [
        'failure',
        'nodes',
        'clients',
        'moved',
        'acknowledged (after)',
        'failed sends',
        'lost',
        'duplicated',
        'out of order',
        're-registered',
        'resumed within ms',
      ],
      results.map((r) => {
        const f = r.failover!;
        return [
          f.failure === 'node' ? 'node SIGKILL' : 'NATS restart',
          String(r.nodes),
          String(2 * r.count),
          String(f.movedClients),
          `${f.acknowledged} (${f.acknowledgedAfter})`,
          String(f.failedSends),
          String(f.lost),
          String(f.duplicated),
          String(f.outOfOrder),
          String(f.reregistered),
          num(f.resumedWithinMs, 0),
        ];
      }),
    )
  );
}

/** One bar per ratio a case has. */
function ratioPanel(title: string, rs: Ratio[]): BarPanel {
  return {
    title,
    categories: rs.map((r) => r.label),
    series: [
      { name: 'throughput x', values: rs.map((r) => r.throughput) },
      { name: 'p50 x', values: rs.map((r) => r.p50) },
      { name: 'p99 x', values: rs.map((r) => r.p99) },
      { name: 'RSS/item x', values: rs.map((r) => r.rssPerItem) },
    ].filter((s) => s.values.some((v) => v !== undefined)),
  };
}

function chartPanels(results: CaseResult[], rs: Ratio[]): BarPanel[] {
  const categories = [...new Set(results.map(caseLabel))];
  const targets = (['baseline', 'server'] as const).filter((t) => results.some((r) => r.target === t));
  const pick = (t: string, f: (r: CaseResult) => number | undefined) =>
    categories.map((c) => {
      const r = results.find((x) => x.target === t && caseLabel(x) === c);
      return r && f(r);
    });
  const panels: BarPanel[] = [];
  if (results.some((r) => r.latencyMs)) {
    panels.push({
      title: 'Latency, ms (publish→delivered; send: request→response)',
      categories,
      series: targets.flatMap((t) => [
        { name: `${t} p50`, values: pick(t, (r) => r.latencyMs?.p50) },
        { name: `${t} p99`, values: pick(t, (r) => r.latencyMs?.p99) },
      ]),
    });
  }
  if (results.some((r) => r.throughput !== undefined)) {
    panels.push({
      title: 'Throughput per second (fan-out: events delivered; send: messages accepted)',
      categories,
      series: targets.map((t) => ({ name: t, values: pick(t, (r) => r.throughput) })),
    });
  }
  if (results.some((r) => r.perItemKB)) {
    panels.push({
      title: 'Memory per idle item, KB',
      categories,
      series: targets.flatMap((t) => [
        { name: `${t} RSS`, values: pick(t, (r) => r.perItemKB?.rss) },
        { name: `${t} heap`, values: pick(t, (r) => r.perItemKB?.heap) },
      ]),
    });
  }
  const scaled = scaling(results);
  if (scaled.length) panels.push(ratioPanel('Cluster / 1 node (throughput: higher is better; latency: lower is better)', scaled));
  const grown = historyScaling(results);
  if (grown.length) panels.push(ratioPanel('History / smallest history (throughput: higher is better; latency: lower is better)', grown));
  if (rs.length) panels.push(ratioPanel('Server / baseline (throughput: higher is better; latency, memory: lower is better)', rs));
  return panels;
}

export type MachineFacts = ReturnType<typeof machineFacts>;

export function describeMachine(m: MachineFacts): string {
  const pressure = m.cpuPressurePercent60s === undefined ? '' : `, CPU pressure ${m.cpuPressurePercent60s}% (tasks waiting for a CPU; high = noisy figures)`;
  return `${m.cores} cores (${m.cpuModel}), Node ${m.node}, ${m.os}, load ${m.loadAverage1m.toFixed(2)}${pressure}`;
}

/** Writes <scenario>-<timestamp>.json and .svg, and latest-<scenario>.json; returns the paths. */
export async function writeReport(opts: BenchOptions, command: string, startedAt: Date, machine: MachineFacts, results: CaseResult[]): Promise<string[]> {
  await mkdir(opts.outDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const rs = ratios(results);
  const options = opts.remote ? { ...opts, remote: { ...opts.remote, apiKey: '***' } } : opts;
  const record = {
    scenario: opts.scenario,
    command,
    startedAt: startedAt.toISOString(),
    machine,
    options,
    results,
    ratios: rs,
    scaling: scaling(results),
    history: historyScaling(results),
  };
  const json = `${JSON.stringify(record, null, 2)}\n`;
  const base = join(opts.outDir, `${opts.scenario}-${stamp}`);
  const subtitle = `${command} | ${describeMachine(machine)} | ${startedAt.toISOString()}`;
  const paths = [`${base}.json`, `${base}.svg`, join(opts.outDir, `latest-${opts.scenario}.json`)];
  await writeFile(paths[0]!, json);
  await writeFile(paths[1]!, renderSvg(`bench ${opts.scenario}`, subtitle, chartPanels(results, rs)));
  await writeFile(paths[2]!, json);
  return paths;
}
