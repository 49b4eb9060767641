// Runs `prisma generate` offline: the CLI only needs PRISMA_SCHEMA_ENGINE_BINARY to point at an
// existing file to skip its engine download (see the offline toolchain note).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const env = { ...process.env, CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
const result = spawnSync('npx', ['prisma', 'generate'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
