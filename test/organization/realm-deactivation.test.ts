// POST /realm/deactivate (Zulip's deactivate_realm, test_realm.py): owners deactivate their
// organization; its parked long-polls get the `realm` deactivated event, its queues end, and every
// later request of its users answers REALM_DEACTIVATED; the CLI's reactivate-realm undoes it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { parseAdminCommand, runAdminCommand, UsageError } from '../../src/cli/commands.ts';
import { Role } from '../../src/domain/roles.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';
import { runCheck } from '../helpers/openapi-check.ts';

const SUCCESS = { result: 'success', msg: '' };
const DEACTIVATED = errorBody('This organization has been deactivated', 'REALM_DEACTIVATED');

async function register(user: TestUser, params: Record<string, unknown> = {}): Promise<{ queue_id: string; last_event_id: number }> {
  const r = await user.client.post('/register', params);
  assert.is(r.status, 200, r.text);
  return r.body;
}

/** Waits until a GET /events has parked on the queue. */
async function parked(realm: TestRealm, queueId: string): Promise<void> {
  for (let i = 0; i < 200 && realm.server.app.queues.peek(queueId)?.state !== 'parked'; i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(realm.server.app.queues.peek(queueId)?.state, 'parked');
}

test('an owner deactivates: parked polls get the event, every queue ends, every request is refused', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const bot = await realm.addUser({ bot: true, botOwnerId: member.id });
  const polling = await register(member, { event_types: ['realm'] });
  const messagesOnly = await register(member, { event_types: ['message'] });
  const botQueue = await register(bot);
  const poll = member.client.get('/events', { queue_id: polling.queue_id, last_event_id: polling.last_event_id });
  await parked(realm, polling.queue_id);
  const r = await realm.owner.client.post('/realm/deactivate', { deletion_delay_days: 30 });
  assert.equal([r.status, r.body], [200, SUCCESS]);
  const answered = await poll;
  assert.equal(
    answered.body.events.map(({ id: _, ...e }: Record<string, unknown>) => e),
    [{ type: 'realm', op: 'deactivated', realm_id: realm.id }],
  );
  const queues = realm.server.app.queues;
  await new Promise((resolve) => setImmediate(resolve));
  for (const id of [polling.queue_id, messagesOnly.queue_id, botQueue.queue_id]) assert.is(queues.peek(id), undefined, `queue ${id} ended`);
  for (const user of [member, realm.owner, bot]) {
    const refused = await user.client.get('/users/me');
    assert.equal([refused.status, refused.body, refused.headers['www-authenticate']], [401, DEACTIVATED, 'Basic realm="zulip"']);
  }
  const again = await member.client.get('/events', { queue_id: polling.queue_id, last_event_id: 0 });
  assert.equal([again.status, again.body], [401, DEACTIVATED]);
  const login = await realm.anonymous.post('/fetch_api_key', { username: member.email, password: member.password });
  assert.equal([login.status, login.body], [401, DEACTIVATED]);
});

test('a WebSocket reader gets the event, then its socket closes as for a deleted queue (4004)', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const { queue_id } = await register(member, { event_types: ['realm'] });
  const ws = new WebSocket(`ws://127.0.0.1:${realm.server.port}/api/v1/events/socket?queue_id=${queue_id}`, { headers: { Host: realm.host } });
  const frames: Record<string, unknown>[] = [];
  ws.on('message', (data) => {
    runCheck.inspectFrame(String(data));
    frames.push(JSON.parse(String(data)));
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  assert.equal((await realm.owner.client.post('/realm/deactivate')).body, SUCCESS);
  assert.is(await closed, 4004);
  assert.equal(frames, [{ id: 0, type: 'realm', op: 'deactivated', realm_id: realm.id }]);
});

test('other organizations go on; a wrong key is still just a wrong key', async () => {
  const realm = await newRealm();
  const other = await newRealm();
  assert.equal((await realm.owner.client.post('/realm/deactivate', { deletion_delay_days: null })).body, SUCCESS);
  assert.equal((await other.owner.client.get('/users/me')).status, 200);
  const wrongKey = await realm.anonymous.withCredentials(realm.owner.email, 'x'.repeat(32)).get('/users/me');
  assert.equal([wrongKey.status, wrongKey.body], [401, errorBody('Invalid API key', 'UNAUTHORIZED')]);
});

test("errors: owners only, Zulip's bounds on the deletion delay; nothing changes", async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const denied = await admin.client.post('/realm/deactivate');
  assert.equal([denied.status, denied.body], [400, errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL')]);
  const early = await realm.owner.client.post('/realm/deactivate', { deletion_delay_days: 13 });
  assert.equal([early.status, early.body], [400, errorBody('Data deletion time must be at least 14 days in the future.')]);
  const notJson = await realm.owner.client.post('/realm/deactivate', { deletion_delay_days: 'soon' });
  assert.equal(notJson.body, errorBody('Argument "deletion_delay_days" is not valid JSON.', 'BAD_REQUEST', { var_name: 'deletion_delay_days' }));
  assert.equal((await admin.client.get('/users/me')).status, 200);
  const registered = await admin.client.post('/register', { fetch_event_types: ['realm'] });
  assert.equal([registered.body.server_min_deactivated_realm_deletion_days, registered.body.server_max_deactivated_realm_deletion_days], [14, null]);
});

test('reactivate-realm brings the organization back with its users and data', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  assert.equal((await realm.owner.client.post('/realm/deactivate')).body, SUCCESS);
  assert.is((await member.client.get('/users/me')).status, 401);
  const result = await runAdminCommand(realm.server.app, parseAdminCommand('reactivate-realm', ['--subdomain', realm.subdomain]));
  assert.equal(result, { realm_id: realm.id, url: `http://${realm.host}` });
  const me = await member.client.get('/users/me');
  assert.equal([me.status, me.body.user_id], [200, member.id]);
  assert.throws(
    () => parseAdminCommand('reactivate-realm', ['--email', 'x@y.test']),
    (e: unknown) => e instanceof UsageError,
  );
  const unknown = await runAdminCommand(realm.server.app, parseAdminCommand('reactivate-realm', ['--subdomain', 'nowhere'])).catch((e: Error) => e.message);
  assert.is(unknown, "No organization with subdomain 'nowhere'");
});

test.run();
