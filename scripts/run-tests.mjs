// `npm test`: the uvu suite through tsx (see test/run.ts), with any filter passed along.
import { spawnSync } from 'node:child_process';

const result = spawnSync('npx', ['tsx', 'test/run.ts', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
