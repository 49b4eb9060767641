// The administrative commands of the CLI (`init`, `create-user`, `reactivate-realm`, `sync-ldap`, `import`): their arguments and what they do.
// The CLI runs them on the database itself, or through the running server that holds it
// (src/cli/control.ts), which then runs this same code and answers the same JSON.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { App } from '../app.ts';
import path from 'node:path';
import { reactivateRealm } from '../actions/realm.ts';
import { setUpNewOrganization } from '../actions/onboarding.ts';
import { createRealm, createUser } from '../actions/users.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { ROLES } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { importRealm } from '../export/import-realm.ts';
import { syncLdapUsers } from '../actions/ldap-accounts.ts';
import { log } from '../log.ts';

export const USAGE = `Usage:
  npm start                                   start the server (HOST, PORT, DATA_DIR, DATABASE_URL, ...)
  npm run cli -- init --org NAME --email E --password P [--name N] [--subdomain S]
  npm run cli -- create-user --email E --name N [--role 100|200|300|400|600] [--password P] [--bot] [--subdomain S]
  npm run cli -- reactivate-realm [--subdomain S]
  npm run cli -- sync-ldap [--subdomain S]        names, avatars, profile fields and deactivation from LDAP
  npm run cli -- import FILE.tar.gz             restore a data export into an empty database (server stopped)
  npm run cli -- push-relay [--port N] [--host H] [--keys FILE]   print what the server sends to phones (PUSH_RELAY_URL)`;

/** Bad command-line arguments: the CLI prints the usage and exits with 2. */
export class UsageError extends Error {}

export const adminCommandSchema = z.discriminatedUnion('command', [
  z.object({
    command: z.literal('init'),
    org: z.string(),
    email: z.string(),
    password: z.string(),
    name: z.string().optional(),
    subdomain: z.string().optional(),
  }),
  z.object({
    command: z.literal('create-user'),
    email: z.string(),
    name: z.string(),
    role: z.number().int().optional(),
    password: z.string().optional(),
    bot: z.boolean().optional(),
    subdomain: z.string().optional(),
  }),
  z.object({ command: z.literal('reactivate-realm'), subdomain: z.string().optional() }),
  z.object({ command: z.literal('sync-ldap'), subdomain: z.string().optional() }),
  z.object({ command: z.literal('import'), file: z.string() }),
]);
export type AdminCommand = z.infer<typeof adminCommandSchema>;

export function isAdminCommand(name: string): name is AdminCommand['command'] {
  return name === 'init' || name === 'create-user' || name === 'reactivate-realm' || name === 'sync-ldap' || name === 'import';
}

export function parseAdminCommand(command: AdminCommand['command'], args: string[]): AdminCommand {
  if (command === 'import') {
    if (args.length !== 1 || args[0]!.startsWith('-')) throw new UsageError('import takes one argument: the export file (.tar.gz)');
    // Resolved against the directory the command was typed in.
    return { command, file: path.resolve(args[0]!) };
  }
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        org: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        name: { type: 'string' },
        role: { type: 'string' },
        bot: { type: 'boolean' },
        subdomain: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { org, email, password, name, role, bot, subdomain } = values;
  if (command === 'reactivate-realm' || command === 'sync-ldap') {
    if (org !== undefined || email !== undefined || password !== undefined || name !== undefined || role !== undefined || bot) {
      throw new UsageError(`${command} takes only --subdomain`);
    }
    return { command, subdomain };
  }
  if (!email) throw new UsageError('--email is required');
  if (command === 'init') {
    if (!org || !password) throw new UsageError('init needs --org and --password');
    if (role !== undefined || bot) throw new UsageError('init makes the owner: --role and --bot do not apply');
    return { command, org, email, password, name, subdomain };
  }
  if (!name) throw new UsageError('create-user needs --name');
  if (org !== undefined) throw new UsageError('create-user takes --subdomain, not --org');
  if (role !== undefined && !ROLES.includes(Number(role))) throw new UsageError('--role must be one of 100, 200, 300, 400, 600');
  return { command, email, name, password, bot, subdomain, role: role === undefined ? undefined : Number(role) };
}

/** Runs a command on `app`; the result is the JSON object the CLI prints. */
export async function runAdminCommand(app: App, cmd: AdminCommand): Promise<Record<string, unknown>> {
  if (cmd.command === 'import') return { ...(await importRealm(app, cmd.file)) };
  if (cmd.command === 'init') {
    const { realm, owner } = await createRealm(app, {
      subdomain: cmd.subdomain ?? '',
      name: cmd.org,
      owner: { email: cmd.email, fullName: cmd.name ?? cmd.org, password: cmd.password },
    });
    await setUpNewOrganization(app, realm, owner);
    return { user_id: owner.id, email: owner.deliveryEmail, api_key: owner.apiKey, realm_id: realm.id, url: app.realms.url(realm) };
  }
  const realm = namedRealm(app, cmd.subdomain);
  if (cmd.command === 'reactivate-realm') {
    await reactivateRealm(app, realm);
    return { realm_id: realm.id, url: app.realms.url(realm) };
  }
  if (cmd.command === 'sync-ldap') {
    if (!app.ldap) throw badRequest('LDAP is not configured (LDAP_SERVER_URL)');
    return { ...(await syncLdapUsers(app, realm, app.ldap, log)) };
  }
  const user = await createUser(app, realm, { email: cmd.email, fullName: cmd.name, password: cmd.password, role: cmd.role, isBot: cmd.bot });
  return { user_id: user.id, email: user.deliveryEmail, api_key: user.apiKey };
}

/**
 * Without a subdomain: the organization a client reaching the bare host gets (the only one, or
 * the root one). With one: exactly that one, even where a single organization answers every host.
 */
function namedRealm(app: App, subdomain: string | undefined): RealmInfo {
  const root = app.realms.externalHost;
  const realm = app.realms.forHost(subdomain ? `${subdomain}.${root}` : root);
  if (!realm || (subdomain !== undefined && realm.subdomain !== subdomain)) {
    throw badRequest(app.realms.count === 0 ? 'No organization yet: run init first' : `No organization with subdomain '${subdomain ?? ''}'`);
  }
  return realm;
}
