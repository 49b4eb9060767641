// Default channels and default channel groups as the API shows them (Zulip's
// get_default_stream_ids_for_realm and DefaultStreamGroup.to_dict).
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { isGuest } from '../auth/policy.ts';

export interface DefaultChannelGroupDict {
  name: string;
  id: number;
  description: string;
  /** Channel ids, in the order of the channels' names. */
  streams: number[];
}

/** The ids of the organization's default channels, ascending. */
export async function defaultChannelIds(app: App, realmId: number): Promise<number[]> {
  const rows = await app.prisma.defaultChannel.findMany({ where: { realmId }, select: { channelId: true }, orderBy: { channelId: 'asc' } });
  return rows.map((r) => r.channelId);
}

/** Every default channel group, by name. */
export async function defaultChannelGroups(app: App, realmId: number): Promise<DefaultChannelGroupDict[]> {
  // Most organizations have none: then one statement, not the three Prisma's include sends for nothing.
  const groups = await app.prisma.defaultChannelGroup.findMany({ where: { realmId } });
  if (groups.length === 0) return [];
  const links = await app.prisma.defaultChannelGroupChannel.findMany({
    where: { groupId: { in: groups.map((g) => g.id) } },
    select: { groupId: true, channel: { select: { id: true, name: true } } },
  });
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return groups.sort(byName).map((g) => ({
    name: g.name,
    id: g.id,
    description: g.description,
    streams: links
      .filter((l) => l.groupId === g.id)
      .map((l) => l.channel)
      .sort(byName)
      .map((c) => c.id),
  }));
}

/** Guests (and spectators) are told the organization has no defaults, as in Zulip. */
export const seesDefaultChannels = (user: Pick<User, 'role'> | null) => user !== null && !isGuest(user);
