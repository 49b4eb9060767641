// Values every process of a deployment shares (the ServerSecret table): made at random by the first
// process that needs one, then read by all, so a restart or a second node finds the same value.
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from './generated/client.ts';

/** The stored value of `name`, created from `bytes` random bytes (hex) if there is none yet. */
export async function serverSecret(prisma: PrismaClient, name: string, bytes: number): Promise<string> {
  // ON CONFLICT DO NOTHING: two processes starting together keep the first one's value.
  await prisma.serverSecret.createMany({ data: [{ name, value: randomBytes(bytes).toString('hex') }], skipDuplicates: true });
  return (await prisma.serverSecret.findUniqueOrThrow({ where: { name } })).value;
}
