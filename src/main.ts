// Command line: `serve` (default) runs the server; `init` and `create-user` set up an organization
// and its users on the same database the server uses (DATA_DIR or DATABASE_URL).
import { parseArgs } from 'node:util';
import { closeApp, createApp } from './app.ts';
import { createRealm, createUser } from './actions/users.ts';
import { loadConfig, type Config } from './config.ts';
import { ROLES } from './domain/roles.ts';
import { ApiError } from './http/errors.ts';
import { log, setLogLevel } from './log.ts';
import { bootstrapFirstRealm, startServer } from './server.ts';

const USAGE = `Usage:
  npm start                                   start the server (HOST, PORT, DATA_DIR, DATABASE_URL, ...)
  npm run cli -- init --org NAME --email E --password P [--name N] [--subdomain S]
  npm run cli -- create-user --email E --name N [--role 100|200|300|400|600] [--password P] [--bot] [--subdomain S]`;

class UsageError extends Error {}

async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  const creds = await bootstrapFirstRealm(server, process.env);
  process.stdout.write(`Chat server listening on ${server.url} (data: ${config.DATABASE_URL ? 'PostgreSQL' : config.DATA_DIR})\n`);
  if (creds) {
    process.stdout.write(
      `\nA new organization was created. Log in with:\n  URL:      ${creds.url}\n  Email:    ${creds.email}\n  Password: ${creds.password}\n  API key:  ${creds.apiKey}\n` +
        `Try: curl -u '${creds.email}:${creds.apiKey}' ${creds.url}/api/v1/users/me\n(These are shown only once.)\n\n`,
    );
  }
  const shutdown = (signal: string) => {
    log.info('shutting down', { signal });
    server.stop().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

async function admin(config: Config, command: 'init' | 'create-user', args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' },
      role: { type: 'string' }, bot: { type: 'boolean' }, subdomain: { type: 'string' },
    },
    strict: true,
  });
  if (!values.email) throw new UsageError('--email is required');
  if (command === 'init' && (!values.org || !values.password)) throw new UsageError('init needs --org and --password');
  if (command === 'create-user' && !values.name) throw new UsageError('create-user needs --name');
  const role = values.role === undefined ? undefined : Number(values.role);
  if (role !== undefined && !ROLES.includes(role)) throw new UsageError('--role must be one of 100, 200, 300, 400, 600');
  const app = await createApp(config);
  try {
    if (command === 'init') {
      const { realm, owner } = await createRealm(app, {
        subdomain: values.subdomain ?? '',
        name: values.org!,
        owner: { email: values.email, fullName: values.name ?? values.org!, password: values.password },
      });
      print({ user_id: owner.id, email: owner.deliveryEmail, api_key: owner.apiKey, realm_id: realm.id, url: app.realms.url(realm) });
    } else {
      const realm = values.subdomain !== undefined ? [...Array(1)].map(() => app.realms.forHost(`${values.subdomain}.${config.externalHost}`))[0] : app.realms.forHost(config.externalHost);
      if (!realm) throw new UsageError(values.subdomain === undefined ? 'no organization yet: run init first' : `no organization with subdomain '${values.subdomain}'`);
      const user = await createUser(app, realm, { email: values.email, fullName: values.name!, password: values.password, role, isBot: values.bot });
      print({ user_id: user.id, email: user.deliveryEmail, api_key: user.apiKey });
    }
  } finally {
    await closeApp(app);
  }
}

function print(result: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(result) + '\n');
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  const config = loadConfig();
  setLogLevel(config.LOG_LEVEL);
  if (command === 'serve') return serve(config);
  if (command === 'init' || command === 'create-user') return admin(config, command, rest);
  throw new UsageError(`unknown command '${command}'`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`Error: ${err instanceof ApiError || err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
