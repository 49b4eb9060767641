// DATABASE_HOLD_LOG: the pool's connections charged to their holders (src/db/holds.ts), written
// as JSON lines when the server stops.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statementShape } from '../../src/db/holds.ts';
import { newRealm, startTestServer, tempDir } from '../helpers/server.ts';

interface Holder {
  key: string;
  holds: number;
  heldMs: number;
  busyMs: number;
  statements: number;
  example: string[];
  sql: string;
}

test('statementShape: the verb and the tables named, in order', () => {
  assert.is(statementShape('SELECT "public"."User"."id" FROM "public"."User" WHERE 1'), 'SELECT User');
  assert.is(
    statementShape('WITH a AS (UPDATE "PresenceSequence" SET x = 1) INSERT INTO "Presence" SELECT * FROM a JOIN "User" u ON true'),
    'WITH PresenceSequence,Presence,User',
  );
  assert.is(statementShape('  begin'), 'BEGIN');
});

test('a presence ping and an action show up as holders, with their statements', async () => {
  const log = path.join(tempDir(), 'holds.jsonl');
  const server = await startTestServer({ DATABASE_HOLD_LOG: log });
  try {
    const realm = await newRealm(server);
    const ping = await realm.owner.client.post('/users/me/presence', { status: 'active', slim_presence: true });
    assert.is(ping.status, 200, ping.text);
    const rename = await realm.owner.client.patch('/settings', { full_name: 'Olivia Renamed' });
    assert.is(rename.status, 200, rename.text);
  } finally {
    await server.stop();
  }
  const lines = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { pool: { max: number; waits: number }; holders: Holder[]; eventLoopDelayMs: { p99: number } });
  const holders = new Map<string, Holder>();
  for (const line of lines) {
    assert.ok(line.pool.max > 0);
    assert.type(line.eventLoopDelayMs.p99, 'number');
    for (const h of line.holders) holders.set(h.key, h);
  }
  const write = holders.get('WITH PresenceSequence,Presence,User');
  assert.ok(write, [...holders.keys()].join('\n'));
  assert.is(write.statements, write.holds);
  assert.match(write.sql, /^WITH input AS \( SELECT \* FROM unnest\(/);
  assert.ok(write.busyMs <= write.heldMs);
  // The rename is an action: one transaction, charged to the function that opened it.
  const action = [...holders.values()].find((h) => h.key.startsWith('tx ') && h.example[0] === 'BEGIN' && h.example.includes('UPDATE User'));
  assert.ok(action, [...holders.keys()].join('\n'));
  assert.match(action.key, /^tx \w/);
  assert.is(action.example.at(-1), 'COMMIT');
});

test.run();
