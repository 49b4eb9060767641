// What the recipients' own settings add to a message's flags (Zulip's do_send_messages and
// update_user_message_flags): `read` for those who muted the sender, `has_alert_word` for those
// whose alert words occur in it. Every message passes here, so it is one query, for a channel's
// whole group-committed batch at once.
import type { App } from '../app.ts';
import { AlertWordMatcher } from '../markdown/alert-words.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { inTransaction, rawQuery } from '../db/transaction.ts';

/** As the message writes they precede (actions/messages.ts): reads in flight, and requests each takes. */
const READS_IN_FLIGHT = 4;
const REQUESTS_PER_READ = 32;

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

interface SettingsRow {
  userId: number;
  word: string | null;
  muted: number | null;
}

interface SettingsRequest {
  senders: readonly number[];
  recipients: readonly number[];
}

async function settingsRows(app: App, { senders, recipients }: SettingsRequest): Promise<SettingsRow[]> {
  return rawQuery<SettingsRow>(
    app,
    `SELECT "userId", word, NULL::int AS muted FROM "AlertWord" WHERE "userId" = ANY($1::int[])
     UNION ALL
     SELECT "userId", NULL, "mutedUserId" FROM "MutedUser" WHERE "mutedUserId" = ANY($2::int[]) AND "userId" = ANY($1::int[])`,
    recipients,
    senders,
  );
}

/** One request's settings, from rows that may cover other requests too. */
function settingsOf({ senders, recipients }: SettingsRequest, rows: readonly SettingsRow[]): RecipientSettings {
  const isRecipient = new Set(recipients);
  const isSender = new Set(senders);
  const mutedBy = new Map<number, Set<number>>();
  const words: { userId: number; word: string }[] = [];
  for (const { userId, word, muted } of rows) {
    if (!isRecipient.has(userId)) continue;
    if (word !== null) words.push({ userId, word });
    else if (muted !== null && isSender.has(muted)) mutedBy.set(muted, (mutedBy.get(muted) ?? new Set()).add(userId));
  }
  return { mutedBy, alertWords: collectWords(words) };
}

/** Channels' batches ready at once read their settings in one statement (src/db/group-commit.ts). */
const batchReads = new WeakMap<App, GroupCommit<SettingsRequest, RecipientSettings>>();

/** The settings that bear on messages from `senders` to `recipients`. */
export async function recipientSettings(app: App, senders: readonly number[], recipients: readonly number[]): Promise<RecipientSettings> {
  const request = { senders, recipients };
  if (inTransaction()) return settingsOf(request, await settingsRows(app, request));
  let reads = batchReads.get(app);
  if (!reads) {
    reads = new GroupCommit(
      async (requests) => {
        const rows = await settingsRows(app, {
          senders: [...new Set(requests.flatMap((r) => r.senders))],
          recipients: [...new Set(requests.flatMap((r) => r.recipients))],
        });
        return requests.map((r) => settingsOf(r, rows));
      },
      READS_IN_FLIGHT,
      REQUESTS_PER_READ,
    );
    batchReads.set(app, reads);
  }
  return reads.write(request);
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
