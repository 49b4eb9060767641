// A new organization, made the way `npm start` makes the first one on an empty database, starts
// as Zulip's does: default channels with Welcome Bot's first messages, the owner subscribed to
// them with those messages unread, Welcome Bot's direct message to the owner, and later members
// joining the same channels with that history.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bootstrapFirstRealm, type RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { startTestServer } from '../helpers/server.ts';

let server: RunningServer;
let owner: Client;

test.before(async () => {
  server = await startTestServer();
  const creds = await bootstrapFirstRealm(server, { INIT_EMAIL: 'founder@example.com', INIT_PASSWORD: 'founder-password', INIT_ORG: 'Acme' });
  assert.ok(creds);
  owner = new Client(server.port, new URL(creds.url).host, { email: creds.email, apiKey: creds.apiKey });
});

test.after(() => server?.stop());

const summary = (messages: any[]) => messages.map((m) => [m.type === 'stream' ? m.display_recipient : 'direct', m.subject, m.sender_full_name, m.flags]);

test("the owner is subscribed to the default channels, which hold Welcome Bot's messages, unread", async () => {
  const subs = await owner.get('/users/me/subscriptions');
  assert.is(subs.status, 200, subs.text);
  assert.equal(
    subs.body.subscriptions.map((s: any) => [s.name, s.description, s.invite_only, s.is_web_public]),
    [
      ['general', 'Everyone joins this channel. Say hello!', false, false],
      ['sandbox', 'A place to try things out.', false, false],
    ],
  );
  const registered = await owner.post('/register', { fetch_event_types: ['default_streams'] });
  assert.equal(
    registered.body.realm_default_streams,
    subs.body.subscriptions.map((s: any) => s.stream_id),
  );

  const feed = await owner.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: JSON.stringify([{ operator: 'in', operand: 'home' }]) });
  assert.is(feed.status, 200, feed.text);
  assert.equal(summary(feed.body.messages), [
    ['general', 'moving messages', 'Welcome Bot', []],
    ['sandbox', 'experiments', 'Welcome Bot', []],
    ['sandbox', 'start a conversation', 'Welcome Bot', []],
    ['general', 'greetings', 'Welcome Bot', []],
    ['general', 'welcome', 'Welcome Bot', []],
    ['direct', '', 'Welcome Bot', ['starred']],
  ]);
  // The welcome names its channel with a working channel link, and the first screen's first unread is the oldest of them.
  assert.match(feed.body.messages[4].content, /<a class="stream" data-stream-id="\d+" href="\/#narrow\/channel\/\d+-general">#general<\/a>/);
  const first = await owner.get('/messages', {
    anchor: 'first_unread',
    num_before: 0,
    num_after: 0,
    narrow: JSON.stringify([{ operator: 'in', operand: 'home' }]),
  });
  assert.is(first.body.anchor, feed.body.messages[0].id);
});

test('a new member joins the default channels and finds their messages', async () => {
  const created = await owner.post('/users', { email: 'newcomer@example.com', password: 'newcomer-password', full_name: 'New Comer' });
  assert.is(created.status, 200, created.text);
  const key = await new Client(owner.port, owner.host).post('/fetch_api_key', { username: 'newcomer@example.com', password: 'newcomer-password' });
  const member = owner.withCredentials('newcomer@example.com', key.body.api_key);
  const subs = await member.get('/users/me/subscriptions');
  assert.equal(
    subs.body.subscriptions.map((s: any) => s.name),
    ['general', 'sandbox'],
  );
  const general = await member.get('/messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 100,
    narrow: JSON.stringify([{ operator: 'channel', operand: 'general' }]),
  });
  assert.equal(
    general.body.messages.map((m: any) => m.subject),
    ['moving messages', 'greetings', 'welcome'],
  );
});

test.run();
