// A database from before the search vector, the is_private flag bit and unread rows' conversation:
// after start, the server fills them in for the older rows, in batches, while it serves (src/ops/history-upkeep.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IS_PRIVATE } from '../../src/domain/message-flags.ts';
import { Client } from '../helpers/client.ts';
import { freshDatabase, newRealm, startTestServer } from '../helpers/server.ts';
import { makeChannel, send, sendDm } from './messages-helpers.ts';

test('older messages become searchable and their direct messages listed once the fill-in is done', async () => {
  const database = { DATABASE_URL: await freshDatabase() };
  const first = await startTestServer(database);
  const realm = await newRealm(first);
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'archive', [bob]);
  const old = await send(realm.owner, channel, 'history', 'ancient wisdom');
  const dm = await sendDm(realm.owner, [bob.id], 'an old secret');
  // Back to how the migration found them: no search vector, no flag bit, the fill-in pending.
  await first.app.prisma.$transaction([
    first.app.prisma.$executeRaw`ALTER TABLE "Message" DISABLE TRIGGER message_search_vector`,
    first.app.prisma.$executeRaw`UPDATE "Message" SET "searchVector" = NULL`,
    first.app.prisma.$executeRaw`ALTER TABLE "Message" ENABLE TRIGGER message_search_vector`,
    first.app.prisma.$executeRaw`UPDATE "UserMessage" SET flags = flags & ~${IS_PRIVATE}::int, "channelId" = NULL, topic = NULL, "directGroupId" = NULL`,
    first.app.prisma
      .$executeRaw`INSERT INTO "HistoryBackfill" (name, "nextId", "untilId") SELECT n, 1, max(id) FROM "Message", (VALUES ('search_vector'), ('is_private'), ('unread_conversation')) v(n) GROUP BY n`,
  ]);
  const range = { anchor: 'newest', num_before: 10, num_after: 0 };
  const ids = async (client: Client, narrow: unknown[]) => (await client.get('/messages', { ...range, narrow })).body.messages.map((m: { id: number }) => m.id);
  assert.equal(await ids(bob.client, [{ operator: 'search', operand: 'wisdom' }]), []);
  assert.equal(await ids(bob.client, [{ operator: 'is', operand: 'dm' }]), []);
  await first.stop();

  const second = await startTestServer(database);
  try {
    for (let i = 0; i < 100 && (await second.app.prisma.historyBackfill.count()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.is(await second.app.prisma.historyBackfill.count(), 0, 'the fill-in finished');
    const [unfilled] = await second.app.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM "UserMessage" WHERE (flags & 1) = 0 AND "channelId" IS NULL AND "directGroupId" IS NULL`;
    assert.is(unfilled!.n, 0, 'unread rows carry their conversation');
    const client = new Client(second.port, realm.host.replace(/:\d+$/, `:${second.port}`), bob.client.credentials);
    assert.equal(await ids(client, [{ operator: 'search', operand: 'wisdom' }]), [old]);
    assert.equal(await ids(client, [{ operator: 'is', operand: 'dm' }]), [dm]);
    const { body } = await client.post('/register', { event_types: ['recent_private_conversations'] });
    assert.equal(body.recent_private_conversations, [{ max_message_id: dm, user_ids: [realm.owner.id] }]);
  } finally {
    await second.stop();
  }
});

test.run();
