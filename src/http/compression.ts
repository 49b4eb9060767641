// Content coding of API answers, as nginx in front of Zulip gives them: brotli or gzip when the
// client accepts it and the body is large enough to gain from it (register, message pages, user
// lists); small answers (most long-polls) go as they are, since compressing them costs more CPU
// than the bytes it saves.
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';

export type ContentCoding = 'br' | 'gzip';

/** Bodies below this go uncompressed (nginx's gzip_min_length is of the same order). */
export const COMPRESS_MIN_BYTES = 1024;
/** Bodies above this are compressed on libuv's thread pool rather than on the event loop. */
const COMPRESS_SYNC_MAX_BYTES = 64 * 1024;

// Quality 4 compresses about as fast as gzip's default and smaller; nginx's brotli module defaults to 6.
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/** The encodings the client accepts (RFC 9110, 12.5.3), without those it refuses with q=0. */
export function acceptedEncodings(header: string): Set<string> {
  const accepted = new Set<string>();
  for (const part of header.toLowerCase().split(',')) {
    const [coding, ...params] = part.split(';').map((s) => s.trim());
    if (coding && !params.some((p) => /^q=0(\.0*)?$/.test(p))) accepted.add(coding);
  }
  return accepted;
}

/** The coding to answer an Accept-Encoding header with: brotli before gzip, or none. */
export function preferredCoding(acceptEncoding: string): ContentCoding | null {
  if (acceptEncoding === '') return null;
  const accepted = acceptedEncodings(acceptEncoding);
  return accepted.has('br') ? 'br' : accepted.has('gzip') ? 'gzip' : null;
}

/**
 * Compresses `body` with `coding` and calls `done` with the result: at once for a small body,
 * from the thread pool for a large one (a 4 MB user list would hold the event loop for tens of ms).
 */
export function compress(body: string | Buffer, coding: ContentCoding, done: (compressed: Buffer) => void, failed: (err: Error) => void): void {
  const input = typeof body === 'string' ? Buffer.from(body) : body;
  if (input.length <= COMPRESS_SYNC_MAX_BYTES) {
    done(coding === 'br' ? brotliCompressSync(input, BROTLI_OPTIONS) : gzipSync(input));
    return;
  }
  const callback = (err: Error | null, out: Buffer) => (err ? failed(err) : done(out));
  if (coding === 'br') brotliCompress(input, BROTLI_OPTIONS, callback);
  else gzip(input, callback);
}
