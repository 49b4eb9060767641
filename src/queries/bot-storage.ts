// Reading a user's bot storage (GET /bot_storage).
import type { App } from '../app.ts';
import { badRequest } from '../errors.ts';

export const keyDoesNotExist = () => badRequest('Key does not exist.');

/** The values of `keys`, or of every key when none are given. */
export async function botStorage(app: App, userId: number, keys: string[]): Promise<Record<string, string>> {
  const rows = await app.prisma.botStorage.findMany({
    where: keys.length ? { userId, key: { in: keys } } : { userId },
    orderBy: { key: 'asc' },
  });
  const values = new Map(rows.map((r) => [r.key, r.value]));
  if (keys.some((k) => !values.has(k))) throw keyDoesNotExist();
  return Object.fromEntries(keys.length ? keys.map((k) => [k, values.get(k)!]) : values);
}
