// deploy/nginx.conf for real, without Docker: Debian's nginx runs the file, with only its upstream
// address and listening port replaced, in front of three cluster nodes (one NATS, one
// PostgreSQL). Through it: requests go round robin to every node; a long-poll and a WebSocket on
// a queue of one node get the messages sent through another; X-Forwarded-For and
// X-Forwarded-Proto reach the nodes as TRUSTED_PROXIES expects (the client's real address, never
// what it wrote itself); /metrics stays inside. The timeouts that hold long-polls and sockets are
// checked against the server's own settings rather than waited out.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { SOCKET_IDLE_SECONDS } from '../../src/gateway/socket.ts';
import { Client } from '../helpers/client.ts';
import { collect, eventually, register, startCluster, via, type TestCluster } from '../helpers/cluster.ts';
import { freePort, NATS_URL } from '../helpers/nats.ts';
import { newRealm, tempDir, type TestRealm, type TestUser } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CONF = readFileSync(path.join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
const NGINX = '/usr/sbin/nginx';
const IP_PER_MINUTE = 4;

// --- the file's settings ---

interface Directive {
  name: string;
  args: string[];
  block?: Directive[];
}

/** nginx's configuration syntax: directives ending in `;` or holding a `{ ... }` block; `#` comments. */
function parseNginxConf(text: string): Directive[] {
  const tokens = [...text.replace(/#[^\n]*/g, '').matchAll(/"((?:[^"\\]|\\.)*)"|([{};])|([^\s{};"]+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  let i = 0;
  const block = (): Directive[] => {
    const directives: Directive[] = [];
    while (i < tokens.length && tokens[i] !== '}') {
      const name = tokens[i++]!;
      const args: string[] = [];
      while (tokens[i] !== ';' && tokens[i] !== '{') args.push(tokens[i++]!);
      if (tokens[i++] === '{') {
        directives.push({ name, args, block: block() });
        i++;
      } else {
        directives.push({ name, args });
      }
    }
    return directives;
  };
  return block();
}

const seconds = (value: string): number => Number(/^(\d+)s?$/.exec(value)![1]);

function location(conf: Directive[], prefix: string): Map<string, string[][]> {
  const server = conf.find((d) => d.name === 'server')!;
  const found = server.block!.find((d) => d.name === 'location' && d.args.join(' ') === prefix);
  assert.ok(found, `location ${prefix}`);
  const settings = new Map<string, string[][]>();
  for (const d of found!.block!) settings.set(d.name, [...(settings.get(d.name) ?? []), d.args]);
  return settings;
}

test("deploy/nginx.conf holds long-polls and WebSockets longer than the server's heartbeats and pings", () => {
  const conf = parseNginxConf(CONF);
  const defaults = loadConfig({});
  const api = location(conf, '/');
  // nginx's own default, 60 s, is barely above the longest heartbeat wait.
  const longestPoll = defaults.HEARTBEAT_SECONDS + defaults.HEARTBEAT_JITTER_SECONDS;
  assert.ok(seconds(api.get('proxy_read_timeout')![0]![0]!) >= longestPoll + 30, 'GET /events waits up to the heartbeat, with room to spare');
  assert.equal(api.get('proxy_buffering'), [['off']]);
  assert.equal(api.get('proxy_http_version'), [['1.1']]);
  const socket = location(conf, '/api/v1/events/socket');
  assert.ok(seconds(socket.get('proxy_read_timeout')![0]![0]!) > SOCKET_IDLE_SECONDS, 'a quiet socket outlives the ping interval');
  assert.ok(seconds(socket.get('proxy_send_timeout')![0]![0]!) > SOCKET_IDLE_SECONDS);
  assert.equal(
    socket.get('proxy_set_header')!.filter(([name]) => ['Upgrade', 'Connection'].includes(name!)),
    [
      ['Upgrade', '$http_upgrade'],
      ['Connection', 'upgrade'],
    ],
  );
  for (const settings of [api, socket]) {
    assert.ok(settings.get('proxy_set_header')!.some((h) => h.join(' ') === 'X-Forwarded-For $proxy_add_x_forwarded_for'));
    assert.ok(
      settings.get('proxy_set_header')!.some((h) => h.join(' ') === 'X-Forwarded-Proto $scheme'),
      'the scheme is nginx’s, never the client’s',
    );
  }
  const server = conf.find((d) => d.name === 'server')!;
  const bodyLimit = server.block!.find((d) => d.name === 'client_max_body_size')!.args[0]!;
  assert.is(Number(/^(\d+)m$/.exec(bodyLimit)![1]) * 1024 * 1024, defaults.MAX_UPLOAD_BYTES, 'uploads as large as the server takes');
});

// --- the file, running ---

/** deploy/nginx.conf with the nodes' addresses for `chat:9991` and a port of this machine for 80; nothing else changes. */
function adapted(nodePorts: number[], listenPort: number): string {
  const upstream = /^(\s*)server chat:9991;$/m;
  const listen = /^(\s*)listen 80;$/m;
  assert.ok(upstream.test(CONF) && listen.test(CONF), 'deploy/nginx.conf still has `server chat:9991;` and `listen 80;` to replace');
  return CONF.replace(upstream, (_, indent: string) => nodePorts.map((p) => `${indent}server 127.0.0.1:${p};`).join('\n')).replace(
    listen,
    `$1listen 127.0.0.1:${listenPort};`,
  );
}

const TEMP_KINDS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];

/** The official image's nginx.conf around it, with every file nginx writes in `dir`. */
function mainConf(dir: string): string {
  // As root, the workers take an unprivileged user, as in the image.
  const user = process.getuid!() === 0 ? 'user nobody nogroup;\n' : '';
  const temp = TEMP_KINDS.map((kind) => `    ${kind}_temp_path ${dir}/${kind};`).join('\n');
  return `${user}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
    access_log ${dir}/access.log;
    keepalive_timeout 65;
${temp}
    include ${dir}/chat.conf;
}
`;
}

if (!existsSync(NGINX)) {
  test.skip(`nginx (${NGINX} is absent: apt-get install nginx; .ci/run installs it)`);
} else if (!NATS_URL) {
  test.skip('nginx (NATS_URL is not set: the nodes behind nginx form a cluster)');
} else {
  const natsUrl = NATS_URL;
  let cluster: TestCluster;
  let nginx: ChildProcess;
  let nginxDir: string;
  let PROXY = 0;
  const ports = new Map<string, number>();

  test.before(async () => {
    cluster = await startCluster(natsUrl, ['b', 'c'], {
      TRUSTED_PROXIES: '127.0.0.1',
      RATE_LIMIT: 'on',
      RATE_LIMIT_USER_PER_MINUTE: '100000',
      RATE_LIMIT_IP_PER_MINUTE: String(IP_PER_MINUTE),
    });
    ports.set('a', cluster.a.port);
    for (const node of cluster.nodes) ports.set(node.id, node.port);
    nginxDir = tempDir();
    chmodSync(nginxDir, 0o755);
    for (const kind of TEMP_KINDS) {
      mkdirSync(path.join(nginxDir, kind));
      chmodSync(path.join(nginxDir, kind), 0o777);
    }
    PROXY = await freePort();
    writeFileSync(path.join(nginxDir, 'chat.conf'), adapted([...ports.values()], PROXY));
    writeFileSync(path.join(nginxDir, 'nginx.conf'), mainConf(nginxDir));
    const args = ['-p', nginxDir, '-e', path.join(nginxDir, 'error.log'), '-c', path.join(nginxDir, 'nginx.conf')];
    const syntax = spawnSync(NGINX, ['-t', ...args], { encoding: 'utf8' });
    assert.is(syntax.status, 0, syntax.stderr);
    nginx = spawn(NGINX, [...args, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    await eventually(
      'nginx to listen',
      async () =>
        await new Promise<boolean>((resolve) =>
          http.get({ host: '127.0.0.1', port: PROXY, path: '/health/live' }, (r) => resolve(r.statusCode === 200)).on('error', () => resolve(false)),
        ),
    );
  });

  test.after(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = once(nginx, 'exit');
      nginx.kill('SIGQUIT');
      await exited;
    }
    await cluster?.close();
  });

  /** An organization made on node a, once every node knows it. */
  async function clusterRealm(): Promise<TestRealm> {
    const realm = await newRealm(cluster.a);
    for (const port of ports.values())
      await eventually(`node on ${port} to know the new organization`, async () => (await via(port, realm.owner).get('/users/me')).status === 200);
    return realm;
  }

  const nodeOf = (queueId: string) => queueId.slice(0, queueId.indexOf(':'));
  /** A node other than the one holding the queue. */
  const otherThan = (queueId: string) => [...ports].find(([id]) => id !== nodeOf(queueId))![1];

  /** A direct message from the owner to `to`, sent straight to the node on `port`. */
  async function sendVia(port: number, realm: TestRealm, to: TestUser, content: string): Promise<number> {
    const r = await via(port, realm.owner).post('/messages', { type: 'direct', to: [to.id], content });
    assert.is(r.status, 200, r.text);
    return r.body.id as number;
  }

  test('through nginx: round robin over every node; a long-poll on one node gets what another node sent', async () => {
    const realm = await clusterRealm();
    const readers = [await realm.addUser(), await realm.addUser(), await realm.addUser()];
    const queues: string[] = [];
    for (const reader of readers) queues.push((await register(via(PROXY, reader))).queueId);
    assert.equal(queues.map(nodeOf).sort(), ['a', 'b', 'c'], 'three registrations in a row, one on each node: no stickiness');

    for (const [i, reader] of readers.entries()) {
      // Parked through nginx first (on whichever node it reaches, passed on to the queue's), then the message comes through a third.
      const polled = collect(via(PROXY, reader), queues[i]!, 'message', 1);
      await new Promise((r) => setTimeout(r, 200));
      const sent = await sendVia(otherThan(queues[i]!), realm, reader, `to ${queues[i]}`);
      assert.equal(
        (await polled).map((e) => e.message.id),
        [sent],
      );
    }
  });

  test('through nginx: a WebSocket upgrade reads a queue of one node and gets what another node sent', async () => {
    const realm = await clusterRealm();
    const reader = await realm.addUser();
    const { queueId } = await register(via(PROXY, reader));
    const auth = `Basic ${Buffer.from(`${reader.email}:${reader.apiKey}`).toString('base64')}`;
    const ws = new WebSocket(`ws://127.0.0.1:${PROXY}/api/v1/events/socket?queue_id=${encodeURIComponent(queueId)}`, {
      headers: { Authorization: auth, Host: reader.client.host },
    });
    const frames: Record<string, any>[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      const sent = await sendVia(otherThan(queueId), realm, reader, 'over the socket');
      const message = await eventually('the pushed message', async () => frames.find((f) => f.type === 'message'));
      assert.is(message.message.id, sent);
    } finally {
      ws.close();
    }
  });

  /** A request to nginx from `localAddress` (another address of the loopback: another client). */
  function fromAddress(
    localAddress: string,
    method: string,
    urlPath: string,
    headers: Record<string, string>,
    body = '',
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: PROXY,
          localAddress,
          method,
          path: urlPath,
          agent: false,
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  test('through nginx: the nodes see each client’s own address (its budget of unauthenticated requests), never one it wrote itself, and nginx’s scheme', async () => {
    const realm = await clusterRealm();
    const failedLogin = (from: string, i: number, forged: string) =>
      fromAddress(
        from,
        'POST',
        '/api/v1/fetch_api_key',
        { Host: realm.host, 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': forged },
        `username=nobody${i}%40example.com&password=x`,
      );

    const first = await failedLogin('127.0.0.2', 0, '203.0.113.1');
    assert.equal([first.status, first.headers['x-ratelimit-remaining']], [401, String(IP_PER_MINUTE - 1)]);
    // A new forged address each time: were any believed, each would start a budget of its own.
    const statuses = [first.status];
    for (let i = 1; statuses.at(-1) !== 429 && i < 10 * IP_PER_MINUTE; i++) {
      statuses.push((await failedLogin('127.0.0.2', i, `203.0.113.${i + 1}`)).status);
      // The nodes pass their counts to each other every 50 ms.
      await new Promise((r) => setTimeout(r, 60));
    }
    assert.is(statuses.at(-1), 429, `the client at 127.0.0.2 ran out of its budget: ${statuses.join(' ')}`);
    const other = await failedLogin('127.0.0.3', 100, '203.0.113.1');
    assert.equal([other.status, other.headers['x-ratelimit-remaining']], [401, String(IP_PER_MINUTE - 1)], 'another client behind nginx has its own budget');

    const settings = await fromAddress('127.0.0.3', 'GET', '/api/v1/server_settings', { Host: realm.host, 'X-Forwarded-Proto': 'https' });
    assert.is(settings.body.realm_url, `http://${realm.host}`, 'nginx says the scheme it was reached by, whatever the client wrote');
  });

  test('through nginx: /metrics is not served to the outside', async () => {
    const r = await new Client(PROXY, 'localhost').request('GET', '/metrics');
    assert.is(r.status, 404);
  });
}

test.run();
