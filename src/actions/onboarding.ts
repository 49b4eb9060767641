// What a new organization and a new account are told (Zulip's zerver/lib/onboarding.py): a new
// organization starts with its default channels holding Welcome Bot's first messages; a new account
// gets Welcome Bot's direct message, and the organization's custom welcome text (or an
// invitation's own) as a second message from it.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { User } from '../db/generated/client.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { deliverMessage, sendBotDirectMessage } from './messages.ts';
import { prepareInternalMessage } from './messages-prepare.ts';
import { createChannel } from './subscriptions.ts';
import { systemBot } from './users.ts';

function welcomeText(realm: RealmInfo): string {
  return [
    `Hello, and welcome to **${realm.name}**! :wave:`,
    'I am Welcome Bot. Conversations here happen in **channels**, and every message in a channel has a **topic**, ' +
      'so several discussions can go on side by side without getting mixed up.',
    'A few things to try:\n* Look through [the channels](#channels/all), join those you like, and say hello.\n* Send a direct message to a colleague.\n' +
      '* Set your profile picture and time zone in your [personal settings](#settings/profile).',
  ].join('\n\n');
}

/** The channels a new organization starts with, everyone's by default, and what Welcome Bot says in them. */
const STARTER_CHANNELS = [
  { name: 'general', description: 'Everyone joins this channel. Say hello!' },
  { name: 'sandbox', description: 'A place to try things out.' },
];

/** Welcome Bot's first messages, oldest first: as in Zulip, the main welcome comes last, so it is the newest. */
const STARTER_MESSAGES: { channel: string; topic: string; content: string }[] = [
  {
    channel: 'general',
    topic: 'moving messages',
    content: 'Posted something in the wrong place? Open its topic and use **Move topic** to rename the topic or move it to another channel.',
  },
  {
    channel: 'sandbox',
    topic: 'experiments',
    content: 'Use this topic to try out formatting: **bold**, *italics*, `code`, [links](#), lists, quotes, and\n```\ncode blocks\n```',
  },
  {
    channel: 'sandbox',
    topic: 'start a conversation',
    content: 'A new conversation starts with a new topic: open a channel, type a topic name that says what it is about, then your message. Try it here.',
  },
  { channel: 'general', topic: 'greetings', content: 'This **greetings** topic is the place to say hello :wave: to everyone.' },
  {
    channel: 'general',
    topic: 'welcome',
    content:
      'Every message here belongs to a **topic**, like this one, called “welcome”, in #**general**. ' +
      'Each topic can be read on its own, however many other conversations go on at the same time.\n\n' +
      'Your [Combined feed](#) shows every conversation, with what you have not read yet.',
  },
];

/**
 * A new organization's starting content (Zulip's create_realm and send_initial_realm_messages):
 * its default channels, with the owner subscribed, Welcome Bot's messages in them, and Welcome
 * Bot's direct message to the owner. Called once, right after the organization was created.
 */
export async function setUpNewOrganization(app: App, realm: RealmInfo, owner: User): Promise<void> {
  const channels = new Map<string, number>();
  for (const c of STARTER_CHANNELS) {
    const options = { inviteOnly: false, isWebPublic: false, isDefault: true, groupSettings: {} };
    channels.set(c.name, await createChannel(app, realm, owner, { ...c, subscribers: [owner.id], options }));
  }
  const bot = await systemBot(app, realm, 'welcome');
  for (const m of STARTER_MESSAGES) {
    const prepared = await prepareInternalMessage(app, realm, bot, { kind: 'channel', channel: channels.get(m.channel)!, topic: m.topic }, m.content);
    await deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true });
  }
  await sendWelcomeMessages(app, realm, owner, realm.settings.welcome_message_custom_text);
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
