// Minimal HTTP/1.1 keep-alive client on a raw socket: one request in flight per connection.
// 10,000 parked long-polls from one process cost far less this way than through node:http.
import net from 'node:net';
import tls from 'node:tls';
import { scaledTimeout } from './server-process.ts';

export interface Endpoint {
  host: string;
  port: number;
  tls: boolean;
  /** Prefix of every request path, without a trailing slash (for servers under a sub-path). */
  basePath: string;
  /** Value of the Host header. */
  hostHeader: string;
}

export function parseEndpoint(url: string): Endpoint {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported URL scheme: ${url}`);
  const isTls = u.protocol === 'https:';
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : isTls ? 443 : 80,
    tls: isTls,
    basePath: u.pathname.replace(/\/+$/, ''),
    hostHeader: u.host,
  };
}

export interface HttpResult {
  status: number;
  body: string;
}

interface Pending {
  resolve: (r: HttpResult) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
  /** `METHOD path`, named in a failure (a bare ECONNRESET says neither what nor where). */
  what: string;
}

const EMPTY = Buffer.alloc(0);
const HEADER_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

export class HttpConnection {
  private socket!: net.Socket;
  private buf: Buffer = EMPTY;
  /** Chunks come after buf, kept apart while an answer of known length is incomplete (`needed` bytes). */
  private more: Buffer[] = [];
  private moreBytes = 0;
  private needed = 0;
  private pending: Pending | undefined;
  private readUntilClose = false;

  private constructor(private readonly endpoint: Endpoint) {}

  static async open(endpoint: Endpoint, timeoutMs = 10_000): Promise<HttpConnection> {
    const conn = new HttpConnection(endpoint);
    await conn.connect(timeoutMs);
    return conn;
  }

  get isOpen(): boolean {
    return !this.socket.destroyed;
  }

  /** timeoutMs 0 waits forever (parked long-polls); close() still ends it. */
  async request(method: string, path: string, headers: Record<string, string>, body = '', timeoutMs = scaledTimeout(30_000)): Promise<HttpResult> {
    if (this.pending) throw new Error('HttpConnection: request already in flight');
    if (!this.isOpen) await this.connect(timeoutMs || 10_000); // server closed the keep-alive socket
    let head = `${method} ${this.endpoint.basePath}${path} HTTP/1.1\r\nHost: ${this.endpoint.hostHeader}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    if (body || method === 'POST') head += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    return new Promise<HttpResult>((resolve, reject) => {
      this.pending = { resolve, reject, what: `${method} ${path}` };
      if (timeoutMs > 0) {
        this.pending.timer = setTimeout(() => this.fail(new Error(`timeout after ${timeoutMs} ms: ${method} ${path}`)), timeoutMs);
      }
      this.socket.write(`${head}\r\n${body}`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private connect(timeoutMs: number): Promise<void> {
    const { host, port } = this.endpoint;
    this.buf = EMPTY;
    this.more = [];
    this.moreBytes = 0;
    this.needed = 0;
    this.readUntilClose = false;
    const socket = this.endpoint.tls ? tls.connect({ host, port, servername: host }) : net.connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    // Events of a socket replaced by a reconnect must not touch the new one.
    const current = () => socket === this.socket;
    socket.on('data', (chunk: Buffer) => current() && this.onData(chunk));
    socket.on('end', () => current() && this.onEnd());
    socket.on('error', (err) => current() && this.fail(err, true));
    socket.on('close', () => current() && this.fail(new Error('connection closed')));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect timeout to ${host}:${port}`));
      }, timeoutMs);
      socket.once(this.endpoint.tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`connecting to ${host}:${port}: ${err.message}`, { cause: err }));
      });
    });
  }

  /** `network`: the socket's own error, told with the request and the server it was for. */
  private fail(err: Error, network = false): void {
    this.socket.destroy();
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    const { host, port } = this.endpoint;
    p.reject(network ? new Error(`${p.what} to ${host}:${port}: ${err.message}`, { cause: err }) : err);
  }

  private finish(status: number, body: Buffer): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    clearTimeout(p.timer);
    p.resolve({ status, body: body.toString('utf8') });
  }

  private onEnd(): void {
    if (this.readUntilClose) this.parseOrFail(true);
  }

  private onData(chunk: Buffer): void {
    // A 4 MB answer comes in about a hundred chunks: joined once, not once per chunk.
    this.more.push(chunk);
    this.moreBytes += chunk.length;
    if (this.buf.length + this.moreBytes < this.needed) return;
    this.buf = this.buf.length === 0 && this.more.length === 1 ? chunk : Buffer.concat(this.buf.length ? [this.buf, ...this.more] : this.more);
    this.more = [];
    this.moreBytes = 0;
    this.parseOrFail(false);
  }

  private parseOrFail(atEof: boolean): void {
    try {
      this.parse(atEof);
    } catch (err) {
      this.fail(err as Error);
    }
  }

  private parse(atEof: boolean): void {
    const headerEnd = this.buf.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const lines = this.buf.toString('latin1', 0, headerEnd).split('\r\n');
    const status = Number(lines[0]?.split(' ')[1]);
    let contentLength = -1;
    let chunked = false;
    let closeAfter = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') contentLength = Number(value);
      else if (name === 'transfer-encoding') chunked = value.includes('chunked');
      else if (name === 'connection') closeAfter = value === 'close';
    }
    const bodyStart = headerEnd + 4;
    let body: Buffer;
    let consumed: number;
    if (chunked) {
      const decoded = decodeChunked(this.buf, bodyStart);
      if (!decoded) return;
      [body, consumed] = decoded;
    } else if (contentLength >= 0) {
      this.needed = bodyStart + contentLength;
      if (this.buf.length < this.needed) return;
      this.needed = 0;
      body = this.buf.subarray(bodyStart, bodyStart + contentLength);
      consumed = bodyStart + contentLength;
    } else if (status === 204 || status === 304) {
      body = EMPTY;
      consumed = bodyStart;
    } else {
      this.readUntilClose = true;
      if (!atEof) return;
      body = this.buf.subarray(bodyStart);
      consumed = this.buf.length;
      closeAfter = true;
    }
    this.buf = consumed < this.buf.length ? this.buf.subarray(consumed) : EMPTY;
    this.finish(status, body);
    if (closeAfter) this.socket.destroy();
  }
}

/** Returns [body, bytes consumed from the start of buf] or undefined while incomplete. */
function decodeChunked(buf: Buffer, start: number): [Buffer, number] | undefined {
  const parts: Buffer[] = [];
  let pos = start;
  for (;;) {
    const lineEnd = buf.indexOf(CRLF, pos);
    if (lineEnd < 0) return undefined;
    const size = parseInt(buf.toString('latin1', pos, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    pos = lineEnd + 2;
    if (size === 0) {
      // Skip optional trailers up to the empty line.
      const end = buf.indexOf(CRLF, pos);
      if (end < 0) return undefined;
      if (end === pos) return [Buffer.concat(parts), end + 2];
      const trailersEnd = buf.indexOf(HEADER_END, pos);
      return trailersEnd < 0 ? undefined : [Buffer.concat(parts), trailersEnd + 4];
    }
    if (buf.length < pos + size + 2) return undefined;
    parts.push(buf.subarray(pos, pos + size));
    pos += size + 2;
  }
}
