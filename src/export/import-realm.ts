// `npm run cli -- import <file.tar.gz>`: restores an export (write-export.ts) into an empty
// database, rows with their ids, files to their places under the uploads directory, in one
// transaction: users log in again with their passwords and API keys, and every message keeps its
// flags, reactions and uploads. Refused when the database already holds an organization, or when
// the export follows a schema this server does not know.
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { App } from '../app.ts';
import type { SqlExecutor } from '../db/client.ts';
import { thumbnailImage } from '../actions/uploads.ts';
import { uploadFilePath } from '../queries/uploads.ts';
import { EXPORTED_TABLES, type ExportFile } from './tables.ts';
import { extractTarGz } from './tar.ts';
import { appliedMigrations } from './write-export.ts';

/** Rows per INSERT: big enough to be quick, small enough for one statement's parameter. */
const ROWS_PER_INSERT = 1000;

type Row = Record<string, unknown>;
type TableData = Record<string, Row[]>;

async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

/** The export's folder inside the extracted archive: the one holding realm.json. */
async function exportRoot(dir: string): Promise<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && (await readdir(path.join(dir, entry.name))).includes('realm.json')) return path.join(dir, entry.name);
  }
  throw new Error('not a data export: no realm.json in the archive');
}

/** Refuses an export whose rows have columns this server's schema does not have yet. */
async function checkSchema(tx: SqlExecutor, root: string): Promise<void> {
  const { migrations } = await readJson<{ migrations: string[] }>(path.join(root, 'migration_status.json'));
  const known = new Set(await appliedMigrations(tx));
  const unknown = migrations.filter((m) => !known.has(m));
  if (unknown.length)
    throw new Error(`this export comes from a newer version of the server (unknown migrations: ${unknown.join(', ')}); upgrade before importing`);
}

async function columnsByTable(tx: SqlExecutor): Promise<Map<string, Set<string>>> {
  const rows = await tx.query<{ table_name: string; column_name: string }>(
    'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()',
  );
  const byTable = new Map<string, Set<string>>();
  for (const r of rows) byTable.set(r.table_name, (byTable.get(r.table_name) ?? new Set()).add(r.column_name));
  return byTable;
}

/**
 * Inserts rows as PostgreSQL's JSON of them gives them back; columns an older export lacks take
 * their defaults.
 */
async function insertRows(tx: SqlExecutor, table: string, rows: Row[], columns: Set<string>): Promise<void> {
  if (rows.length === 0) return;
  const present = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const strange = present.filter((c) => !columns.has(c));
  if (strange.length) throw new Error(`the export's ${table} rows have columns this server does not know: ${strange.join(', ')}`);
  const list = present.map((c) => `"${c}"`).join(', ');
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await tx.query(`INSERT INTO "${table}" (${list}) SELECT ${list} FROM json_populate_recordset(NULL::"${table}", $1::json)`, [
      JSON.stringify(rows.slice(i, i + ROWS_PER_INSERT)),
    ]);
  }
}

/** The export's files, in the order their tables are inserted. */
async function dataFiles(root: string): Promise<{ kind: ExportFile; file: string }[]> {
  const messageFiles = (await readdir(root)).filter((n) => /^messages-\d{6}\.json$/.test(n)).sort();
  return [
    { kind: 'realm', file: 'realm.json' },
    ...messageFiles.map((file) => ({ kind: 'messages' as const, file })),
    { kind: 'attachment', file: 'attachment.json' },
  ];
}

/** Ids go on after the imported ones. */
async function advanceSequences(tx: SqlExecutor, columns: Map<string, Set<string>>): Promise<void> {
  for (const { table } of EXPORTED_TABLES) {
    if (!columns.get(table)?.has('id')) continue;
    await tx.query(
      `SELECT setval(seq, (SELECT max(id) FROM "${table}")) FROM pg_get_serial_sequence($1, 'id') AS seq WHERE seq IS NOT NULL AND EXISTS (SELECT 1 FROM "${table}")`,
      [`"${table}"`],
    );
  }
}

/** Copies each folder's recorded files to their places; on failure, removes those it copied. */
async function restoreFiles(app: App, root: string): Promise<void> {
  const written: string[] = [];
  try {
    for (const dir of ['uploads', 'avatars', 'emoji']) {
      const records = await readJson<{ path: string }[]>(path.join(root, dir, 'records.json'));
      for (const record of records) {
        const target = uploadFilePath(app, record.path);
        await mkdir(path.dirname(target), { recursive: true });
        await copyFile(path.join(root, dir, record.path), target);
        written.push(target);
      }
    }
  } catch (err) {
    await Promise.all(written.map((f) => rm(f, { force: true })));
    throw err;
  }
}

/** The imported uploads that are images get their size and thumbnails, as new uploads do. */
async function thumbnailImages(app: App, tx: SqlExecutor, realmId: number): Promise<void> {
  const uploads = await tx.query<{ pathId: string; contentType: string }>('SELECT "pathId", "contentType" FROM "Attachment" WHERE "realmId" = $1 ORDER BY id', [
    realmId,
  ]);
  const made: string[] = [];
  try {
    for (const upload of uploads) {
      const data = await readFile(uploadFilePath(app, upload.pathId)).catch(() => null);
      const image = data && (await thumbnailImage(app, upload.pathId, data, upload.contentType));
      if (!image) continue;
      made.push(upload.pathId);
      await tx.query(
        'INSERT INTO "ImageAttachment" ("realmId", "pathId", "originalWidthPx", "originalHeightPx", frames, "contentType", "thumbnailMetadata") VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)',
        [realmId, upload.pathId, image.originalWidthPx, image.originalHeightPx, image.frames, image.contentType, JSON.stringify(image.thumbnailMetadata)],
      );
    }
  } catch (err) {
    await Promise.all(made.map((pathId) => rm(uploadFilePath(app, `thumbnail/${pathId}`), { recursive: true, force: true })));
    throw err;
  }
}

export interface ImportSummary {
  realm_id: number;
  subdomain: string;
  users: number;
  messages: number;
}

export async function importRealm(app: App, file: string): Promise<ImportSummary> {
  const dir = await mkdtemp(path.join(tmpdir(), 'chat-import-'));
  try {
    await extractTarGz(file, dir);
    const root = await exportRoot(dir);
    const summary = await app.db.withSession((session) =>
      session.transaction(async (tx) => {
        const [{ taken }] = await tx.query<{ taken: boolean }>('SELECT EXISTS (SELECT 1 FROM "Realm") AS taken');
        if (taken) throw new Error('the database already holds an organization: import into a fresh one (a new DATABASE_URL or DATA_DIR)');
        await checkSchema(tx, root);
        const columns = await columnsByTable(tx);
        const counts: Record<string, number> = {};
        for (const { kind, file: name } of await dataFiles(root)) {
          const data = await readJson<TableData>(path.join(root, name));
          for (const { table } of EXPORTED_TABLES.filter((t) => t.file === kind)) {
            const rows = data[table] ?? [];
            await insertRows(tx, table, rows, columns.get(table) ?? new Set());
            counts[table] = (counts[table] ?? 0) + rows.length;
          }
        }
        await advanceSequences(tx, columns);
        const [realm] = await tx.query<{ id: number; subdomain: string }>('SELECT id, subdomain FROM "Realm"');
        if (!realm) throw new Error('not a data export: realm.json holds no organization');
        // A channel's first message may not have left with a public export.
        await tx.query('UPDATE "Channel" c SET "firstMessageId" = (SELECT min(id) FROM "Message" m WHERE m."channelId" = c.id) WHERE c."realmId" = $1', [
          realm.id,
        ]);
        // The channel rows came with the exporting server's counts, and the subscriptions' triggers added to them.
        await tx.query('SELECT recount_channel_subscribers($1)', [realm.id]);
        // Last, so a failure before leaves no files behind; the rows name them only once committed.
        await restoreFiles(app, root);
        await thumbnailImages(app, tx, realm.id);
        return { realm_id: realm.id, subdomain: realm.subdomain, users: counts.User ?? 0, messages: counts.Message ?? 0 };
      }),
    );
    await app.realms.loadAll();
    return summary;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
