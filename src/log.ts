// Structured logs with pino: one JSON object per line on stderr, or pino-pretty's human format
// when stderr is a terminal. stdout stays for what commands print (the CLI's JSON answer, the
// first-run credentials), so a log line never mixes into it. Tests run it silent.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import pino, { type DestinationStream, type Logger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
type Fields = Record<string, unknown>;

/** Keys that must never reach a log line, should a caller pass them by mistake. */
const SECRET_KEYS = ['password', 'api_key', 'apiKey', 'authorization', 'Authorization', 'token'];

/** The terminal's one-line form of access lines (`GET /api/v1/users/me 200 1.2 ms user 3 [id]`), and the request id after other messages. */
function humanMessage(line: Record<string, unknown>, messageKey: string): string {
  const id = line.request_id === undefined ? '' : ` [${String(line.request_id)}]`;
  if (line[messageKey] !== 'request') return `${String(line[messageKey])}${id}`;
  return `${String(line.method)} ${String(line.route)} ${String(line.status)} ${String(line.ms)} ms user ${String(line.user_id)}${id}`;
}

function destination(): DestinationStream {
  if (process.stderr.isTTY) {
    // Loaded only for a terminal: a server in production never pays for the pretty printer.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pretty({
      destination: 2,
      sync: true,
      colorize: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,request_id,method,route,status,ms,user_id',
      messageFormat: humanMessage,
    });
  }
  // Asynchronous writes (flushed at exit by pino): a burst of lines is one write, off the request path.
  return new LineBatch(pino.destination({ dest: 2, sync: false, contentMode: 'buffer' }));
}

/**
 * Lines written in one turn of the event loop, handed to pino's destination as one buffer at the
 * next. Each line is encoded into the batch's buffer as it comes: a fan-out answers thousands of
 * parked polls in one pass, and kept as strings its access lines were a chain of thousands the
 * young generation copied until the batch was written (`observe` in bench/micro/longpoll-steps.ts;
 * before that, sonic-boom measured the UTF-8 size of its buffer on every write, flattening it).
 */
class LineBatch implements DestinationStream {
  private buffer = Buffer.allocUnsafe(BATCH_START_BYTES);
  private used = 0;

  constructor(private readonly out: ReturnType<typeof pino.destination>) {
    process.on('exit', () => {
      if (this.flush()) out.flushSync();
    });
  }

  write(line: string): void {
    if (this.used === 0) setImmediate(this.flush);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.used + 3 * line.length > this.buffer.length) this.makeRoom(3 * line.length);
    this.used += this.buffer.write(line, this.used);
  }

  /** Room for `bytes` more: a bigger buffer, or past the most one batch holds, the batch written now. */
  private makeRoom(bytes: number): void {
    if (this.used > 0 && this.used + bytes > BATCH_MAX_BYTES) this.flush();
    if (this.used + bytes <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.used + bytes));
    this.buffer.copy(bigger, 0, 0, this.used);
    this.buffer = bigger;
  }

  /** False when there was nothing to write, or the destination was ended (pino ends it at beforeExit). */
  private readonly flush = (): boolean => {
    if (this.used === 0) return false;
    if ((this.out as { destroyed?: boolean }).destroyed) {
      this.used = 0;
      return false;
    }
    // A copy: the destination keeps it until its write completes, and this buffer takes the next lines.
    this.out.write(Buffer.from(this.buffer.subarray(0, this.used)) as unknown as string);
    this.used = 0;
    return true;
  };
}

/** The batch's buffer at first; it doubles as a turn writes more, up to the most one batch holds. */
const BATCH_START_BYTES = 64 * 1024;
const BATCH_MAX_BYTES = 4 * 1024 * 1024;

const stream = destination();
const root: Logger = pino(
  {
    level: 'info',
    // `time` in epoch milliseconds (pino's default): an ISO string costs a fifth of an access line.
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: SECRET_KEYS, censor: '[redacted]' },
  },
  stream,
);

export function setLogLevel(level: LogLevel): void {
  root.level = level;
}

/** Where lines go: the process's `log`, or a request's `RequestLog`. */
export interface Log {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}

/** Lines of the process itself (start, stop, background work); lines of a request go through its RequestLog. */
export const log: Log = {
  debug: (m, f) => (f ? root.debug(f, m) : root.debug(m)),
  info: (m, f) => (f ? root.info(f, m) : root.info(m)),
  warn: (m, f) => (f ? root.warn(f, m) : root.warn(m)),
  error: (m, f) => (f ? root.error(f, m) : root.error(m)),
};

// Ids unique across the processes of a cluster without a random number per request: a random
// prefix per process, then the request's number; the id's string is made only when a line is written.
const PROCESS_TAG = randomBytes(3).toString('hex');
/** What a caught error says, for a log line. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export const requestIdOf = (seq: number): string => `${PROCESS_TAG}-${seq.toString(36)}`;

/**
 * The log of one request (or WebSocket, for the lines its frames cause): every line carries the
 * request's id, as its access line does. Handed down as an argument to the code that writes
 * lines: on Node 20 the AsyncLocalStorage that would find it instead switches on promise hooks for
 * the whole process, which costs every request (docs/operations.md, "Logs").
 */
export class RequestLog implements Log {
  constructor(private readonly seq: number) {}

  debug(m: string, f?: Fields): void {
    if (root.isLevelEnabled('debug')) root.debug(this.fields(f), m);
  }

  info(m: string, f?: Fields): void {
    root.info(this.fields(f), m);
  }

  warn(m: string, f?: Fields): void {
    root.warn(this.fields(f), m);
  }

  error(m: string, f?: Fields): void {
    root.error(this.fields(f), m);
  }

  private fields(f: Fields | undefined): Fields {
    return { request_id: requestIdOf(this.seq), ...f };
  }
}

/** Whether access lines are written: checked before one is built, so a quiet server builds none. */
export const accessLogEnabled = (): boolean => root.isLevelEnabled('info');

/** pino's own fields of every line (its default `base`), as pino writes them. */
const BASE_FIELDS = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

/**
 * The access log, one line per answered request: what was asked, how it was answered, by whom;
 * never credentials or parameters. Every long-poll writes one, so the line is written here as a
 * string in pino's format (its keys, in its order) straight to pino's destination, keeping the
 * order with other lines: through pino, building and serializing the object was 9 % of a re-parked
 * long-poll (docs/benchmarks.md). Nothing in it comes from the client but the path of a request no
 * route took, which is JSON-escaped with the method once per observer.
 */
export class AccessLog {
  private readonly fixed: string;

  /** `route` is the route's pattern (`/api/v1/messages/:message_id`), or the path of a request no route matched. */
  constructor(method: string, route: string) {
    this.fixed = `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`;
  }

  write(seq: number, status: number, ms: number, userId: number | null): void {
    stream.write(
      `{"level":"info","time":${Date.now()}${BASE_FIELDS},"request_id":"${requestIdOf(seq)}"${this.fixed},"status":${status},"ms":${ms},"user_id":${userId},"msg":"request"}\n`,
    );
  }
}
