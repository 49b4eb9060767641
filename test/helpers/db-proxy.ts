// A TCP relay in front of a test database that a test can cut and restore, to see the server
// lose its database and get it back (the database itself stays up for everyone else).
import net from 'node:net';
import path from 'node:path';

export class DatabaseProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private port = 0;

  private constructor(
    private readonly upstream: net.NetConnectOpts,
    private readonly databaseUrl: URL,
  ) {}

  /** A relay to the database at `databaseUrl` (TCP, or the Unix socket its `host` parameter names). */
  static async start(databaseUrl: string): Promise<DatabaseProxy> {
    const url = new URL(databaseUrl);
    const socketDir = url.searchParams.get('host');
    const port = Number(url.port || 5432);
    const upstream: net.NetConnectOpts = socketDir ? { path: path.join(socketDir, `.s.PGSQL.${port}`) } : { host: url.hostname, port };
    const proxy = new DatabaseProxy(upstream, url);
    await proxy.restore();
    return proxy;
  }

  /** The database's URL through the relay. */
  get url(): string {
    const url = new URL(this.databaseUrl);
    url.searchParams.delete('host');
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Drops every connection and refuses new ones, as a database that went away. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    const server = net.createServer((client) => {
      const db = net.connect(this.upstream);
      for (const socket of [client, db]) {
        this.sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => this.sockets.delete(socket));
      }
      client.pipe(db).pipe(client);
      client.on('close', () => db.destroy());
      db.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }
}
