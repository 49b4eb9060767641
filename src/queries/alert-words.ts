// A user's alert words (Zulip's user_alert_words), in the order they were added.
import type { App } from '../app.ts';

export async function userAlertWords(app: App, userId: number): Promise<string[]> {
  const rows = await app.prisma.alertWord.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { word: true } });
  return rows.map((r) => r.word);
}
