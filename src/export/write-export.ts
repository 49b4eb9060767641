// Writes an organization's data export: one consistent snapshot of its rows (EXPORTED_TABLES) as
// JSON in Zulip's layout, with the files its rows name, packed into a .tar.gz:
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
import { EXPORTED_TABLES, MESSAGES_PER_FILE, messagesFileName, type ExportFile } from './tables.ts';
import { createTarGz, type TarWriter } from './tar.ts';

interface Scope {
  realm: number;
  messages: number[];
  privateUsers: number[];
  messageUsers: number[];
}

/** One table's rows in scope, each already JSON. */
async function tableRows(tx: SqlExecutor, table: (typeof EXPORTED_TABLES)[number], scope: Scope): Promise<string[]> {
  const keyOrder = table.key
    .split(',')
    .map((k) => `t.${k.trim()}`)
    .join(', ');
  const rows = await tx.query<{ row: string }>(
    `WITH p AS (SELECT $1::int AS realm, $2::int[] AS messages, $3::int[] AS private_users, $4::int[] AS message_users)
     SELECT row_to_json(t)::text AS row FROM "${table.table}" t, p WHERE ${table.rows} ORDER BY ${keyOrder}`,
    [scope.realm, scope.messages, scope.privateUsers, scope.messageUsers],
  );
  return rows.map((r) => r.row);
}

/** The tables of one file as a JSON object, counting rows into `stats`. */
async function fileJson(tx: SqlExecutor, file: ExportFile, scope: Scope, stats: Record<string, number>): Promise<Buffer> {
  const parts: string[] = [];
  for (const table of EXPORTED_TABLES.filter((t) => t.file === file)) {
    const rows = await tableRows(tx, table, scope);
    stats[table.table] = (stats[table.table] ?? 0) + rows.length;
    parts.push(`${JSON.stringify(table.table)}:[${rows.join(',')}]`);
  }
  return Buffer.from(`{${parts.join(',')}}`);
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
 * The messages that leave: those of public channels; with consent also those of channels a
 * consenting member is subscribed to (in channels with protected history, only what such a member
 * received) and direct messages with a consenting member among their participants.
 */
async function exportedMessageIds(tx: SqlExecutor, realmId: number, exportType: ExportType, consenting: number[]): Promise<number[]> {
  const publicChannel = 'c.id IS NOT NULL AND NOT c."inviteOnly"';
  const consented =
    exportType === EXPORT_TYPE.PUBLIC
      ? ''
      : `OR (c.id IS NOT NULL AND EXISTS (SELECT 1 FROM "Subscription" s WHERE s."channelId" = c.id AND s."userId" = ANY($2::int[]))
             AND (c."historyPublicToSubscribers" OR EXISTS (SELECT 1 FROM "UserMessage" um WHERE um."messageId" = m.id AND um."userId" = ANY($2::int[]))))
         OR (g.id IS NOT NULL AND string_to_array(g."memberKey", ',')::int[] && $2::int[])`;
  const rows = await tx.query<{ id: number }>(
    `SELECT m.id FROM "Message" m
       LEFT JOIN "Channel" c ON c.id = m."channelId"
       LEFT JOIN "DirectMessageGroup" g ON g.id = m."directGroupId"
      WHERE m."realmId" = $1 AND (${publicChannel} ${consented})
      ORDER BY m.id`,
    exportType === EXPORT_TYPE.PUBLIC ? [realmId] : [realmId, consenting],
  );
  return rows.map((r) => r.id);
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

/** Uploads, avatars and emoji images of the export, each folder with its records. */
async function addAllFiles(app: App, tx: SqlExecutor, tar: TarWriter, top: string, scope: Scope, stats: Record<string, number>, log: Log): Promise<void> {
  const uploads = await tx.query<{ pathId: string; ownerId: number; contentType: string }>(
    `SELECT a."pathId", a."ownerId", a."contentType" FROM "Attachment" a
      WHERE a.id IN (SELECT "attachmentId" FROM "AttachmentMessage" WHERE "messageId" = ANY($1::int[])) ORDER BY a.id`,
    [scope.messages],
  );
  const uploadRecords = uploads.map((u) => ({ path: u.pathId, realm_id: scope.realm, user_profile_id: u.ownerId, content_type: u.contentType }));
  await addFiles(tar, top, 'uploads', uploadRecords, (r) => uploadFilePath(app, r.path), stats, log);

  const avatars = await tx.query<{ id: number; avatarKey: string; avatarVersion: number }>(
    `SELECT id, "avatarKey", "avatarVersion" FROM "User" WHERE "realmId" = $1 AND "avatarSource" = 'U' AND "avatarKey" IS NOT NULL ORDER BY id`,
    [scope.realm],
  );
  const avatarRecords = avatars.flatMap((u) =>
    AVATAR_VARIANTS.map((variant) => ({
      path: path
        .relative(app.config.uploadsDir, avatarFilePath(app, scope.realm, u.avatarKey, variant))
        .split(path.sep)
        .join('/'),
      realm_id: scope.realm,
      user_profile_id: u.id,
      avatar_version: u.avatarVersion,
    })),
  );
  await addFiles(tar, top, 'avatars', avatarRecords, (r) => uploadFilePath(app, r.path), stats, log);

  const emoji = await tx.query<{ id: number; fileName: string; authorId: number | null }>(
    `SELECT id, "fileName", "authorId" FROM "RealmEmoji" WHERE "realmId" = $1 ORDER BY id`,
    [scope.realm],
  );
  const emojiRecords = emoji.map((e) => ({
    path: path
      .relative(app.config.uploadsDir, emojiImagePath(app, scope.realm, e.fileName))
      .split(path.sep)
      .join('/'),
    realm_id: scope.realm,
    user_profile_id: e.authorId,
    file_name: e.fileName,
  }));
  await addFiles(tar, top, 'emoji', emojiRecords, (r) => uploadFilePath(app, r.path), stats, log);
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
  await app.db.withSession((session) =>
    session.transaction(async (tx) => {
      // Every read sees the same moment, however long the files take.
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const consenting = exportType === EXPORT_TYPE.FULL_WITH_CONSENT ? await consentingUserIds(tx, realmId) : [];
      const messages = await exportedMessageIds(tx, realmId, exportType, consenting);
      const everyone = (await tx.query<{ id: number }>('SELECT id FROM "User" WHERE "realmId" = $1', [realmId])).map((r) => r.id);
      const scope: Scope = { realm: realmId, messages, privateUsers: consenting, messageUsers: exportType === EXPORT_TYPE.PUBLIC ? everyone : consenting };
      const tar = createTarGz(file);
      try {
        await tar.add(`${top}/realm.json`, await fileJson(tx, 'realm', scope, stats));
        for (let i = 0; i * MESSAGES_PER_FILE < messages.length; i++) {
          const chunk = { ...scope, messages: messages.slice(i * MESSAGES_PER_FILE, (i + 1) * MESSAGES_PER_FILE) };
          await tar.add(`${top}/${messagesFileName(i + 1)}`, await fileJson(tx, 'messages', chunk, stats));
        }
        await tar.add(`${top}/attachment.json`, await fileJson(tx, 'attachment', scope, stats));
        await addAllFiles(app, tx, tar, top, scope, stats, log);
        await tar.add(`${top}/migration_status.json`, Buffer.from(JSON.stringify({ migrations: await appliedMigrations(tx) }, null, 2)));
        await tar.add(`${top}/stats.json`, Buffer.from(JSON.stringify({ export_type: exportType, realm_id: realmId, ...stats }, null, 2)));
        await tar.close();
      } catch (err) {
        await tar.abort();
        await rm(file, { force: true });
        throw err;
      }
    }),
  );
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return { sha256: hash.digest('hex'), stats };
}
