// Lets the CLI run its commands through a running server, whose embedded database no other process
// may open (and whose organization cache a direct write would leave stale). At start the server
// writes a random admin token to DATA_DIR/admin-token (mode 0600) and its address to
// DATA_DIR/server.json, and answers POST /api/internal/cli for whoever can read that token.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { TemplatedApp } from 'uWebSockets.js';
import type { App } from '../app.ts';
import { apiKeysEqual, generateApiKey } from '../auth/api-keys.ts';
import type { Config } from '../config.ts';
import { isAlive } from '../db/embedded.ts';
import { ApiError } from '../errors.ts';
import { statusLine } from '../http/exchange.ts';
import { log } from '../log.ts';
import { adminCommandSchema, runAdminCommand, type AdminCommand } from './commands.ts';

export const CONTROL_PATH = '/api/internal/cli';

interface ServerFile {
  pid: number;
  url: string;
  /** Which database the server holds, so a CLI pointed at another one does not use it. */
  database: string;
}

const tokenFile = (config: Config) => path.join(config.DATA_DIR, 'admin-token');
const serverFile = (config: Config) => path.join(config.DATA_DIR, 'server.json');
// A hash, so the file never holds the PostgreSQL password.
const databaseId = (config: Config) => (config.DATABASE_URL ? createHash('sha256').update(config.DATABASE_URL).digest('hex') : 'embedded');

export interface ControlChannel {
  /** Mounts the route on the server's uWS app (it is realm-less, so it stays outside the API router). */
  attach(uws: TemplatedApp, app: App): void;
  /** Writes the token and address files once the server listens. */
  publish(port: number): void;
  /** Removes the files and waits for the commands in progress. */
  close(): Promise<void>;
}

export function createControlChannel(config: Config): ControlChannel {
  const token = generateApiKey();
  const pending = new Set<Promise<unknown>>();
  return {
    attach(uws, app) {
      uws.post(CONTROL_PATH, (res, req) => {
        const given = /^Bearer (.+)$/.exec(req.getHeader('authorization'))?.[1] ?? '';
        let aborted = false;
        res.onAborted(() => (aborted = true));
        const reply = (status: number, body: Record<string, unknown>) => {
          if (aborted) return;
          res.cork(() => res.writeStatus(statusLine(status)).writeHeader('Content-Type', 'application/json').end(JSON.stringify(body)));
        };
        if (!apiKeysEqual(given, token)) return reply(403, { result: 'error', msg: 'Access denied', code: 'BAD_REQUEST' });
        // No size limit: only the holder of the token gets this far.
        const chunks: Buffer[] = [];
        res.onData((chunk, isLast) => {
          // uWS reuses the chunk's memory after this callback returns, so copy it.
          chunks.push(Buffer.from(chunk.slice(0)));
          if (!isLast) return;
          const done = execute(app, Buffer.concat(chunks).toString('utf8')).then(
            (result) => reply(200, { result: 'success', msg: '', ...result }),
            (err: unknown) => {
              if (err instanceof ApiError) return reply(err.status, { result: 'error', msg: err.message, code: err.code, ...err.extra });
              log.error('CLI command failed', { error: err instanceof Error ? err.stack : String(err) });
              reply(500, { result: 'error', msg: 'Internal server error', code: 'BAD_REQUEST' });
            },
          );
          pending.add(done);
          void done.finally(() => pending.delete(done));
        });
      });
    },
    publish(port) {
      mkdirSync(config.DATA_DIR, { recursive: true });
      // Removed first: the mode applies only to a file being created.
      rmSync(tokenFile(config), { force: true });
      writeFileSync(tokenFile(config), `${token}\n`, { mode: 0o600 });
      const host = ['0.0.0.0', '::'].includes(config.HOST) ? '127.0.0.1' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
      const info: ServerFile = { pid: process.pid, url: `http://${host}:${port}`, database: databaseId(config) };
      writeFileSync(serverFile(config), JSON.stringify(info) + '\n');
    },
    async close() {
      rmSync(serverFile(config), { force: true });
      rmSync(tokenFile(config), { force: true });
      await Promise.allSettled(pending);
    },
  };
}

async function execute(app: App, body: string): Promise<Record<string, unknown>> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(body);
  } catch {
    throw new ApiError('Malformed JSON', 'BAD_REQUEST');
  }
  const cmd = adminCommandSchema.safeParse(decoded);
  if (!cmd.success) throw new ApiError('Invalid command', 'BAD_REQUEST');
  return runAdminCommand(app, cmd.data);
}

export interface RunningServerAddress {
  url: string;
  token: string;
}

/** The live server holding this configuration's database, from the files it published; else null. */
export function findRunningServer(config: Config): RunningServerAddress | null {
  let info: ServerFile;
  try {
    info = JSON.parse(readFileSync(serverFile(config), 'utf8')) as ServerFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  // A server that died without cleaning up leaves the files behind.
  if (info.database !== databaseId(config) || info.pid === process.pid || !isAlive(info.pid)) return null;
  return { url: info.url, token: readFileSync(tokenFile(config), 'utf8').trim() };
}

/** Runs `cmd` on the running server; resolves to the same object a direct run returns. */
export function runOnServer(server: RunningServerAddress, cmd: AdminCommand): Promise<Record<string, unknown>> {
  const body = JSON.stringify(cmd);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${server.url}${CONTROL_PATH}`,
      { method: 'POST', headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const { result, msg, ...data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
            if (result === 'success') resolve(data);
            else reject(new Error(String(msg)));
          } catch {
            reject(new Error(`unexpected answer from the server at ${server.url} (HTTP ${res.statusCode})`));
          }
        });
      },
    );
    req.on('error', (err) => reject(new Error(`cannot reach the running server at ${server.url}: ${err.message}`)));
    req.end(body);
  });
}
