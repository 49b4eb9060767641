// `npm run cli -- push-relay` as an operator runs it: a child process that the server's
// PUSH_RELAY_URL points at, printing one JSON line per request, with the notifications of the
// devices whose keys are in its keys file opened (the file is read again, so keys added while it
// runs count), and an explanation for the others.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { eventually, newTestDevice, registered } from '../helpers/push-relay.ts';
import { newRealm, startTestServer, tempDir } from '../helpers/server.ts';
import { sendDm } from '../messages/messages-helpers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const keysFile = path.join(tempDir(), 'keys.json');
let relay: ChildProcess;
let stdout = '';
let stderr = '';
let server: RunningServer;

/** The relay's output lines so far, parsed. */
const lines = () =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test.before(async () => {
  writeFileSync(keysFile, '{}');
  relay = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'push-relay', '--port', '0', '--keys', keysFile], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  relay.stdout!.on('data', (c: Buffer) => (stdout += c));
  relay.stderr!.on('data', (c: Buffer) => (stderr += c));
  const first = await eventually(() => (stdout.includes('\n') || relay.exitCode !== null ? (lines()[0] ?? {}) : undefined), 60_000, 'the relay to listen');
  assert.equal(Object.keys(first), ['listening', 'keys'], stderr);
  assert.match(first.listening as string, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.is(first.keys, 0);
  server = await startTestServer({ PUSH_RELAY_URL: first.listening as string });
});

test.after(async () => {
  await server?.stop();
  if (relay.exitCode === null) {
    relay.kill('SIGKILL');
    await once(relay, 'exit');
  }
});

test('the relay prints each registration and each notification, opened with the keys file', async () => {
  const realm = await newRealm(server);
  const bob = await realm.addUser({ name: 'Bob Builder' });
  const known = newTestDevice();
  const unknown = newTestDevice();
  // Written after the relay started: it reads the file for every notification.
  writeFileSync(keysFile, JSON.stringify({ [known.pushKeyId]: known.pushKey.toString('base64') }));
  await registered(realm.owner, known);
  await registered(realm.owner, unknown);
  const registrations = lines().filter((l) => l.request === 'register');
  assert.equal(
    registrations.map((l) => [l.token_id, l.token_kind, typeof l.device_id]),
    [
      [known.tokenId, 'fcm', 'number'],
      [unknown.tokenId, 'fcm', 'number'],
    ],
  );

  const id = await sendDm(bob, [realm.owner.id], 'Can we **fix** it?');
  const requests = await eventually(
    () => {
      const sent = lines()
        .filter((l) => l.request === 'notify')
        .flatMap((l) => l.push_requests as Record<string, unknown>[]);
      return sent.length === 2 ? sent : undefined;
    },
    15_000,
    'both notifications',
  );
  const of = (d: typeof known) => requests.find((r) => (r.payload as { push_key_id: number }).push_key_id === d.pushKeyId)!;
  const opened = of(known).decrypted as Record<string, unknown>;
  assert.equal(
    [opened.type, opened.message_id, opened.sender_id, opened.sender_full_name, opened.content, opened.recipient_type, opened.user_id],
    ['message', id, bob.id, 'Bob Builder', 'Can we fix it?', 'direct', realm.owner.id],
  );
  assert.is(of(known).error, undefined);
  assert.equal([of(unknown).decrypted, of(unknown).error], [undefined, `no key for push_key_id ${unknown.pushKeyId}`]);
});

test('Ctrl-C stops it cleanly', async () => {
  relay.kill('SIGINT');
  const [code] = await once(relay, 'exit');
  assert.is(code, 0, stderr);
});

test.run();
