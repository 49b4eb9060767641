// Data exports as GET /export/realm and `realm_export` events list them (Zulip's
// get_realm_exports_serialized), and members' consent to exporting their private data.
import type { App } from '../app.ts';
import type { RealmExport } from '../db/generated/client.ts';
import { EXPORT_STATUS } from '../domain/realm-export.ts';
import { userSettingsSchema } from '../domain/user-settings.ts';
import { timestamp } from './messages.ts';
import type { RealmInfo } from './realms.ts';
import { emailVisibility } from './users.ts';
import type { z } from 'zod';
import { realmExport } from '../events/schemas.ts';

/** Where a finished export is downloaded: public, as Zulip serves it, its path holding a random token. */
export const exportUrl = (app: App, realm: RealmInfo, exportPath: string) => `${app.realms.url(realm)}/user_avatars/${exportPath}`;

export function exportDict(app: App, realm: RealmInfo, e: RealmExport): z.infer<typeof realmExport> {
  return {
    id: e.id,
    export_time: timestamp(e.dateRequested),
    // Exports made on the command line have no acting user: they are never listed nor announced.
    acting_user_id: realmExport.shape.acting_user_id.parse(e.actingUserId),
    export_url: e.status === EXPORT_STATUS.SUCCEEDED && e.exportPath ? exportUrl(app, realm, e.exportPath) : null,
    deleted_timestamp: e.dateDeleted ? timestamp(e.dateDeleted) : null,
    failed_timestamp: e.dateFailed ? timestamp(e.dateFailed) : null,
    pending: e.status === EXPORT_STATUS.REQUESTED || e.status === EXPORT_STATUS.STARTED,
    export_type: realmExport.shape.export_type.parse(e.exportType),
  };
}

/** Exports requested through the API (those made on the command line have no acting user), oldest first. */
export async function realmExports(app: App, realm: RealmInfo): Promise<z.infer<typeof realmExport>[]> {
  const rows = await app.prisma.realmExport.findMany({ where: { realmId: realm.id, actingUserId: { not: null } }, orderBy: { id: 'asc' } });
  return rows.map((e) => exportDict(app, realm, e));
}

/** GET /export/realm/consents: every active human, whether they let their private data leave. */
export async function exportConsents(app: App, realm: RealmInfo): Promise<Record<string, unknown>[]> {
  const users = await app.prisma.user.findMany({ where: { realmId: realm.id, isActive: true, isBot: false }, orderBy: { id: 'asc' } });
  return users.map((u) => ({
    user_id: u.id,
    consented: userSettingsSchema.parse(u.settings ?? {}).allow_private_data_export,
    email_address_visibility: emailVisibility(u),
  }));
}
