// Throwaway databases, for the schema engine and the tests: on the server at a given URL, or else
// on an embedded PostgreSQL in a temporary directory that goes away with them.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded.ts';

export interface ScratchServer {
  /** The server's own connection string, on which createDatabase() makes its databases. */
  url: string;
  /** A new empty database; returns its connection string. */
  createDatabase(): Promise<string>;
  /** Drops every database made here and stops the embedded server, if one was started. */
  close(): Promise<void>;
}

export async function scratchServer(serverUrl?: string): Promise<ScratchServer> {
  let url = serverUrl;
  let stopEmbedded = async () => {};
  if (!url) {
    const dir = await mkdtemp(path.join(tmpdir(), 'chat-scratch-pg-'));
    try {
      const embedded = await startEmbeddedPostgres(dir, { durable: false });
      url = embedded.url;
      stopEmbedded = async () => {
        await embedded.stop();
        await rm(dir, { recursive: true, force: true });
      };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  const serverAt = url;
  const created: string[] = [];
  const onServer = async (sql: string) => {
    const admin = new pg.Client({ connectionString: serverAt });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };
  return {
    url: serverAt,
    async createDatabase() {
      const name = `chat_scratch_${randomBytes(8).toString('hex')}`;
      await onServer(`CREATE DATABASE ${name}`);
      created.push(name);
      const dbUrl = new URL(serverAt);
      dbUrl.pathname = `/${name}`;
      return dbUrl.toString();
    },
    async close() {
      try {
        for (const name of created.splice(0)) await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await stopEmbedded();
      }
    },
  };
}
