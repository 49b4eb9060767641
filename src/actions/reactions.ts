// Emoji reactions (spec 4.11; Zulip's check_add_reaction and remove_reaction): a reaction is one
// user's vote for a (reaction_type, emoji_code) pair on a message.
import type { App } from '../app.ts';
import type { Channel, User } from '../db/generated/client.ts';
import { HISTORICAL_FLAGS } from '../domain/message-flags.ts';
import { ApiError, badRequest } from '../errors.ts';
import { accessMessage, actionRecipientIds, invalidMessage, type FullMessage } from '../queries/messages.ts';
import { canonicalReactionType, checkEmojiRequest, emojiByName, requestedEmoji } from '../queries/reactions.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail } from '../queries/users.ts';
import { inChannelOrder, lockMessage } from './messages.ts';
import { atomic, sendOnCommit } from './transaction.ts';

export interface ReactionRequest {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

interface StoredReaction {
  emojiName: string;
  emojiCode: string;
  reactionType: string;
}

const reactionExists = () => new ApiError('Reaction already exists.', 'REACTION_ALREADY_EXISTS');
const reactionMissing = () => new ApiError("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');

/** The message, if the user may react to it: readable, and not in an archived channel. */
async function reactableMessage(app: App, realm: RealmInfo, user: User, id: number): Promise<{ message: FullMessage; flags: number | null; channel: Channel | null }> {
  const { message, flags } = await accessMessage(app, realm, user, id);
  const channel = message.channelId === null ? null : await app.prisma.channel.findUniqueOrThrow({ where: { id: message.channelId } });
  if (channel?.isArchived) throw invalidMessage();
  return { message, flags, channel };
}

/**
 * Runs a reaction change in its channel's order, in one transaction holding the message's row,
 * with the message read (and access checked) again under the lock.
 */
async function onLockedMessage<T>(app: App, realm: RealmInfo, user: User, messageId: number, change: (m: Awaited<ReturnType<typeof reactableMessage>>) => Promise<T>): Promise<T> {
  const { message: seen } = await accessMessage(app, realm, user, messageId);
  return inChannelOrder(app, seen.channelId, () =>
    atomic(app, async () => {
      await lockMessage(app, seen.id);
      return change(await reactableMessage(app, realm, user, seen.id));
    }),
  );
}

async function sendReaction(app: App, realm: RealmInfo, user: User, messageId: number, channel: Channel | null, op: 'add' | 'remove', r: StoredReaction): Promise<void> {
  const event = {
    type: 'reaction',
    op,
    user_id: user.id,
    // Deprecated, but the React Native app still reads it.
    user: { user_id: user.id, email: apiEmail(app, realm, user), full_name: user.fullName },
    message_id: messageId,
    emoji_name: r.emojiName,
    emoji_code: r.emojiCode,
    reaction_type: r.reactionType,
  };
  sendOnCommit({ realmId: realm.id, userIds: await actionRecipientIds(app, messageId, channel), event });
}

export async function addReaction(app: App, realm: RealmInfo, user: User, messageId: number, req: ReactionRequest & { emojiName: string }): Promise<void> {
  await onLockedMessage(app, realm, user, messageId, async ({ message, flags, channel }) => {
    const { code, type } = await requestedEmoji(app, realm, req.emojiName, req.emojiCode, req.reactionType);
    const key = { messageId: message.id, emojiCode: code, reactionType: type };
    if (await app.prisma.reaction.findFirst({ where: { ...key, userId: user.id }, select: { id: true } })) throw reactionExists();
    // A vote for a reaction already on the message keeps that reaction's name, so one image never
    // shows under two names, and needs no validation (its custom emoji may be deactivated since).
    const vote = await app.prisma.reaction.findFirst({ where: key, orderBy: { id: 'asc' }, select: { emojiName: true } });
    if (!vote) await checkEmojiRequest(app, realm, req.emojiName, { code, type });
    const reaction = { emojiName: vote?.emojiName ?? req.emojiName, emojiCode: code, reactionType: type };
    await app.prisma.reaction.create({ data: { ...reaction, messageId: message.id, userId: user.id } });
    // Reacting to a channel message one never received gives a historical row, as starring does.
    if (flags === null) await app.prisma.userMessage.createMany({ data: [{ userId: user.id, messageId: message.id, flags: HISTORICAL_FLAGS }], skipDuplicates: true });
    await sendReaction(app, realm, user, message.id, channel, 'add', reaction);
  });
}

/**
 * Removal trusts the stored row instead of validating the emoji, so reactions with since-renamed
 * or deactivated custom emoji can still be taken back.
 */
export async function removeReaction(app: App, realm: RealmInfo, user: User, messageId: number, req: ReactionRequest): Promise<void> {
  await onLockedMessage(app, realm, user, messageId, async ({ message, channel }) => {
    let code = req.emojiCode;
    let type = req.reactionType === undefined ? undefined : canonicalReactionType(req.reactionType);
    if (code === undefined) {
      if (req.emojiName === undefined) throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
      const named = await emojiByName(app, realm, req.emojiName);
      code = named.code;
      // Zulip assumes unicode_emoji here even for a custom emoji's name, which then never matches.
      type ??= named.type;
    }
    const where = { messageId: message.id, userId: user.id, emojiCode: code, reactionType: type ?? 'unicode_emoji' };
    const reaction = await app.prisma.reaction.findFirst({ where });
    if (!reaction) throw reactionMissing();
    await app.prisma.reaction.delete({ where: { id: reaction.id } });
    await sendReaction(app, realm, user, message.id, channel, 'remove', reaction);
  });
}
