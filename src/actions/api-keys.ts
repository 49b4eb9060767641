// New API keys (Zulip's do_regenerate_api_key): the old key stops working at once, cached
// credentials included, and a bot's owner and the administrators get the bot's new key.
import type { App } from '../app.ts';
import { generateApiKey } from '../auth/api-keys.ts';
import type { User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';

/** Zulip's access_bot_by_id: the bot's owner or an administrator of its organization. */
export async function accessBot(app: App, realm: RealmInfo, actor: User, botId: number): Promise<User> {
  const bot = await app.prisma.user.findFirst({ where: { id: botId, realmId: realm.id } });
  if (!bot || !bot.isBot) throw badRequest('No such bot');
  if (bot.botOwnerId !== actor.id && actor.role > Role.ADMINISTRATOR) throw badRequest('Insufficient permission');
  return bot;
}

/** Who hears of a bot's changes (Zulip's bot_owner_user_ids): its owner and the organization's administrators. */
export async function botAdministratorIds(app: App, realm: RealmInfo, bot: User): Promise<number[]> {
  const admins = await app.prisma.user.findMany({ where: { realmId: realm.id, isActive: true, isBot: false, role: { lte: Role.ADMINISTRATOR } }, select: { id: true } });
  const userIds = new Set(admins.map((a) => a.id));
  if (bot.botOwnerId !== null) userIds.add(bot.botOwnerId);
  return [...userIds];
}

/** Gives `target` a new API key and returns it. */
export async function regenerateApiKey(app: App, realm: RealmInfo, target: User): Promise<string> {
  const apiKey = generateApiKey();
  await atomic(app, async () => {
    await app.prisma.user.update({ where: { id: target.id }, data: { apiKey } });
    onCommit(() => app.auth.forget(target.id));
    if (!target.isBot) return;
    sendOnCommit({ realmId: realm.id, userIds: await botAdministratorIds(app, realm, target), event: { type: 'realm_bot', op: 'update', bot: { user_id: target.id, api_key: apiKey } } });
  });
  return apiKey;
}
