// Parallel edits of one message that all carry the same (valid) prev_content_sha256: exactly one
// may win, and the edit history must hold that one edit. Shared by the embedded and PostgreSQL
// suites: PostgreSQL runs the transactions truly concurrently, so the row lock is what decides.
import { createHash } from 'node:crypto';
import * as assert from 'uvu/assert';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import type { TestRealm } from './server.ts';

const PARALLEL = 8;

export async function editsRaceOnOneHash(realm: TestRealm): Promise<void> {
  const channel = await makeChannel(realm, `race${Date.now()}`, [realm.owner]);
  for (const id of [await send(realm.owner, channel, 'race', 'original'), await sendDm(realm.owner, [realm.owner.id], 'original')]) {
    const hash = createHash('sha256').update('original').digest('hex');
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) => realm.owner.client.patch(`/messages/${id}`, { content: `edit ${i}`, prev_content_sha256: hash })),
    );
    const won = results.filter((r) => r.status === 200);
    assert.is(won.length, 1, results.map((r) => r.text).join('\n'));
    for (const r of results.filter((r) => r.status !== 200)) {
      assert.equal([r.status, r.body.msg], [400, "'prev_content_sha256' value does not match the expected value."]);
    }
    const m = (await realm.owner.client.get(`/messages/${id}`)).body.message;
    assert.is(m.edit_history.length, 1);
    assert.is(m.edit_history[0].prev_content, 'original');
    assert.is(m.content, `<p>edit ${results.indexOf(won[0]!)}</p>`);
  }
}
