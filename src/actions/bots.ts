// Bots made and managed through the API (Zulip's add_bot_backend, patch_bot_backend,
// deactivate_bot_backend and zerver/actions/bots.py): who may create which kind, the outgoing
// webhook's service, default channels, owner changes, and the `realm_bot` events that keep
// the owner's and the administrators' bot lists current.
import type { App } from '../app.ts';
import { generateApiKey } from '../auth/api-keys.ts';
import { hasRealmPermission } from '../auth/permissions.ts';
import type { BotService, User } from '../db/generated/client.ts';
import { isValidEmail } from '../domain/email-address.ts';
import { BOT_TYPES, INTERFACES } from '../domain/bots.ts';
import { userSettingsSchema } from '../domain/realm-settings.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';
import { badRequest } from '../errors.ts';
import { accessibleChannelByName } from '../queries/channels.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail, botDicts, serviceDicts } from '../queries/users.ts';
import { accessBot, botManagerIds } from './api-keys.ts';
import { setAvatar } from './avatars.ts';
import { atomic, lockUser, onCommit, sendOnCommit } from './transaction.ts';
import { deactivateWithBots, updateUser } from './user-admin.ts';
import { sendAboutUser } from './user-access.ts';
import { announceNewUser, checkFullName, insertUser } from './users.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';
import type { EventOf, OmitEach } from '../events/schemas.ts';
import { isAdmin, refuseGuests } from '../auth/policy.ts';

export interface NewBot {
  fullName: string;
  shortName: string;
  botType: number;
  payloadUrl: string;
  interfaceType: number;
  serviceName?: string;
  configData: Record<string, string>;
  defaultSendingStream?: string;
  defaultEventsRegisterStream?: string;
  defaultAllPublicStreams?: boolean;
}

export const notForGuests = (user: User) => {
  refuseGuests(user);
};

/** Zulip's check_bot_name_available: no active user of the organization has the name. */
async function checkBotNameAvailable(app: App, realm: RealmInfo, fullName: string): Promise<void> {
  if (await app.prisma.user.findFirst({ where: { realmId: realm.id, fullName: fullName.trim(), isActive: true }, select: { id: true } })) {
    throw badRequest('Name is already in use!');
  }
}

/** Zulip's check_bot_creation_policy and check_valid_bot_type. */
async function checkMayCreate(app: App, realm: RealmInfo, actor: User, botType: number): Promise<void> {
  const mayCreateAll = await hasRealmPermission(app.realms, realm, actor, 'can_create_bots_group');
  const writeOnly = botType === BOT_TYPES.INCOMING_WEBHOOK && (await hasRealmPermission(app.realms, realm, actor, 'can_create_write_only_bots_group'));
  if (!mayCreateAll && !writeOnly) throw badRequest('Insufficient permission');
  if (!Object.values(BOT_TYPES).includes(botType as never)) throw badRequest('Invalid bot type');
}

function checkInterface(interfaceType: number): void {
  if (!Object.values(INTERFACES).includes(interfaceType as never)) throw badRequest('Invalid interface type');
}

/** POST /bots: the new bot, owned by its creator. */
export async function createBot(app: App, realm: RealmInfo, actor: User, input: NewBot, files: UploadedFile[]): Promise<User> {
  notForGuests(actor);
  const short = input.shortName.trim();
  if (short === '') throw badRequest('Bad name or username');
  const email = `${short}-bot@${app.realms.emailDomain(realm)}`;
  if (!isValidEmail(email)) throw badRequest('Bad name or username');
  const fullName = checkFullName(input.fullName);
  // Embedded bots run Python bots inside Zulip's server; this server has none to run.
  if (input.botType === BOT_TYPES.EMBEDDED) throw badRequest('Embedded bots are not enabled.');
  const chosen = files.filter((f) => f.filename !== '');
  if (chosen.length > 1) throw badRequest('You may only upload one file at a time');
  const bot = await atomic(app, async () => {
    if (await app.prisma.user.findFirst({ where: { realmId: realm.id, deliveryEmail: email }, select: { id: true } }))
      throw badRequest('Username already in use');
    await checkBotNameAvailable(app, realm, fullName);
    await checkMayCreate(app, realm, actor, input.botType);
    checkInterface(input.interfaceType);
    const sending = input.defaultSendingStream === undefined ? null : await accessibleChannelByName(app, realm, actor, input.defaultSendingStream);
    const events = input.defaultEventsRegisterStream === undefined ? null : await accessibleChannelByName(app, realm, actor, input.defaultEventsRegisterStream);
    const inserted = await insertUser(app.prisma, realm.id, { email, fullName, isBot: true, botType: input.botType, botOwnerId: actor.id }, null);
    const settings = {
      ...(inserted.settings as object),
      ...(input.defaultAllPublicStreams === undefined ? {} : { default_all_public_streams: input.defaultAllPublicStreams }),
    };
    const config =
      input.botType === BOT_TYPES.INCOMING_WEBHOOK && input.serviceName ? { integration_id: input.serviceName, ...input.configData } : input.configData;
    const created = await app.prisma.user.update({
      where: { id: inserted.id },
      data: {
        defaultSendingChannelId: sending?.id ?? null,
        defaultEventsRegisterChannelId: events?.id ?? null,
        settings,
        botConfig: input.botType === BOT_TYPES.INCOMING_WEBHOOK ? config : {},
      },
    });
    if (input.botType === BOT_TYPES.OUTGOING_WEBHOOK) {
      await app.prisma.botService.create({
        data: { botId: created.id, name: input.serviceName || short, baseUrl: input.payloadUrl, interface: input.interfaceType, token: generateApiKey() },
      });
    }
    await announceNewUser(app, realm, created);
    return created;
  });
  if (chosen.length === 1) await setAvatar(app, realm, bot, chosen);
  return app.prisma.user.findUniqueOrThrow({ where: { id: bot.id } });
}

/** GET /bots: the caller's active bots (Zulip's get_bots_backend). */
export async function ownBots(app: App, realm: RealmInfo, actor: User): Promise<Record<string, unknown>[]> {
  notForGuests(actor);
  const bots = await app.prisma.user.findMany({
    where: { realmId: realm.id, isBot: true, isActive: true, botOwnerId: actor.id },
    orderBy: [{ dateJoined: 'asc' }, { id: 'asc' }],
  });
  const dicts = await botDicts(app, realm, bots);
  return dicts.map((d) => ({
    username: d.email,
    full_name: d.full_name,
    api_key: d.api_key,
    avatar_url: d.avatar_url,
    default_sending_stream: d.default_sending_stream,
    default_events_register_stream: d.default_events_register_stream,
    default_all_public_streams: d.default_all_public_streams,
  }));
}

export interface BotUpdate {
  fullName?: string;
  role?: number;
  botOwnerId?: number;
  configData?: Record<string, string>;
  servicePayloadUrl?: string;
  serviceInterface: number;
  defaultSendingStream?: string;
  defaultEventsRegisterStream?: string;
  defaultAllPublicStreams?: boolean;
}

/** PATCH /bots/{bot_id}; returns what Zulip's answer holds. */
export async function updateBot(app: App, realm: RealmInfo, actor: User, botId: number, u: BotUpdate, files: UploadedFile[]): Promise<Record<string, unknown>> {
  notForGuests(actor);
  await accessBot(app, realm, actor, botId);
  const chosen = files.filter((f) => f.filename !== '');
  if (chosen.length > 1) throw badRequest('You may only upload one file at a time');
  await atomic(app, async () => {
    await lockUser(app, botId);
    let bot = await accessBot(app, realm, actor, botId);
    // To who manages the bot at that point of the change (a new owner hears what follows).
    const tell = async (fields: OmitEach<EventOf<'realm_bot', 'update'>['bot'], 'user_id'>) =>
      sendOnCommit({
        realmId: realm.id,
        userIds: await botManagerIds(app, realm, bot),
        event: { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...fields } },
      });
    if (u.fullName !== undefined) {
      const fullName = checkFullName(u.fullName);
      if (fullName !== bot.fullName) {
        await checkBotNameAvailable(app, realm, fullName);
        await app.prisma.user.update({ where: { id: bot.id }, data: { fullName } });
        await sendAboutUser(app, realm, bot, { type: 'realm_user', op: 'update', person: { user_id: bot.id, full_name: fullName } });
        await tell({ full_name: fullName });
      }
    }
    if (u.role !== undefined) await updateUser(app, realm, actor, bot.id, { role: u.role });
    if (u.botOwnerId !== undefined) bot = await changeOwner(app, realm, bot, u.botOwnerId);
    if (u.defaultSendingStream !== undefined) {
      const channel = u.defaultSendingStream === '' ? null : await accessibleChannelByName(app, realm, actor, u.defaultSendingStream);
      await app.prisma.user.update({ where: { id: bot.id }, data: { defaultSendingChannelId: channel?.id ?? null } });
      await tell({ default_sending_stream: channel?.name ?? null });
    }
    if (u.defaultEventsRegisterStream !== undefined) {
      const channel = u.defaultEventsRegisterStream === '' ? null : await accessibleChannelByName(app, realm, actor, u.defaultEventsRegisterStream);
      await app.prisma.user.update({ where: { id: bot.id }, data: { defaultEventsRegisterChannelId: channel?.id ?? null } });
      await tell({ default_events_register_stream: channel?.name ?? null });
    }
    if (u.defaultAllPublicStreams !== undefined) {
      const settings = { ...userSettingsSchema.partial().parse(bot.settings ?? {}), default_all_public_streams: u.defaultAllPublicStreams };
      await app.prisma.user.update({ where: { id: bot.id }, data: { settings } });
      await tell({ default_all_public_streams: u.defaultAllPublicStreams });
    }
    if (u.servicePayloadUrl !== undefined) {
      checkInterface(u.serviceInterface);
      const service = await updateService(app, bot, u.servicePayloadUrl, u.serviceInterface);
      await tell({ services: serviceDicts(service) });
    }
    if (u.configData !== undefined) {
      await app.prisma.user.update({ where: { id: bot.id }, data: { botConfig: { ...(bot.botConfig as Record<string, string>), ...u.configData } } });
    }
    onCommit(() => cacheChanged(app, { cache: 'user', userId: bot.id }));
  });
  if (chosen.length === 1) await setAvatar(app, realm, await app.prisma.user.findUniqueOrThrow({ where: { id: botId } }), chosen);
  const bot = await app.prisma.user.findUniqueOrThrow({ where: { id: botId } });
  const [dict] = await botDicts(app, realm, [bot]);
  const owner = bot.botOwnerId === null ? null : await app.prisma.user.findUnique({ where: { id: bot.botOwnerId } });
  return {
    full_name: bot.fullName,
    avatar_url: dict!.avatar_url,
    service_interface: u.serviceInterface,
    service_payload_url: u.servicePayloadUrl ?? null,
    config_data: u.configData ?? null,
    default_sending_stream: dict!.default_sending_stream,
    default_events_register_stream: dict!.default_events_register_stream,
    default_all_public_streams: dict!.default_all_public_streams,
    ...(owner ? { bot_owner: apiEmail(app, realm, owner) } : {}),
  };
}

/** Zulip's do_update_outgoing_webhook_service: a bot of another kind gets no service from it. */
async function updateService(app: App, bot: User, baseUrl: string, interfaceType: number): Promise<BotService | null> {
  const existing = await app.prisma.botService.findUnique({ where: { botId: bot.id } });
  if (!existing) return null;
  return app.prisma.botService.update({ where: { id: existing.id }, data: { baseUrl, interface: interfaceType } });
}

/** Zulip's do_change_bot_owner: the new owner's list gains the bot, the previous owner's loses it. */
async function changeOwner(app: App, realm: RealmInfo, bot: User, ownerId: number): Promise<User> {
  const owner = await app.prisma.user.findFirst({ where: { id: ownerId, realmId: realm.id } });
  if (!owner) throw badRequest('Failed to change owner, no such user');
  if (!owner.isActive) throw badRequest('Failed to change owner, user is deactivated');
  if (owner.isBot) throw badRequest("Failed to change owner, bots can't own other bots");
  if (owner.id === bot.botOwnerId) return bot;
  const previous = bot.botOwnerId === null ? null : await app.prisma.user.findUnique({ where: { id: bot.botOwnerId } });
  const after = await app.prisma.user.update({ where: { id: bot.id }, data: { botOwnerId: owner.id } });
  // Administrators see every bot: their lists only change owner; the owners' lists lose or gain it.
  const updated = new Set(await botManagerIds(app, realm, after));
  if (previous && !isAdmin(previous)) {
    sendOnCommit({ realmId: realm.id, userIds: [previous.id], event: { type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } } });
    updated.delete(previous.id);
  }
  if (!isAdmin(owner)) {
    sendOnCommit({ realmId: realm.id, userIds: [owner.id], event: { type: 'realm_bot', op: 'add', bot: (await botDicts(app, realm, [after]))[0] } });
    updated.delete(owner.id);
  }
  sendOnCommit({ realmId: realm.id, userIds: [...updated], event: { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, owner_id: owner.id } } });
  await sendAboutUser(app, realm, after, { type: 'realm_user', op: 'update', person: { user_id: bot.id, bot_owner_id: owner.id } });
  return after;
}

/** DELETE /bots/{bot_id}: deactivates the bot (Zulip's deactivate_bot_backend). */
export async function deactivateBotById(app: App, realm: RealmInfo, actor: User, botId: number): Promise<void> {
  notForGuests(actor);
  await atomic(app, async () => {
    await lockUser(app, botId);
    const bot = await accessBot(app, realm, actor, botId);
    if (!bot.isActive) throw badRequest('No such bot');
    await deactivateWithBots(app, realm, bot);
  });
}
