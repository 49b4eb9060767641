// The organization's default channels (Zulip's DefaultStream): new users join them when their
// invitation says so, and anyone who may invite may name them.
import type { App } from '../app.ts';

export async function defaultChannelIds(app: App, realmId: number): Promise<Set<number>> {
  const rows = await app.prisma.defaultStream.findMany({ where: { realmId }, select: { channelId: true } });
  return new Set(rows.map((r) => r.channelId));
}
