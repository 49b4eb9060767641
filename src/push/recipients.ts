// Who gets a push notification of a new message (Zulip's UserMessageNotificationsData and
// is_push_notifiable, simplified to what this server has): a recipient with a registered E2EE
// device who has not read it, other than its sender, and
// - a direct message, or a personal, group or wildcard mention, when "offline push
//   notifications" are on (wildcards only where the channel and topic allow their notices);
// - a message in a followed topic, when followed-topic push notifications are on;
// - a channel message where the subscription's push setting (or the user's default) says so,
//   unless the channel or topic is muted;
// and the user is idle (no open event queue, or no activity in the last 140 seconds) unless they
// asked for notifications while online too.
import type { App } from '../app.ts';
import type { Message, Subscription, User } from '../db/generated/client.ts';
import { FLAG_BITS } from '../domain/message-flags.ts';
import { userSettingsSchema } from '../domain/user-settings.ts';
import type { RealmInfo } from '../queries/realms.ts';

/** Zulip's filter_presence_idle_user_ids: no activity for this long counts as idle. */
const ACTIVE_WITHIN_MS = 140_000;

/** Zulip's visibility_policy values. */
const MUTED = 1;
const UNMUTED = 2;
export const FOLLOWED = 3;

export interface PushRecipient {
  user: User;
  /** The mentioned group they were notified through, when no personal mention or other reason made it. */
  group: { id: number; name: string } | null;
}

/** Zulip's user_allows_notifications_in_StreamTopic. */
export function allowsInTopic(channelMuted: boolean, visibility: number, channelSetting: boolean | null, globalSetting: boolean): boolean {
  if (visibility === MUTED) return false;
  if (channelMuted) return visibility === UNMUTED || visibility === FOLLOWED;
  return channelSetting ?? globalSetting;
}

/** Users who have an event queue for messages on this process, or were active lately, are not idle (missed-message emails use it too). */
export async function idleUserIds(app: App, realm: RealmInfo, userIds: number[]): Promise<Set<number>> {
  const offZulip = userIds.filter((id) => ![...app.queues.queuesOf(id)].some((q) => q.options.eventTypes === null || q.options.eventTypes.includes('message')));
  if (realm.settings.presence_disabled) return new Set(offZulip);
  const active = await app.prisma.presence.findMany({
    where: { userId: { in: userIds }, lastActiveTime: { gte: new Date(Date.now() - ACTIVE_WITHIN_MS) } },
    select: { userId: true },
  });
  const activeIds = new Set(active.map((p) => p.userId));
  return new Set([...offZulip, ...userIds.filter((id) => !activeIds.has(id))]);
}

/** The mentioned groups in rendered content (silent mentions are not mentions); attributes come sorted. */
function mentionedGroupIds(html: string): number[] {
  return [...html.matchAll(/<span class="user-group-mention" data-user-group-id="(\d+)">/g)].map((m) => Number(m[1]));
}

const personallyMentioned = (html: string, userId: number) => html.includes(`<span class="user-mention" data-user-id="${userId}">`);

/** Zulip's get_mentioned_user_group: the smallest mentioned group the user belongs to. */
async function mentionedGroupOf(app: App, realm: RealmInfo, html: string, userId: number): Promise<{ id: number; name: string } | null> {
  const ids = mentionedGroupIds(html);
  if (ids.length === 0) return null;
  const groups = await app.realms.groups(realm.id);
  const membersOf = (id: number, seen = new Set<number>()): Set<number> => {
    const group = groups.get(id);
    if (!group || seen.has(id)) return new Set();
    seen.add(id);
    return new Set([...group.members, ...[...group.subgroups].flatMap((sub) => [...membersOf(sub, seen)])]);
  };
  let best: { id: number; name: string; size: number } | null = null;
  for (const id of ids) {
    const members = membersOf(id);
    const name = groups.get(id)?.name;
    if (name && members.has(userId) && (!best || members.size < best.size)) best = { id, name, size: members.size };
  }
  return best && { id: best.id, name: best.name };
}

export async function pushRecipients(app: App, realm: RealmInfo, message: Message): Promise<PushRecipient[]> {
  // Only recipients with a device that can receive notifications are worth the settings' reads.
  const rows = await app.prisma.$queryRaw<{ userId: number; flags: number }[]>`
    SELECT DISTINCT um."userId", um.flags FROM "UserMessage" um JOIN "Device" d ON d."userId" = um."userId"
     WHERE um."messageId" = ${message.id} AND um."userId" <> ${message.senderId} AND (um.flags & ${FLAG_BITS.read}) = 0
       AND d."relayDeviceId" IS NOT NULL AND d."pushKey" IS NOT NULL`;
  if (rows.length === 0) return [];
  const flags = new Map(rows.map((r) => [r.userId, r.flags]));
  const users = await app.prisma.user.findMany({ where: { id: { in: [...flags.keys()] }, isActive: true, isBot: false } });
  const channelId = message.channelId;
  const [subscriptions, topics] =
    channelId === null
      ? [[], []]
      : await Promise.all([
          app.prisma.subscription.findMany({ where: { channelId, userId: { in: users.map((u) => u.id) }, active: true } }),
          app.prisma.userTopic.findMany({
            where: { channelId, userId: { in: users.map((u) => u.id) }, topic: { equals: message.topic, mode: 'insensitive' } },
          }),
        ]);
  const subscriptionOf = new Map<number, Subscription>(subscriptions.map((s) => [s.userId, s]));
  const visibilityOf = new Map(topics.map((t) => [t.userId, t.visibility]));
  const wanted: { user: User; online: boolean; viaGroup: boolean }[] = [];
  for (const user of users) {
    const s = userSettingsSchema.parse(user.settings ?? {});
    const bits = flags.get(user.id)!;
    const offline = s.enable_offline_push_notifications;
    let notify: boolean;
    let viaGroup = false;
    if (channelId === null) {
      notify = offline;
    } else {
      const sub = subscriptionOf.get(user.id);
      const visibility = visibilityOf.get(user.id) ?? 0;
      const followed = visibility === FOLLOWED;
      const wildcard = (bits & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) !== 0;
      const mention = offline && (bits & FLAG_BITS.mentioned) !== 0;
      const wildcardNotice =
        offline &&
        wildcard &&
        ((followed && s.enable_followed_topic_wildcard_mentions_notify) ||
          (sub !== undefined && allowsInTopic(sub.isMuted, visibility, sub.wildcardMentionsNotify, s.wildcard_mentions_notify)));
      const followedNotice = followed && s.enable_followed_topic_push_notifications;
      const channelNotice = sub !== undefined && allowsInTopic(sub.isMuted, visibility, sub.pushNotifications, s.enable_stream_push_notifications);
      notify = mention || wildcardNotice || followedNotice || channelNotice;
      viaGroup = mention && !personallyMentioned(message.renderedContent, user.id);
    }
    if (notify) wanted.push({ user, online: s.enable_online_push_notifications, viaGroup });
  }
  const idle = await idleUserIds(
    app,
    realm,
    wanted.filter((w) => !w.online).map((w) => w.user.id),
  );
  const recipients: PushRecipient[] = [];
  for (const w of wanted) {
    if (!w.online && !idle.has(w.user.id)) continue;
    recipients.push({ user: w.user, group: w.viaGroup ? await mentionedGroupOf(app, realm, message.renderedContent, w.user.id) : null });
  }
  return recipients;
}
