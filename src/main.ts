// Command line: `serve` (default) runs the server; `init`, `create-user` and `reactivate-realm`
// manage organizations and their users on the same database the server uses (DATA_DIR or
// DATABASE_URL), through the server itself when one is running on it; `push-relay` runs a push
// relay that shows what the server sends to phones. The server and database modules are imported only once
// the arguments are known to be good, so usage errors and --help answer without loading them.
import { isAdminCommand, parseAdminCommand, runAdminCommand, USAGE, UsageError, type AdminCommand } from './cli/commands.ts';
import { loadConfig, type Config } from './config.ts';
import { errorText, log, setLogLevel } from './log.ts';

async function serve(config: Config): Promise<void> {
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  const shutdown = (reason: string) => {
    // npm passes a signal on to the server that the process group got too: one shutdown.
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal: reason });
    // Still starting: the exit tells the embedded PostgreSQL to stop.
    if (!stop) process.exit(0);
    stop().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  // SIGHUP: the terminal `npm start` ran in was closed.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  // Run by `npm start`, the server ends with npm, however npm ended (killed, its terminal gone).
  if (process.env.npm_lifecycle_event) {
    const npm = process.ppid;
    setInterval(() => process.ppid !== npm && shutdown('npm exited'), 1000).unref();
  }
  const { listenWhileStarting } = await import('./http/starting.ts');
  const starting = await listenWhileStarting(config);
  log.info('answering 503 while starting', { port: starting.port });
  const { createControlChannel } = await import('./cli/control.ts');
  const { bootstrapFirstRealm, startServer } = await import('./server.ts');
  const control = createControlChannel(config);
  const server = await startServer(config, { attach: control.attach, starting });
  control.publish(server.port);
  const bootstrapping = bootstrapFirstRealm(server, process.env);
  // A stop while the first organization is being made lets that finish: its writes need the pool.
  stop = () =>
    bootstrapping
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => control.close())
      .then(() => server.stop());
  const creds = await bootstrapping;
  // One write, so whoever reads the output sees the credentials together with the address.
  process.stdout.write(
    `Chat server listening on ${server.url} (data: ${config.DATABASE_URL ? 'PostgreSQL' : config.DATA_DIR})\n` +
      `Mail (invitations): ${server.app.mail.description}\n` +
      (creds
        ? `\nA new organization was created. Log in with:\n  URL:      ${creds.url}\n  Email:    ${creds.email}\n  Password: ${creds.password}\n  API key:  ${creds.apiKey}\n` +
          `Try: curl -u '${creds.email}:${creds.apiKey}' ${creds.url}/api/v1/users/me\n(These are shown only once.)\n\n`
        : ''),
  );
}

async function admin(config: Config, cmd: AdminCommand): Promise<Record<string, unknown>> {
  const { findRunningServer, runOnServer } = await import('./cli/control.ts');
  const running = findRunningServer(config);
  // An import needs an empty database, and a running server has made its first organization.
  if (running && cmd.command === 'import') throw new Error('a server is running on this database: import into a fresh one with the server stopped');
  if (running) return runOnServer(running, cmd);
  // A command is a short-lived node of its own, so it never passes for the server's node.
  if (config.cluster) config.cluster = { ...config.cluster, nodeId: `cli-${process.pid}-${Date.now().toString(36)}` };
  const { closeApp, createApp } = await import('./create-app.ts');
  const app = await createApp(config);
  try {
    return await runAdminCommand(app, cmd);
  } finally {
    await closeApp(app);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'push-relay') {
    const { parsePushRelayCommand, runPushRelay } = await import('./cli/push-relay.ts');
    return runPushRelay(parsePushRelayCommand(rest));
  }
  if (command !== 'serve' && !isAdminCommand(command)) throw new UsageError(`unknown command '${command}'`);
  if (command === 'serve' && rest.length) throw new UsageError('serve takes no arguments: it reads its settings from the environment');
  // Arguments are checked before the configuration and the database are touched.
  const cmd = command === 'serve' ? null : parseAdminCommand(command, rest);
  const config = loadConfig();
  setLogLevel(config.LOG_LEVEL);
  if (!cmd) return serve(config);
  process.stdout.write(JSON.stringify(await admin(config, cmd)) + '\n');
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`Error: ${errorText(err)}\n`);
  process.exit(1);
});
