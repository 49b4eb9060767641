// A register reads its state in one snapshot transaction, on one connection of the pool. Its
// reads must all run there: a read that went to the pool instead would see past the snapshot, and
// with every connection held by a register waiting for a second one, none would ever come (the
// capacity bench stalled so at 1,500 people: 24 registers idle in transaction, pool wait 52 s).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm, startTestServer } from '../helpers/server.ts';

test("more registers at once than the pool has connections: each answers, none waits for a second connection (the client's timeout would end it)", async () => {
  const server = await startTestServer({ DATABASE_POOL_SIZE: '2' });
  try {
    const realm = await newRealm(server);
    const users = await Promise.all(Array.from({ length: 4 }, () => realm.addUser()));
    // Each round starts cold, as a new organization's first registers do (the member lists, the
    // groups and the subscriptions read from the database, not a cache).
    await realm.owner.client.patch('/users/me', { full_name: 'Olivia Renamed' });
    const answers = await Promise.all(users.flatMap((u) => [u.client.post('/register', {}), u.client.post('/register', {})]));
    assert.equal(
      answers.map((a) => a.status),
      Array(8).fill(200),
    );
  } finally {
    await server.stop();
  }
});

test.run();
