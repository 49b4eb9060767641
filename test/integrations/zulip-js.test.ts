// The official JavaScript client, zulip-js, against the shared server: password login (multipart
// POST), GETs with query parameters, a multipart POST, and an error answer.
import http from 'node:http';
import { createRequire } from 'node:module';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useLoopbackAgent } from '../helpers/loopback-agent.ts';
import { newRealm } from '../helpers/server.ts';

type ApiResult = Record<string, any>;
interface ZulipClient {
  config: { apiKey: string };
  users: {
    retrieve(params?: Record<string, unknown>): Promise<ApiResult>;
    create(params: Record<string, unknown>): Promise<ApiResult>;
    me: { getProfile(): Promise<ApiResult> };
  };
  server: { settings(): Promise<ApiResult> };
}
type ZulipInit = (config: { realm: string; username: string; password?: string; apiKey?: string }) => Promise<ZulipClient>;

// zulip-js ships no types; this is the part of its API the tests use.
const zulip = createRequire(import.meta.url)('zulip-js') as ZulipInit;

const defaultAgent = http.globalAgent;
test.before(() => {
  useLoopbackAgent();
});
test.after(() => {
  http.globalAgent = defaultAgent;
});

test('zulip-js: password login, own profile, user list, user creation, server settings', async () => {
  const realm = await newRealm();
  const url = `http://${realm.host}`;
  const client = await zulip({ realm: url, username: realm.owner.email, password: realm.owner.password });
  assert.is(client.config.apiKey, realm.owner.apiKey);

  const me = await client.users.me.getProfile();
  assert.equal([me.result, me.user_id, me.email, me.is_owner], ['success', realm.owner.id, realm.owner.email, true]);

  const created = await client.users.create({ email: 'js@example.com', password: 'js-password', full_name: 'Jay Script' });
  assert.is(created.result, 'success', created.msg);
  const list = await client.users.retrieve({ client_gravatar: false });
  assert.equal(
    list.members.map((m: ApiResult) => [m.user_id, m.full_name]),
    [
      [realm.owner.id, 'Olivia Owner'],
      [created.user_id, 'Jay Script'],
    ],
  );
  assert.type(list.members[1].avatar_url, 'string', 'client_gravatar=false arrived as JSON false');

  const settings = await client.server.settings();
  assert.equal([settings.result, settings.realm_url], ['success', url]);
});

test('zulip-js: with an API key, and a wrong one gives the error body', async () => {
  const realm = await newRealm();
  const url = `http://${realm.host}`;
  const client = await zulip({ realm: url, username: realm.owner.email, apiKey: realm.owner.apiKey });
  assert.is((await client.users.me.getProfile()).user_id, realm.owner.id);
  const wrong = await zulip({ realm: `${url}/api`, username: realm.owner.email, apiKey: 'x'.repeat(32) });
  assert.equal(await wrong.users.me.getProfile(), { result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' });
});

test.run();
