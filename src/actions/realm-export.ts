// Data exports through the API (Zulip's views/realm_export.py and actions/realm_export.py):
// administrators request one (at most five a week), it is written in the background once the
// request's transaction committed, its maker gets a direct message from the Notification Bot, and
// every human administrator gets the list of exports (`realm_export`) whenever one changes.
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { User } from '../db/generated/client.ts';
import { EXPORT_STATUS, type ExportType } from '../domain/realm-export.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { writeRealmExport } from '../export/write-export.ts';
import type { Log } from '../log.ts';
import { realmExports } from '../queries/realm-exports.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { uploadFilePath, uploadSpaceUsed } from '../queries/uploads.ts';
import { humanAdminIds } from '../queries/users.ts';
import { deliverMessage, notificationBot } from './messages.ts';
import { prepareInternalMessage } from './messages-prepare.ts';
import { atomic, onCommit, rawQuery, sendOnCommit } from './transaction.ts';
import type { ChatEvent } from '../events/schemas.ts';

/** Zulip's EXPORT_LIMIT: requests per organization in EXPORT_LIMIT_DAYS. */
const EXPORT_LIMIT = 5;
const EXPORT_LIMIT_DAYS = 7;
/** Larger organizations are exported by hand (Zulip's MAX_MESSAGE_HISTORY and MAX_UPLOAD_QUOTA). */
const MAX_MESSAGE_HISTORY = 250_000;
/**
 * The organization's messages counted up to $2 from its (realm, id) index: whether it is over the
 * limit, in a statement no longer however long its history (a count of all of it held the
 * request's transaction and lock for seconds at millions of messages).
 */
export const HISTORY_UP_TO = 'SELECT count(*)::int AS counted FROM (SELECT 1 FROM "Message" WHERE "realmId" = $1 LIMIT $2) m';
const MAX_UPLOAD_QUOTA = 20 * 1024 * 1024 * 1024;
/** Advisory-lock class of export requests (the second key is the realm id). */
const EXPORT_LOCK = 0x45585054;

/**
 * The exports as they stand at the commit, to every human administrator (Zulip's
 * notify_realm_export). Exports are not part of the register state, so no queue may drop it as seen.
 */
async function notifyRealmExport(app: App, realm: RealmInfo): Promise<void> {
  const event: ChatEvent = { type: 'realm_export', exports: await realmExports(app, realm) };
  sendOnCommit({ realmId: realm.id, userIds: await humanAdminIds(app, realm.id), event }, { alwaysDeliver: true });
}

/** POST /export/realm: records the request and starts the export once it is committed; returns its id. */
export async function requestExport(app: App, realm: RealmInfo, user: User, exportType: ExportType, log: Log): Promise<number> {
  requireRole(user, Role.ADMINISTRATOR);
  return atomic(app, async () => {
    // Two requests at once must not both pass the weekly limit.
    await app.prisma.$executeRawUnsafe('SELECT pg_advisory_xact_lock($1, $2)', EXPORT_LOCK, realm.id);
    const since = new Date(Date.now() - EXPORT_LIMIT_DAYS * 86400_000);
    if ((await app.prisma.realmExport.count({ where: { realmId: realm.id, dateRequested: { gte: since } } })) >= EXPORT_LIMIT)
      throw badRequest('Exceeded rate limit.');
    const [{ counted }] = await rawQuery<{ counted: number }>(app, HISTORY_UP_TO, realm.id, MAX_MESSAGE_HISTORY + 1);
    if (counted > MAX_MESSAGE_HISTORY || (await uploadSpaceUsed(app, realm.id)) > MAX_UPLOAD_QUOTA) {
      throw badRequest(
        `The export you requested is too large for automatic processing. Please request a manual export by contacting ${app.config.supportEmail}.`,
      );
    }
    const row = await app.prisma.realmExport.create({ data: { realmId: realm.id, actingUserId: user.id, exportType, status: EXPORT_STATUS.REQUESTED } });
    await notifyRealmExport(app, realm);
    // Not awaited: the request answers now, the export takes its time (Zulip's deferred_work queue).
    onCommit(() => {
      runExport(app, realm, row.id, log).catch((err: unknown) => log.error('data export lost', { export: row.id, error: String(err) }));
    });
    return row.id;
  });
}

/** A new, unguessable place for a tarball (Zulip's local export path: exports/<realm>/<random>/<name>). */
function newExportPath(realmId: number): string {
  const name = `zulip-export-${randomBytes(8).toString('hex').slice(0, 8)}.tar.gz`;
  return `exports/${realmId}/${randomBytes(18).toString('base64url')}/${name}`;
}

/** Writes the export in the background (its lines in the log of the request that asked); marks it succeeded or failed, and tells the administrators either way. */
async function runExport(app: App, realm: RealmInfo, exportId: number, log: Log): Promise<void> {
  const started = await app.prisma.realmExport.updateMany({
    where: { id: exportId, status: EXPORT_STATUS.REQUESTED },
    data: { status: EXPORT_STATUS.STARTED, dateStarted: new Date() },
  });
  if (started.count === 0) return;
  const row = await app.prisma.realmExport.findUniqueOrThrow({ where: { id: exportId } });
  const exportPath = newExportPath(realm.id);
  const file = uploadFilePath(app, exportPath);
  let succeeded = false;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const { sha256 } = await writeRealmExport(app, realm.id, row.exportType as ExportType, file, log);
    await app.prisma.realmExport.update({ where: { id: exportId }, data: { status: EXPORT_STATUS.SUCCEEDED, dateSucceeded: new Date(), exportPath, sha256 } });
    succeeded = true;
  } catch (err) {
    log.error('data export failed', { realm: realm.id, export: exportId, error: err instanceof Error ? err.stack : String(err) });
    await rm(path.dirname(file), { recursive: true, force: true });
    await app.prisma.realmExport.update({ where: { id: exportId }, data: { status: EXPORT_STATUS.FAILED, dateFailed: new Date() } });
  }
  if (succeeded && row.actingUserId !== null) {
    await tellRequester(app, realm, row.actingUserId).catch((err: unknown) => log.warn('export notice not sent', { export: exportId, error: String(err) }));
  }
  await atomic(app, () => notifyRealmExport(app, realm));
}

/** The Notification Bot's direct message to whoever asked for the export. */
async function tellRequester(app: App, realm: RealmInfo, userId: number): Promise<void> {
  const bot = await notificationBot(app, realm);
  const content = 'Your data export is complete. [View and download exports](/#organization/data-exports-admin).';
  const prepared = await prepareInternalMessage(app, realm, bot, { kind: 'direct', users: [userId] }, content);
  await deliverMessage(app, realm, prepared, { client: 'Internal', readBySender: true });
}

/** DELETE /export/realm/{export_id}: removes a finished export's tarball. */
export async function deleteExport(app: App, realm: RealmInfo, user: User, exportId: number): Promise<void> {
  requireRole(user, Role.ADMINISTRATOR);
  const exportPath = await atomic(app, async () => {
    const [row] = await app.prisma.$queryRaw<{ status: number; exportPath: string | null }[]>`
      SELECT status, "exportPath" FROM "RealmExport" WHERE id = ${exportId} AND "realmId" = ${realm.id} FOR UPDATE`;
    if (!row) throw badRequest('Invalid data export ID');
    if (row.status === EXPORT_STATUS.DELETED) throw badRequest('Export already deleted');
    if (row.status === EXPORT_STATUS.FAILED) throw badRequest('Export failed, nothing to delete');
    if (row.status === EXPORT_STATUS.REQUESTED || row.status === EXPORT_STATUS.STARTED) throw badRequest('Export still in progress');
    await app.prisma.realmExport.update({ where: { id: exportId }, data: { status: EXPORT_STATUS.DELETED, dateDeleted: new Date() } });
    await notifyRealmExport(app, realm);
    return row.exportPath;
  });
  // After the commit: a failed delete must not lose a tarball its row still offers.
  if (exportPath) await rm(path.dirname(uploadFilePath(app, exportPath)), { recursive: true, force: true });
}
