// `push-relay`: the development relay (src/push/dev-relay.ts) for an operator to see what the
// server would send to phones. Point PUSH_RELAY_URL at it; it prints one JSON line when it listens,
// then one per request it gets, with each notification opened when the keys file has its key.
// The keys file is read again for every notification, so keys added while it runs are used.
import { parseArgs } from 'node:util';
import { DevRelay, describeRequest, readDeviceKeys, type DeviceKeys } from '../push/dev-relay.ts';
import { UsageError } from './commands.ts';

export interface PushRelayCommand {
  host: string;
  port: number;
  keys: string | null;
}

export function parsePushRelayCommand(args: string[]): PushRelayCommand {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { host: { type: 'string' }, port: { type: 'string' }, keys: { type: 'string' } }, strict: true }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!/^\d+$/.test(values.port ?? '0') || port > 65535) throw new UsageError('--port must be a port number (0 for any free one)');
  return { host: values.host ?? '127.0.0.1', port, keys: values.keys ?? null };
}

/** Runs the relay until SIGINT or SIGTERM. */
export async function runPushRelay(cmd: PushRelayCommand): Promise<void> {
  const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
  const noKeys: DeviceKeys = new Map();
  // A bad keys file stops the command at the start; later, the line says what is wrong with it.
  const initial = cmd.keys ? readDeviceKeys(cmd.keys) : noKeys;
  const currentKeys = (): DeviceKeys | Error => {
    try {
      return cmd.keys ? readDeviceKeys(cmd.keys) : noKeys;
    } catch (err) {
      return err as Error;
    }
  };
  const relay = new DevRelay(
    (r) => {
      const keys = r.request === 'notify' ? currentKeys() : noKeys;
      print(keys instanceof Error ? { ...describeRequest(r, noKeys), keys_error: keys.message } : describeRequest(r, keys));
    },
    cmd.host,
    cmd.port,
  );
  await relay.start();
  print({ listening: relay.url, keys: initial.size });
  const stop = () => relay.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
