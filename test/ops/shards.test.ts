// The split of the test files between parallel processes (test/lib/shards.ts): every file runs in
// exactly one part, and the parts' recorded times come out even.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shardOf } from '../lib/shards.ts';

const seconds: Record<string, number> = { 'a.test.ts': 60, 'b.test.ts': 50, 'c.test.ts': 30, 'd.test.ts': 20, 'e.test.ts': 10, 'f.test.ts': 10 };
const files = [...Object.keys(seconds), 'new.test.ts'];

test('every file is in exactly one part, each part in name order', () => {
  for (const parts of [1, 2, 3, 7, 9]) {
    const split = Array.from({ length: parts }, (_, i) => shardOf(files, `${i + 1}/${parts}`, seconds));
    assert.equal(split.flat().sort(), [...files].sort(), `${parts} parts`);
    for (const part of split) assert.equal(part, [...part].sort());
  }
});

test('the longest files go first to the part with the least time; an unrecorded file counts as the median', () => {
  // The median of 10, 10, 20, 30, 50, 60 is 30. a 60 -> 1; b 50 -> 2; c 30 -> 2 (80); new 30 -> 1 (90);
  // d 20 -> 2 (100); e 10 -> 1 (100); f 10 -> 1, the first of two equal parts (110).
  assert.equal(shardOf(files, '1/2', seconds), ['a.test.ts', 'e.test.ts', 'f.test.ts', 'new.test.ts']);
  assert.equal(shardOf(files, '2/2', seconds), ['b.test.ts', 'c.test.ts', 'd.test.ts']);
  assert.equal(shardOf(files, '1/1', {}), files.slice().sort());
});

test('a malformed part is refused', () => {
  for (const spec of ['0/2', '3/2', '1/0', 'x', '1-2']) assert.throws(() => shardOf(files, spec, seconds), /--shard wants K\/N/);
});

test.run();
