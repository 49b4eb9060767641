// What an organization's export holds, table by table, in the order an import inserts them: every
// foreign key points to a table earlier in the list, and the tables of realm.json come before those
// of the messages files, which come before attachment.json's. Rows keep their ids, so an import
// into an empty database needs no remapping. A table that is neither here nor in
// NOT_EXPORTED_TABLES fails test/organization/export.test.ts: a new model must say where its rows go.

/** Zulip's layout: realm.json, messages-000001.json..., attachment.json. */
export type ExportFile = 'realm' | 'messages' | 'attachment';

export interface ExportedTable {
  table: string;
  file: ExportFile;
  /**
   * Which rows of table `t` belong to the export, over `p`: p.realm (the organization's id),
   * p.messages (the ids of the exported messages: in a messages file, those of its chunk),
   * p.private_users (users whose private data may leave: the consenting ones, none in a public
   * export), p.message_users (users whose message flags leave) and p.direct_groups (the direct
   * message conversations of the exported messages).
   */
  rows: string;
  /** Primary-key columns, for a stable order. */
  key: string;
}

const ofRealm = 't."realmId" = p.realm';
const ofRealmUsers = 't."userId" IN (SELECT id FROM "User" WHERE "realmId" = p.realm)';
const ofPrivateUsers = 't."userId" = ANY(p.private_users)';

export const EXPORTED_TABLES: readonly ExportedTable[] = [
  { table: 'Realm', file: 'realm', rows: 't.id = p.realm', key: 'id' },
  { table: 'User', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'UserGroup', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'UserGroupMember', file: 'realm', rows: 't."groupId" IN (SELECT id FROM "UserGroup" WHERE "realmId" = p.realm)', key: '"groupId", "userId"' },
  {
    table: 'UserGroupSubgroup',
    file: 'realm',
    rows: 't."supergroupId" IN (SELECT id FROM "UserGroup" WHERE "realmId" = p.realm)',
    key: '"supergroupId", "subgroupId"',
  },
  { table: 'CustomProfileField', file: 'realm', rows: ofRealm, key: 'id' },
  {
    table: 'CustomProfileFieldValue',
    file: 'realm',
    rows: 't."fieldId" IN (SELECT id FROM "CustomProfileField" WHERE "realmId" = p.realm)',
    key: '"fieldId", "userId"',
  },
  { table: 'ChannelFolder', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'Channel', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'Subscription', file: 'realm', rows: ofRealmUsers, key: 'id' },
  // Only the conversations whose messages leave: who talks with whom is private too.
  { table: 'DirectMessageGroup', file: 'realm', rows: 't.id = ANY(p.direct_groups)', key: 'id' },
  { table: 'RealmEmoji', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'Linkifier', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'RealmDomain', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'RealmPlayground', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'ChannelEmailAddress', file: 'realm', rows: ofRealm, key: 'id' },
  { table: 'DefaultChannel', file: 'realm', rows: ofRealm, key: '"channelId"' },
  { table: 'DefaultChannelGroup', file: 'realm', rows: ofRealm, key: 'id' },
  {
    table: 'DefaultChannelGroupChannel',
    file: 'realm',
    rows: 't."groupId" IN (SELECT id FROM "DefaultChannelGroup" WHERE "realmId" = p.realm)',
    key: '"groupId", "channelId"',
  },
  { table: 'Presence', file: 'realm', rows: ofRealmUsers, key: '"userId"' },
  { table: 'UserStatus', file: 'realm', rows: ofRealmUsers, key: '"userId"' },
  { table: 'BotStorage', file: 'realm', rows: ofRealmUsers, key: '"userId", key' },
  // Outgoing-webhook bots' URLs and tokens (Zulip's zerver_service).
  { table: 'BotService', file: 'realm', rows: 't."botId" IN (SELECT id FROM "User" WHERE "realmId" = p.realm)', key: 'id' },
  // Personal data, as Zulip's limit_to_consenting_users tables.
  { table: 'Draft', file: 'realm', rows: ofPrivateUsers, key: 'id' },
  { table: 'SavedSnippet', file: 'realm', rows: ofPrivateUsers, key: 'id' },
  { table: 'NavigationView', file: 'realm', rows: ofPrivateUsers, key: 'id' },
  { table: 'UserTopic', file: 'realm', rows: ofPrivateUsers, key: 'id' },
  { table: 'ScheduledMessage', file: 'realm', rows: 't."senderId" = ANY(p.private_users)', key: 'id' },
  { table: 'MutedUser', file: 'realm', rows: ofPrivateUsers, key: '"userId", "mutedUserId"' },
  { table: 'AlertWord', file: 'realm', rows: ofPrivateUsers, key: 'id' },
  { table: 'Message', file: 'messages', rows: 't.id = ANY(p.messages)', key: 'id' },
  { table: 'UserMessage', file: 'messages', rows: 't."messageId" = ANY(p.messages) AND t."userId" = ANY(p.message_users)', key: '"messageId", "userId"' },
  { table: 'Reaction', file: 'messages', rows: 't."messageId" = ANY(p.messages)', key: 'id' },
  // The uploads the exported messages link to (Zulip's fetch_attachment_data), read for one
  // messages file's ids at a time: an upload linked from several files leaves once.
  { table: 'Attachment', file: 'attachment', rows: 't.id IN (SELECT "attachmentId" FROM "AttachmentMessage" WHERE "messageId" = ANY(p.messages))', key: 'id' },
  { table: 'AttachmentMessage', file: 'attachment', rows: 't."messageId" = ANY(p.messages)', key: '"attachmentId", "messageId"' },
];

/**
 * Tables that are no organization's data: migration bookkeeping, queues saved over a restart and
 * the cluster's queue descriptors, exports themselves, and uploaded images' thumbnails, which an
 * import makes again from the images (as Zulip's does); and push state, which belongs to this server: devices hold the secret
 * keys their notifications are sealed with, and their tokens are registered with this server's
 * relay (a restored organization's apps register again), and pending relay work is this server's too,
 * as are outgoing-webhook calls still to be made.
 */
export const NOT_EXPORTED_TABLES: readonly string[] = [
  '_prisma_migrations',
  'SavedEventQueue',
  'SavedQueueEvent',
  'QueueDescriptor',
  'RealmExport',
  'ImageAttachment',
  'Device',
  'PushDeviceToken',
  'PushOutbox',
  'OutgoingWebhookCall',
  // Invitations are links to this server, and their mail log its own: a restored organization invites anew.
  'Invitation',
  'MultiuseInvite',
  'InvitationEmail',
  // The server's shared secrets, and presence counters (an imported organization's starts after its imported presences).
  'ServerSecret',
  'PresenceSequence',
  // Derived from the messages again after an import (src/ops/history-upkeep.ts): traffic counts and backfill bookkeeping.
  'ChannelMessageDay',
  'ChannelTrafficState',
  'HistoryBackfill',
  // Pending notification emails and when digests went out: this server's mail, not the organization's data.
  'MissedMessageEmail',
  'DigestEmail',
  // Browser sessions, one-time login tokens and SAML logins under way or spent are this server's: an imported organization logs in anew.
  'WebSession',
  'LoginToken',
  'SamlLoginRequest',
  'SamlUsedAssertion',
  // Events of a cluster node waiting for NATS to store them (src/cluster/outbox.ts): in flight, not data.
  'EventOutbox',
];

/** Messages per messages file, each read in a transaction of its own (Zulip's MESSAGE_BATCH_CHUNK_SIZE). */
export const MESSAGES_PER_FILE = 1000;

/** Message ids listed per transaction before the files are written (Zulip's get_id_list_gently_from_database). */
export const IDS_PER_BATCH = 10_000;

/** The name of the n-th messages file (from 1). */
export const messagesFileName = (n: number) => `messages-${String(n).padStart(6, '0')}.json`;
