// The container image, checked without Docker (neither this machine nor CI has an engine): the
// Dockerfile's last stage runs as an unprivileged user with a HEALTHCHECK, and the whole file,
// rehearsed step by step (test/helpers/dockerfile.ts), builds, starts its CMD under its ENV as an
// unprivileged user, and turns healthy by its own HEALTHCHECK command; the server it runs answers
// API requests, serves the web client and stops cleanly on SIGTERM. A Dockerfile that drifts from
// what the build and the server need fails here.
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { containerEnv, healthy, imageConfig, parseDockerfile, rehearseBuild, runContainer } from '../helpers/dockerfile.ts';
import { freePort } from '../helpers/nats.ts';
import { freshDatabase } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCKERFILE = path.join(ROOT, 'Dockerfile');
const config = imageConfig(parseDockerfile(readFileSync(DOCKERFILE, 'utf8')));
// Docker's official node images name their unprivileged user `node`; as root, this machine's `nobody` stands in.
const RUN_AS = process.getuid!() === 0 ? { uid: 65534, gid: 65534 } : { uid: process.getuid!(), gid: process.getgid!() };

test("the image's last stage runs its server as an unprivileged user, with a HEALTHCHECK on readiness", () => {
  assert.ok(config.user, 'a USER instruction');
  assert.not.ok(['root', '0', '0:0'].includes(config.user!), `USER ${config.user} is root`);
  assert.ok(config.healthcheck, 'a HEALTHCHECK instruction');
  assert.ok(config.healthcheck!.command.join(' ').includes('/health/ready'), 'the HEALTHCHECK asks /health/ready');
  assert.equal(config.cmd.slice(-2), ['build/main.mjs', 'serve'], 'CMD runs the bundle');
  assert.equal(config.volumes, [config.env.DATA_DIR], 'DATA_DIR is the volume');
});

// Skipped, and counted so, where the rehearsal cannot stand for the image: its base image is
// this machine, so its Node must be the image's; and the image has no embedded PostgreSQL (see
// the Dockerfile) while the tests' own embedded one answers only its owner, not the image's
// unprivileged user, so it needs a PostgreSQL server for the tests (DATABASE_URL, as CI sets it).
const imageNode = /^node:(\d+)/.exec(config.base)?.[1];
const rehearsable = imageNode === process.versions.node.split('.')[0] && process.env.DATABASE_URL !== undefined;
if (!rehearsable)
  console.log(
    `  container: the Dockerfile rehearsal is skipped (image ${config.base}, Node ${process.versions.node}, DATABASE_URL ${process.env.DATABASE_URL ? 'set' : 'unset'})`,
  );

(rehearsable ? test : test.skip)(
  'the Dockerfile, rehearsed: it builds, its CMD serves as an unprivileged user, and its HEALTHCHECK turns healthy',
  async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'dockerfile-'));
    // The unprivileged user must reach the last stage's files, as it reaches / in a container.
    chmodSync(workDir, 0o755);
    const steps: string[] = [];
    let stdout = '';
    let stderr = '';
    try {
      const image = rehearseBuild({
        dockerfile: DOCKERFILE,
        context: ROOT,
        workDir,
        nodeModules: realpathSync(path.join(ROOT, 'node_modules')),
        runAs: RUN_AS,
        progress: (line) => steps.push(line),
      });
      // What `docker run -e` would add: the database, and a port of this shared machine's own.
      const env = containerEnv(image, { DATABASE_URL: await freshDatabase(), PORT: String(await freePort()) });
      const server = runContainer(image, env, RUN_AS);
      server.stdout!.on('data', (c: Buffer) => (stdout += c));
      server.stderr!.on('data', (c: Buffer) => (stderr += c));
      const exited = once(server, 'exit').then(([code]) => code as number | null);
      try {
        const check = image.config.healthcheck!;
        const deadline = Date.now() + (check.startPeriodS + check.intervalS * check.retries) * 1000;
        while (!(await healthy(image, env, RUN_AS))) {
          if (server.exitCode !== null || Date.now() > deadline) throw new Error(`never healthy (exit code ${server.exitCode})`);
          await new Promise((r) => setTimeout(r, 500));
        }
        const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1];
        assert.is(Number(uid), RUN_AS.uid, 'the server runs as the unprivileged user');
        assert.is.not(Number(uid), 0);

        // Healthy once it answers; the first organization's credentials are printed once it is made.
        while (!/API key:/.test(stdout) && server.exitCode === null && Date.now() < deadline + 60_000) await new Promise((r) => setTimeout(r, 200));
        const base = `http://127.0.0.1:${env.PORT}`;
        const email = /Email:\s+(\S+)/.exec(stdout)![1]!;
        const apiKey = /API key:\s+(\S+)/.exec(stdout)![1]!;
        const me = await fetch(`${base}/api/v1/users/me`, { headers: { Authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` } });
        assert.equal([me.status, ((await me.json()) as { email: string }).email], [200, email]);
        const page = await fetch(`${base}/`);
        assert.equal([page.status, page.headers.get('content-type')], [200, 'text/html; charset=utf-8'], 'the web client was built into the image');
        await page.text();

        server.kill('SIGTERM');
        assert.is(await exited, 0, 'a graceful stop');
      } finally {
        if (server.exitCode === null) server.kill('SIGKILL');
      }
    } catch (err) {
      throw new Error(`${String(err instanceof Error ? err.stack : err)}\nsteps:\n${steps.join('\n')}\nstdout:\n${stdout}\nstderr:\n${stderr.slice(-4000)}`);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  },
);

test.run();
