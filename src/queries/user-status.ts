// User statuses as the API shows them (Zulip's format_user_status): only the parts that are set,
// and the deprecated `away`, which is the presence_enabled setting turned around.
import type { App } from '../app.ts';
import type { User, UserStatus } from '../db/generated/client.ts';
import { sharesPresence } from './presence.ts';
import type { RealmInfo } from './realms.ts';
import { accessibleUserIds } from './user-access.ts';
import type { Viewer } from './users.ts';

type StatusParts = Pick<UserStatus, 'statusText' | 'emojiName' | 'emojiCode' | 'reactionType'>;

export function formatUserStatus(status: StatusParts | null, presenceEnabled: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!presenceEnabled) out.away = true;
  if (status?.statusText) out.status_text = status.statusText;
  if (status?.emojiName) Object.assign(out, { emoji_name: status.emojiName, emoji_code: status.emojiCode, reaction_type: status.reactionType });
  return out;
}

/** GET /users/{id}/status: {} for a user who never set one. */
export async function userStatus(app: App, user: User): Promise<Record<string, unknown>> {
  const row = await app.prisma.userStatus.findUnique({ where: { userId: user.id } });
  return row ? formatUserStatus(row, sharesPresence(user)) : {};
}

/** Register's `user_status`: every active user the viewer can access who has set something. */
export async function realmUserStatuses(app: App, realm: RealmInfo, viewer: Viewer): Promise<Record<string, Record<string, unknown>>> {
  const [rows, accessible] = await Promise.all([
    app.prisma.userStatus.findMany({ where: { user: { realmId: realm.id, isActive: true } }, orderBy: { userId: 'asc' } }),
    accessibleUserIds(app, realm, viewer),
  ]);
  // Their settings only when someone has a status (Prisma's include would send a statement for none).
  const users = rows.length ? await app.prisma.user.findMany({ where: { id: { in: rows.map((r) => r.userId) } }, select: { id: true, settings: true } }) : [];
  const settings = new Map(users.map((u) => [u.id, u]));
  const out: Record<string, Record<string, unknown>> = {};
  for (const row of rows) {
    if (accessible && !accessible.has(row.userId)) continue;
    const status = formatUserStatus(row, sharesPresence(settings.get(row.userId)!));
    if (Object.keys(status).length) out[row.userId] = status;
  }
  return out;
}
