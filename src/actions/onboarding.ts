// What a new account is told (Zulip's zerver/lib/onboarding.py): Welcome Bot's direct message, and
// the organization's custom welcome text (or an invitation's own) as a second message from it.
import type { App } from '../app.ts';
import { requireRole } from '../auth/permissions.ts';
import type { User } from '../db/generated/client.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { sendBotDirectMessage } from './messages.ts';
import { systemBot } from './users.ts';

function welcomeText(realm: RealmInfo): string {
  return [
    `Hello, and welcome to **${realm.name}**! :wave:`,
    'I am Welcome Bot. Conversations here happen in **channels**, and every message in a channel has a **topic**, ' +
      'so several discussions can go on side by side without getting mixed up.',
    'A few things to try:\n* Look through the channels you were added to, and say hello.\n* Send a direct message to a colleague.\n' +
      '* Set your profile picture and time zone in your personal settings.',
  ].join('\n\n');
}

/**
 * Welcome Bot's messages to a new user: its own, starred as Zulip does, then `customText` when it
 * is not empty. Returns the ids of both (null when no custom message was sent).
 */
export async function sendWelcomeMessages(app: App, realm: RealmInfo, user: User, customText: string): Promise<{ welcome: number; custom: number | null }> {
  const bot = await systemBot(app, realm, 'welcome');
  const welcome = await sendBotDirectMessage(app, realm, bot, user, welcomeText(realm));
  // The user has no event queue yet: nobody is to be told of the flag.
  await app.prisma.$executeRaw`UPDATE "UserMessage" SET flags = flags | ${FLAG_BITS.starred} WHERE "userId" = ${user.id} AND "messageId" = ${welcome}`;
  const custom = customText.trim() === '' ? null : await sendBotDirectMessage(app, realm, bot, user, customText);
  return { welcome, custom };
}

/** POST /realm/test_welcome_bot_custom_message: an administrator sees the custom message as new users will. */
export async function sendTestWelcomeMessage(app: App, realm: RealmInfo, admin: User, text: string): Promise<number> {
  requireRole(admin, Role.ADMINISTRATOR);
  if (text.length === 0) throw badRequest('Message must not be empty');
  const bot = await systemBot(app, realm, 'welcome');
  return sendBotDirectMessage(app, realm, bot, admin, text);
}
