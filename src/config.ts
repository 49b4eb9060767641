// Every setting of the server, read once from the environment and validated, so a typo in a
// deployment fails at start instead of at the first request that needs the value.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

const flag = z.enum(['on', 'off', 'true', 'false', '1', '0']).transform((v) => v === 'on' || v === 'true' || v === '1');
const seconds = z.coerce.number().positive();

const configSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(9991),
  /** Embedded database and uploads live here unless DATABASE_URL / UPLOADS_DIR say otherwise. */
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().url().optional(),
  UPLOADS_DIR: z.string().optional(),
  /** Host clients use to reach the server (realm URLs, dummy emails); defaults to HOST:PORT. */
  EXTERNAL_HOST: z.string().optional(),
  RATE_LIMIT: flag.default(true),
  RATE_LIMIT_USER_PER_MINUTE: z.coerce.number().int().positive().default(200),
  RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().positive().default(100),
  RATE_LIMIT_LOGIN_FAILURES: z.coerce.number().int().positive().default(5),
  RATE_LIMIT_LOGIN_WINDOW_SECONDS: seconds.default(1800),
  MAX_BODY_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(25 * 1024 * 1024),
  /** A WebSocket client whose unsent data exceeds this is disconnected (its queue stays). */
  WS_MAX_BUFFERED_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  /** Interval of long-poll heartbeats; Zulip uses 45 s plus up to 10 s of jitter. */
  HEARTBEAT_SECONDS: seconds.default(45),
  HEARTBEAT_JITTER_SECONDS: z.coerce.number().min(0).default(10),
  /** Cost of the scrypt password hash (N); lower only for tests. */
  PASSWORD_HASH_COST: z.coerce.number().int().min(1024).default(32768),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** An event that does not match its schema: `strict` fails the action (tests, development), `log` logs it. */
  EVENT_SCHEMA_CHECK: z.enum(['strict', 'log']).default('log'),
});

// Realms live at subdomains of the external host, and `*.localhost` resolves to loopback in
// browsers, so a loopback-bound server names itself localhost.
const LOOPBACK = new Set(['127.0.0.1', '0.0.0.0', '::1', '::']);

export type Config = z.infer<typeof configSchema> & { externalHost: string; uploadsDir: string };

/** An in-memory server keeps its uploads in a scratch directory of its own, removed when it stops. */
export const inMemoryUploads = (c: { DATA_DIR: string; UPLOADS_DIR?: string }) => c.DATA_DIR.startsWith('memory://') && !c.UPLOADS_DIR;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const c = parsed.data;
  return {
    ...c,
    externalHost: c.EXTERNAL_HOST ?? `${LOOPBACK.has(c.HOST) ? 'localhost' : c.HOST}:${c.PORT}`,
    uploadsDir: c.UPLOADS_DIR ?? (inMemoryUploads(c) ? path.join(os.tmpdir(), `chat-uploads-${process.pid}-${randomBytes(6).toString('hex')}`) : `${c.DATA_DIR}/uploads`),
  };
}
