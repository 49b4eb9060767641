// Gzipped tar archives of data exports, written and read with node's zlib and the POSIX ustar
// layout (512-byte headers; names too long for a header travel in a pax `path` record), so an
// export opens with any `tar xzf`. Only regular files: that is all an export holds.
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, type: '0' | 'x', mtime: number, prefix = ''): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100);
  h.write(octal(0o644, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(mtime, 12), 136);
  h.write(' '.repeat(8), 148);
  h.write(type, 156);
  h.write('ustar\u000000', 257);
  h.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(octal(sum, 7) + ' ', 148);
  return h;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** A pax record `"<length> path=<name>\n"`, whose length counts its own digits. */
function paxPath(name: string): Buffer {
  const body = ` path=${name}\n`;
  let length = Buffer.byteLength(body);
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return Buffer.from(`${length}${body}`);
}

/** The headers of one file: ustar name and prefix when they fit, else a pax record first. */
function headersFor(name: string, size: number, mtime: number): Buffer[] {
  if (Buffer.byteLength(name) <= 100) return [header(name, size, '0', mtime)];
  const cut = name.lastIndexOf('/', 155);
  if (cut > 0 && Buffer.byteLength(name.slice(0, cut)) <= 155 && Buffer.byteLength(name.slice(cut + 1)) <= 100) {
    return [header(name.slice(cut + 1), size, '0', mtime, name.slice(0, cut))];
  }
  const pax = paxPath(name);
  return [header('PaxHeader', pax.length, 'x', mtime), pax, padding(pax.length), header(name.slice(-100), size, '0', mtime)];
}

export interface TarWriter {
  add(name: string, data: Buffer): Promise<void>;
  /** Ends the archive and waits until it is on disk. */
  close(): Promise<void>;
  /** Stops writing after a failure elsewhere; what was written is left for the caller to remove. */
  abort(): Promise<void>;
}

/** A new .tar.gz at `file` (which must not exist yet). */
export function createTarGz(file: string): TarWriter {
  const gzip = createGzip();
  // The pipeline's error is kept and thrown by the next call, so it never goes unhandled.
  let failure: unknown = null;
  const done = pipeline(gzip, createWriteStream(file, { flags: 'wx' })).catch((err: unknown) => {
    failure = err;
  });
  const check = () => {
    if (failure) throw failure;
  };
  const write = async (chunk: Buffer) => {
    check();
    if (!gzip.write(chunk)) await Promise.race([once(gzip, 'drain'), done]);
    check();
  };
  const mtime = Math.floor(Date.now() / 1000);
  return {
    async add(name, data) {
      for (const part of headersFor(name, data.length, mtime)) await write(part);
      await write(data);
      await write(padding(data.length));
    },
    async close() {
      gzip.end(Buffer.alloc(2 * BLOCK));
      await done;
      check();
    },
    async abort() {
      gzip.destroy();
      await done;
    },
  };
}

/** A member's name, refused when it would leave the directory it is extracted to. */
function safeName(name: string): string {
  const normal = path.posix.normalize(name);
  if (normal.startsWith('/') || normal === '..' || normal.startsWith('../') || normal.includes('\0')) throw new Error(`unsafe name in archive: ${name}`);
  return normal;
}

const text = (h: Buffer, start: number, length: number) =>
  h
    .subarray(start, start + length)
    .toString('utf8')
    .replace(/\0.*$/s, '');

/** Bytes as they arrive, taken out in pieces of known size without re-copying what waits. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The next `n` bytes (n <= length). */
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let offset = 0;
    while (offset < n) {
      const chunk = this.chunks[0]!;
      const k = Math.min(chunk.length, n - offset);
      chunk.copy(out, offset, 0, k);
      offset += k;
      if (k === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(k);
    }
    this.length -= n;
    return out;
  }
}

/** Extracts every regular file of a .tar.gz into `dir`; returns their names. */
export async function extractTarGz(file: string, dir: string): Promise<string[]> {
  const names: string[] = [];
  const queue = new ByteQueue();
  let pending: { name: string; size: number; type: string } | null = null;
  // A pax `path` record or a GNU long name names the member after it.
  let longName: string | null = null;
  let ended = false;

  /** Takes every complete member out of the queue. */
  async function drain(): Promise<void> {
    for (;;) {
      if (!pending) {
        if (ended || queue.length < BLOCK) return;
        const h = queue.take(BLOCK);
        if (h.every((b) => b === 0)) {
          ended = true;
          return;
        }
        const prefix = text(h, 345, 155);
        const name = longName ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100));
        pending = { name, size: parseInt(text(h, 124, 12).trim() || '0', 8), type: text(h, 156, 1) || '0' };
      }
      const total = pending.size + padding(pending.size).length;
      if (queue.length < total) return;
      const data = queue.take(total).subarray(0, pending.size);
      const member = pending;
      pending = null;
      if (member.type === 'x' || member.type === 'L') {
        longName = member.type === 'L' ? text(data, 0, data.length) : (/(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1] ?? null);
        continue;
      }
      longName = null;
      if (member.type !== '0') continue;
      const name = safeName(member.name);
      const target = path.join(dir, name);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, data);
      names.push(name);
    }
  }

  await pipeline(
    createReadStream(file),
    createGunzip(),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        queue.push(chunk);
        drain().then(() => callback(), callback);
      },
    }),
  );
  if (pending || !ended) throw new Error('the archive is truncated');
  return names;
}
