// The scripted sequence of the events-rebuild test (test/events/events-rebuild.test.ts): every kind of
// change the server makes, one named step each. After each step, every watching queue's state
// rebuilt from its events must equal a fresh register. A new feature adds its steps to STEPS (and,
// for a new event type, its rule to test/helpers/apply-events.ts).
import sharp from 'sharp';
import * as assert from 'uvu/assert';
import type { Reply } from '../helpers/client.ts';
import type { TestRealm, TestUser } from '../helpers/server.ts';

export interface Scene {
  realm: TestRealm;
  /** The organization owner, who makes most changes. */
  owner: TestUser;
  /** The two users whose queues watch: an administrator and a plain member. */
  admin: TestUser;
  member: TestUser;
  /** Someone else, to change and to talk to. */
  other: TestUser;
  /** A bot the member owns. */
  bot: TestUser;
  /** Ids earlier steps made, by name. */
  ids: Record<string, number>;
  /** Further users setUp made, by name. */
  people: Record<string, TestUser>;
}

export interface Step {
  name: string;
  run(scene: Scene): Promise<void>;
}

/** The reply, after checking it succeeded. */
export function ok(reply: Reply): any {
  assert.is(reply.status, 200, reply.text);
  return reply.body;
}

const viewers = (s: Scene) => [s.admin, s.member];
// A 1x1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** A small real image for avatars (made once). */
let avatar: Promise<Buffer> | undefined;
const avatarPng = () =>
  (avatar ??= sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .png()
    .toBuffer());

async function sendToChannel(user: TestUser, channel: number, topic: string, content: string): Promise<number> {
  return ok(await user.client.post('/messages', { type: 'stream', to: channel, topic, content })).id;
}

async function sendDirect(user: TestUser, to: number[], content: string): Promise<number> {
  return ok(await user.client.post('/messages', { type: 'direct', to, content })).id;
}

/** Channels and messages every step may use; made before the queues open. */
export async function setUp(s: Scene): Promise<void> {
  const o = s.owner.client;
  const channel = async (name: string, members: TestUser[], extra: Record<string, unknown> = {}) => {
    ok(await o.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: members.map((m) => m.id), ...extra }));
    return ok(await o.get('/get_stream_id', { stream: name })).stream_id as number;
  };
  s.ids.general = await channel('general', [s.owner, s.admin, s.member, s.other]);
  s.ids.secret = await channel('secret', [s.owner, s.admin], { invite_only: true });
  s.ids.lounge = await channel('lounge', [s.owner, s.other]);
  s.ids.quiet = await channel('quiet', [s.owner, s.member]);
  s.ids.reports = await channel('reports', [s.owner, s.admin], { invite_only: true });
  s.ids.firstGeneral = await sendToChannel(s.owner, s.ids.general, 'welcome', 'Hello everyone');
  await sendToChannel(s.other, s.ids.lounge, 'chatter', 'Nobody watching here');
  await sendDirect(s.member, [s.owner.id], 'Hi owner');
  s.people.quitter = await s.realm.addUser({ name: 'Quentin Quitter' });
  await s.realm.addUser({ name: "Quentin's bot", bot: true, botOwnerId: s.people.quitter.id });
}

/** Seconds since the epoch, `ahead` seconds from now. */
const inSeconds = (ahead: number) => Math.floor(Date.now() / 1000) + ahead;

/** Waits until `done` holds, asking every 100 ms for at most `seconds`. */
async function until(what: string, done: () => Promise<boolean>, seconds = 10): Promise<void> {
  for (const end = Date.now() + seconds * 1000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await done()) return;
  }
  throw new Error(`${what}: not after ${seconds} s`);
}

export const STEPS: Step[] = [
  // Messages
  {
    name: 'a channel message mentioning the member',
    async run(s) {
      const name = ok(await s.owner.client.get(`/users/${s.member.id}`)).user.full_name;
      s.ids.mention = await sendToChannel(s.owner, s.ids.general, 'greetings', `Hello @**${name}**`);
    },
  },
  {
    name: 'a channel message with a wildcard mention, in a private channel',
    run: async (s) => void (s.ids.secretMessage = await sendToChannel(s.owner, s.ids.secret, 'plans', '@**all** plans')),
  },
  { name: 'a message to the empty topic', run: async (s) => void (s.ids.emptyTopic = await sendToChannel(s.other, s.ids.general, '', 'no topic')) },
  {
    name: 'direct messages, one to one and in a group',
    async run(s) {
      s.ids.dmMember = await sendDirect(s.owner, [s.member.id], 'Just you');
      s.ids.dmAdmin = await sendDirect(s.other, [s.admin.id], 'Hello admin');
      s.ids.groupDm = await sendDirect(s.owner, [s.admin.id, s.member.id, s.other.id], 'All of us');
      s.ids.selfDm = await sendDirect(s.member, [s.member.id], 'Note to self');
    },
  },
  {
    name: 'messages read and unread again',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post('/messages/flags', { messages: [s.ids.groupDm, s.ids.firstGeneral], op: 'add', flag: 'read' }));
        ok(await v.client.post('/messages/flags', { messages: [s.ids.firstGeneral], op: 'remove', flag: 'read' }));
      }
      ok(await s.member.client.post('/messages/flags', { messages: [s.ids.dmMember], op: 'add', flag: 'read' }));
      ok(await s.member.client.post('/messages/flags', { messages: [s.ids.dmMember], op: 'remove', flag: 'read' }));
    },
  },
  {
    name: 'starred and unstarred',
    async run(s) {
      for (const v of viewers(s)) ok(await v.client.post('/messages/flags', { messages: [s.ids.firstGeneral, s.ids.groupDm], op: 'add', flag: 'starred' }));
      ok(await s.member.client.post('/messages/flags', { messages: [s.ids.groupDm], op: 'remove', flag: 'starred' }));
    },
  },
  {
    name: 'a topic and a channel marked as read',
    async run(s) {
      ok(await s.member.client.post('/mark_topic_as_read', { stream_id: s.ids.general, topic_name: 'greetings' }));
      ok(await s.admin.client.post('/mark_stream_as_read', { stream_id: s.ids.secret }));
    },
  },
  {
    name: 'a message edited',
    run: async (s) => void ok(await s.owner.client.patch(`/messages/${s.ids.mention}`, { content: 'Hello again, edited' })),
  },
  {
    name: 'a topic renamed',
    run: async (s) => void ok(await s.owner.client.patch(`/messages/${s.ids.mention}`, { topic: 'salutations', propagate_mode: 'change_all' })),
  },
  {
    name: 'a topic resolved and unresolved',
    async run(s) {
      ok(await s.owner.client.patch(`/messages/${s.ids.mention}`, { topic: '✔ salutations', propagate_mode: 'change_all' }));
      ok(await s.owner.client.patch(`/messages/${s.ids.mention}`, { topic: 'salutations', propagate_mode: 'change_all' }));
    },
  },
  {
    name: 'messages moved to another channel',
    async run(s) {
      const id = await sendToChannel(s.owner, s.ids.general, 'moving', 'I will move');
      ok(await s.owner.client.patch(`/messages/${id}`, { stream_id: s.ids.quiet, topic: 'moved here', propagate_mode: 'change_all' }));
      s.ids.moved = id;
    },
  },
  {
    name: 'messages moved to a channel the member is not in',
    async run(s) {
      const id = await sendToChannel(s.owner, s.ids.general, 'away', 'Off to the lounge');
      ok(await s.owner.client.patch(`/messages/${id}`, { stream_id: s.ids.lounge, propagate_mode: 'change_one' }));
    },
  },
  {
    name: 'reactions added and removed',
    async run(s) {
      for (const v of viewers(s)) ok(await v.client.post(`/messages/${s.ids.firstGeneral}/reactions`, { emoji_name: 'smile' }));
      ok(await s.member.client.delete(`/messages/${s.ids.firstGeneral}/reactions`, { emoji_name: 'smile' }));
    },
  },
  {
    name: 'messages deleted: the newest, a direct message, an unread one',
    async run(s) {
      const last = await sendToChannel(s.owner, s.ids.general, 'doomed', 'Soon gone');
      ok(await s.owner.client.delete(`/messages/${last}`));
      ok(await s.owner.client.delete(`/messages/${s.ids.dmMember}`));
      ok(await s.owner.client.delete(`/messages/${s.ids.emptyTopic}`));
    },
  },
  {
    name: "a channel's first message deleted",
    run: async (s) => void ok(await s.owner.client.delete(`/messages/${s.ids.firstGeneral}`)),
  },
  {
    name: 'scheduled messages created, edited and deleted',
    async run(s) {
      for (const v of viewers(s)) {
        const keep = ok(
          await v.client.post('/scheduled_messages', {
            type: 'stream',
            to: s.ids.general,
            topic: 'later',
            content: 'Tomorrow',
            scheduled_delivery_timestamp: inSeconds(3600),
          }),
        ).scheduled_message_id;
        const drop = ok(
          await v.client.post('/scheduled_messages', {
            type: 'direct',
            to: [s.owner.id],
            content: 'Later, owner',
            scheduled_delivery_timestamp: inSeconds(7200),
          }),
        ).scheduled_message_id;
        ok(await v.client.patch(`/scheduled_messages/${keep}`, { content: 'Tomorrow, **edited**', scheduled_delivery_timestamp: inSeconds(10_800) }));
        ok(await v.client.patch(`/scheduled_messages/${drop}`, { type: 'stream', to: s.ids.general, topic: 'converted' }));
        ok(await v.client.delete(`/scheduled_messages/${drop}`));
      }
    },
  },
  {
    name: 'reminders created and deleted',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post('/reminders', { message_id: s.ids.mention, scheduled_delivery_timestamp: inSeconds(3600), note: 'Look again' }));
        const drop = ok(await v.client.post('/reminders', { message_id: s.ids.groupDm, scheduled_delivery_timestamp: inSeconds(1800) })).reminder_id;
        ok(await v.client.delete(`/reminders/${drop}`));
      }
    },
  },
  {
    name: 'scheduled messages and a reminder delivered',
    async run(s) {
      // The next whole second at least 1 s away (timestamps are in seconds; a due time must be ahead
      // when each request arrives).
      const due = Math.ceil((Date.now() + 1000) / 1000);
      const replies = await Promise.all([
        s.member.client.post('/scheduled_messages', {
          type: 'stream',
          to: s.ids.general,
          topic: 'on time',
          content: 'Scheduled',
          scheduled_delivery_timestamp: due,
        }),
        s.admin.client.post('/scheduled_messages', {
          type: 'direct',
          to: [s.member.id],
          content: 'Scheduled for you',
          scheduled_delivery_timestamp: due,
          read_by_sender: false,
        }),
        s.member.client.post('/reminders', { message_id: s.ids.mention, scheduled_delivery_timestamp: due, note: 'Now' }),
        // One that may no longer be sent when it falls due: it stays, failed.
        s.member.client.post('/scheduled_messages', { type: 'stream', to: s.ids.general, topic: '', content: 'No topic', scheduled_delivery_timestamp: due }),
      ]);
      replies.forEach(ok);
      ok(await s.owner.client.patch(`/streams/${s.ids.general}`, { topics_policy: 'disable_empty_topic' }));
      const pending = async (v: TestUser) =>
        [...ok(await v.client.get('/scheduled_messages')).scheduled_messages, ...ok(await v.client.get('/reminders')).reminders].some(
          (m: { scheduled_delivery_timestamp: number; failed?: boolean }) => m.scheduled_delivery_timestamp === due && !m.failed,
        );
      await until('the deliveries', async () => !(await pending(s.member)) && !(await pending(s.admin)));
    },
  },
  {
    name: 'a message reported to the moderation channel',
    async run(s) {
      ok(await s.owner.client.patch('/realm', { moderation_request_channel_id: s.ids.reports }));
      ok(await s.member.client.post(`/messages/${s.ids.mention}/report`, { report_type: 'spam', description: 'Too *cheerful*' }));
    },
  },
  {
    name: 'a topic deleted',
    async run(s) {
      await sendToChannel(s.owner, s.ids.general, 'trash', 'First to go');
      const starred = await sendToChannel(s.other, s.ids.general, 'trash', 'Second to go');
      for (const v of viewers(s)) ok(await v.client.post('/messages/flags', { messages: [starred], op: 'add', flag: 'starred' }));
      ok(await s.owner.client.post(`/streams/${s.ids.general}/delete_topic`, { topic_name: 'trash' }));
    },
  },
  { name: 'everything marked as read', run: async (s) => void ok(await s.member.client.post('/mark_all_as_read')) },

  // Channels and subscriptions
  {
    name: 'a channel created with subscribers',
    async run(s) {
      ok(
        await s.owner.client.post('/users/me/subscriptions', {
          subscriptions: [{ name: 'news', description: 'The **news**' }],
          principals: [s.owner.id, s.admin.id, s.member.id],
        }),
      );
      s.ids.news = ok(await s.owner.client.get('/get_stream_id', { stream: 'news' })).stream_id;
    },
  },
  {
    name: 'a public channel created without the viewers',
    async run(s) {
      ok(await s.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'elsewhere' }], principals: [s.owner.id] }));
      s.ids.elsewhere = ok(await s.owner.client.get('/get_stream_id', { stream: 'elsewhere' })).stream_id;
    },
  },
  {
    name: 'a member joins a channel',
    run: async (s) => void ok(await s.member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'lounge' }] })),
  },
  { name: 'a member leaves a channel', run: async (s) => void ok(await s.member.client.delete('/users/me/subscriptions', { subscriptions: ['lounge'] })) },
  {
    name: 'someone else subscribed and unsubscribed',
    async run(s) {
      ok(await s.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'news' }], principals: [s.other.id] }));
      ok(await s.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [s.other.id] }));
      ok(await s.owner.client.delete('/users/me/subscriptions', { subscriptions: ['general'], principals: [s.other.id] }));
    },
  },
  {
    name: 'subscription settings',
    async run(s) {
      for (const v of viewers(s)) {
        ok(
          await v.client.post('/users/me/subscriptions/properties', {
            subscription_data: [
              { stream_id: s.ids.news, property: 'color', value: '#abcdef' },
              { stream_id: s.ids.news, property: 'pin_to_top', value: true },
              { stream_id: s.ids.news, property: 'desktop_notifications', value: false },
              { stream_id: s.ids.news, property: 'is_muted', value: true },
              { stream_id: s.ids.general, property: 'in_home_view', value: false },
            ],
          }),
        );
      }
    },
  },
  { name: 'a message in a muted channel', run: async (s) => void (s.ids.inMuted = await sendToChannel(s.owner, s.ids.news, 'quiet news', 'Muted, unread')) },
  {
    name: 'channel name and description',
    async run(s) {
      ok(await s.owner.client.patch(`/streams/${s.ids.news}`, { new_name: 'headlines', description: 'Only *headlines*' }));
    },
  },
  {
    name: 'channel permissions and retention',
    async run(s) {
      ok(await s.owner.client.patch(`/streams/${s.ids.news}`, { can_send_message_group: { new: await systemGroupId(s, 'role:administrators') } }));
      ok(await s.owner.client.patch(`/streams/${s.ids.news}`, { message_retention_days: 30, topics_policy: 'disable_empty_topic' }));
    },
  },
  {
    name: 'a channel made private, then public again',
    async run(s) {
      ok(await s.owner.client.patch(`/streams/${s.ids.elsewhere}`, { is_private: true }));
      ok(await s.owner.client.patch(`/streams/${s.ids.elsewhere}`, { is_private: false }));
    },
  },
  {
    name: "a private channel's history opened to its subscribers",
    run: async (s) => void ok(await s.owner.client.patch(`/streams/${s.ids.secret}`, { history_public_to_subscribers: true })),
  },
  { name: 'a channel archived', run: async (s) => void ok(await s.owner.client.delete(`/streams/${s.ids.quiet}`)) },
  {
    name: 'channel folders',
    async run(s) {
      const o = s.owner.client;
      const first = ok(await o.post('/channel_folders/create', { name: 'Work', description: 'For **work**' })).channel_folder_id;
      const second = ok(await o.post('/channel_folders/create', { name: 'Play', description: '' })).channel_folder_id;
      ok(await o.patch(`/channel_folders/${first}`, { name: 'Serious work', description: 'Changed' }));
      ok(await o.patch('/channel_folders', { order: [second, first] }));
      ok(await o.patch(`/streams/${s.ids.general}`, { folder_id: first }));
      ok(await o.patch(`/channel_folders/${second}`, { is_archived: true }));
    },
  },
  {
    name: 'a default channel created through /channels/create',
    async run(s) {
      s.ids.created = ok(
        await s.owner.client.post('/channels/create', {
          name: 'created',
          description: 'Made *here*',
          subscribers: [s.owner.id, s.member.id],
          is_default_stream: true,
        }),
      ).id;
    },
  },
  {
    name: 'default channels added and removed',
    async run(s) {
      ok(await s.owner.client.post('/default_streams', { stream_id: s.ids.general }));
      ok(await s.owner.client.post('/default_streams', { stream_id: s.ids.news }));
      ok(await s.owner.client.delete('/default_streams', { stream_id: s.ids.general }));
      ok(await s.owner.client.patch(`/streams/${s.ids.lounge}`, { is_default_stream: true }));
      ok(await s.owner.client.patch(`/streams/${s.ids.lounge}`, { is_default_stream: false }));
    },
  },
  {
    name: 'default channel groups created, changed and removed',
    async run(s) {
      const o = s.owner.client;
      ok(await o.post('/default_stream_groups/create', { group_name: 'starter', description: 'For starters', stream_names: ['general', 'elsewhere'] }));
      ok(await o.post('/default_stream_groups/create', { group_name: 'extra', description: '', stream_names: ['lounge'] }));
      const ids = await defaultGroupIds(s);
      ok(await o.patch(`/default_stream_groups/${ids.starter}`, { new_group_name: 'beginners', new_description: 'For beginners' }));
      ok(await o.patch(`/default_stream_groups/${ids.starter}/streams`, { op: 'add', stream_names: ['lounge'] }));
      ok(await o.patch(`/default_stream_groups/${ids.starter}/streams`, { op: 'remove', stream_names: ['general'] }));
      ok(await o.delete(`/default_stream_groups/${ids.extra}`));
    },
  },
  {
    name: 'subscription settings through the one-channel route',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.patch(`/users/me/subscriptions/${s.ids.general}`, { property: 'pin_to_top', value: true }));
        ok(await v.client.patch(`/users/me/subscriptions/${s.ids.general}`, { property: 'color', value: '#123456' }));
        ok(await v.client.patch(`/users/me/subscriptions/${s.ids.general}`, { property: 'push_notifications', value: false }));
        ok(await v.client.patch(`/users/me/subscriptions/${s.ids.general}`, { property: 'is_muted', value: true }));
        ok(await v.client.patch(`/users/me/subscriptions/${s.ids.news}`, { property: 'in_home_view', value: true }));
      }
    },
  },
  {
    name: 'channels joined and left in one request',
    run: async (s) => void ok(await s.member.client.patch('/users/me/subscriptions', { add: [{ name: 'lounge' }, { name: 'fresh' }], delete: ['headlines'] })),
  },
  {
    name: 'topics muted, followed and unmuted',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post('/user_topics', { stream_id: s.ids.general, topic: 'salutations', visibility_policy: 1 }));
        ok(await v.client.post('/user_topics', { stream_id: s.ids.general, topic: 'welcome', visibility_policy: 3 }));
        ok(await v.client.post('/user_topics', { stream_id: s.ids.news, topic: 'quiet news', visibility_policy: 2 }));
        ok(await v.client.post('/user_topics', { stream_id: s.ids.general, topic: 'welcome', visibility_policy: 0 }));
        ok(await v.client.post('/user_topics', { stream_id: s.ids.created, topic: 'to be archived', visibility_policy: 1 }));
        ok(await v.client.post('/user_topics', { stream_id: s.ids.general, topic: '', visibility_policy: 3 }));
      }
      ok(await s.member.client.patch('/users/me/subscriptions/muted_topics', { stream_id: s.ids.general, topic: 'greetings', op: 'add' }));
      ok(await s.member.client.patch('/users/me/subscriptions/muted_topics', { stream: 'general', topic: 'salutations', op: 'remove' }));
    },
  },
  {
    name: 'a topic with personal settings renamed',
    run: async (s) => void ok(await s.owner.client.patch(`/messages/${s.ids.mention}`, { topic: 'regards', propagate_mode: 'change_all' })),
  },
  {
    name: 'a topic with personal settings moved to another channel',
    run: async (s) => void ok(await s.owner.client.patch(`/messages/${s.ids.mention}`, { stream_id: s.ids.lounge, propagate_mode: 'change_all' })),
  },
  {
    name: 'a followed topic moved to a private channel the member cannot read',
    async run(s) {
      const id = await sendToChannel(s.owner, s.ids.general, 'confidential', 'Soon private');
      for (const v of viewers(s)) ok(await v.client.post('/user_topics', { stream_id: s.ids.general, topic: 'confidential', visibility_policy: 3 }));
      ok(await s.owner.client.patch(`/messages/${id}`, { stream_id: s.ids.secret, propagate_mode: 'change_all' }));
    },
  },
  {
    name: 'channels archived: a default one with a muted topic, one in a default group, the moderation channel',
    async run(s) {
      // Unread, in a topic nobody muted: register counts unread messages with the topic settings of
      // archived channels too (Zulip's build_get_topic_visibility_policy) yet leaves those settings
      // out of user_topics, so a count depending on them could not be rebuilt by any client.
      await sendToChannel(s.owner, s.ids.created, 'still unread', 'Unread when archived');
      ok(await s.owner.client.delete(`/streams/${s.ids.created}`));
      ok(await s.owner.client.delete(`/streams/${s.ids.elsewhere}`));
      ok(await s.owner.client.delete(`/streams/${s.ids.reports}`));
    },
  },

  // People
  {
    name: 'a user created',
    async run(s) {
      s.ids.newcomer = ok(
        await s.owner.client.post('/users', { email: `newcomer@${s.realm.subdomain}.test`, password: 'newcomer-password', full_name: 'Nina Newcomer' }),
      ).user_id;
    },
  },
  {
    name: "a user's name changed by an administrator",
    run: async (s) => void ok(await s.owner.client.patch(`/users/${s.other.id}`, { full_name: 'Otto Renamed' })),
  },
  { name: "a user's role changed", run: async (s) => void ok(await s.owner.client.patch(`/users/${s.other.id}`, { role: 300 })) },
  {
    name: 'a user deactivated and reactivated',
    async run(s) {
      ok(await s.owner.client.delete(`/users/${s.ids.newcomer}`));
      ok(await s.owner.client.delete(`/users/${s.other.id}`));
      ok(await s.owner.client.post(`/users/${s.other.id}/reactivate`));
    },
  },
  { name: "the member's own role changed", run: async (s) => void ok(await s.owner.client.patch(`/users/${s.member.id}`, { role: 300 })) },
  { name: "the member's role changed back", run: async (s) => void ok(await s.owner.client.patch(`/users/${s.member.id}`, { role: 400 })) },
  { name: "the administrator's own role lowered", run: async (s) => void ok(await s.owner.client.patch(`/users/${s.admin.id}`, { role: 400 })) },
  { name: "the administrator's role restored", run: async (s) => void ok(await s.owner.client.patch(`/users/${s.admin.id}`, { role: 200 })) },
  {
    name: 'personal settings',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.patch('/settings', { full_name: `Renamed ${v.id}`, emojiset: 'text', left_side_userlist: true, timezone: 'Europe/Paris' }));
        ok(
          await v.client.patch('/settings', {
            enable_stream_desktop_notifications: true,
            enable_stream_push_notifications: true,
            wildcard_mentions_notify: false,
          }),
        );
      }
    },
  },
  {
    name: 'email address visibility',
    async run(s) {
      ok(await s.member.client.patch('/settings', { email_address_visibility: 5 }));
      ok(await s.other.client.patch('/settings', { email_address_visibility: 3 }));
      ok(await s.other.client.patch('/settings', { email_address_visibility: 1 }));
    },
  },
  {
    name: 'user statuses',
    async run(s) {
      ok(await s.member.client.post('/users/me/status', { status_text: 'On holiday', emoji_name: 'palm_tree', away: true }));
      ok(await s.other.client.post('/users/me/status', { status_text: 'Busy' }));
      ok(await s.other.client.post('/users/me/status', { status_text: '', away: false }));
    },
  },
  { name: 'presence', run: async (s) => void ok(await s.other.client.post('/users/me/presence', { status: 'active' })) },
  {
    name: 'custom profile fields created, changed and reordered',
    async run(s) {
      const o = s.owner.client;
      s.ids.phone = ok(await o.post('/realm/profile_fields', { name: 'Phone', hint: 'A number', field_type: 1 })).id;
      s.ids.team = ok(
        await o.post('/realm/profile_fields', {
          name: 'Team',
          field_type: 3,
          field_data: { red: { text: 'Red', order: '1' }, blue: { text: 'Blue', order: '2' } },
          display_in_profile_summary: true,
        }),
      ).id;
      s.ids.mentor = ok(await o.post('/realm/profile_fields', { name: 'Mentor', field_type: 6 })).id;
      const github = ok(await o.post('/realm/profile_fields', { field_type: 7, field_data: { subtype: 'github' } })).id;
      ok(await o.patch(`/realm/profile_fields/${s.ids.phone}`, { name: 'Telephone', hint: 'With the country code', required: true }));
      ok(await o.patch('/realm/profile_fields', { order: [s.ids.mentor, github, s.ids.phone, s.ids.team] }));
    },
  },
  {
    name: 'profile data set and removed, by the users and by an administrator',
    async run(s) {
      for (const v of viewers(s)) {
        ok(
          await v.client.patch('/users/me/profile_data', {
            data: [
              { id: s.ids.phone, value: `+33 ${v.id}` },
              { id: s.ids.mentor, value: [s.other.id] },
              { id: s.ids.team, value: 'red' },
            ],
          }),
        );
      }
      ok(await s.member.client.delete('/users/me/profile_data', { data: [s.ids.phone] }));
      ok(
        await s.owner.client.patch(`/users/${s.other.id}`, {
          profile_data: [
            { id: s.ids.phone, value: '**555**' },
            { id: s.ids.team, value: 'blue' },
          ],
        }),
      );
      ok(await s.owner.client.patch(`/users/${s.admin.id}`, { profile_data: [{ id: s.ids.mentor, value: null }] }));
    },
  },
  {
    name: "a select field's chosen option removed",
    run: async (s) => void ok(await s.owner.client.patch(`/realm/profile_fields/${s.ids.team}`, { field_data: { red: { text: 'Red', order: '1' } } })),
  },
  {
    name: 'a custom profile field with values deleted',
    run: async (s) => void ok(await s.owner.client.delete(`/realm/profile_fields/${s.ids.team}`)),
  },
  {
    name: 'avatars uploaded and deleted',
    async run(s) {
      const upload = async (u: TestUser) =>
        ok(await u.client.postMultipart('/users/me/avatar', {}, [{ field: 'file', filename: 'me.png', contentType: 'image/png', data: await avatarPng() }]));
      await upload(s.member);
      await upload(s.other);
      await upload(s.admin);
      ok(await s.admin.client.delete('/users/me/avatar'));
      ok(await s.member.client.delete('/users/me/avatar'));
    },
  },
  {
    name: 'users muted and unmuted',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post(`/users/me/muted_users/${s.other.id}`));
        ok(await v.client.post(`/users/me/muted_users/${s.owner.id}`));
        ok(await v.client.delete(`/users/me/muted_users/${s.owner.id}`));
      }
    },
  },
  {
    name: 'alert words added and removed',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post('/users/me/alert_words', { alert_words: ['coffee', 'Tea', 'cake'] }));
        ok(await v.client.delete('/users/me/alert_words', { alert_words: ['tea'] }));
      }
    },
  },
  { name: 'a user deactivates their own account', run: async (s) => void ok(await s.people.quitter!.client.delete('/users/me')) },

  // Groups
  {
    name: 'a user group created and changed',
    async run(s) {
      const o = s.owner.client;
      s.ids.crew = ok(await o.post('/user_groups/create', { name: 'crew', description: 'The crew', members: [s.admin.id] })).group_id;
      s.ids.deck = ok(await o.post('/user_groups/create', { name: 'deck', description: 'On deck', members: [s.other.id] })).group_id;
      ok(await o.patch(`/user_groups/${s.ids.crew}`, { name: 'the crew', description: 'Renamed' }));
      ok(await o.post(`/user_groups/${s.ids.crew}/members`, { add: [s.member.id, s.other.id], delete: [s.admin.id] }));
      ok(await o.post(`/user_groups/${s.ids.crew}/subgroups`, { add: [s.ids.deck] }));
      ok(await o.post(`/user_groups/${s.ids.crew}/subgroups`, { delete: [s.ids.deck] }));
      ok(await o.patch(`/user_groups/${s.ids.crew}`, { can_mention_group: { new: { direct_members: [s.member.id], direct_subgroups: [] } } }));
    },
  },
  {
    name: 'a user group deactivated, renamed, reactivated',
    async run(s) {
      ok(await s.owner.client.post(`/user_groups/${s.ids.deck}/deactivate`));
      ok(await s.owner.client.patch(`/user_groups/${s.ids.deck}`, { name: 'old deck' }));
      ok(await s.owner.client.patch(`/user_groups/${s.ids.deck}`, { deactivated: false }));
    },
  },

  // Organization
  {
    name: 'organization settings',
    async run(s) {
      ok(await s.owner.client.patch('/realm', { name: 'Renamed realm', description: 'New *description*', message_content_edit_limit_seconds: 3600 }));
      ok(await s.owner.client.patch('/realm', { allow_edit_history: false, jitsi_server_url: 'https://jitsi.example.com', waiting_period_threshold: 3 }));
    },
  },
  {
    name: 'organization permissions',
    async run(s) {
      const admins = await systemGroupId(s, 'role:administrators');
      ok(
        await s.owner.client.patch('/realm', {
          can_create_public_channel_group: { new: admins },
          can_invite_users_group: { new: { direct_members: [s.member.id], direct_subgroups: [admins] } },
          can_mention_many_users_group: { new: admins },
        }),
      );
    },
  },
  {
    name: 'custom emoji added and deactivated',
    async run(s) {
      ok(await s.owner.client.postMultipart('/realm/emoji/party_parrot', {}, [{ field: 'f1', filename: 'parrot.png', contentType: 'image/png', data: PNG }]));
      ok(await s.owner.client.postMultipart('/realm/emoji/dancing', {}, [{ field: 'f1', filename: 'dancing.png', contentType: 'image/png', data: PNG }]));
      ok(await s.owner.client.delete('/realm/emoji/dancing'));
    },
  },
  {
    name: 'linkifiers added, changed, reordered, removed',
    async run(s) {
      const o = s.owner.client;
      const first = ok(await o.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' })).id;
      const second = ok(await o.post('/realm/filters', { pattern: 'PR(?P<id>[0-9]+)', url_template: 'https://git.example.com/pr/{id}' })).id;
      ok(await o.patch(`/realm/filters/${first}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://issues.example.com/{id}' }));
      ok(await o.patch('/realm/linkifiers', { ordered_linkifier_ids: [second, first] }));
      ok(await o.delete(`/realm/filters/${second}`));
    },
  },
  {
    name: 'organization domains',
    async run(s) {
      ok(await s.owner.client.post('/realm/domains', { domain: 'example.org', allow_subdomains: false }));
      ok(await s.owner.client.post('/realm/domains', { domain: 'example.net', allow_subdomains: false }));
      ok(await s.owner.client.patch('/realm/domains/example.org', { allow_subdomains: true }));
      ok(await s.owner.client.delete('/realm/domains/example.net'));
    },
  },
  {
    name: 'default settings for new users',
    async run(s) {
      ok(await s.owner.client.patch('/realm/user_settings_defaults', { emojiset: 'text', left_side_userlist: true, enter_sends: true }));
      ok(await s.owner.client.patch('/realm/user_settings_defaults', { web_home_view: 'inbox', email_address_visibility: 5 }));
    },
  },
  {
    name: 'code playgrounds added and removed',
    async run(s) {
      const o = s.owner.client;
      ok(await o.post('/realm/playgrounds', { name: 'Python here', pygments_language: 'Python', url_template: 'https://python.example.com/?code={code}' }));
      const drop = ok(
        await o.post('/realm/playgrounds', { name: 'Rust here', pygments_language: 'Rust', url_template: 'https://rust.example.com/?code={code}' }),
      ).id;
      ok(await o.delete(`/realm/playgrounds/${drop}`));
    },
  },
  {
    name: 'consent to data exports, and an export to its end',
    async run(s) {
      ok(await s.member.client.patch('/settings', { allow_private_data_export: true }));
      const id = ok(await s.owner.client.post('/export/realm')).id;
      const done = async () =>
        (ok(await s.owner.client.get('/export/realm')).exports as { id: number; pending: boolean }[]).some((e) => e.id === id && !e.pending);
      await until('the export', done, 20);
    },
  },

  // Personal data
  {
    name: 'drafts',
    async run(s) {
      for (const v of viewers(s)) {
        const [keep, drop] = ok(
          await v.client.post('/drafts', {
            drafts: [
              { type: 'stream', to: [s.ids.general], topic: 'later', content: 'A draft', timestamp: 1_700_000_000 },
              { type: 'private', to: [s.owner.id], topic: '', content: 'Another', timestamp: 1_700_000_100 },
            ],
          }),
        ).ids;
        ok(
          await v.client.patch(`/drafts/${keep}`, {
            draft: { type: 'stream', to: [s.ids.general], topic: 'later', content: 'Edited draft', timestamp: 1_700_000_200 },
          }),
        );
        ok(await v.client.delete(`/drafts/${drop}`));
      }
    },
  },
  {
    name: 'saved snippets',
    async run(s) {
      for (const v of viewers(s)) {
        const keep = ok(await v.client.post('/saved_snippets', { title: 'Hi', content: 'Hello there' })).saved_snippet_id;
        const drop = ok(await v.client.post('/saved_snippets', { title: 'Bye', content: 'Goodbye' })).saved_snippet_id;
        ok(await v.client.patch(`/saved_snippets/${keep}`, { title: 'Hello', content: 'Hello, edited' }));
        ok(await v.client.delete(`/saved_snippets/${drop}`));
      }
    },
  },
  {
    name: 'navigation views',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post('/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alerts' }));
        ok(await v.client.post('/navigation_views', { fragment: 'inbox', is_pinned: false }));
        ok(await v.client.patch(`/navigation_views/${encodeURIComponent('narrow/is/alerted')}`, { is_pinned: false, name: 'My alerts' }));
        ok(await v.client.patch('/navigation_views/inbox', { is_pinned: true }));
        ok(await v.client.delete(`/navigation_views/${encodeURIComponent('narrow/is/alerted')}`));
      }
    },
  },
  {
    name: 'client devices registered and removed',
    async run(s) {
      for (const v of viewers(s)) {
        ok(await v.client.post('/register_client_device'));
        const dropped = ok(await v.client.post('/register_client_device')).device_id;
        ok(await v.client.post('/remove_client_device', { device_id: dropped }));
      }
    },
  },
  {
    name: 'a file uploaded and its attachment deleted',
    async run(s) {
      for (const v of viewers(s)) {
        const upload = ok(
          await v.client.postMultipart('/user_uploads', {}, [{ field: 'file', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('notes') }]),
        );
        const attachments = ok(await v.client.get('/attachments')).attachments as { id: number; path_id: string }[];
        const mine = attachments.find((a) => upload.url.endsWith(a.path_id))!;
        ok(await v.client.delete(`/attachments/${mine.id}`));
      }
    },
  },
  {
    name: "a bot's API key regenerated, and the bot's storage",
    async run(s) {
      ok(await s.member.client.post(`/bots/${s.bot.id}/api_key/regenerate`));
      ok(await s.owner.client.post(`/bots/${s.bot.id}/api_key/regenerate`));
      // The new key, and the storage that is in no register state.
      const bot = s.bot.client.withCredentials(s.bot.email, ok(await s.owner.client.post(`/bots/${s.bot.id}/api_key/regenerate`)).api_key);
      ok(await bot.request('PUT', '/api/v1/bot_storage', { body: new URLSearchParams({ storage: JSON.stringify({ mood: 'happy' }) }).toString() }));
    },
  },
  {
    name: 'a bot made through the API: renamed, its service changed, given away and back, deactivated and reactivated',
    async run(s) {
      const { user_id: id } = ok(
        await s.member.client.post('/bots', {
          full_name: 'Hook Bot',
          short_name: 'hook',
          bot_type: 3,
          payload_url: JSON.stringify('https://hooks.example.com/a'),
        }),
      );
      ok(
        await s.member.client.patch(`/bots/${id}`, {
          full_name: 'Hook Bot Two',
          service_payload_url: JSON.stringify('https://hooks.example.com/b'),
          service_interface: 2,
        }),
      );
      ok(await s.member.client.patch(`/bots/${id}`, { default_all_public_streams: 'true' }));
      ok(await s.member.client.patch(`/bots/${id}`, { bot_owner_id: s.other.id }));
      ok(await s.owner.client.patch(`/bots/${id}`, { bot_owner_id: s.member.id }));
      ok(await s.member.client.delete(`/bots/${id}`));
      ok(await s.owner.client.post(`/users/${id}/reactivate`));
    },
  },
];

/** The default channel groups by name (Zulip has no GET for them: a register tells). */
async function defaultGroupIds(s: Scene): Promise<Record<string, number>> {
  const state = ok(await s.owner.client.post('/register', { fetch_event_types: ['default_stream_groups'], event_types: ['default_stream_groups'] }));
  ok(await s.owner.client.delete('/events', { queue_id: state.queue_id }));
  return Object.fromEntries(state.realm_default_stream_groups.map((g: { id: number; name: string }) => [g.name, g.id]));
}

async function systemGroupId(s: Scene, name: string): Promise<number> {
  const groups = ok(await s.owner.client.get('/user_groups')).user_groups as { id: number; name: string }[];
  return groups.find((g) => g.name === name)!.id;
}
