// The access lines of fan-outs as the server writes them: `turns` event-loop turns, each
// answering `lines` requests at once (a fan-out to as many parked polls), the batch written to
// pino's destination (stderr) between turns. Prints the process's CPU per line.
// Usage: node access-batches.js <turns> <lines> 2>/dev/null
import { ServerMetrics } from '../../src/ops/metrics.ts';
import { requestObservers } from '../../src/ops/requests.ts';
import type { ObservedRequest } from '../../src/http/exchange.ts';

const [turns = 50, lines = 10_000] = process.argv.slice(2).map(Number);
const observer = requestObservers(new ServerMetrics()).route('GET', '/api/v1/events');
const requests: ObservedRequest[] = Array.from({ length: lines }, (_, i) => ({ startedAt: performance.now(), seq: i + 1, userId: 7 }));
const turn = () => new Promise((resolve) => setImmediate(resolve));

await turn();
const start = process.cpuUsage();
for (let t = 0; t < turns; t++) {
  for (const request of requests) observer.answered(request, 200);
  await turn();
  await turn();
}
const used = process.cpuUsage(start);
process.stdout.write(`${(((used.user + used.system) * 1000) / (turns * lines)).toFixed(0)} ns of CPU per access line (${turns} turns of ${lines})\n`);
