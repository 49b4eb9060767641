// What the recipients' own settings add to a message's flags (Zulip's do_send_messages and
// update_user_message_flags): `read` for those who muted the sender, `has_alert_word` for those
// whose alert words occur in it. Every message passes here, so it is one query.
import type { App } from '../app.ts';
import { AlertWordMatcher } from '../markdown/alert-words.ts';

export interface RecipientSettings {
  /** Recipients who muted the sender. */
  mutedSender: Set<number>;
  /** Each recipient's alert words, for those who have any. */
  alertWords: Map<number, string[]>;
}

function collect(rows: { userId: number; word: string | null }[]): RecipientSettings {
  const settings: RecipientSettings = { mutedSender: new Set(), alertWords: new Map() };
  for (const { userId, word } of rows) {
    if (word === null) settings.mutedSender.add(userId);
    else settings.alertWords.set(userId, [...(settings.alertWords.get(userId) ?? []), word]);
  }
  return settings;
}

export async function recipientSettings(app: App, senderId: number, recipients: readonly number[]): Promise<RecipientSettings> {
  const rows = await app.prisma.$queryRawUnsafe<{ userId: number; word: string | null }[]>(
    `SELECT "userId", word FROM "AlertWord" WHERE "userId" = ANY($1::int[])
     UNION ALL
     SELECT "userId", NULL FROM "MutedUser" WHERE "mutedUserId" = $2 AND "userId" = ANY($1::int[])`,
    recipients, senderId,
  );
  return collect(rows);
}

/** The alert words of everyone holding a row of the message (an edit re-checks them). */
export async function messageAlertWords(app: App, messageId: number): Promise<Map<number, string[]>> {
  const rows = await app.prisma.$queryRawUnsafe<{ userId: number; word: string }[]>(
    `SELECT a."userId", a.word FROM "AlertWord" a JOIN "UserMessage" um ON um."userId" = a."userId" WHERE um."messageId" = $1`,
    messageId,
  );
  return collect(rows).alertWords;
}

/** The users whose alert words occur in `text` (a rendering's alertWordText). */
export function alertedUsers(alertWords: Map<number, string[]>, text: string): Set<number> {
  if (alertWords.size === 0) return new Set();
  const found = new AlertWordMatcher([...alertWords.values()].flat()).find(text);
  return new Set([...alertWords].filter(([, words]) => words.some((w) => found.has(w.toLowerCase()))).map(([userId]) => userId));
}
