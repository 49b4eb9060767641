// GroupCommit: writes that wait while statements run go out together, in order, and a failing
// statement is retried input by input so that only the bad input fails.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GroupCommit } from '../../src/db/group-commit.ts';

function recorder(fail: (input: number) => boolean = () => false) {
  const statements: number[][] = [];
  const writeAll = async (inputs: number[]) => {
    statements.push(inputs);
    await new Promise((r) => setTimeout(r, 5));
    if (inputs.some(fail)) throw new Error(`bad ${inputs.filter(fail).join(',')}`);
    return inputs.map((i) => i * 10);
  };
  return { statements, writeAll };
}

test('the first writes start at once, up to the concurrency; the rest wait and go together', async () => {
  const { statements, writeAll } = recorder();
  const group = new GroupCommit(writeAll, 2, 100);
  const outputs = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => group.write(i)));
  assert.equal(outputs, [10, 20, 30, 40, 50, 60]);
  assert.equal(statements, [[1], [2], [3, 4, 5, 6]]);
});

test('a statement takes at most maxInputs; the rest follow in order', async () => {
  const { statements, writeAll } = recorder();
  const group = new GroupCommit(writeAll, 1, 2);
  await Promise.all([1, 2, 3, 4, 5, 6].map((i) => group.write(i)));
  assert.equal(statements, [[1], [2, 3], [4, 5], [6]]);
});

test('a failed statement is retried input by input: only the bad input fails', async () => {
  const { statements, writeAll } = recorder((i) => i === 4);
  const group = new GroupCommit(writeAll, 1, 100);
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => group.write(i)));
  assert.equal(
    results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
    [10, 20, 30, 'bad 4', 50],
  );
  assert.equal(statements, [[1], [2, 3, 4, 5], [2], [3], [4], [5]]);
  assert.is(await group.write(7), 70, 'later writes go on');
});

test.run();
