// Several organizations on one server: the Host header's subdomain chooses the organization, as in
// Zulip. (A server with a single organization serves it on any host: see rate-limit.test.ts, whose
// extra server holds just one.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '../helpers/client.ts';
import { newRealm } from '../helpers/server.ts';

test('the subdomain of the Host header chooses the organization, whatever its case and port', async () => {
  const a = await newRealm();
  const b = await newRealm();
  const port = a.server.port;
  for (const [realm, host] of [
    [a, a.host],
    [b, b.host],
    [a, a.host.toUpperCase()],
    [b, `${b.subdomain}.localhost`],
  ] as const) {
    const settings = await new Client(port, host).get('/server_settings');
    assert.equal(
      [settings.status, settings.body.realm_name, settings.body.realm_url],
      [200, a.server.app.realms.byId(realm.id)!.name, `http://${realm.host}`],
      host,
    );
  }
  const me = await new Client(port, b.host, { email: b.owner.email, apiKey: b.owner.apiKey }).get('/users/me');
  assert.equal([me.status, me.body.user_id], [200, b.owner.id]);
  // The same user and key at the other organization's host are unknown there.
  const elsewhere = await new Client(port, a.host, { email: b.owner.email, apiKey: b.owner.apiKey }).get('/users/me');
  assert.equal([elsewhere.status, elsewhere.body.msg], [401, 'Invalid API key']);
});

test("an unknown subdomain is a 404 with Zulip's error body, on every route and before authentication", async () => {
  const a = await newRealm();
  const port = a.server.port;
  for (const host of [`nope.localhost:${port}`, `x.${a.host}`]) {
    const anonymous = new Client(port, host);
    const replies = [
      await anonymous.get('/server_settings'),
      await anonymous.post('/fetch_api_key', { username: a.owner.email, password: a.owner.password }),
      await anonymous.withCredentials(a.owner.email, a.owner.apiKey).get('/users/me'),
    ];
    for (const r of replies) {
      assert.equal([r.status, r.body], [404, { result: 'error', msg: 'Invalid subdomain', code: 'NONEXISTENT_SUBDOMAIN' }], host);
    }
  }
});

test.run();
