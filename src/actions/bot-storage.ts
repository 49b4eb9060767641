// Bot storage (Zulip's /bot_storage): string pairs a bot keeps between runs, as the stock Python
// bots' StateHandler does. Any user may keep some; keys and values together are limited to
// Zulip's USER_STATE_SIZE_LIMIT characters per user.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import { keyDoesNotExist } from '../queries/bot-storage.ts';
import { atomic, lockUser } from './transaction.ts';

export const BOT_STORAGE_LIMIT_CHARS = 10_000_000;

/** Characters as Python's len() counts them (code points), like PostgreSQL's length(). */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Sets every pair, or none when the user's storage would pass the limit. */
export async function putBotStorage(app: App, user: User, entries: [string, string][]): Promise<void> {
  const keys = entries.map(([k]) => k);
  await atomic(app, async () => {
    const tx = app.prisma;
    // Two requests of one user must not both pass the size check: the user's row serializes them.
    await lockUser(app, user.id);
    const [sizes] = await tx.$queryRawUnsafe<{ total: number; replaced: number }[]>(
      `SELECT COALESCE(SUM(length(key) + length(value)), 0)::int AS total,
              COALESCE(SUM(length(key) + length(value)) FILTER (WHERE key = ANY($2::text[])), 0)::int AS replaced
         FROM "BotStorage" WHERE "userId" = $1`,
      user.id,
      keys,
    );
    const added = entries.reduce((n, [k, v]) => n + codePoints(k) + codePoints(v), 0);
    const size = sizes!.total - sizes!.replaced + added;
    if (size > BOT_STORAGE_LIMIT_CHARS) {
      throw badRequest(`Request exceeds storage limit by ${size - BOT_STORAGE_LIMIT_CHARS} characters. The limit is ${BOT_STORAGE_LIMIT_CHARS} characters.`);
    }
    await tx.$executeRawUnsafe(
      `INSERT INTO "BotStorage" ("userId", key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)
         ON CONFLICT ("userId", key) DO UPDATE SET value = EXCLUDED.value`,
      user.id,
      keys,
      entries.map(([, v]) => v),
    );
  });
}

/** Removes the given keys (all of them when none are given); a missing key removes nothing. */
export async function removeBotStorage(app: App, user: User, keys: string[]): Promise<void> {
  await atomic(app, async () => {
    const tx = app.prisma;
    const where = keys.length ? { userId: user.id, key: { in: keys } } : { userId: user.id };
    const { count } = await tx.botStorage.deleteMany({ where });
    if (keys.length && count < keys.length) throw keyDoesNotExist();
  });
}
