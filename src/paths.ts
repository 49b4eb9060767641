// The project's own files (migrations, schema), found from this module whether it runs from src/
// through tsx or bundled into build/ by `npm start`: the nearest directory up with package.json.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function projectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = projectRoot(path.dirname(fileURLToPath(import.meta.url)));
