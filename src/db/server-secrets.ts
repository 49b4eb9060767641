// Values every process of a deployment shares (the ServerSecret table): made at random by the first
// process that needs one, then read by all, so a restart or a second node finds the same value.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PrismaClient } from './generated/client.ts';

/** Names the deployment's NATS stream and subjects (cluster/node.ts). */
export const CLUSTER_ID_SECRET = 'cluster_id';

/** The stored value of `name`, created from `bytes` random bytes (hex) if there is none yet. */
export async function serverSecret(prisma: PrismaClient, name: string, bytes: number): Promise<string> {
  // ON CONFLICT DO NOTHING: two processes starting together keep the first one's value.
  await prisma.serverSecret.createMany({ data: [{ name, value: randomBytes(bytes).toString('hex') }], skipDuplicates: true });
  return (await prisma.serverSecret.findUniqueOrThrow({ where: { name } })).value;
}

/** The stored value of `name`, read from outside any server (no Prisma client); undefined when none, or before the first migration. */
export async function readServerSecret(databaseUrl: string, name: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ value: string }>('SELECT value FROM "ServerSecret" WHERE name = $1', [name]);
    return rows[0]?.value;
  } catch (err) {
    // undefined_table: no server has migrated this database yet.
    if ((err as { code?: string }).code === '42P01') return undefined;
    throw err;
  } finally {
    await client.end();
  }
}
