// `npm run floors [root]`: checks the import graph against the floor plan in docs/ARCHITECTURE.md. Each
// line of its `floors` block is a floor, top first, naming rooms (a folder ending in `/`, or one
// file). A module may import its own room or any room on a lower floor: an import up, or sideways
// to another room of the same floor, fails, and so does any import cycle between files (type-only
// imports included: a cycle of types is a cycle of knowledge). Every module must be in a room.
// The plan is read from the document so that what is written and what is enforced are one text.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface FloorPlan {
  /** Rooms in order, each with the index of its floor (0 is the top). */
  rooms: { room: string; floor: number }[];
}

export interface Violation {
  kind: 'upward' | 'sideways' | 'cycle' | 'homeless';
  text: string;
}

const SOURCE = /\.tsx?$/;
const DOCUMENT = 'docs/ARCHITECTURE.md';

/** The `floors` fenced block of the architecture document; text after `#` on a line is a comment. */
export function readFloorPlan(root: string): FloorPlan {
  const doc = readFileSync(path.join(root, DOCUMENT), 'utf8');
  const block = /^```floors\n([\s\S]*?)^```/m.exec(doc);
  if (!block) throw new Error(`${DOCUMENT} has no \`\`\`floors block`);
  const rooms: FloorPlan['rooms'] = [];
  let floor = 0;
  for (const line of block[1].split('\n')) {
    const names = line.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
    if (!names.length) continue;
    for (const room of names) rooms.push({ room, floor });
    floor++;
  }
  return { rooms };
}

/** The room a repository path is in: the longest room that is the path or a folder holding it. */
function roomOf(plan: FloorPlan, file: string): FloorPlan['rooms'][number] | undefined {
  let best: FloorPlan['rooms'][number] | undefined;
  for (const r of plan.rooms) {
    const holds = r.room.endsWith('/') ? file.startsWith(r.room) : file === r.room;
    if (holds && (!best || r.room.length > best.room.length)) best = r;
  }
  return best;
}

function sourceFiles(root: string, dir: string): string[] {
  const full = path.join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && SOURCE.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((f) => !f.split(path.sep).includes('generated'))
    .sort();
}

/** Relative imports of one file, resolved to repository paths (packages are not the plan's business). */
function importsOf(root: string, file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(root, file), 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.normalize(path.join(path.dirname(file), spec)))
    .filter((target) => SOURCE.test(target) && existsSync(path.join(root, target)));
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Every way the code under `dirs` breaks the floor plan of the document in `root`. */
export function checkFloors(root: string, dirs: string[]): Violation[] {
  const plan = readFloorPlan(root);
  const files = dirs.flatMap((d) => sourceFiles(root, d));
  const graph = new Map(files.map((f) => [f, importsOf(root, f)]));
  const violations: Violation[] = [];
  for (const [file, targets] of graph) {
    const from = roomOf(plan, file);
    if (!from) {
      violations.push({ kind: 'homeless', text: `${file} is in no room of the floor plan` });
      continue;
    }
    for (const target of targets) {
      const to = roomOf(plan, target);
      if (!to || to.room === from.room) continue;
      if (to.floor < from.floor) violations.push({ kind: 'upward', text: `${file} imports ${target}, a floor up (${from.room} -> ${to.room})` });
      else if (to.floor === from.floor) violations.push({ kind: 'sideways', text: `${file} imports ${target}, on its own floor (${from.room} -> ${to.room})` });
    }
  }
  for (const component of cycles(graph)) violations.push({ kind: 'cycle', text: `import cycle: ${component.join(', ')}` });
  return violations;
}

/** Import cycles among the files under `dirs`, which have no floors of their own. */
export function checkCycles(root: string, dirs: string[]): Violation[] {
  const files = dirs.flatMap((d) => sourceFiles(root, d));
  const graph = new Map(files.map((f) => [f, importsOf(root, f)]));
  return cycles(graph).map((component) => ({ kind: 'cycle', text: `import cycle: ${component.join(', ')}` }));
}

/** The folders the plan covers: the server, its actors, and the client package (which must import none of them). */
export const CHECKED_DIRS = ['src', 'actors', 'packages'];
/** The web client is one room (it imports only the client package and types below it), checked for cycles inside it. */
export const CYCLE_CHECKED_DIRS = ['web'];

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const violations = [...checkFloors(root, CHECKED_DIRS), ...checkCycles(root, CYCLE_CHECKED_DIRS)];
  for (const v of violations) process.stdout.write(`${v.kind}: ${v.text}\n`);
  process.stdout.write(violations.length ? `${violations.length} breaches of the floor plan\n` : 'the imports keep to the floor plan\n');
  process.exit(violations.length ? 1 : 0);
}
