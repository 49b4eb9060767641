// Redeeming invitations over HTTP, as a person with a browser would: the link from the mail opens
// a page, the form creates the account with what the invitation gave it, the account logs in and
// talks. Expired, revoked and used links get a page saying so (Zulip's test_signup.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../src/domain/roles.ts';
import { type Client, encodeForm, type Reply } from './helpers/client.ts';
import { mailTo } from './helpers/mail.ts';
import { openQueue } from './helpers/queues.ts';
import { newRealm, type TestRealm } from './helpers/server.ts';
import { verifyAction } from './helpers/verify-action.ts';
import { makeChannel, setRealmSettings } from './messages-helpers.ts';

/** GET a page of the realm by its full URL, as a browser following the link. */
function open(realm: TestRealm, url: string): Promise<Reply> {
  const u = new URL(url);
  assert.is(u.host, realm.host);
  return realm.anonymous.request('GET', u.pathname);
}

/** Submits a page's form. */
function submit(client: Client, action: string, fields: Record<string, string>): Promise<Reply> {
  return client.request('POST', action, { body: encodeForm(fields) });
}

/** The value of a form's hidden key field on a page. */
const hiddenKey = (page: string) => /name="key" value="([a-z2-7]{24})"/.exec(page)?.[1] ?? '';

async function invite(realm: TestRealm, inviter: Client, email: string, params: Record<string, unknown> = {}): Promise<string> {
  const r = await inviter.post('/invites', { invitee_emails: email, stream_ids: [], ...params });
  assert.is(r.status, 200, r.text);
  const mail = await mailTo(realm.server, email);
  return mail[mail.length - 1]!.link;
}

test('invitation -> page -> form -> account with the invited role, channels and groups -> API key -> first message', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const general = await makeChannel(realm, 'general', [realm.owner]);
  const lobby = await makeChannel(realm, 'lobby', [realm.owner]);
  await makeChannel(realm, 'elsewhere', [realm.owner]);
  await realm.server.app.prisma.defaultStream.create({ data: { realmId: realm.id, channelId: lobby } });
  const group = (await o.post('/user_groups/create', { name: 'newcomers', description: 'd', members: [] })).body.group_id;
  const email = `nina@${realm.subdomain}.test`;
  const link = await invite(realm, o, email, {
    stream_ids: [general], group_ids: [group], include_realm_default_subscriptions: true, invite_as: Role.MODERATOR, welcome_message_custom_text: 'Read **#general** first.',
  });

  const form = await open(realm, link);
  assert.is(form.status, 200, form.text);
  assert.is(form.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(form.headers['content-security-policy'] as string, /default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
  assert.is(form.headers['referrer-policy'], 'no-referrer');
  assert.match(form.text, '<form method="post" action="/accounts/register/">');
  assert.match(form.text, `<strong>${email}</strong>`);
  assert.match(form.text, 'Olivia Owner invited you');
  const key = hiddenKey(form.text);
  assert.is(link.endsWith(key), true);

  const done = await submit(realm.anonymous, '/accounts/register/', { key, full_name: '  Nina Newcomer ', password: 'nina-password' });
  assert.is(done.status, 200, done.text);
  assert.match(done.text, `Your account <strong>${email}</strong> is ready, Nina Newcomer.`);

  const login = await realm.anonymous.post('/fetch_api_key', { username: email, password: 'nina-password' });
  assert.is(login.status, 200, login.text);
  const nina = realm.anonymous.withCredentials(email, login.body.api_key);
  const me = (await nina.get('/users/me')).body;
  assert.equal([me.full_name, me.role, me.email], ['Nina Newcomer', Role.MODERATOR, email]);
  const subs = (await nina.get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name).sort();
  assert.equal(subs, ['general', 'lobby']);
  const groups = (await nina.get('/user_groups')).body.user_groups;
  assert.ok(groups.find((g: { id: number }) => g.id === group).members.includes(me.user_id));

  const sent = await nina.post('/messages', { type: 'stream', to: general, topic: 'hello', content: 'Hi, I am new here.' });
  assert.is(sent.status, 200, sent.text);

  // Welcome Bot wrote twice (its message, starred, then the invitation's text); the inviter heard from the Notification Bot.
  const dms = (await nina.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] })).body.messages;
  assert.equal(dms.map((m: { sender_full_name: string }) => m.sender_full_name), ['Welcome Bot', 'Welcome Bot']);
  assert.match(dms[0].content, 'welcome to');
  assert.ok(dms[0].flags.includes('starred'));
  assert.match(dms[1].content, '<strong>');
  const told = (await o.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] })).body.messages[0];
  assert.is(told.sender_full_name, 'Notification Bot');
  assert.match(told.content, `accepted your invitation to join`);

  // Used up: the list forgets it, the link says so.
  assert.equal((await o.get('/invites')).body.invites, []);
  const again = await open(realm, link);
  assert.is(again.status, 410);
  assert.match(again.text, 'This invitation has already been used');
});

test.run();
