// Redeeming invitations over HTTP, as a person with a browser would: the link from the mail opens
// a page, the form creates the account with what the invitation gave it, the account logs in and
// talks. Expired, revoked and used links get a page saying so (Zulip's test_signup.py).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { type Client, encodeForm, type Reply } from '../helpers/client.ts';
import { mailTo } from '../helpers/mail.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';
import { verifyAction } from '../helpers/verify-action.ts';
import { makeChannel, systemGroup as systemGroupId, withSystemBots } from '../messages/messages-helpers.ts';
import { isEventOf } from '../../src/events/schemas.ts';

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
  assert.is((await o.post('/default_streams', { stream_id: lobby })).status, 200);
  const group = (await o.post('/user_groups/create', { name: 'newcomers', description: 'd', members: [] })).body.group_id;
  const email = `nina@${realm.subdomain}.test`;
  const link = await invite(realm, o, email, {
    stream_ids: [general],
    group_ids: [group],
    include_realm_default_subscriptions: true,
    invite_as: Role.MODERATOR,
    welcome_message_custom_text: 'Read **#general** first.',
  });

  const form = await open(realm, link);
  assert.is(form.status, 200, form.text);
  assert.is(form.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(form.headers['content-security-policy'] as string, /default-src 'none'; style-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
  assert.is(form.headers['referrer-policy'], 'no-referrer');
  assert.match(form.text, '<form method="post" action="/accounts/register/">');
  assert.match(form.text, `<strong>${email}</strong>`);
  assert.match(form.text, 'Olivia Owner invited you');
  const key = hiddenKey(form.text);
  assert.is(link.endsWith(key), true);

  const done = await submit(realm.anonymous, '/accounts/register/', { key, full_name: '  Nina Newcomer ', password: 'nina-password' });
  // Logged in, as the login form does: a session cookie and a fresh CSRF token, and on to the web client.
  assert.is(done.status, 302, done.text);
  assert.is(done.headers.location, `${realm.server.app.realms.url(realm.server.app.realms.byId(realm.id)!)}/`);
  const cookies = (done.headers['set-cookie'] as string[]).map((c) => c.split(';')[0]!);
  assert.equal(
    cookies.map((c) => c.split('=')[0]),
    ['sessionid', 'csrftoken'],
  );
  const session = await realm.anonymous.request('GET', '/json/users/me', { headers: { cookie: cookies.join('; ') } });
  assert.is(session.body.email, email);

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
  assert.equal(
    dms.map((m: { sender_full_name: string }) => m.sender_full_name),
    ['Welcome Bot', 'Welcome Bot'],
  );
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

async function keyOf(realm: TestRealm, email: string): Promise<string> {
  return (await realm.server.app.prisma.invitation.findFirstOrThrow({ where: { realmId: realm.id, email }, orderBy: { id: 'desc' } })).key;
}

const userCount = (realm: TestRealm) => realm.server.app.prisma.user.count({ where: { realmId: realm.id } });

test('creating the account publishes what Zulip does: the user, system and invited groups, subscriptions, invites_changed, then the messages', async () => {
  const realm = await newRealm();
  await withSystemBots(realm);
  const o = realm.owner.client;
  const general = await makeChannel(realm, 'general', [realm.owner]);
  const group = (await o.post('/user_groups/create', { name: 'crew', description: '', members: [] })).body.group_id;
  const email = `eve@${realm.subdomain}.test`;
  await invite(realm, o, email, { stream_ids: [general], group_ids: [group], welcome_message_custom_text: 'Extra words.' });
  const key = await keyOf(realm, email);
  const events = await verifyAction(
    realm,
    () => submit(realm.anonymous, '/accounts/register/', { key, full_name: 'Eve Example', password: 'eve-password' }),
    [
      'realm_user/add',
      'user_group/add_members',
      'user_group/add_members',
      'subscription/add',
      'subscription/peer_add',
      'user_group/add_members',
      'invites_changed',
      'message',
      'message',
      'message',
    ],
    302,
  );
  const eve = await realm.server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: email } });
  const groupsOf = events.flatMap(({ event }) => (event.type === 'user_group' && 'group_id' in event ? [event.group_id] : []));
  assert.equal(groupsOf, [systemGroupId(realm, 'role:members'), systemGroupId(realm, 'role:fullmembers'), group]);
  const messages = events.flatMap(({ event, userIds }) => (isEventOf(event, 'message') ? [[event.message.sender_full_name, userIds]] : []));
  assert.equal(
    messages.map(([sender]) => sender),
    ['Notification Bot', 'Welcome Bot', 'Welcome Bot'],
  );
  assert.ok((messages[0]![1] as number[]).includes(realm.owner.id));
  assert.ok((messages[1]![1] as number[]).includes(eve.id));
});

test('the realm default welcome text, none when the invitation says "", and no note to an inviter who asked for none', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  await o.patch('/realm', { welcome_message_custom_text: 'Organization words.' });
  const join = async (email: string, params: Record<string, unknown>) => {
    await invite(realm, o, email, params);
    const r = await submit(realm.anonymous, '/accounts/register/', { key: await keyOf(realm, email), full_name: email.split('@')[0]!, password: 'password-1' });
    assert.is(r.status, 302, r.text);
    const user = await realm.server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: email } });
    const rows = await realm.server.app.prisma.message.findMany({
      where: { realmId: realm.id, directGroup: { memberKey: { contains: String(user.id) } } },
      orderBy: { id: 'asc' },
    });
    return { user, contents: rows.map((m) => m.content) };
  };
  const ownerDms = () =>
    realm.server.app.prisma.message.count({ where: { realmId: realm.id, directGroup: { memberKey: { contains: String(realm.owner.id) } } } });
  const before = await ownerDms();
  const guest = await join(`gus@${realm.subdomain}.test`, { invite_as: Role.GUEST, notify_referrer_on_join: false });
  assert.is(guest.user.role, Role.GUEST);
  assert.equal(guest.contents.length, 2);
  assert.is(guest.contents[1], 'Organization words.');
  assert.is(await ownerDms(), before, 'the inviter asked not to be told');
  const quiet = await join(`quinn@${realm.subdomain}.test`, { welcome_message_custom_text: '' });
  assert.equal(quiet.contents.length, 1);
  assert.match(quiet.contents[0]!, 'Welcome Bot');
});

test('expired, revoked, used, unknown and malformed links get a page saying so, and create nothing', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const domain = `${realm.subdomain}.test`;
  const links = {
    expired: await invite(realm, o, `late@${domain}`, { invite_expires_in_minutes: 5 }),
    revoked: await invite(realm, o, `gone@${domain}`),
  };
  await realm.server.app.prisma.invitation.updateMany({
    where: { realmId: realm.id, email: `late@${domain}` },
    data: { expiresAt: new Date(Date.now() - 1000) },
  });
  const revokedId = (await realm.server.app.prisma.invitation.findFirstOrThrow({ where: { realmId: realm.id, email: `gone@${domain}` } })).id;
  assert.is((await o.delete(`/invites/${revokedId}`)).status, 200);
  const other = await newRealm();
  const foreign = await invite(other, other.owner.client, `foreign@${other.subdomain}.test`);
  const users = await userCount(realm);

  const cases: [string, number, string][] = [
    [links.expired, 410, 'This invitation has expired'],
    [links.revoked, 410, 'This invitation was revoked'],
    [`http://${realm.host}/accounts/do_confirm/${'a'.repeat(24)}`, 404, 'This link is not valid'],
    [`http://${realm.host}/accounts/do_confirm/not-a-key`, 404, 'This link is not valid'],
    [`http://${realm.host}/accounts/do_confirm/${new URL(foreign).pathname.split('/').pop()}`, 404, 'This link is not valid'],
  ];
  for (const [link, status, title] of cases) {
    const page = await open(realm, link);
    assert.equal([page.status, page.headers['content-type']], [status, 'text/html; charset=utf-8'], link);
    assert.match(page.text, `<h1>${title}</h1>`);
    const key = new URL(link).pathname.split('/').pop()!;
    const posted = await submit(realm.anonymous, '/accounts/register/', { key, full_name: 'Some One', password: 'password-1' });
    assert.equal([posted.status, posted.text.includes(`<h1>${title}</h1>`)], [status, true], `POST ${link}`);
  }
  assert.is(await userCount(realm), users);
});

test('form errors come back on the form, with what was typed, escaped; nothing is created until the form is right', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const email = `fay@${realm.subdomain}.test`;
  await invite(realm, o, email);
  const key = await keyOf(realm, email);
  const users = await userCount(realm);
  const cases: [Record<string, string>, string][] = [
    [{ full_name: 'F', password: 'password-1' }, 'Name too short!'],
    [{ full_name: 'Fay <b>Bold</b>', password: 'password-1' }, 'Invalid characters in name!'],
    [{ full_name: 'Fay', password: 'short' }, 'Your password must have at least 6 characters.'],
    [{ full_name: 'Fay', password: 'p'.repeat(101) }, 'Your password must have at most 100 characters.'],
    [{ password: 'password-1' }, 'Name too short!'],
  ];
  for (const [fields, message] of cases) {
    const r = await submit(realm.anonymous, '/accounts/register/', { key, ...fields });
    assert.is(r.status, 400, r.text);
    assert.match(r.text, `<p class="error" role="alert">${message}</p>`);
    assert.match(r.text, `value="${(fields.full_name ?? '').replace(/</g, '&lt;').replace(/>/g, '&gt;')}"`);
    assert.not.match(r.text, '<b>Bold</b>');
    assert.match(r.text, `name="key" value="${key}"`);
  }
  await o.patch('/realm', { require_unique_names: true });
  const taken = await submit(realm.anonymous, '/accounts/register/', { key, full_name: 'olivia owner', password: 'password-1' });
  assert.equal([taken.status, taken.text.includes('Unique names required in this organization.')], [400, true]);
  // Someone made the account another way meanwhile.
  await o.post('/users', { email, password: 'other-password', full_name: 'Fay Elsewhere' });
  const late = await submit(realm.anonymous, '/accounts/register/', { key, full_name: 'Fay Field', password: 'password-1' });
  assert.equal([late.status, late.text.includes(`Email &#39;${email}&#39; already in use`)], [400, true]);
  assert.is(await userCount(realm), users + 1);
  assert.is((await realm.server.app.prisma.invitation.findFirstOrThrow({ where: { key } })).status, 0);
});

test('what the organization and the inviter wrote is escaped on the page', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR, name: "Ada O'Hara" });
  await realm.owner.client.patch('/realm', { name: '<i>Org</i> & "Co"' });
  const link = await invite(realm, admin.client, `x@${realm.subdomain}.test`);
  const page = await open(realm, link);
  assert.match(page.text, '<title>Join &lt;i&gt;Org&lt;/i&gt; &amp; &quot;Co&quot;</title>');
  assert.match(page.text, 'Ada O&#39;Hara invited you');
  assert.not.match(page.text, '<i>Org</i>');
});

test('a reusable link: the address is confirmed by mail, then the same form; its terms apply; revoking it stops sign-ups', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const channel = await makeChannel(realm, 'welcome', [realm.owner]);
  const link = (await o.post('/invites/multiuse', { stream_ids: [channel], invite_as: Role.GUEST })).body.invite_link as string;
  const path = new URL(link).pathname;
  const page = await open(realm, link);
  assert.is(page.status, 200, page.text);
  assert.match(page.text, `<form method="post" action="${path}">`);
  assert.match(page.text, 'name="email" type="email"');

  const taken = await submit(realm.anonymous, path, { email: realm.owner.email });
  assert.equal([taken.status, taken.text.includes('An account with this email address already exists.')], [400, true]);
  const invalid = await submit(realm.anonymous, path, { email: 'nope' });
  assert.equal([invalid.status, invalid.text.includes('Please enter a valid email address.'), invalid.text.includes('value="nope"')], [400, true, true]);

  const email = `joiner@${realm.subdomain}.test`;
  const asked = await submit(realm.anonymous, path, { email: ` ${email} ` });
  assert.is(asked.status, 200, asked.text);
  assert.match(asked.text, `We sent a link to <strong>${email}</strong>`);
  const [mail] = await mailTo(realm.server, email);
  assert.is(mail!.subject, `Confirm your email address for ${realm.server.app.realms.byId(realm.id)!.name}`);
  const form = await open(realm, mail!.link);
  assert.is(form.status, 200, form.text);
  assert.match(form.text, 'Create your account in');
  const done = await submit(realm.anonymous, '/accounts/register/', { key: hiddenKey(form.text), full_name: 'Jo Joiner', password: 'jo-password' });
  assert.is(done.status, 302, done.text);
  const jo = await realm.server.app.prisma.user.findFirstOrThrow({ where: { realmId: realm.id, deliveryEmail: email } });
  assert.is(jo.role, Role.GUEST);
  assert.ok(await realm.server.app.prisma.subscription.findFirst({ where: { userId: jo.id, channelId: channel, active: true } }));
  // A reusable link stays usable; the sign-ups it started are not invitations anyone manages.
  assert.is((await open(realm, link)).status, 200);
  assert.is((await o.get('/invites')).body.invites.length, 1);

  const second = `second@${realm.subdomain}.test`;
  assert.is((await submit(realm.anonymous, path, { email: second })).status, 200);
  const id = (await realm.server.app.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: realm.id } })).id;
  assert.is((await o.delete(`/invites/multiuse/${id}`)).status, 200);
  const pending = await mailTo(realm.server, second);
  const stale = await open(realm, pending[0]!.link);
  assert.equal([stale.status, stale.text.includes('This invitation was revoked')], [410, true]);
  const refused = await submit(realm.anonymous, '/accounts/register/', {
    key: new URL(pending[0]!.link).pathname.split('/').pop()!,
    full_name: 'Too Late',
    password: 'password-1',
  });
  assert.equal([refused.status, refused.text.includes('This invitation was revoked')], [410, true]);
  const closed = await open(realm, link);
  assert.equal([closed.status, closed.text.includes('This invitation was revoked')], [410, true]);
  assert.is((await submit(realm.anonymous, path, { email: `third@${realm.subdomain}.test` })).status, 410);
});

test('using one invitation spends the others for that address, and both inviters hear of it', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const email = `popular@${realm.subdomain}.test`;
  await invite(realm, realm.owner.client, email);
  await invite(realm, member.client, email);
  const queue = await openQueue(member, { event_types: ['invites_changed'] });
  const [first, second] = await realm.server.app.prisma.invitation.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } });
  assert.is((await submit(realm.anonymous, '/accounts/register/', { key: first!.key, full_name: 'Pop Ular', password: 'password-1' })).status, 302);
  assert.equal(await queue.next(), [{ type: 'invites_changed' }]);
  assert.equal((await member.client.get('/invites')).body.invites, []);
  const page = await open(realm, `http://${realm.host}/accounts/do_confirm/${second!.key}`);
  assert.equal([page.status, page.text.includes('This invitation was revoked')], [410, true]);
});

test('a reusable link mails at most five addresses a day for one visitor', async () => {
  const server = await startTestServer({ RATE_LIMIT: 'on' });
  try {
    const realm = await newRealm(server);
    const path = new URL((await realm.owner.client.post('/invites/multiuse')).body.invite_link).pathname;
    for (let i = 1; i <= 5; i++) assert.is((await submit(realm.anonymous, path, { email: `p${i}@x.test` })).status, 200);
    const refused = await submit(realm.anonymous, path, { email: 'p6@x.test' });
    assert.equal([refused.status, refused.text.includes('Too many sign-up emails')], [429, true]);
    assert.ok(Number(refused.headers['retry-after']) > 80000);
    assert.equal(await mailTo(server, 'p6@x.test'), []);
  } finally {
    await server.stop();
  }
});

test.run();
