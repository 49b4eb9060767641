// `npm run db:check`: fails when prisma/migrations do not produce exactly prisma/schema.prisma,
// i.e. someone changed the schema without `npm run migration:new`, or edited a migration.
import { pathToFileURL } from 'node:url';
import { diffMigrationsToSchema, type SchemaOptions } from './schema-engine.ts';

export interface DriftReport {
  inSync: boolean;
  /** SQL a new migration would need; empty when in sync. */
  missingSql: string;
}

export async function checkDrift(opts: SchemaOptions = {}): Promise<DriftReport> {
  const diff = await diffMigrationsToSchema(opts);
  return { inSync: !diff.changed, missingSql: diff.changed ? diff.script : '' };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await checkDrift({ serverUrl: process.env.DATABASE_URL || undefined });
  if (report.inSync) {
    console.log('migrations match prisma/schema.prisma');
  } else {
    console.error('prisma/schema.prisma differs from prisma/migrations; `npm run migration:new -- <name>` would add:\n');
    console.error(report.missingSql);
    process.exitCode = 1;
  }
}
