// API answers are compressed as nginx in front of Zulip compresses them: brotli or gzip by the
// client's Accept-Encoding, only when the body is large enough to gain from it.
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A GET whose body is read as the bytes that came, so the coding can be checked. */
function rawGet(realm: TestRealm, user: TestUser, path: string, acceptEncoding?: string): Promise<RawReply> {
  const headers: Record<string, string> = { Host: realm.host, Authorization: `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString('base64')}` };
  if (acceptEncoding !== undefined) headers['Accept-Encoding'] = acceptEncoding;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: realm.server.port, method: 'GET', path: `/api/v1${path}`, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: RawReply) => {
  const coding = r.headers['content-encoding'];
  const raw = coding === 'br' ? brotliDecompressSync(r.body) : coding === 'gzip' ? gunzipSync(r.body) : r.body;
  return JSON.parse(raw.toString('utf8'));
};

test('a large answer comes in brotli or gzip as accepted, the same JSON as uncompressed', async () => {
  const realm = await newRealm();
  const channelId = await makeChannel(realm, 'general', [realm.owner]);
  // Ten messages of 10,000 characters: a page of about 200 KB, compressed off the event loop.
  for (let i = 0; i < 10; i++) await send(realm.owner, channelId, 'long', `${i} ${'lorem ipsum dolor '.repeat(550)}`);
  const path = '/messages?anchor=newest&num_before=10&num_after=0&apply_markdown=false';
  const plain = await rawGet(realm, realm.owner, path);
  assert.is(plain.status, 200);
  assert.is(plain.headers['content-encoding'], undefined);
  const expected = JSON.parse(plain.body.toString('utf8'));
  assert.is(expected.messages.length, 10);
  for (const [accept, coding] of [
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['identity', undefined],
    ['br;q=0', undefined],
  ] as const) {
    const r = await rawGet(realm, realm.owner, path, accept);
    assert.is(r.status, 200, accept);
    assert.is(r.headers['content-encoding'], coding, accept);
    assert.is(r.headers['content-type'], 'application/json', accept);
    if (coding) {
      assert.is(r.headers.vary, 'Accept-Encoding', accept);
      assert.ok(r.body.length < plain.body.length / 5, `${accept}: ${r.body.length} bytes`);
    }
    assert.equal(decode(r), expected, accept);
  }
  // A middle-sized answer (a few KB) is compressed at once, on the event loop.
  const me = await rawGet(realm, realm.owner, '/messages?anchor=newest&num_before=1&num_after=0&apply_markdown=false', 'gzip');
  assert.is(me.headers['content-encoding'], 'gzip');
  assert.equal(decode(me).messages, expected.messages.slice(-1));
});

test('small answers and errors go uncompressed', async () => {
  const realm = await newRealm();
  const small = await rawGet(realm, realm.owner, '/users/me/alert_words', 'gzip, br');
  assert.equal([small.status, small.headers['content-encoding'], decode(small)], [200, undefined, { result: 'success', msg: '', alert_words: [] }]);
  const missing = await rawGet(realm, realm.owner, '/messages/999999999', 'gzip, br');
  assert.equal(
    [missing.status, missing.headers['content-encoding'], decode(missing)],
    [400, undefined, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }],
  );
});

test.run();
