// The web client's build for the tests that serve it: made once per run from the current sources
// (scripts/build-web.mjs, as npm install and npm start run it), before those tests start a server.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/paths.ts';

let built: Promise<unknown> | undefined;

export function buildWebClient(): Promise<unknown> {
  return (built ??= promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build-web.mjs')], { cwd: PROJECT_ROOT }));
}
