// The Dockerfile, rehearsed without Docker (this machine and CI have no engine): its instructions
// are read from the file and carried out on this machine, each stage in a directory of its own
// standing in for the stage's filesystem. The base image is this machine's Node (the test checks
// the major version matches), COPY copies what it names from the build context (minus
// .dockerignore) or from an earlier stage, RUN runs its commands in the stage's WORKDIR, and the
// last stage's CMD starts under its ENV as an unprivileged user, like `docker run`. So a COPY the
// build needs but lacks, or a file the server reads that never reaches the last stage, fails here
// as it would in `docker build` and `docker run`.
//
// What is not Docker's: `npm ci` is not run (it would download the packages again). It is
// stood in for from the lock file and this checkout's node_modules: the full install is this
// node_modules, linked (the build stage only reads it); `--omit=dev` copies exactly the packages
// the lock file does not mark `dev` (those of other platforms, absent here, are skipped as npm
// would skip them). Absolute paths a RUN names inside the stage (its WORKDIR, VOLUMEs and ENV
// paths) point into the stage's directory, and `chown` to the image's USER means the
// unprivileged user the CMD runs as: `nobody` when the test runs as root, else the test's own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

export interface HealthCheck {
  command: string[];
  intervalS: number;
  timeoutS: number;
  startPeriodS: number;
  retries: number;
}

/** What the last stage makes of the image: how it runs. */
export interface ImageConfig {
  base: string;
  workdir: string;
  env: Record<string, string>;
  user: string | null;
  cmd: string[];
  healthcheck: HealthCheck | null;
  volumes: string[];
}

/** Instructions the rehearsal carries out (EXPOSE only documents a port); any other fails the parse. */
const KNOWN = new Set(['ARG', 'FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'VOLUME', 'EXPOSE', 'HEALTHCHECK', 'CMD']);

/** Logical lines: continuations joined, comments (and the `# syntax=` directive) and blank lines dropped. */
function logicalLines(text: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let current: { text: string; line: number } | null = null;
  text.split('\n').forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#') || (trimmed === '' && !current)) return;
    const continued = trimmed.endsWith('\\');
    const part = continued ? trimmed.slice(0, -1).trim() : trimmed;
    current = current ? { text: `${current.text} ${part}`, line: current.line } : { text: part, line: i + 1 };
    if (!continued) {
      lines.push(current);
      current = null;
    }
  });
  return lines;
}

function substitute(text: string, vars: Record<string, string>, where: string): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string | undefined, bare: string | undefined) => {
    const name = (braced ?? bare)!;
    const value = vars[name];
    if (value === undefined) throw new Error(`${where}: $${name} has no value`);
    return value;
  });
}

export function parseDockerfile(text: string): Stage[] {
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const { text: line, line: number } of logicalLines(text)) {
    const match = /^(\w+)\s*(.*)$/.exec(line)!;
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!;
    const where = `Dockerfile line ${number}`;
    if (!KNOWN.has(keyword)) throw new Error(`${where}: ${keyword} is not rehearsed (test/helpers/dockerfile.ts)`);
    if (keyword === 'ARG' && stages.length === 0) {
      const [name, value] = args.split('=', 2);
      if (value === undefined) throw new Error(`${where}: ARG ${name} needs a default to be rehearsed`);
      globalArgs[name!] = value;
      continue;
    }
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(substitute(args, globalArgs, where));
      if (!from) throw new Error(`${where}: FROM ${args}`);
      stages.push({ name: from[2] ?? String(stages.length), base: from[1]!, instructions: [] });
      continue;
    }
    if (stages.length === 0) throw new Error(`${where}: ${keyword} before FROM`);
    if (keyword === 'ARG') throw new Error(`${where}: ARG inside a stage is not rehearsed`);
    stages.at(-1)!.instructions.push({ keyword, args, line: number });
  }
  return stages;
}

/** `K=V K2="V 2"` (or the old `K V`). */
function parseEnv(args: string, where: string): [string, string][] {
  if (args.includes('$')) throw new Error(`${where}: variables in ENV are not rehearsed`);
  if (!/^\w+=/.test(args)) {
    const [name, ...rest] = args.split(/\s+/);
    return [[name!, rest.join(' ')]];
  }
  return [...args.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S*)/g)].map(([, name, value]) => [
    name!,
    value!.startsWith('"') ? (JSON.parse(value!) as string) : value!,
  ]);
}

function parseExec(args: string, where: string): string[] {
  try {
    const form = JSON.parse(args) as unknown;
    if (Array.isArray(form) && form.every((w) => typeof w === 'string')) return form;
  } catch {
    // Reported below.
  }
  throw new Error(`${where}: only the exec form (a JSON array) is rehearsed: ${args}`);
}

const volumes = (args: string, where: string): string[] => (args.startsWith('[') ? parseExec(args, where) : args.split(/\s+/));

const seconds = (value: string): number => {
  const m = /^(\d+)(ms|s|m)$/.exec(value);
  if (!m) throw new Error(`duration ${value}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2] as 'ms' | 's' | 'm'];
};

function parseHealthcheck(args: string, where: string): HealthCheck {
  const options: Record<string, string> = {};
  let rest = args;
  for (let m; (m = /^--([\w-]+)=(\S+)\s+/.exec(rest)); rest = rest.slice(m[0].length)) options[m[1]!] = m[2]!;
  if (!rest.startsWith('CMD')) throw new Error(`${where}: HEALTHCHECK ${args}`);
  // Docker's defaults for what the instruction leaves out.
  return {
    command: parseExec(rest.slice(3).trim(), where),
    intervalS: seconds(options.interval ?? '30s'),
    timeoutS: seconds(options.timeout ?? '30s'),
    startPeriodS: seconds(options['start-period'] ?? '0s'),
    retries: Number(options.retries ?? 3),
  };
}

/** How the last stage runs: the image's config (ENV, USER, WORKDIR, CMD, HEALTHCHECK, ...). */
export function imageConfig(stages: Stage[]): ImageConfig {
  const last = stages.at(-1)!;
  const config: ImageConfig = { base: last.base, workdir: '/', env: {}, user: null, cmd: [], healthcheck: null, volumes: [] };
  for (const { keyword, args, line } of last.instructions) {
    const where = `Dockerfile line ${line}`;
    if (keyword === 'ENV') Object.assign(config.env, Object.fromEntries(parseEnv(args, where)));
    else if (keyword === 'WORKDIR') config.workdir = path.posix.resolve(config.workdir, args);
    else if (keyword === 'USER') config.user = args;
    else if (keyword === 'CMD') config.cmd = parseExec(args, where);
    else if (keyword === 'HEALTHCHECK') config.healthcheck = parseHealthcheck(args, where);
    else if (keyword === 'VOLUME') config.volumes.push(...volumes(args, where));
  }
  return config;
}

/** .dockerignore's patterns as Docker matches them (Go's filepath.Match, `**` for any depth; a match excludes a directory's contents too). */
function ignoreMatcher(context: string): (relative: string) => boolean {
  const file = path.join(context, '.dockerignore');
  if (!existsSync(file)) return () => false;
  const patterns = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (patterns.some((p) => p.startsWith('!'))) throw new Error('.dockerignore: exceptions (!) are not rehearsed');
  const regexes = patterns.map((p) => {
    const body = path.posix
      .normalize(p.replace(/^\/+/, ''))
      .split(/(\*\*\/?|\*|\?)/)
      .map((part) => {
        if (part === '**' || part === '**/') return '(?:.*/)?';
        if (part === '*') return '[^/]*';
        if (part === '?') return '[^/]';
        return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      });
    return new RegExp(`^${body.join('')}(?:/.*)?$`);
  });
  return (relative) => regexes.some((r) => r.test(relative));
}

export interface RehearsalOptions {
  dockerfile: string;
  /** The build context (what `docker build` is given). */
  context: string;
  /** An empty directory that holds a directory per stage. */
  workDir: string;
  /** The node_modules `npm ci` is stood in for with (installed from the same lock file). */
  nodeModules: string;
  /** Who the image's USER becomes here. */
  runAs: { uid: number; gid: number };
  /** Written to as the steps run. */
  progress: (line: string) => void;
}

export interface BuiltImage {
  config: ImageConfig;
  /** The last stage's filesystem. */
  root: string;
  /** Where a path of the image lies here. */
  hostPath(imagePath: string): string;
}

class StageRun {
  workdir = '/';
  readonly env: Record<string, string> = {};
  /** Absolute paths of the stage's own (WORKDIR, VOLUMEs, ENV paths): a RUN naming them means the stage's directory. */
  readonly ownPaths = new Set<string>();

  constructor(
    readonly stage: Stage,
    readonly root: string,
    private readonly options: RehearsalOptions,
    private readonly earlier: Map<string, StageRun>,
    private readonly user: string | null,
  ) {
    mkdirSync(root, { recursive: true });
  }

  hostPath(imagePath: string): string {
    return path.join(this.root, path.posix.resolve(this.workdir, imagePath));
  }

  run(): void {
    for (const instruction of this.stage.instructions) {
      const where = `Dockerfile line ${instruction.line} (${this.stage.name})`;
      const { keyword, args } = instruction;
      if (keyword === 'WORKDIR') {
        this.workdir = path.posix.resolve(this.workdir, args);
        this.ownPaths.add(`/${this.workdir.split('/')[1]}`);
        mkdirSync(this.hostPath('.'), { recursive: true });
      } else if (keyword === 'ENV') {
        for (const [name, value] of parseEnv(args, where)) {
          this.env[name] = value;
          if (value.startsWith('/')) this.ownPaths.add(value);
        }
      } else if (keyword === 'VOLUME') {
        for (const volume of volumes(args, where)) this.ownPaths.add(volume);
      } else if (keyword === 'COPY') {
        this.copy(args, where);
      } else if (keyword === 'RUN') {
        this.runCommand(args, where);
      }
    }
  }

  private copy(args: string, where: string): void {
    const words = args.startsWith('[') ? parseExec(args, where) : args.split(/\s+/);
    let from: StageRun | null = null;
    while (words[0]?.startsWith('--')) {
      const flag = /^--from=(.+)$/.exec(words.shift()!);
      if (!flag) throw new Error(`${where}: COPY flag not rehearsed: ${args}`);
      from = this.earlier.get(flag[1]!) ?? null;
      if (!from) throw new Error(`${where}: no stage ${flag[1]} before this one`);
    }
    const dest = words.pop()!;
    const target = this.hostPath(dest);
    const intoDirectory = dest.endsWith('/') || words.length > 1;
    this.options.progress(`COPY ${args}`);
    for (const source of words) {
      const src = from ? from.hostPath(source) : path.join(this.options.context, source);
      const ignored = from ? () => false : ignoreMatcher(this.options.context);
      if (!from && ignored(path.posix.normalize(source))) throw new Error(`${where}: ${source} is excluded by .dockerignore`);
      if (!existsSync(src)) throw new Error(`${where}: COPY source ${source} does not exist`);
      const to = statSync(src).isDirectory() || !intoDirectory ? target : path.join(target, path.basename(src));
      mkdirSync(path.dirname(to), { recursive: true });
      if (from) {
        // Hard links within this rehearsal's own directories: as fast as a move, and the earlier stage is not used again.
        const copied = spawnSync('cp', ['-al', statSync(src).isDirectory() ? `${src}/.` : src, to], { encoding: 'utf8' });
        if (copied.status !== 0) throw new Error(`${where}: ${copied.stderr}`);
      } else {
        cpSync(src, to, { recursive: true, verbatimSymlinks: true, filter: (file) => !ignored(path.relative(this.options.context, file)) });
      }
    }
  }

  private runCommand(args: string, where: string): void {
    if (args.startsWith('[')) throw new Error(`${where}: RUN in exec form is not rehearsed`);
    for (const command of splitAnd(args)) {
      this.options.progress(`RUN ${command}`);
      const npmCi = /^npm\s+ci\b(.*)$/.exec(command);
      if (npmCi) {
        this.standInForNpmCi(npmCi[1]!.trim().split(/\s+/), where);
        continue;
      }
      const done = spawnSync('sh', ['-c', this.localized(command)], {
        cwd: this.hostPath('.'),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...this.env },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (done.status !== 0) throw new Error(`${where}: \`${command}\` failed (${done.status}):\n${done.stdout}\n${done.stderr}`);
    }
  }

  /** The command with the stage's own absolute paths in the stage's directory, and the image's USER as the unprivileged user. */
  private localized(command: string): string {
    let text = command;
    for (const own of [...this.ownPaths].sort((a, b) => b.length - a.length)) {
      const escaped = own.replace(/[.+^${}()|[\]\\/]/g, '\\$&');
      text = text.replace(new RegExp(`(^|[\\s=:'"])${escaped}(?=[/\\s'"]|$)`, 'g'), (_, before: string) => `${before}${path.join(this.root, own)}`);
    }
    if (this.user && /^chown\b/.test(text)) {
      const { uid, gid } = this.options.runAs;
      text = text.replace(new RegExp(`(\\s)${this.user}(?::${this.user})?(?=\\s)`), `$1${uid}:${gid}`);
    }
    return text;
  }

  private standInForNpmCi(flags: string[], where: string): void {
    const known = new Set(['--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund']);
    const unknown = flags.filter((f) => !known.has(f));
    if (unknown.length) throw new Error(`${where}: npm ci ${unknown.join(' ')} is not rehearsed`);
    // Install scripts would run the project's postinstall on an incomplete tree: the Dockerfile turns them off.
    if (!flags.includes('--ignore-scripts')) throw new Error(`${where}: npm ci without --ignore-scripts is not rehearsed`);
    const lockFile = this.hostPath('package-lock.json');
    if (!existsSync(lockFile)) throw new Error(`${where}: npm ci with no package-lock.json copied in`);
    const target = this.hostPath('node_modules');
    if (!flags.includes('--omit=dev')) {
      symlinkSync(this.options.nodeModules, target);
      return;
    }
    const { packages } = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, LockEntry> };
    const installed = path.dirname(this.options.nodeModules);
    const wanted = new Set<string>();
    for (const [dir, entry] of Object.entries(packages)) {
      if (dir === '' || entry.dev) continue;
      const src = path.join(installed, dir);
      if (!existsSync(src)) {
        if (entry.optional) continue;
        throw new Error(`${where}: ${dir} is in the lock file but not in ${this.options.nodeModules}`);
      }
      const version = (JSON.parse(readFileSync(path.join(src, 'package.json'), 'utf8')) as { version: string }).version;
      if (entry.version && version !== entry.version)
        throw new Error(
          `${where}: ${dir} is ${version} in ${this.options.nodeModules}, ${entry.version} in the lock file: that node_modules was not installed from this package-lock.json (npm ci)`,
        );
      wanted.add(dir);
    }
    // Each package with its own files only: its nested node_modules/ are packages of the lock file too.
    for (const dir of wanted) {
      const src = path.join(installed, dir);
      const nested = path.join(src, 'node_modules');
      mkdirSync(path.dirname(path.join(this.hostPath('.'), dir)), { recursive: true });
      cpSync(src, path.join(this.hostPath('.'), dir), { recursive: true, verbatimSymlinks: true, filter: (file) => file !== nested });
    }
  }
}

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  version?: string;
}

/** `a && b && c`, split where `&&` stands outside quotes. */
function splitAnd(command: string): string[] {
  const parts: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (command.startsWith('&&', i)) {
      parts.push(command.slice(start, i).trim());
      start = i + 2;
    }
  }
  parts.push(command.slice(start).trim());
  return parts;
}

/** Builds every stage in order, as `docker build` does; returns the last one. */
export function rehearseBuild(options: RehearsalOptions): BuiltImage {
  const stages = parseDockerfile(readFileSync(options.dockerfile, 'utf8'));
  const config = imageConfig(stages);
  const runs = new Map<string, StageRun>();
  let last: StageRun | null = null;
  stages.forEach((stage, i) => {
    const user = i === stages.length - 1 ? config.user : null;
    last = new StageRun(stage, path.join(options.workDir, `stage-${i}-${stage.name}`), options, runs, user);
    last.run();
    runs.set(stage.name, last);
  });
  const root = last!.root;
  return { config, root, hostPath: (imagePath) => path.join(root, path.posix.resolve(config.workdir, imagePath)) };
}

/** The image's ENV as the container sees it (its own paths in the last stage's directory), plus what `docker run -e` adds. */
export function containerEnv(image: BuiltImage, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const [name, value] of Object.entries(image.config.env)) env[name] = value.startsWith('/') ? path.join(image.root, value) : value;
  return { ...env, ...extra };
}

/** Starts the image's CMD (`docker run`): in its WORKDIR, with its ENV, as the unprivileged user. */
export function runContainer(image: BuiltImage, env: Record<string, string>, runAs: { uid: number; gid: number }): ChildProcess {
  const [command, ...args] = image.config.cmd;
  return spawn(command!, args, { cwd: image.hostPath('.'), env, uid: runAs.uid, gid: runAs.gid, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One run of the HEALTHCHECK command, as Docker runs it inside the container; true when it exits 0 in time. */
export function healthy(image: BuiltImage, env: Record<string, string>, runAs: { uid: number; gid: number }): Promise<boolean> {
  const check = image.config.healthcheck!;
  const [command, ...args] = check.command;
  return new Promise((resolve) => {
    const probe = spawn(command!, args, { cwd: image.hostPath('.'), env, uid: runAs.uid, gid: runAs.gid, stdio: 'ignore', timeout: check.timeoutS * 1000 });
    probe.on('exit', (code) => resolve(code === 0));
    probe.on('error', () => resolve(false));
  });
}
