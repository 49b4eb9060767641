// `npm run migration:new -- <name>`: writes the SQL that takes the existing migrations to
// prisma/schema.prisma as prisma/migrations/<YYYYMMDDHHMMSS>_<name>/migration.sql, the layout and
// lock file `prisma migrate dev` would write.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MIGRATIONS_DIR } from './migrate.ts';
import { diffMigrationsToSchema, LOCKFILE_CONTENT, LOCKFILE_NAME, type SchemaOptions } from './schema-engine.ts';

/** Returns the new migration's directory, or null when the schema needs no change. */
export async function newMigration(name: string, opts: SchemaOptions = {}, now = new Date()): Promise<string | null> {
  const slug = migrationSlug(name);
  const diff = await diffMigrationsToSchema(opts);
  if (!diff.changed) return null;
  const migrationsDir = path.resolve(opts.migrationsDir ?? MIGRATIONS_DIR);
  const dir = path.join(migrationsDir, `${timestamp(now)}_${slug}`);
  // Not recursive for the leaf: an existing directory of the same name must not be overwritten.
  await mkdir(migrationsDir, { recursive: true });
  await mkdir(dir);
  await writeFile(path.join(dir, 'migration.sql'), diff.script);
  await writeFile(path.join(migrationsDir, LOCKFILE_NAME), LOCKFILE_CONTENT);
  return dir;
}

/** Names become part of a directory name: keep them to lowercase words joined by underscores. */
function migrationSlug(name: string): string {
  const slug = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
  if (!slug) throw new Error('A migration needs a name of letters or digits, e.g. `npm run migration:new -- add_reactions`.');
  return slug;
}

/** UTC, like Prisma: YYYYMMDDHHMMSS. */
function timestamp(date: Date): string {
  return date.toISOString().replace(/\D/g, '').slice(0, 14);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const name = process.argv.slice(2).join(' ');
  if (!name) {
    console.error('usage: npm run migration:new -- <name>');
    process.exit(2);
  }
  const dir = await newMigration(name, { serverUrl: process.env.DATABASE_URL || undefined });
  console.log(dir === null ? 'no changes' : `created ${path.relative(process.cwd(), path.join(dir, 'migration.sql'))}`);
}
