// Writes an organization's data export: its rows (EXPORTED_TABLES), read a bounded piece at a time
// (realm.json's tables, then MESSAGES_PER_FILE messages per file, each in a short read-only
// transaction of its own, so a big organization's export holds no transaction for long), as JSON in
// Zulip's layout, with the files its rows name, packed into a .tar.gz:
//
//   zulip-export-xxxxxxxx/realm.json              {"Realm": [...], "User": [...], ...}
//   zulip-export-xxxxxxxx/messages-000001.json    {"Message": [...], "UserMessage": [...], "Reaction": [...]}
//   zulip-export-xxxxxxxx/attachment.json         {"Attachment": [...], "AttachmentMessage": [...]}
//   zulip-export-xxxxxxxx/uploads/records.json    and each upload at its path id
//   zulip-export-xxxxxxxx/avatars/records.json    and each uploaded avatar's three files
//   zulip-export-xxxxxxxx/emoji/records.json      and each custom emoji image
//   zulip-export-xxxxxxxx/migration_status.json   the schema the rows follow
//   zulip-export-xxxxxxxx/stats.json              rows per table, files per kind
//
// Rows are PostgreSQL's own JSON of them (row_to_json), so an import turns them back into rows of
// the same types. Which messages leave follows Zulip's export types (do_export_realm).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { App } from '../app.ts';
import type { SqlExecutor } from '../db/client.ts';
import { EXPORT_TYPE, type ExportType } from '../domain/realm-export.ts';
import type { Log } from '../log.ts';
import { avatarFilePath, type AvatarVariant } from '../queries/avatars.ts';
import { emojiImagePath } from '../queries/realm-emoji.ts';
import { uploadFilePath } from '../queries/uploads.ts';
import { EXPORTED_TABLES, IDS_PER_BATCH, MESSAGES_PER_FILE, messagesFileName, type ExportFile } from './tables.ts';
import { createTarGz, type TarWriter } from './tar.ts';

interface Scope {
  realm: number;
  messages: number[];
  privateUsers: number[];
  messageUsers: number[];
  directGroups: number[];
}

/** One table's rows in scope, each already JSON. */
async function tableRows(tx: SqlExecutor, table: (typeof EXPORTED_TABLES)[number], scope: Scope): Promise<string[]> {
  const keyOrder = table.key
    .split(',')
    .map((k) => `t.${k.trim()}`)
    .join(', ');
  const rows = await tx.query<{ row: string }>(
    `WITH p AS (SELECT $1::int AS realm, $2::int[] AS messages, $3::int[] AS private_users, $4::int[] AS message_users, $5::int[] AS direct_groups)
     SELECT row_to_json(t)::text AS row FROM "${table.table}" t, p WHERE ${table.rows} ORDER BY ${keyOrder}`,
    [scope.realm, scope.messages, scope.privateUsers, scope.messageUsers, scope.directGroups],
  );
  return rows.map((r) => r.row);
}

/** The rows of one file's tables, table by table, counting them into `stats`. */
async function fileTables(tx: SqlExecutor, file: ExportFile, scope: Scope, stats: Record<string, number>): Promise<Map<string, string[]>> {
  const tables = new Map<string, string[]>();
  for (const table of EXPORTED_TABLES.filter((t) => t.file === file)) {
    const rows = await tableRows(tx, table, scope);
    stats[table.table] = (stats[table.table] ?? 0) + rows.length;
    tables.set(table.table, rows);
  }
  return tables;
}

/** Tables and their rows as one JSON object. */
const jsonOf = (tables: Map<string, string[]>) =>
  Buffer.from(`{${[...tables].map(([table, rows]) => `${JSON.stringify(table)}:[${rows.join(',')}]`).join(',')}}`);

/**
 * Runs fn in a short read-only transaction of its own on a connection of its own: the export
 * reads history one bounded piece at a time, so it never holds a transaction, a snapshot or a
 * connection for the minutes a big organization takes (Zulip's export reads each piece apart too).
 */
function readPiece<T>(app: App, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  return app.db.withSession((session) =>
    session.transaction(async (tx) => {
      // The statements of one piece see the same moment: a file's messages with their own flags.
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return fn(tx);
    }),
  );
}

/** Members whose private data may leave: active humans who allowed it (Zulip's get_consented_user_ids). */
async function consentingUserIds(tx: SqlExecutor, realmId: number): Promise<number[]> {
  const rows = await tx.query<{ id: number }>(
    `SELECT id FROM "User" WHERE "realmId" = $1 AND "isActive" AND NOT "isBot" AND (settings->>'allow_private_data_export')::boolean IS TRUE ORDER BY id`,
    [realmId],
  );
  return rows.map((r) => r.id);
}

/**
 * The ids of the messages that leave, at most `limit` after `after` up to `upto`, with their
 * direct message conversations: those of public channels; with consent also those of channels a
 * consenting member is subscribed to (in channels with protected history, only what such a member
 * received) and direct messages with a consenting member among their participants.
 */
async function exportedMessageIds(
  tx: SqlExecutor,
  realmId: number,
  exportType: ExportType,
  consenting: number[],
  after: number,
  upto: number,
  limit: number,
): Promise<{ id: number; directGroupId: number | null }[]> {
  const publicChannel = 'c.id IS NOT NULL AND NOT c."inviteOnly"';
  const consented =
    exportType === EXPORT_TYPE.PUBLIC
      ? ''
      : `OR (c.id IS NOT NULL AND EXISTS (SELECT 1 FROM "Subscription" s WHERE s."channelId" = c.id AND s."userId" = ANY($5::int[]))
             AND (c."historyPublicToSubscribers" OR EXISTS (SELECT 1 FROM "UserMessage" um WHERE um."messageId" = m.id AND um."userId" = ANY($5::int[]))))
         OR (g.id IS NOT NULL AND string_to_array(g."memberKey", ',')::int[] && $5::int[])`;
  return tx.query<{ id: number; directGroupId: number | null }>(
    `SELECT m.id, m."directGroupId" FROM "Message" m
       LEFT JOIN "Channel" c ON c.id = m."channelId"
       LEFT JOIN "DirectMessageGroup" g ON g.id = m."directGroupId"
      WHERE m."realmId" = $1 AND m.id > $2 AND m.id <= $3 AND (${publicChannel} ${consented})
      ORDER BY m.id LIMIT $4`,
    exportType === EXPORT_TYPE.PUBLIC ? [realmId, after, upto, limit] : [realmId, after, upto, limit, consenting],
  );
}

/**
 * Every exported message's id, in id order, listed IDS_PER_BATCH at a time in transactions of
 * their own (Zulip's get_id_list_gently_from_database). Messages sent once the export started
 * (after `upto`, the newest then) stay out: the export is of the organization as it was asked for.
 */
async function listExportedMessages(
  app: App,
  realmId: number,
  exportType: ExportType,
  consenting: number[],
): Promise<{ messages: number[]; directGroups: number[] }> {
  const [{ upto }] = await app.db.withSession((s) => s.query<{ upto: number | null }>('SELECT max(id) AS upto FROM "Message" WHERE "realmId" = $1', [realmId]));
  const messages: number[] = [];
  const directGroups = new Set<number>();
  if (upto === null) return { messages, directGroups: [] };
  for (;;) {
    const after = messages.at(-1) ?? 0;
    const batch = await readPiece(app, (tx) => exportedMessageIds(tx, realmId, exportType, consenting, after, upto, IDS_PER_BATCH));
    for (const m of batch) {
      messages.push(m.id);
      if (m.directGroupId !== null) directGroups.add(m.directGroupId);
    }
    if (batch.length < IDS_PER_BATCH) break;
  }
  return { messages, directGroups: [...directGroups].sort((a, b) => a - b) };
}

interface FileRecord {
  /** Where the file lies under the uploads directory, and under its folder of the export. */
  path: string;
  [field: string]: unknown;
}

/** Adds the files that exist under `dir/` with their records.json; a file missing on disk is left out, and logged. */
async function addFiles(
  tar: TarWriter,
  top: string,
  dir: string,
  records: FileRecord[],
  source: (r: FileRecord) => string,
  stats: Record<string, number>,
  log: Log,
): Promise<void> {
  const kept: FileRecord[] = [];
  for (const record of records) {
    let data: Buffer;
    try {
      data = await readFile(source(record));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      log.warn('export: file missing on disk', { path: record.path });
      continue;
    }
    await tar.add(`${top}/${dir}/${record.path}`, data);
    kept.push({ ...record, size: data.length });
  }
  await tar.add(`${top}/${dir}/records.json`, Buffer.from(JSON.stringify(kept, null, 2)));
  stats[`${dir} files`] = kept.length;
}

const AVATAR_VARIANTS: AvatarVariant[] = ['original', 'default', 'medium'];

/** Uploads (`uploads`, the exported Attachment rows), avatars and emoji images, each folder with its records; files are read outside any transaction. */
async function addAllFiles(app: App, tar: TarWriter, top: string, realmId: number, uploads: Row[], stats: Record<string, number>, log: Log): Promise<void> {
  const uploadRecords = uploads.map((u) => ({ path: u.pathId as string, realm_id: realmId, user_profile_id: u.ownerId, content_type: u.contentType }));
  await addFiles(tar, top, 'uploads', uploadRecords, (r) => uploadFilePath(app, r.path), stats, log);

  const { avatars, emoji } = await readPiece(app, async (tx) => ({
    avatars: await tx.query<{ id: number; avatarKey: string; avatarVersion: number }>(
      `SELECT id, "avatarKey", "avatarVersion" FROM "User" WHERE "realmId" = $1 AND "avatarSource" = 'U' AND "avatarKey" IS NOT NULL ORDER BY id`,
      [realmId],
    ),
    emoji: await tx.query<{ id: number; fileName: string; authorId: number | null }>(
      `SELECT id, "fileName", "authorId" FROM "RealmEmoji" WHERE "realmId" = $1 ORDER BY id`,
      [realmId],
    ),
  }));
  const avatarRecords = avatars.flatMap((u) =>
    AVATAR_VARIANTS.map((variant) => ({
      path: path
        .relative(app.config.uploadsDir, avatarFilePath(app, realmId, u.avatarKey, variant))
        .split(path.sep)
        .join('/'),
      realm_id: realmId,
      user_profile_id: u.id,
      avatar_version: u.avatarVersion,
    })),
  );
  await addFiles(tar, top, 'avatars', avatarRecords, (r) => uploadFilePath(app, r.path), stats, log);

  const emojiRecords = emoji.map((e) => ({
    path: path
      .relative(app.config.uploadsDir, emojiImagePath(app, realmId, e.fileName))
      .split(path.sep)
      .join('/'),
    realm_id: realmId,
    user_profile_id: e.authorId,
    file_name: e.fileName,
  }));
  await addFiles(tar, top, 'emoji', emojiRecords, (r) => uploadFilePath(app, r.path), stats, log);
}

type Row = Record<string, unknown>;

/**
 * The uploads of the exported messages, gathered file by file: each upload once (the first time a
 * file's messages link to it), with every link of an exported message to it.
 */
class AttachmentsOfExport {
  private readonly attachments = new Map<number, { row: Row; json: string }>();
  private readonly links: { attachmentId: number; messageId: number; json: string }[] = [];

  /** The uploads of one messages file, read in that file's transaction. */
  async read(tx: SqlExecutor, scope: Scope): Promise<void> {
    const tables = await fileTables(tx, 'attachment', scope, {});
    for (const json of tables.get('Attachment') ?? []) {
      const row = JSON.parse(json) as Row;
      if (!this.attachments.has(row.id as number)) this.attachments.set(row.id as number, { row, json });
    }
    for (const json of tables.get('AttachmentMessage') ?? []) {
      const row = JSON.parse(json) as { attachmentId: number; messageId: number };
      this.links.push({ attachmentId: row.attachmentId, messageId: row.messageId, json });
    }
  }

  /** The Attachment rows, in id order. */
  rows(): Row[] {
    return [...this.attachments.keys()].sort((a, b) => a - b).map((id) => this.attachments.get(id)!.row);
  }

  /** attachment.json, in the key order of its tables. */
  json(stats: Record<string, number>): Buffer {
    const attachments = [...this.attachments.keys()].sort((a, b) => a - b).map((id) => this.attachments.get(id)!.json);
    const links = [...this.links].sort((a, b) => a.attachmentId - b.attachmentId || a.messageId - b.messageId).map((l) => l.json);
    stats.Attachment = attachments.length;
    stats.AttachmentMessage = links.length;
    return jsonOf(
      new Map([
        ['Attachment', attachments],
        ['AttachmentMessage', links],
      ]),
    );
  }
}

/** The migrations the exported rows follow, so an import can tell whether it knows their shape. */
export async function appliedMigrations(tx: SqlExecutor): Promise<string[]> {
  const rows = await tx.query<{ migration_name: string }>(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name',
  );
  return rows.map((r) => r.migration_name);
}

/**
 * Writes the export of realm `realmId` to `file` (a .tar.gz whose name, without the extension, is
 * the archive's top folder); returns the tarball's SHA-256 and what it holds. Files missing on
 * disk are told to `log`, the log of the request that asked for the export.
 */
export async function writeRealmExport(
  app: App,
  realmId: number,
  exportType: ExportType,
  file: string,
  log: Log,
): Promise<{ sha256: string; stats: Record<string, number> }> {
  const top = path.basename(file).replace(/\.tar\.gz$/, '');
  const stats: Record<string, number> = {};
  // As Zulip's do_export_realm: the messages that leave are listed first, then written a file at a
  // time, each file read in a short transaction of its own; a message deleted before its file is
  // read is left out, one edited is written as its file's transaction finds it.
  const consenting = exportType === EXPORT_TYPE.FULL_WITH_CONSENT ? await readPiece(app, (tx) => consentingUserIds(tx, realmId)) : [];
  const { messages, directGroups } = await listExportedMessages(app, realmId, exportType, consenting);
  const everyone = (await readPiece(app, (tx) => tx.query<{ id: number }>('SELECT id FROM "User" WHERE "realmId" = $1', [realmId]))).map((r) => r.id);
  const scope: Scope = {
    realm: realmId,
    messages: [],
    privateUsers: consenting,
    messageUsers: exportType === EXPORT_TYPE.PUBLIC ? everyone : consenting,
    directGroups,
  };
  const tar = createTarGz(file);
  try {
    // The organization's own tables: bounded by its members and channels, not by its history.
    await tar.add(`${top}/realm.json`, jsonOf(await readPiece(app, (tx) => fileTables(tx, 'realm', scope, stats))));
    const attachments = new AttachmentsOfExport();
    for (let i = 0; i * MESSAGES_PER_FILE < messages.length; i++) {
      const chunk = { ...scope, messages: messages.slice(i * MESSAGES_PER_FILE, (i + 1) * MESSAGES_PER_FILE) };
      const tables = await readPiece(app, async (tx) => {
        const rows = await fileTables(tx, 'messages', chunk, stats);
        // The uploads of the file's messages as the same transaction finds them.
        await attachments.read(tx, chunk);
        return rows;
      });
      await tar.add(`${top}/${messagesFileName(i + 1)}`, jsonOf(tables));
    }
    await tar.add(`${top}/attachment.json`, attachments.json(stats));
    await addAllFiles(app, tar, top, realmId, attachments.rows(), stats, log);
    const migrations = await readPiece(app, (tx) => appliedMigrations(tx));
    await tar.add(`${top}/migration_status.json`, Buffer.from(JSON.stringify({ migrations }, null, 2)));
    await tar.add(`${top}/stats.json`, Buffer.from(JSON.stringify({ export_type: exportType, realm_id: realmId, ...stats }, null, 2)));
    await tar.close();
  } catch (err) {
    await tar.abort();
    await rm(file, { force: true });
    throw err;
  }
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return { sha256: hash.digest('hex'), stats };
}
