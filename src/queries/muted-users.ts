// The users someone muted (Zulip's get_user_mutes): register's `muted_users` and the event's list.
import type { App } from '../app.ts';
import { timestamp } from './messages.ts';

export interface MutedUserEntry {
  id: number;
  timestamp: number;
}

export async function mutedUsers(app: App, userId: number): Promise<MutedUserEntry[]> {
  const rows = await app.prisma.mutedUser.findMany({ where: { userId }, orderBy: [{ dateMuted: 'asc' }, { mutedUserId: 'asc' }] });
  return rows.map((r) => ({ id: r.mutedUserId, timestamp: timestamp(r.dateMuted) }));
}
