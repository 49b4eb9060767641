// GET /messages/{id}/read_receipts (Zulip's read_receipts view): who has read a message the
// caller can access. Never the sender, never deactivated users, never anyone who turned off
// send_read_receipts; and, as muting goes, neither users who muted the caller (the caller could
// tell from their reading everything at once) nor users the caller muted.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import { badRequest } from '../errors.ts';
import { accessMessage } from './messages.ts';
import type { RealmInfo } from './realms.ts';

export async function readReceipts(app: App, realm: RealmInfo, user: User, messageId: number): Promise<number[]> {
  const { message } = await accessMessage(app, realm, user, messageId);
  if (!realm.settings.enable_read_receipts) throw badRequest('Read receipts are disabled in this organization.');
  const rows = await app.prisma.$queryRawUnsafe<{ userId: number }[]>(
    `SELECT um."userId" FROM "UserMessage" um JOIN "User" u ON u.id = um."userId"
      WHERE um."messageId" = $1 AND um."userId" <> $2 AND (um.flags & ${FLAG_BITS.read}) <> 0
        AND u."isActive" AND COALESCE((u.settings->>'send_read_receipts')::boolean, TRUE)
        AND NOT EXISTS (SELECT 1 FROM "MutedUser" mu
                         WHERE (mu."userId" = um."userId" AND mu."mutedUserId" = $3) OR (mu."userId" = $3 AND mu."mutedUserId" = um."userId"))
      ORDER BY um."userId"`,
    message.id,
    message.senderId,
    user.id,
  );
  return rows.map((r) => r.userId);
}
