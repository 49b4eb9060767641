// Channel and user actors: one write at a time per channel (or user), failures isolated, and an idle actor stops
// and leaves nothing behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ChannelActors } from '../../actors/channels.ts';
import { MAX_BATCH_ITEMS, SerialActors } from '../../actors/serial.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('writes to one channel run one at a time, in order; other channels run alongside', async () => {
  const actors = new SerialActors(1000);
  const log: string[] = [];
  // Channel 1's first write ends only once channel 2's write has run: by order, not by timing. Were
  // channel 2 made to wait for channel 1, the safety timer ends the wait and the order shows it.
  let channel2Ran!: () => void;
  const gate = new Promise<void>((resolve) => (channel2Ran = resolve));
  const safety = setTimeout(() => channel2Ran(), 10_000);
  const write = (channel: number, name: string, body: () => Promise<unknown>) =>
    actors.run(channel, async () => {
      log.push(`start ${name}`);
      await body();
      log.push(`end ${name}`);
      return name;
    });
  const results = await Promise.all([
    write(1, 'a', () => gate),
    write(1, 'b', () => sleep(1)),
    write(2, 'x', async () => channel2Ran()),
    write(1, 'c', () => sleep(1)),
  ]);
  clearTimeout(safety);
  assert.equal(results, ['a', 'b', 'x', 'c']);
  const one = log.filter((l) => !l.endsWith('x'));
  assert.equal(one, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  assert.ok(log.indexOf('start x') < log.indexOf('end a'), `channel 2 waited for channel 1: ${log.join(', ')}`);
  actors.stop();
});

test('a failing write rejects its caller only', async () => {
  const actors = new SerialActors(1000);
  const failed = actors.run(1, async () => {
    throw new Error('boom');
  });
  const next = actors.run(1, async () => 'fine');
  const error = await failed.then(
    () => null,
    (e: Error) => e,
  );
  assert.match(String(error), /boom/);
  assert.is(await next, 'fine');
  actors.stop();
});

test('an idle actor stops itself; the next write spawns a new one', async () => {
  const actors = new SerialActors(50);
  await actors.run(7, async () => 1);
  assert.is(actors.size, 1);
  await sleep(120);
  assert.is(actors.size, 0);
  assert.is(await actors.run(7, async () => 2), 2);
  assert.is(actors.size, 1);
  actors.stop();
  assert.is(actors.size, 0);
});

test('a channel actor holds its subscriber set until a change drops it, and lets it go when it stops', async () => {
  const actors = new ChannelActors(50);
  let loads = 0;
  const load = async () => [++loads];
  assert.equal(await actors.subscribers(3, load), [1]);
  assert.equal(await actors.subscribers(3, load), [1], 'held, not read again');
  assert.is(actors.size, 1, 'holding a set spawns the actor, so its quiet spell ends it');
  actors.forgetSubscribers([3]);
  assert.equal(await actors.subscribers(3, load), [2]);
  actors.forgetSubscribers('all');
  assert.equal(await actors.subscribers(3, load), [3]);
  await sleep(120);
  assert.equal([actors.size, actors.heldSets], [0, 0], 'nothing left of an idle channel');
  assert.equal(await actors.subscribers(3, load), [4]);
  actors.stop();
  assert.is(actors.heldSets, 0);
});

test('a subscriber set dropped while loading, or whose load failed, is read again', async () => {
  const actors = new ChannelActors(1000);
  let release!: (ids: number[]) => void;
  const slow = actors.subscribers(4, () => new Promise((r) => (release = r)));
  actors.forgetSubscribers([4]);
  release([1]);
  assert.equal(await slow, [1], 'the caller that started the read still gets it');
  assert.equal(await actors.subscribers(4, async () => [2]), [2], 'but it was not kept');
  actors.forgetSubscribers('all');
  await actors.subscribers(5, async () => Promise.reject(new Error('db down'))).catch(() => undefined);
  assert.equal(await actors.subscribers(5, async () => [9]), [9]);
  actors.stop();
});

test('group commit: messages that arrive while a channel writes go out together in the next write; another write closes the batch', async () => {
  const actors = new ChannelActors(1000);
  const batches: string[][] = [];
  const writeAll = async (items: string[]) => {
    batches.push([...items]);
    await sleep(5);
    return items.map((i) => i.toUpperCase());
  };
  const first = actors.run(1, () => sleep(20).then(() => 'move'));
  const sends = ['a', 'b', 'c'].map((m) => actors.inBatch(1, 'messages', m, writeAll));
  const move = actors.run(1, async () => 'edit');
  const late = actors.inBatch(1, 'messages', 'd', writeAll);
  assert.equal(await Promise.all([first, ...sends, move, late]), ['move', 'A', 'B', 'C', 'edit', 'D']);
  assert.equal(batches, [['a', 'b', 'c'], ['d']], 'd came after the edit, so it is written after it');
  actors.stop();
});

test('group commit: a batch takes MAX_BATCH_ITEMS at most; the rest follow in the next, in order', async () => {
  const actors = new ChannelActors(1000);
  const sizes: number[] = [];
  const writeAll = async (items: number[]) => {
    sizes.push(items.length);
    return items;
  };
  const first = actors.run(1, () => sleep(20).then(() => -1));
  const count = MAX_BATCH_ITEMS * 2 + 3;
  const sends = Array.from({ length: count }, (_, i) => actors.inBatch(1, 'messages', i, writeAll));
  assert.equal(await Promise.all([first, ...sends]), [-1, ...Array.from({ length: count }, (_, i) => i)]);
  assert.equal(sizes, [MAX_BATCH_ITEMS, MAX_BATCH_ITEMS, 3]);
  actors.stop();
});

test('group commit of several kinds on one actor: an item of another kind closes the open batch, so arrival order holds', async () => {
  const actors = new SerialActors(1000);
  const log: string[] = [];
  const writer = (kind: string) => async (items: string[]) => {
    log.push(`${kind}:${items.join('')}`);
    return items;
  };
  const busy = actors.run(7, () => sleep(20));
  const results = [
    actors.inBatch(7, 'reactions', 'a', writer('reactions')),
    actors.inBatch(7, 'reactions', 'b', writer('reactions')),
    actors.inBatch(7, 'messages', 'c', writer('messages')),
    actors.inBatch(7, 'messages', 'd', writer('messages')),
    actors.inBatch(7, 'reactions', 'e', writer('reactions')),
  ];
  await busy;
  assert.equal(await Promise.all(results), ['a', 'b', 'c', 'd', 'e']);
  assert.equal(log, ['reactions:ab', 'messages:cd', 'reactions:e']);
  actors.stop();
});

test('group commit isolates failures: a failing batch is written again item by item, and only the bad item fails', async () => {
  const actors = new SerialActors(1000);
  const writes: string[][] = [];
  // Fails as a whole when it holds 'bad' (as a constraint violation aborts a transaction)...
  const writeAll = async (items: string[]) => {
    writes.push([...items]);
    if (items.includes('bad')) throw new Error('disk full');
    // ...and answers an Error for an item refused on its own, the others written.
    return items.map((i) => (i === 'refused' ? new Error('not allowed') : i.toUpperCase()));
  };
  const busy = actors.run(3, () => sleep(20));
  const outcomes = ['a', 'bad', 'refused', 'b'].map((i) => actors.inBatch(3, 'flags', i, writeAll).catch((e: Error) => `failed: ${e.message}`));
  await busy;
  assert.equal(await Promise.all(outcomes), ['A', 'failed: disk full', 'failed: not allowed', 'B']);
  assert.equal(writes, [['a', 'bad', 'refused', 'b'], ['a'], ['bad'], ['refused'], ['b']]);
  const alone = actors.inBatch(4, 'flags', 'x', async () => {
    throw new Error('boom');
  });
  assert.match(String(await alone.catch((e: Error) => e)), /boom/);
  assert.is(await actors.run(3, async () => 'still writing'), 'still writing');
  actors.stop();
});

test.run();
