// NATS for the cluster tests: the machine's server (NATS_URL), and private nats-server processes
// that a test may stop and start again (when the binary is installed).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { removeClusterStream } from '../../src/cluster/node.ts';
import { tempDir } from './server.ts';

export const NATS_URL = process.env.NATS_URL || undefined;
export const hasNatsServer = () => spawnSync('nats-server', ['--version']).status === 0;

/**
 * A server process started with this run's environment joins NATS_URL's cluster, whose stream
 * (one per database) NATS keeps until removed: call this once its processes on `databaseUrl` ended.
 */
export async function removeStreamOf(databaseUrl: string): Promise<void> {
  if (NATS_URL) await removeClusterStream(NATS_URL, databaseUrl);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A nats-server with JetStream on its own port and storage directory. */
export class PrivateNats {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private storeDir: string,
  ) {}

  static async start(): Promise<PrivateNats> {
    const nats = new PrivateNats(await freePort(), tempDir());
    await nats.start();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts it again on the same port; `freshStorage`: as if it had lost its disk. */
  async start(freshStorage = false): Promise<void> {
    if (freshStorage) this.storeDir = tempDir();
    this.child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    await waitForPort(this.port, Date.now() + 10_000);
  }

  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    this.child = null;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }
}
