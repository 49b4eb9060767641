// Search for words common in history (in every hundredth message or more, by the search vector's
// statistics): matched message by message along the narrow rather than listed from the GIN index
// (src/queries/narrow.ts, WALK_FREQUENCY). The answers are the same as for rare words.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { newRealm, startTestServer } from '../helpers/server.ts';
import { makeChannel, send } from './messages-helpers.ts';

let server: RunningServer;

test.before(async () => {
  // A server of its own: the statistics are read at its first search and kept for minutes.
  server = await startTestServer();
});

test.after(async () => {
  await server?.stop();
});

test('a common word, alone, in a channel, with a rare one and negated: the newest matches, newest page first', async () => {
  const realm = await newRealm(server);
  const ann = await realm.addUser();
  const bob = await realm.addUser();
  const channel = await makeChannel(realm, 'ops', [ann, bob]);
  const other = await makeChannel(realm, 'chatter', [ann, bob]);
  const deploys: number[] = [];
  const inOps: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < 60; i++) {
    const to = i % 3 === 0 ? other : channel;
    const id = await send(ann, to, 't', i % 2 ? `we deployed build ${i}` : `lunch at ${i}`);
    if (i % 2) deploys.push(id);
    else if (to === channel) plain.push(id);
    if (i % 2 && to === channel) inOps.push(id);
  }
  const rare = await send(bob, channel, 'release', 'deploying the zeppelin');
  await server.app.db.withSession((s) => s.exec('ANALYZE "Message"'));
  const page = async (narrow: unknown[], before = 10) => {
    const r = await ann.client.get('/messages', { anchor: 'newest', num_before: before, num_after: 0, narrow });
    assert.is(r.status, 200, r.text);
    return r.body.messages.map((m: { id: number }) => m.id);
  };
  const search = (operand: string, negated = false) => ({ operator: 'search', operand, negated });
  assert.equal(await page([search('deploy')]), [...deploys, rare].slice(-10));
  assert.equal(await page([search('deploy')], 100), [...deploys, rare]);
  assert.equal(await page([{ operator: 'channel', operand: channel }, search('deploys')]), [...inOps, rare].slice(-10));
  assert.equal(await page([search('deploy zeppelin')]), [rare]);
  assert.equal(await page([{ operator: 'channel', operand: channel }, search('deploy', true)], 100), plain);
});

test.run();
