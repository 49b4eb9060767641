// A failing database must surface as a failure (a 500 at the HTTP layer), never as a user-facing
// validation error. Black-box this is hard to provoke, so these run the code with a stub database
// that fails the way a lost connection does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prepareMessage } from '../../src/actions/messages-prepare.ts';
import type { App } from '../../src/app.ts';
import type { User } from '../../src/db/generated/client.ts';
import { ApiError } from '../../src/errors.ts';
import { compileNarrow } from '../../src/queries/narrow.ts';
import type { RealmInfo } from '../../src/queries/realms.ts';

const lost = new Error('Connection terminated unexpectedly');
const failing = () => Promise.reject(lost);
const app = {
  realms: { emailDomain: () => 'example.test' },
  prisma: { user: { findUnique: failing, findFirst: failing, findMany: failing }, $queryRawUnsafe: failing },
  db: { query: failing, queryPlannedPerCall: failing },
} as unknown as App;
const realm = { id: 1, settings: {} } as unknown as RealmInfo;
const sender = { id: 1, role: 400, isBot: false } as unknown as User;

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

test('a DM to an email: a database failure is not "Invalid email"', async () => {
  const err = await failure(() => prepareMessage(app, realm, sender, { kind: 'direct', users: ['ann@example.test'] }, 'hi'));
  assert.is(err, lost);
  assert.not.instance(err, ApiError);
});

test('a dm narrow by email: a database failure is not "unknown user"', async () => {
  const err = await failure(() => compileNarrow(app, realm, sender, [{ operator: 'dm', operand: 'ann@example.test' }]));
  assert.is(err, lost);
});

test.run();
