// Group commit across channels (actions/messages-store.ts, src/db/group-commit.ts): messages sent
// at once to different channels share one statement and its commit; each sender still gets its
// own id, each channel's events leave in its id order, and nothing is answered before it commits.
// That a failing write in a shared statement fails only its own message is test/cluster/group-commit.test.ts's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureEvents } from '../helpers/events.ts';
import { newRealm } from '../helpers/server.ts';
import { makeChannel } from './messages-helpers.ts';

const CHANNELS = 12;
const ROUNDS = 3;

test('messages sent at once to many channels share commits, and each channel keeps its order', async () => {
  const realm = await newRealm();
  const senders = [await realm.addUser({ name: 'Ann' }), await realm.addUser({ name: 'Ben' }), await realm.addUser({ name: 'Cat' })];
  const channels: number[] = [];
  for (let c = 0; c < CHANNELS; c++) channels.push(await makeChannel(realm, `batch ${c}`, senders));
  // The caches a running server has warm (channel rows, subscriber sets) are filled by a first message each.
  for (const sid of channels) assert.is((await senders[0]!.client.post('/messages', { type: 'stream', to: sid, topic: 't', content: 'warm' })).status, 200);

  const events = captureEvents(realm.server.app, realm.id);
  // Every sender posts to every channel, one message after the other; the senders and channels at once.
  const answers = await Promise.all(
    senders.flatMap((sender, s) =>
      channels.map(async (sid, c) => {
        const ids: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const r = await sender.client.post('/messages', { type: 'stream', to: sid, topic: 't', content: `${s}/${c}/${round}` });
          assert.is(r.status, 200, r.text);
          ids.push(r.body.id as number);
        }
        return { sid, s, ids };
      }),
    ),
  );
  events.stop();

  const sent = answers.flatMap((a) => a.ids);
  assert.is(new Set(sent).size, senders.length * CHANNELS * ROUNDS, 'each message its own id');
  for (const { ids } of answers)
    assert.equal(
      ids,
      [...ids].sort((a, b) => a - b),
      "a sender's messages to a channel are stored in the order sent",
    );

  const messageEvents = events.ofType('message').filter((e) => sent.includes(e.event.message.id as number));
  assert.equal(messageEvents.map((e) => e.event.message.id).sort(), [...sent].sort(), 'one message event per message, after its answer');
  for (const sid of channels) {
    const inChannel = messageEvents.filter((e) => e.event.message.stream_id === sid).map((e) => e.event.message.id as number);
    assert.equal(
      inChannel,
      [...inChannel].sort((a, b) => a - b),
      `channel ${sid}: its events leave in id order`,
    );
  }
  for (const { ids, s, sid } of answers) {
    const contents = ids.map((id) => messageEvents.find((e) => e.event.message.id === id)!.event.message.content);
    assert.equal(
      contents,
      ids.map((_, round) => `<p>${s}/${channels.indexOf(sid)}/${round}</p>`),
      'each answer names its own message',
    );
  }

  // The transactions (by xid) that committed messages of more than one channel.
  const channelsByXid = new Map<number | undefined, Set<number>>();
  for (const e of messageEvents) {
    const set = channelsByXid.get(e.xid) ?? new Set<number>();
    channelsByXid.set(e.xid, set.add(e.event.message.stream_id as number));
  }
  assert.not.ok(channelsByXid.has(undefined), 'every message event carries its commit');
  const shared = [...channelsByXid.values()].filter((set) => set.size > 1);
  assert.ok(shared.length > 0, `some commits carry messages of several channels (${channelsByXid.size} commits for ${sent.length} messages)`);
  assert.ok(channelsByXid.size < sent.length, 'fewer commits than messages');
});

test.run();
