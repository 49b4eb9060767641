// Data exports: POST/GET /export/realm, DELETE /export/realm/{export_id}, GET
// /export/realm/consents (administrators only), and the tarball itself at the export_url, public
// as Zulip serves it: its path holds a random token only administrators were given.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { requireRole } from '../auth/policy.ts';
import { deleteExport, requestExport } from '../actions/realm-export.ts';
import { EXPORT_STATUS, EXPORT_TYPE, EXPORT_TYPES, type ExportType } from '../domain/realm-export.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { json, pathId } from '../http/params.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { exportConsents, realmExports } from '../queries/realm-exports.ts';
import { uploadFilePath } from '../queries/uploads.ts';
import { publicRoute, userRoute } from './route.ts';
import { realmExport } from '../events/schemas.ts';

const exportType = json(
  z
    .number()
    .int()
    .refine((t) => EXPORT_TYPES.includes(t), 'Invalid export_type'),
);

const notFoundPage = () => new RawResponse(404, { 'Content-Type': 'text/html; charset=utf-8' }, '<p>File not found</p>');

export const routes = [
  userRoute({
    method: 'POST',
    path: '/api/v1/export/realm',
    params: { export_type: exportType.default(EXPORT_TYPE.PUBLIC) },
    response: z.object({ id: z.number().int() }),
    async handler({ app, realm, user, params, log }) {
      return { id: await requestExport(app, realm, user, params.export_type as ExportType, log) };
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/export/realm',
    params: {},
    response: z.object({ exports: z.array(realmExport) }),
    async handler({ app, realm, user }) {
      requireRole(user, Role.ADMINISTRATOR);
      return { exports: await realmExports(app, realm) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/export/realm/:export_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteExport(
        app,
        realm,
        user,
        pathId(path.export_id, () => badRequest('Invalid data export ID')),
      );
      return {};
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/export/realm/consents',
    params: {},
    response: z.object({
      export_consents: z.array(z.object({ user_id: z.number().int(), consented: z.boolean(), email_address_visibility: z.number().int() })),
    }),
    async handler({ app, realm, user }) {
      requireRole(user, Role.ADMINISTRATOR);
      return { export_consents: await exportConsents(app, realm) };
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/user_avatars/exports/:realm_id/:token/:file_name',
    params: {},
    response: new RawSuccess(200, 'application/gzip', 'The export tarball'),
    noRateLimit: true,
    async handler({ app, realm, path: p }) {
      const exportPath = `exports/${p.realm_id}/${p.token}/${p.file_name}`;
      const row = await app.prisma.realmExport.findFirst({ where: { realmId: realm.id, exportPath, status: EXPORT_STATUS.SUCCEEDED } });
      if (!row) return notFoundPage();
      const data = await readFile(uploadFilePath(app, exportPath));
      const headers = {
        'Content-Type': 'application/gzip',
        'Content-Disposition': `attachment; filename="${path.basename(exportPath)}"`,
        'X-Content-Type-Options': 'nosniff',
      };
      return new RawResponse(200, headers, data);
    },
  }),
];
