// New API keys (Zulip's do_regenerate_api_key): the old key stops working at once, cached
// credentials included, and a bot's owner and the administrators get the bot's new key.
import type { App } from '../app.ts';
import { generateApiKey } from '../auth/api-keys.ts';
import type { User } from '../db/generated/client.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { humanAdminIds } from '../queries/users.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import { isAdmin } from '../auth/policy.ts';

/** Zulip's access_bot_by_id: the bot's owner or an administrator of its organization. */
export async function accessBot(app: App, realm: RealmInfo, actor: User, botId: number): Promise<User> {
  const bot = await app.prisma.user.findFirst({ where: { id: botId, realmId: realm.id } });
  if (!bot || !bot.isBot || bot.isSystemBot) throw badRequest('No such bot');
  if (bot.botOwnerId !== actor.id && !isAdmin(actor)) throw badRequest('Insufficient permission');
  return bot;
}

/** Gives `target` a new API key and returns it. */
export async function regenerateApiKey(app: App, realm: RealmInfo, target: User): Promise<string> {
  const apiKey = generateApiKey();
  await atomic(app, async () => {
    await app.prisma.user.update({ where: { id: target.id }, data: { apiKey } });
    onCommit(() => cacheChanged(app, { cache: 'user', userId: target.id }));
    if (!target.isBot) return;
    sendOnCommit({
      realmId: realm.id,
      userIds: await botManagerIds(app, realm, target),
      event: { type: 'realm_bot', op: 'update', bot: { user_id: target.id, api_key: apiKey } },
    });
  });
  return apiKey;
}

/** Who gets a bot's `realm_bot` events (Zulip's bot_owner_user_ids): its owner and the administrators. */
export async function botManagerIds(app: App, realm: RealmInfo, bot: User): Promise<number[]> {
  const userIds = new Set(await humanAdminIds(app, realm.id));
  if (bot.botOwnerId !== null) userIds.add(bot.botOwnerId);
  return [...userIds];
}
