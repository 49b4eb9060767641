// PATCH /messages/{id}: content edits, topic and channel moves, resolving topics (spec 4.1 and
// section 3, Zulip's check_update_message). `checkUpdate` validates and authorizes; `doUpdate`
// writes in one transaction; the events and the Notification Bot's messages follow the commit.
import { createHash } from 'node:crypto';
import type { App } from '../app.ts';
import { hasRealmPermission } from '../auth/permissions.ts';
import type { Channel, User } from '../db/generated/client.ts';
import type { ChannelPermission } from '../domain/channel-settings.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { RenderResult } from '../markdown/types.ts';
import { accessibleChannel, canAdministerChannel, subscriberIds, userHasChannelPermission } from '../queries/channels.ts';
import { accessMessage, visibleTopicMessages, type FullMessage } from '../queries/messages.ts';
import { normalizeTopicName } from '../queries/narrow.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { inChannelOrder } from './messages.ts';
import { RESOLVED_TOPIC_PREFIX, normalizeContent, normalizeTopic } from './messages-content.ts';
import { participantsIfNeeded } from './messages-prepare.ts';
import { checkCanCreateTopic, checkCanPost, checkTopicsPolicy, checkWildcardMentions, topicsPolicy } from './messages-send-checks.ts';
import { renderWithRealm } from '../queries/render-context.ts';
import { announceEdit, applyUpdate, moveRest, type EditPlan } from './messages-update.ts';
import { atomic, lockMessage } from './transaction.ts';
import { isAdmin, isModerator } from '../auth/policy.ts';

/** Zulip lets edits and moves run 20 s past the limit, for slow networks and clocks. */
const EDIT_LIMIT_BUFFER = 20;

export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

export interface EditRequest {
  topic?: string;
  propagateMode: PropagateMode;
  notifyOldThread: boolean;
  notifyNewThread: boolean;
  content?: string;
  prevContentSha256?: string;
  streamId?: number;
}

const ageSeconds = (m: FullMessage) => (Date.now() - m.dateSent.getTime()) / 1000;

/** Zulip's validate_user_can_edit_message; edits get a grace period, the typing notice of one none. */
export function checkContentEditAllowed(realm: RealmInfo, user: User, m: FullMessage, buffer = EDIT_LIMIT_BUFFER): void {
  if (!realm.settings.allow_message_editing) throw badRequest('Your organization has turned off message editing');
  if (m.senderId !== user.id) throw badRequest("You don't have permission to edit this message");
  const limit = realm.settings.message_content_edit_limit_seconds;
  if (limit !== null && ageSeconds(m) > limit + buffer) throw badRequest('The time limit for editing this message has passed');
}

/** Zulip's validate_message_edit_payload: the request's shape, before any permission. */
function checkPayload(m: FullMessage, req: EditRequest, topic: string | undefined): void {
  if (topic === undefined && req.content === undefined && req.streamId === undefined) throw badRequest('Nothing to change');
  if (m.channelId === null) {
    if (req.streamId !== undefined) throw badRequest('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw badRequest('Direct messages cannot have topics.');
  }
  if (req.propagateMode !== 'change_one' && topic === undefined && req.streamId === undefined) throw badRequest('Invalid propagate_mode without topic edit');
  if (topic === RESOLVED_TOPIC_PREFIX.trim() || topic === `${RESOLVED_TOPIC_PREFIX}general chat`) throw badRequest('General chat cannot be marked as resolved');
  if (req.streamId !== undefined && req.content !== undefined) throw badRequest('Cannot change message content while changing channel');
  if (req.prevContentSha256 !== undefined && req.prevContentSha256 !== createHash('sha256').update(m.content).digest('hex')) {
    throw badRequest("'prev_content_sha256' value does not match the expected value.");
  }
}

async function channelPermitted(app: App, realm: RealmInfo, user: User, channel: Channel, setting: ChannelPermission): Promise<boolean> {
  return userHasChannelPermission(app, realm, user, channel, setting);
}

async function canAdminister(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<boolean> {
  return canAdministerChannel(user, channel, await app.realms.groups(realm.id), realm);
}

async function canMoveWithinChannel(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<boolean> {
  return (await canAdminister(app, realm, user, channel)) || channelPermitted(app, realm, user, channel, 'can_move_messages_within_channel_group');
}

async function canEditTopic(app: App, realm: RealmInfo, user: User, orig: Channel, target: Channel): Promise<boolean> {
  if (await hasRealmPermission(app.realms, realm, user, 'can_move_messages_between_topics_group')) return true;
  if (await canMoveWithinChannel(app, realm, user, orig)) return true;
  return orig.id !== target.id && canMoveWithinChannel(app, realm, user, target);
}

async function canResolveTopics(app: App, realm: RealmInfo, user: User, orig: Channel, target: Channel): Promise<boolean> {
  if (await hasRealmPermission(app.realms, realm, user, 'can_resolve_topics_group')) return true;
  if (await channelPermitted(app, realm, user, orig, 'can_resolve_topics_group')) return true;
  return orig.id !== target.id && channelPermitted(app, realm, user, target, 'can_resolve_topics_group');
}

async function canMoveOutOfChannel(app: App, realm: RealmInfo, user: User, channel: Channel): Promise<boolean> {
  if (isAdmin(user)) return true;
  if (await hasRealmPermission(app.realms, realm, user, 'can_move_messages_between_channels_group')) return true;
  return (await canAdminister(app, realm, user, channel)) || channelPermitted(app, realm, user, channel, 'can_move_messages_out_of_channel_group');
}

/** Resolving adds "✔ " to the same name; unresolving removes it; anything else is a rename. */
function resolveKind(oldTopic: string, rawNew: string, newTopic: string): 'resolved' | 'unresolved' | null {
  const p = RESOLVED_TOPIC_PREFIX;
  if (newTopic.startsWith(p) && !oldTopic.startsWith(p) && rawNew.slice(p.length) === oldTopic) return 'resolved';
  if (oldTopic.startsWith(p) && !newTopic.startsWith(p) && oldTopic.replace(/^[✔ ]+/u, '') === newTopic) return 'unresolved';
  return null;
}

async function checkTopicMove(app: App, realm: RealmInfo, user: User, m: FullMessage, plan: EditPlan): Promise<void> {
  if (plan.resolve) {
    if (!(await canResolveTopics(app, realm, user, plan.origChannel!, plan.targetChannel!))) {
      throw badRequest("You don't have permission to resolve topics in this channel.");
    }
    return;
  }
  if (!(await canEditTopic(app, realm, user, plan.origChannel!, plan.targetChannel!))) throw badRequest("You don't have permission to edit this message");
  const limit = realm.settings.move_messages_within_stream_limit_seconds;
  if (limit !== null && !isModerator(user) && ageSeconds(m) > limit + EDIT_LIMIT_BUFFER) {
    throw badRequest("The time limit for editing this message's topic has passed.");
  }
}

async function checkChannelMove(app: App, realm: RealmInfo, user: User, m: FullMessage, plan: EditPlan): Promise<void> {
  if (!(await canMoveOutOfChannel(app, realm, user, plan.origChannel!))) throw badRequest("You don't have permission to move this message");
  await checkCanPost(app, realm, user, plan.targetChannel!);
  const limit = realm.settings.move_messages_between_streams_limit_seconds;
  if (limit !== null && !isModerator(user) && ageSeconds(m) > limit + EDIT_LIMIT_BUFFER) {
    throw badRequest("The time limit for editing this message's channel has passed");
  }
}

/** change_all needs every visible message of the topic within the (stricter) move limit. */
async function checkWholeTopicTimeLimit(app: App, realm: RealmInfo, user: User, m: FullMessage, plan: EditPlan): Promise<void> {
  const limits = [
    plan.topicChanged ? realm.settings.move_messages_within_stream_limit_seconds : null,
    plan.channelChanged ? realm.settings.move_messages_between_streams_limit_seconds : null,
  ].filter((l): l is number => l !== null);
  if (limits.length === 0) return;
  const oldest = Date.now() - (Math.min(...limits) + EDIT_LIMIT_BUFFER) * 1000;
  const all = await visibleTopicMessages(app, user, plan.origChannel!, m.topic);
  const allowed = all.filter((x) => x.dateSent.getTime() > oldest);
  if (allowed.length === all.length) return;
  throw new ApiError(
    `You only have permission to move the ${allowed.length}/${all.length} most recent messages in this topic.`,
    'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    400,
    {
      first_message_id_allowed_to_move: allowed[0]?.id ?? null,
      total_messages_in_topic: all.length,
      total_messages_allowed_to_move: allowed.length,
    },
  );
}

async function planEdit(app: App, realm: RealmInfo, user: User, m: FullMessage, req: EditRequest, topic: string | undefined): Promise<EditPlan> {
  const content = req.content === undefined ? undefined : normalizeContent(req.content.trimEnd() === '' ? '(deleted)' : req.content);
  const plan: EditPlan = {
    message: m,
    user,
    content,
    propagateMode: req.propagateMode,
    notifyOld: req.notifyOldThread,
    notifyNew: req.notifyNewThread,
    origChannel: null,
    targetChannel: null,
    targetTopic: m.topic,
    topicChanged: false,
    channelChanged: false,
    resolve: null,
    rendered: null,
  };
  if (m.channelId === null) return plan;
  plan.origChannel = await app.prisma.channel.findUniqueOrThrow({ where: { id: m.channelId } });
  plan.targetChannel = plan.origChannel;
  if (topic !== undefined) {
    plan.targetTopic = normalizeTopic(topic);
    plan.topicChanged = true;
    plan.resolve = resolveKind(m.topic, topic, plan.targetTopic);
  }
  if (req.streamId !== undefined && req.streamId !== m.channelId) {
    plan.targetChannel = (await accessibleChannel(app, realm, user, req.streamId, { content: true, active: true })).channel;
    plan.channelChanged = true;
  }
  // A channel that only allows the empty topic refuses even content edits elsewhere, as in Zulip.
  if (plan.topicChanged || plan.channelChanged || topicsPolicy(realm, plan.targetChannel) === 'empty_topic_only') {
    checkTopicsPolicy(realm, plan.targetChannel, plan.targetTopic);
  }
  return plan;
}

async function renderEdit(app: App, realm: RealmInfo, plan: EditPlan): Promise<RenderResult> {
  const m = plan.message;
  const rendered = await renderWithRealm(app, realm, plan.content!, { sender: m.sender });
  if (m.channelId !== null) {
    const participants = await participantsIfNeeded(app, rendered, m.channelId, m.topic);
    const subscribers = rendered.wildcardMention ? (await subscriberIds(app, m.channelId)).length : 0;
    await checkWildcardMentions(app, realm, m.sender, rendered, subscribers, participants);
  }
  return rendered;
}

/** Zulip's check_update_message: every rule, in Zulip's order, before anything is written. */
async function checkUpdate(app: App, realm: RealmInfo, user: User, messageId: number, req: EditRequest): Promise<EditPlan> {
  const { message: m } = await accessMessage(app, realm, user, messageId);
  if (req.content !== undefined) checkContentEditAllowed(realm, user, m);
  let topic = req.topic === undefined ? undefined : normalizeTopicName(req.topic);
  if (topic === m.topic) topic = undefined;
  checkPayload(m, req, topic);
  const plan = await planEdit(app, realm, user, m, req, topic);
  if (plan.topicChanged) await checkTopicMove(app, realm, user, m, plan);
  if (plan.content !== undefined) plan.rendered = await renderEdit(app, realm, plan);
  if (plan.channelChanged) await checkChannelMove(app, realm, user, m, plan);
  const moved = plan.topicChanged || plan.channelChanged;
  if (req.propagateMode === 'change_all' && moved && !isModerator(user) && !plan.resolve) await checkWholeTopicTimeLimit(app, realm, user, m, plan);
  if (moved) await checkCanCreateTopic(app, realm, user, plan.targetChannel!, plan.targetTopic);
  return plan;
}

/**
 * PATCH /messages/{id}: the checks run in the writing transaction on the locked message row, so
 * two edits that both passed them on the same old content cannot both be written.
 */
export async function updateMessage(
  app: App,
  realm: RealmInfo,
  user: User,
  messageId: number,
  req: EditRequest,
): Promise<{ detached_uploads: Record<string, unknown>[] }> {
  const { message } = await accessMessage(app, realm, user, messageId);
  const edit = () =>
    atomic(app, async () => {
      await lockMessage(app, message.id);
      const plan = await checkUpdate(app, realm, user, message.id, req);
      return { plan, applied: await applyUpdate(app, realm, plan) };
    });
  // The channel's actor orders its edits and their events with its other writes.
  const { plan, applied } = await inChannelOrder(app, message.channelId, edit);
  await moveRest(app, realm, plan, applied, (write) => inChannelOrder(app, message.channelId, write));
  await announceEdit(app, realm, plan, applied);
  return { detached_uploads: applied.detached };
}
