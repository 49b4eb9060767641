// What the recipients' own settings add to a message's flags (Zulip's do_send_messages and
// update_user_message_flags): `read` for those who muted the sender, `has_alert_word` for those
// whose alert words occur in it. Every message passes here, so it is one query, for a channel's
// whole group-committed batch at once.
import type { App } from '../app.ts';
import { AlertWordMatcher } from '../markdown/alert-words.ts';
import { rawQuery } from '../actions/transaction.ts';

export interface RecipientSettings {
  /** By sender: the recipients who muted them. */
  mutedBy: Map<number, Set<number>>;
  /** Each recipient's alert words, for those who have any. */
  alertWords: Map<number, string[]>;
}

function collectWords(rows: { userId: number; word: string }[]): Map<number, string[]> {
  const words = new Map<number, string[]>();
  for (const { userId, word } of rows) words.set(userId, [...(words.get(userId) ?? []), word]);
  return words;
}

/** The settings that bear on messages from `senders` to `recipients`. */
export async function recipientSettings(app: App, senders: readonly number[], recipients: readonly number[]): Promise<RecipientSettings> {
  const rows = await rawQuery<{ userId: number; word: string | null; muted: number | null }>(
    app,
    `SELECT "userId", word, NULL::int AS muted FROM "AlertWord" WHERE "userId" = ANY($1::int[])
     UNION ALL
     SELECT "userId", NULL, "mutedUserId" FROM "MutedUser" WHERE "mutedUserId" = ANY($2::int[]) AND "userId" = ANY($1::int[])`,
    recipients, senders,
  );
  const mutedBy = new Map<number, Set<number>>();
  for (const { userId, muted } of rows) if (muted !== null) mutedBy.set(muted, (mutedBy.get(muted) ?? new Set()).add(userId));
  return { mutedBy, alertWords: collectWords(rows.filter((r): r is { userId: number; word: string; muted: null } => r.word !== null)) };
}

/** The alert words of everyone holding a row of the message (an edit re-checks them). */
export async function messageAlertWords(app: App, messageId: number): Promise<Map<number, string[]>> {
  const rows = await app.prisma.$queryRawUnsafe<{ userId: number; word: string }[]>(
    `SELECT a."userId", a.word FROM "AlertWord" a JOIN "UserMessage" um ON um."userId" = a."userId" WHERE um."messageId" = $1`,
    messageId,
  );
  return collectWords(rows);
}

/** The users whose alert words occur in `text` (a rendering's alertWordText). */
export function alertedUsers(alertWords: Map<number, string[]>, text: string): Set<number> {
  if (alertWords.size === 0) return new Set();
  const found = new AlertWordMatcher([...alertWords.values()].flat()).find(text);
  return new Set([...alertWords].filter(([, words]) => words.some((w) => found.has(w.toLowerCase()))).map(([userId]) => userId));
}
