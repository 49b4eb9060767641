// The floor plan (docs/ARCHITECTURE.md) holds for the code, and its check has teeth: a copy of the
// tree with an import planted up a floor, one sideways, a cycle (in the server or the web client)
// and a file in no room fails it,
// naming each.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

function checkFloors(tree: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/check-floors.ts'), tree], { encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

test('the code keeps to the floor plan', () => {
  const { status, output } = checkFloors(root);
  assert.is(output, 'the imports keep to the floor plan\n');
  assert.is(status, 0);
});

test('an import up a floor, one sideways, a cycle in the server or the web client and a file in no room each fail the check', () => {
  const tree = mkdtempSync(path.join(tmpdir(), 'floors-'));
  try {
    for (const dir of ['docs', 'src', 'actors', 'web/src']) {
      cpSync(path.join(root, dir), path.join(tree, dir), { recursive: true, filter: (f) => !f.includes(`${path.sep}generated`) });
    }
    // db/ is floors below app.ts; emoji/ and config.ts share a floor.
    writeFileSync(path.join(tree, 'src/db/planted.ts'), "import type { App } from '../app.ts';\nexport type Planted = App;\n");
    writeFileSync(path.join(tree, 'src/emoji/planted.ts'), "export type { Scheme } from '../config.ts';\n");
    writeFileSync(path.join(tree, 'src/domain/planted-a.ts'), "export { b } from './planted-b.ts';\nexport const a = 1;\n");
    writeFileSync(path.join(tree, 'src/domain/planted-b.ts'), "export { a } from './planted-a.ts';\nexport const b = 2;\n");
    writeFileSync(path.join(tree, 'src/planted.ts'), 'export const homeless = true;\n');
    // The web client has no floors, but a cycle inside it fails too.
    writeFileSync(path.join(tree, 'web/src/planted-c.ts'), "export type { D } from './planted-d.ts';\nexport type C = 1;\n");
    writeFileSync(path.join(tree, 'web/src/planted-d.ts'), "export type { C } from './planted-c.ts';\nexport type D = 2;\n");
    const { status, output } = checkFloors(tree);
    assert.is(
      output,
      [
        'upward: src/db/planted.ts imports src/app.ts, a floor up (src/db/ -> src/app.ts)',
        'sideways: src/emoji/planted.ts imports src/config.ts, on its own floor (src/emoji/ -> src/config.ts)',
        'homeless: src/planted.ts is in no room of the floor plan',
        'cycle: import cycle: src/domain/planted-a.ts, src/domain/planted-b.ts',
        'cycle: import cycle: web/src/planted-c.ts, web/src/planted-d.ts',
        '5 breaches of the floor plan',
        '',
      ].join('\n'),
    );
    assert.is(status, 1);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
});

test.run();
