// The bots a user administers (register's realm_bots, kept by realm_bot events) and the API calls
// of the Bots settings tab (Zulip's POST /bots, PATCH and DELETE /bots/{id}).
import type { Api } from './api.ts';
import type { DeliveredOf } from './events.ts';

export interface BotService {
  base_url: string;
  interface: number;
  token: string;
}

export interface Bot {
  user_id: number;
  email: string;
  full_name: string;
  bot_type: number | null;
  is_active: boolean;
  api_key: string;
  owner_id: number | null;
  avatar_url: string;
  services: BotService[];
}

/** Zulip's bot types; embedded bots (4) are not offered. */
export const BOT_TYPES = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3 } as const;
export const BOT_TYPE_NAMES: Record<number, string> = { 1: 'Generic bot', 2: 'Incoming webhook', 3: 'Outgoing webhook', 4: 'Embedded bot' };
/** How an outgoing webhook bot's payload is shaped: Zulip's own format or Slack's. */
export const INTERFACE_NAMES: Record<number, string> = { 1: 'Zulip', 2: 'Slack compatible' };

export const botsFromRegister = (realmBots: Bot[] | undefined) => new Map((realmBots ?? []).map((b) => [b.user_id, b]));

/** A realm_bot event applied to the bots one administers. */
export function applyBotEvent(bots: Map<number, Bot>, e: DeliveredOf<'realm_bot'>): Map<number, Bot> {
  const next = new Map(bots);
  const id = e.bot.user_id;
  if (e.op === 'add') next.set(id, e.bot);
  else if (e.op === 'delete') next.delete(id);
  else if (e.op === 'update' && bots.has(id)) next.set(id, { ...bots.get(id)!, ...e.bot });
  return next;
}

/** The zuliprc file Zulip's clients read: the bot's address and key, the server, and an outgoing webhook's token. */
export function zuliprc(bot: Bot, site: string): string {
  const token = bot.bot_type === BOT_TYPES.OUTGOING_WEBHOOK ? bot.services[0]?.token : undefined;
  return `[api]\nemail=${bot.email}\nkey=${bot.api_key}\nsite=${site}\n${token === undefined ? '' : `token=${token}\n`}`;
}

export interface NewBot {
  full_name: string;
  short_name: string;
  bot_type: number;
  payload_url?: string;
  interface_type?: number;
}

export async function createBot(api: Api, bot: NewBot): Promise<void> {
  const { full_name, short_name, bot_type } = bot;
  // Zulip takes the payload URL JSON-encoded, as a JSON string.
  const service = bot_type === BOT_TYPES.OUTGOING_WEBHOOK ? { payload_url: JSON.stringify(bot.payload_url), interface_type: bot.interface_type } : {};
  await api.post('/bots', { full_name, short_name, bot_type, ...service });
}

export async function updateBot(api: Api, botId: number, changes: { full_name?: string; bot_owner_id?: number }): Promise<void> {
  await api.patch(`/bots/${botId}`, changes);
}

export async function uploadBotAvatar(api: Api, botId: number, file: File): Promise<void> {
  const form = new FormData();
  form.append('file', file);
  await api.upload(`/bots/${botId}`, form, undefined, 'PATCH');
}

export async function setBotActive(api: Api, botId: number, active: boolean): Promise<void> {
  if (active) await api.post(`/users/${botId}/reactivate`);
  else await api.delete(`/bots/${botId}`);
}
