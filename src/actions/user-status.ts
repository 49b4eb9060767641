// User status (Zulip's check_update_user_status and do_update_user_status): a status text of up
// to 60 characters and an emoji, set by the user or by an administrator, announced with
// `user_status` events to everyone who can access the user. The deprecated `away` flag writes the
// presence_enabled setting, with its own settings events.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import { checkEmojiRequest, requestedEmoji } from '../queries/reactions.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { whoCanAccess } from '../queries/user-access.ts';
import { realmViewers } from '../queries/users.ts';
import { updateSettings } from './settings.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';

export const MAX_STATUS_TEXT_LENGTH = 60;

export interface StatusRequest {
  away?: boolean;
  statusText?: string;
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

interface StatusChange {
  statusText?: string;
  emoji?: { emojiName: string; emojiCode: string; reactionType: string };
}

async function checkStatus(app: App, realm: RealmInfo, req: StatusRequest): Promise<StatusChange> {
  const statusText = req.statusText?.trim();
  if (req.away === undefined && statusText === undefined && req.emojiName === undefined) throw badRequest('Client did not pass any new values.');
  if (req.emojiName === undefined) {
    if (req.emojiCode !== undefined || req.reactionType !== undefined) {
      throw badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
    }
    return { statusText };
  }
  // An empty name clears the emoji.
  if (req.emojiName === '') return { statusText, emoji: { emojiName: '', emojiCode: '', reactionType: 'unicode_emoji' } };
  const { code, type } = await requestedEmoji(app, realm, req.emojiName, req.emojiCode, req.reactionType);
  await checkEmojiRequest(app, realm, req.emojiName, { code, type });
  return { statusText, emoji: { emojiName: req.emojiName, emojiCode: code, reactionType: type } };
}

/** POST /users/me/status, and POST /users/{id}/status for administrators (who cannot set `away`). */
export async function updateUserStatus(app: App, realm: RealmInfo, target: User, req: StatusRequest): Promise<void> {
  if (target.isBot) throw badRequest('This endpoint does not accept bot requests.');
  const change = await checkStatus(app, realm, req);
  const parts = { ...(change.statusText !== undefined ? { statusText: change.statusText } : {}), ...change.emoji };
  await atomic(app, async () => {
    await app.prisma.userStatus.upsert({ where: { userId: target.id }, create: { userId: target.id, ...parts }, update: { ...parts, updatedAt: new Date() } });
    if (req.away !== undefined) await updateSettings(app, realm, target, { settings: { presence_enabled: !req.away } });
    const event: ChatEvent = {
      type: 'user_status',
      user_id: target.id,
      ...(req.away !== undefined ? { away: req.away } : {}),
      ...(change.statusText !== undefined ? { status_text: change.statusText } : {}),
      ...(change.emoji ? { emoji_name: change.emoji.emojiName, emoji_code: change.emoji.emojiCode, reaction_type: change.emoji.reactionType } : {}),
    };
    const [viewers, canAccess] = await Promise.all([realmViewers(app, realm.id), whoCanAccess(app, realm, target)]);
    sendOnCommit({ realmId: realm.id, userIds: viewers.filter(canAccess).map((v) => v.id), event });
  });
}
