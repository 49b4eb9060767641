// The scripted sequence of the events-rebuild test (test/events-rebuild.test.ts): every kind of
// change the server makes, one named step each. After each step, every watching queue's state
// rebuilt from its events must equal a fresh register. A new feature adds its steps to STEPS (and,
// for a new event type, its rule to test/helpers/apply-events.ts).
import * as assert from 'uvu/assert';
import type { Reply } from './helpers/client.ts';
import type { TestRealm, TestUser } from './helpers/server.ts';

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
  s.ids.firstGeneral = await sendToChannel(s.owner, s.ids.general, 'welcome', 'Hello everyone');
  await sendToChannel(s.other, s.ids.lounge, 'chatter', 'Nobody watching here');
  await sendDirect(s.member, [s.owner.id], 'Hi owner');
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
  { name: 'everything marked as read', run: async (s) => void ok(await s.member.client.post('/mark_all_as_read')) },

  // Channels and subscriptions
  {
    name: 'a channel created with subscribers',
    async run(s) {
      ok(await s.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'news', description: 'The **news**' }], principals: [s.owner.id, s.admin.id, s.member.id] }));
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
  { name: 'a member joins a channel', run: async (s) => void ok(await s.member.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'lounge' }] })) },
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
        ok(await v.client.post('/users/me/subscriptions/properties', {
          subscription_data: [
            { stream_id: s.ids.news, property: 'color', value: '#abcdef' },
            { stream_id: s.ids.news, property: 'pin_to_top', value: true },
            { stream_id: s.ids.news, property: 'desktop_notifications', value: false },
            { stream_id: s.ids.news, property: 'is_muted', value: true },
            { stream_id: s.ids.general, property: 'in_home_view', value: false },
          ],
        }));
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

  // People
  {
    name: 'a user created',
    async run(s) {
      s.ids.newcomer = ok(await s.owner.client.post('/users', { email: `newcomer@${s.realm.subdomain}.test`, password: 'newcomer-password', full_name: 'Nina Newcomer' })).user_id;
    },
  },
  { name: "a user's name changed by an administrator", run: async (s) => void ok(await s.owner.client.patch(`/users/${s.other.id}`, { full_name: 'Otto Renamed' })) },
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
        ok(await v.client.patch('/settings', { enable_stream_desktop_notifications: true, enable_stream_push_notifications: true, wildcard_mentions_notify: false }));
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
      ok(await s.owner.client.patch('/realm', {
        can_create_public_channel_group: { new: admins },
        can_invite_users_group: { new: { direct_members: [s.member.id], direct_subgroups: [admins] } },
        can_mention_many_users_group: { new: admins },
      }));
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

  // Personal data
  {
    name: 'drafts',
    async run(s) {
      for (const v of viewers(s)) {
        const [keep, drop] = ok(await v.client.post('/drafts', {
          drafts: [
            { type: 'stream', to: [s.ids.general], topic: 'later', content: 'A draft', timestamp: 1_700_000_000 },
            { type: 'private', to: [s.owner.id], topic: '', content: 'Another', timestamp: 1_700_000_100 },
          ],
        })).ids;
        ok(await v.client.patch(`/drafts/${keep}`, { draft: { type: 'stream', to: [s.ids.general], topic: 'later', content: 'Edited draft', timestamp: 1_700_000_200 } }));
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
        const upload = ok(await v.client.postMultipart('/user_uploads', {}, [{ field: 'file', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('notes') }]));
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
];

async function systemGroupId(s: Scene, name: string): Promise<number> {
  const groups = ok(await s.owner.client.get('/user_groups')).user_groups as { id: number; name: string }[];
  return groups.find((g) => g.name === name)!.id;
}
