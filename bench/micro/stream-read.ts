// What a cluster node spends reading, off the JetStream stream, message events it holds no queue
// for: the cost that routing events by user (issue 27, item 1) could save on that node. One
// process reads through a NatsBus with no queue; a child process publishes N message events to a
// channel of 100 subscribers, in frames of --batch events (the writer waits until each frame is
// stored, as a channel's writer does); the reader prints its own CPU (user + system, from
// process.cpuUsage) per event read, so the machine's load and the writer's work stay out of it.
// Usage: NATS_URL=nats://127.0.0.1:4222 npx tsx bench/micro/stream-read.ts [batch=1] [events=20000]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import type { EventEnvelope } from '../../src/bus/bus.ts';
import { NatsBus } from '../../src/bus/nats.ts';

const [role, clusterArg, batchArg, eventsArg] =
  process.argv[2] === 'writer' ? process.argv.slice(2) : ['reader', `read${randomBytes(4).toString('hex')}`, ...process.argv.slice(2)];
const cluster = clusterArg!;
const batch = Number(batchArg ?? 1);
const count = Number(eventsArg ?? 20_000);
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
const bus = await NatsBus.open({ connection: nc, clusterId: cluster, nodeId: role! });

if (role === 'reader') {
  let read = 0;
  let start: NodeJS.CpuUsage | undefined;
  const done = new Promise<void>((resolve) =>
    bus.subscribe(() => {
      // Measured from the first event on, so neither start-up nor waiting for the writer counts.
      if (++read === 1) start = process.cpuUsage();
      if (read === count) resolve();
    }),
  );
  await bus.resume(null);
  const writer = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'writer', cluster, String(batch), String(count)], {
    stdio: 'inherit',
  });
  await done;
  const cpu = process.cpuUsage(start);
  console.log(`events in frames of ${batch}: reader CPU ${((cpu.user + cpu.system) / (count - 1)).toFixed(1)} µs per message event read`);
  await new Promise((resolve) => writer.once('exit', resolve));
  await bus.destroy();
} else {
  const users = Array.from({ length: 100 }, (_, i) => i + 10);
  const text = 'hello world '.repeat(8);
  for (let i = 0; i < count; i++) {
    const message = {
      id: i + 1,
      sender_id: 10,
      content: `<p>${text}</p>`,
      raw_content: text,
      timestamp: 1_764_380_000,
      client: 'bench',
      subject: 'topic',
      display_recipient: 'general',
      type: 'stream',
      stream_id: 3,
    };
    const perUser: Record<number, { flags: string[] }> = {};
    for (const u of users) perUser[u] = { flags: u === 10 ? ['read'] : [] };
    const envelope = {
      realmId: 1,
      userIds: users,
      event: { type: 'message', id: -1, message, flags: [] },
      perUser,
      publicChannelMessage: true,
      xid: i,
    } as unknown as EventEnvelope;
    bus.publishAll([envelope], i);
    if (i % batch === batch - 1) await bus.settled();
  }
  await bus.settled();
  await bus.close();
}
await nc.close();
