// Alert words (Zulip's zerver/actions/alert_words.py and lib/alert_words.py): words and phrases,
// distinct regardless of case, that flag the messages containing them `has_alert_word`
// (deliverMessage); each change sends the user's clients the whole list.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';
import { userAlertWords } from '../queries/alert-words.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { atomic, lockUsers, sendOnCommit } from './transaction.ts';

export const MAX_ALERT_WORD_LENGTH = 100;

async function sendAlertWords(app: App, realm: RealmInfo, user: User): Promise<string[]> {
  const words = await userAlertWords(app, user.id);
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'alert_words', alert_words: words } });
  return words;
}

/** POST /users/me/alert_words: surrounding whitespace goes, blank words and known ones (ignoring case) are skipped. */
export async function addAlertWords(app: App, realm: RealmInfo, user: User, words: string[]): Promise<string[]> {
  return atomic(app, async () => {
    await lockUsers(app, [user.id]);
    const known = new Set((await userAlertWords(app, user.id)).map((w) => w.toLowerCase()));
    // One spelling per new word: the last one given, as Zulip's dictionary keeps it.
    const fresh = new Map<string, string>();
    for (const word of words.map((w) => w.trim()).filter((w) => w !== '')) {
      if (!known.has(word.toLowerCase())) fresh.set(word.toLowerCase(), word);
    }
    await app.prisma.alertWord.createMany({ data: [...fresh.values()].map((word) => ({ userId: user.id, word })) });
    return sendAlertWords(app, realm, user);
  });
}

/** DELETE /users/me/alert_words: each word given goes, in whatever case it was added; unknown ones are ignored. */
export async function removeAlertWords(app: App, realm: RealmInfo, user: User, words: string[]): Promise<string[]> {
  return atomic(app, async () => {
    if (words.length) await app.prisma.alertWord.deleteMany({ where: { userId: user.id, OR: words.map((word) => ({ word: equalsIgnoringCase(word) })) } });
    return sendAlertWords(app, realm, user);
  });
}
