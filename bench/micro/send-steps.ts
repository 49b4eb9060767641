// What pieces of a channel message's send path cost the server's process, each alone: a channel
// actor's job (actors/serial.ts; at 100 channels nearly every message is a job of its own), and
// small per-message costs the send bench's profile showed (a job's context binding, JSON.parse
// failing on a plain channel name, an ApiError built and not thrown). Rounds of every step
// interleave, so the machine's load falls on all alike; process.cpuUsage() divided by the calls.
//   npx tsx bench/micro/send-steps.ts [n=20000]
import { AsyncLocalStorage } from 'node:async_hooks';
import { ChannelActors } from '../../actors/channels.ts';
import { inCallersTransaction } from '../../src/db/transaction.ts';
import { badRequest } from '../../src/errors.ts';

const n = Number(process.argv[2] ?? 20_000);
const actors = new ChannelActors(30_000);
const job = () => 1;

/** 32 writers at once over 100 channels, each write alone in its channel's actor, as in the send bench. */
async function actorJobs(write: (id: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < n) await write(next++ % 100);
    }),
  );
}

const steps: Record<string, () => unknown> = {
  'actor job (run)': () => actorJobs((id) => actors.run(id, async () => 1)),
  'actor job (inBatch)': () => actorJobs((id) => actors.inBatch(id, 'm', 1, async (items: number[]) => items)),
  'AsyncLocalStorage.bind(job)()': () => {
    for (let i = 0; i < n; i++) AsyncLocalStorage.bind(job)();
  },
  'inCallersTransaction(job)()': () => {
    for (let i = 0; i < n; i++) inCallersTransaction(job)();
  },
  'JSON.parse failing on a name': () => {
    for (let i = 0; i < n; i++) {
      try {
        JSON.parse('bench 17');
      } catch {}
    }
  },
  'badRequest built, not thrown': () => {
    for (let i = 0; i < n; i++) badRequest("Not authorized to send to channel 'bench 17'");
  },
};

const perCall: Record<string, number[]> = {};
for (let round = 0; round < 5; round++) {
  for (const [name, step] of Object.entries(steps)) {
    const before = process.cpuUsage();
    await step();
    const used = process.cpuUsage(before);
    (perCall[name] ??= []).push((used.user + used.system) / n);
  }
}
for (const [name, values] of Object.entries(perCall)) {
  const sorted = values.slice(1).sort((a, b) => a - b);
  console.log(`${name.padEnd(32)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} µs CPU per call (median of ${sorted.length} rounds after one to warm)`);
}
actors.stop();
