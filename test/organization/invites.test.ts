// Invitations: POST/GET /invites, POST /invites/multiuse, DELETE /invites/{id}, resend,
// DELETE /invites/multiuse/{id}, POST /realm/test_welcome_bot_custom_message (Zulip's
// test_invite.py): permissions, role limits, channel and group checks, INVITATION_FAILED, the
// daily limit, `invites_changed` events and the mail (DATA_DIR/mail.log, or SMTP).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { once } from 'node:events';
import net from 'node:net';
import { Role } from '../../src/domain/roles.ts';
import type { Client } from '../helpers/client.ts';
import { loggedMail, mailTo } from '../helpers/mail.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, startTestServer, type TestRealm } from '../helpers/server.ts';
import { errorBody, makeChannel, setRealmSettings, systemGroup } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const MINUTE = 60;

const failed = (msg: string, errors: unknown[], o: { sent?: boolean; daily?: boolean } = {}) =>
  errorBody(msg, 'INVITATION_FAILED', { errors, sent_invitations: o.sent ?? false, license_limit_reached: false, daily_limit_reached: o.daily ?? false });

const realmName = (realm: TestRealm) => realm.server.app.realms.byId(realm.id)!.name;

async function invitationRows(realm: TestRealm) {
  return realm.server.app.prisma.invitation.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } });
}

/** Everything a refused request could have left behind: invitations, links, mail, events. */
async function assertNothingSent(realm: TestRealm, action: () => Promise<{ status: number; body: unknown }>, expected: unknown) {
  // Only this organization's mail: other tests' emails (missed messages, digests) arrive in the shared log meanwhile.
  const realmMail = async () => (await loggedMail(realm.server)).filter((m) => m.text.includes(realm.host)).length;
  const [rows, links, mail] = [
    await invitationRows(realm),
    await realm.server.app.prisma.multiuseInvite.count({ where: { realmId: realm.id } }),
    await realmMail(),
  ];
  const queue = await openQueue(realm.owner, { event_types: ['invites_changed'] });
  const r = await action();
  assert.equal([r.status, r.body], [400, expected]);
  assert.equal(await invitationRows(realm), rows);
  assert.is(await realm.server.app.prisma.multiuseInvite.count({ where: { realmId: realm.id } }), links);
  assert.is(await realmMail(), mail);
  assert.equal(await queue.pending(), []);
}

test('POST /invites: one invitation per address, listed by GET /invites, mailed with its link, invites_changed to admins and the inviter', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser({ name: 'Mona Member' });
  const bystander = await realm.addUser();
  const queues = await Promise.all([admin, member, bystander, realm.owner].map((u) => openQueue(u, { event_types: ['invites_changed'] })));
  const domain = `${realm.subdomain}.test`;
  // Commas or newlines; "Name <address>" gives the address; the same address twice is one invitation.
  const emails = `Ann <ann@${domain}>,bob@${domain}\n  cy@${domain} , BOB@${domain},`;
  const before = Math.floor(Date.now() / 1000);
  const r = await member.client.post('/invites', { invitee_emails: emails, stream_ids: [] });
  assert.equal([r.status, r.body], [200, SUCCESS]);
  const addresses = [`ann@${domain}`, `bob@${domain}`, `cy@${domain}`];
  const rows = await invitationRows(realm);
  assert.equal(
    rows.map((i) => i.email),
    addresses,
  );

  const listed = (await member.client.get('/invites')).body;
  assert.equal(
    listed.invites.map((i: { email: string }) => i.email),
    addresses,
  );
  const first = listed.invites[0];
  assert.equal(
    { ...first, invited: 0, expiry_date: 0 },
    {
      id: rows[0]!.id,
      email: addresses[0],
      invited_by_user_id: member.id,
      invited: 0,
      expiry_date: 0,
      invited_as: Role.MEMBER,
      is_multiuse: false,
      notify_referrer_on_join: true,
    },
  );
  assert.ok(first.invited >= before && first.invited <= before + 5);
  // The default validity: INVITATION_LINK_VALIDITY_MINUTES, 10 days.
  assert.is(first.expiry_date - first.invited, 14400 * MINUTE);

  const mail = await mailTo(realm.server, addresses[0]!);
  assert.is(mail.length, 1);
  assert.is(mail[0]!.subject, `Mona Member invited you to join ${realmName(realm)}`);
  assert.is(mail[0]!.link, `http://${realm.host}/accounts/do_confirm/${rows[0]!.key}`);
  assert.match(mail[0]!.text, `Mona Member (${member.email}) has invited you`);
  assert.match(mail[0]!.text, `This link expires on ${rows[0]!.expiresAt!.toUTCString()}.`);
  assert.match(rows[0]!.key, /^[a-z2-7]{24}$/);
  assert.is(new Set(rows.map((i) => i.key)).size, 3);

  for (const q of [queues[0]!, queues[1]!, queues[3]!]) assert.equal(await q.next(), [{ type: 'invites_changed' }]);
  assert.equal(await queues[2]!.pending(), [], 'members who did not invite are not told');
});

test('invite_expires_in_minutes: a number of minutes, null for never; its bad values', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const domain = `${realm.subdomain}.test`;
  assert.is((await o.post('/invites', { invitee_emails: `soon@${domain}`, stream_ids: [], invite_expires_in_minutes: 30 })).status, 200);
  assert.is((await o.post('/invites', { invitee_emails: `never@${domain}`, stream_ids: [], invite_expires_in_minutes: null })).status, 200);
  const [soon, never] = (await o.get('/invites')).body.invites;
  assert.is(soon.expiry_date - soon.invited, 30 * MINUTE);
  assert.is(never.expiry_date, null);
  assert.match((await mailTo(realm.server, `never@${domain}`))[0]!.text, 'This link does not expire.');
  for (const bad of [0, -5, 'soon', 1.5]) {
    const r = await o.post('/invites', { invitee_emails: `bad@${domain}`, stream_ids: [], invite_expires_in_minutes: bad });
    assert.is(r.status, 400, String(bad));
    assert.is(r.body.code, 'BAD_REQUEST');
  }
});

test('who may invite: guests and bots never, can_invite_users_group, and roles no higher than the inviter own', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const moderator = await realm.addUser({ role: Role.MODERATOR });
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: Role.GUEST });
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  let n = 0;
  const invite = (c: Client, invite_as?: number) => c.post('/invites', { invitee_emails: `new${++n}@${realm.subdomain}.test`, stream_ids: [], invite_as });

  await assertNothingSent(realm, () => invite(guest.client), errorBody('Not allowed for guest users'));
  await assertNothingSent(realm, () => invite(bot.client), errorBody('This endpoint does not accept bot requests.'));
  await assertNothingSent(realm, () => invite(member.client, Role.MODERATOR), errorBody('Must be an organization administrator'));
  await assertNothingSent(realm, () => invite(member.client, Role.ADMINISTRATOR), errorBody('Must be an organization administrator'));
  await assertNothingSent(realm, () => invite(moderator.client, Role.ADMINISTRATOR), errorBody('Must be an organization administrator'));
  await assertNothingSent(realm, () => invite(admin.client, Role.OWNER), errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  await assertNothingSent(realm, () => invite(admin.client, 500), errorBody('Invalid invite_as', 'BAD_REQUEST', { var_name: 'invite_as' }));
  const allowed: [Client, number][] = [
    [member.client, Role.MEMBER],
    [member.client, Role.GUEST],
    [moderator.client, Role.MODERATOR],
    [admin.client, Role.ADMINISTRATOR],
    [realm.owner.client, Role.OWNER],
  ];
  for (const [client, role] of allowed) assert.equal((await invite(client, role)).body, SUCCESS);
  assert.equal(
    (await invitationRows(realm)).map((i) => i.invitedAs),
    allowed.map(([, role]) => role),
  );

  await setRealmSettings(realm, {}, { can_invite_users_group: systemGroup(realm, 'role:administrators') });
  await assertNothingSent(realm, () => invite(member.client), errorBody('Insufficient permission'));
  assert.equal((await invite(admin.client)).body, SUCCESS);
});

test('parameter errors: no address, no stream_ids, bad channels, channels one may not add others to, groups, welcome text', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const open = await makeChannel(realm, 'open', [realm.owner]);
  const secret = await makeChannel(realm, 'secret', [realm.owner], { invite_only: true });
  const lobby = await makeChannel(realm, 'lobby', [realm.owner]);
  const o = realm.owner.client;
  const post = (c: Client, params: Record<string, unknown>) => () =>
    c.post('/invites', { invitee_emails: `x@${realm.subdomain}.test`, stream_ids: [], ...params });

  await assertNothingSent(realm, post(o, { invitee_emails: '' }), errorBody('You must specify at least one email address.'));
  await assertNothingSent(realm, post(o, { invitee_emails: ' ,\n ' }), errorBody('You must specify at least one email address.'));
  await assertNothingSent(
    realm,
    () => o.post('/invites', { invitee_emails: 'x@y.test' }),
    errorBody("Missing 'stream_ids' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'stream_ids' }),
  );
  await assertNothingSent(realm, post(o, { stream_ids: [open, 99999999] }), errorBody('Invalid channel ID 99999999. No invites were sent.'));
  // A private channel the inviter is not in is as good as missing.
  await assertNothingSent(realm, post(member.client, { stream_ids: [secret] }), errorBody(`Invalid channel ID ${secret}. No invites were sent.`));

  await setRealmSettings(realm, {}, { can_add_subscribers_group: systemGroup(realm, 'role:administrators') });
  await assertNothingSent(realm, post(member.client, { stream_ids: [open] }), errorBody('You do not have permission to subscribe other users to channels.'));
  // Default channels are always allowed, and so are the organization's defaults as a whole.
  assert.is((await realm.owner.client.post('/default_streams', { stream_id: lobby })).status, 200);
  assert.equal(
    (await post(member.client, { invitee_emails: `d1@${realm.subdomain}.test`, stream_ids: [lobby], include_realm_default_subscriptions: true })()).body,
    SUCCESS,
  );
  const row = (await invitationRows(realm)).at(-1)!;
  assert.equal([row.channelIds, row.includeRealmDefaultSubscriptions], [[lobby], true]);

  const group = (await o.post('/user_groups/create', { name: 'team', description: '', members: [] })).body.group_id;
  await assertNothingSent(realm, post(o, { group_ids: [99999999] }), errorBody('Invalid user group'));
  await assertNothingSent(realm, post(o, { group_ids: [systemGroup(realm, 'role:members')] }), errorBody('Insufficient permission'));
  await setRealmSettings(realm, {}, { can_manage_all_groups: systemGroup(realm, 'role:owners') });
  await assertNothingSent(realm, post(member.client, { group_ids: [group] }), errorBody('Insufficient permission'));
  assert.equal((await post(o, { invitee_emails: `g@${realm.subdomain}.test`, group_ids: [group] })()).body, SUCCESS);
  assert.equal((await invitationRows(realm)).at(-1)!.groupIds, [group]);

  await assertNothingSent(realm, post(member.client, { welcome_message_custom_text: 'hi' }), errorBody('Must be an organization administrator'));
  // The limit counts code points: 8000 emoji pass, one more does not.
  const tooLong = '🙂'.repeat(8001);
  await assertNothingSent(
    realm,
    post(admin.client, { welcome_message_custom_text: tooLong }),
    errorBody('welcome_message_custom_text is too long (limit: 8000 characters)', 'BAD_REQUEST', { var_name: 'welcome_message_custom_text' }),
  );
  assert.equal((await post(admin.client, { invitee_emails: `w@${realm.subdomain}.test`, welcome_message_custom_text: '🙂'.repeat(8000) })()).body, SUCCESS);
  assert.is([...(await invitationRows(realm)).at(-1)!.welcomeMessageCustomText!].length, 8000);
});

test('INVITATION_FAILED: invalid addresses send nothing; taken ones are skipped and the rest invited', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  const domain = `${realm.subdomain}.test`;
  const taken = await realm.addUser();
  const gone = await realm.addUser();
  await o.delete(`/users/${gone.id}`);

  await assertNothingSent(
    realm,
    () => o.post('/invites', { invitee_emails: `fine@${domain}, not-an-address, ${taken.email}`, stream_ids: [] }),
    failed("Some emails did not validate, so we didn't send any invitations.", [
      ['not-an-address', 'Invalid address.', false],
      [taken.email, 'Already has an account.', false],
    ]),
  );
  await assertNothingSent(
    realm,
    () => o.post('/invites', { invitee_emails: `${taken.email}, ${gone.email}`, stream_ids: [] }),
    failed("We weren't able to invite anyone.", [
      [taken.email, 'Already has an account.', false],
      [gone.email, 'Account has been deactivated.', true],
    ]),
  );
  await assertNothingSent(
    realm,
    () => o.post('/invites', { invitee_emails: `welcome-bot@${realm.host.split(':')[0]}`, stream_ids: [] }),
    failed("We weren't able to invite anyone.", [[`welcome-bot@${realm.host.split(':')[0]}`, 'Reserved for system bots.', false]]),
  );

  const mixed = await o.post('/invites', { invitee_emails: `${taken.email.toUpperCase()}, fresh@${domain}`, stream_ids: [] });
  assert.equal(
    [mixed.status, mixed.body],
    [
      400,
      failed(
        "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
        [[taken.email.toUpperCase(), 'Already has an account.', false]],
        { sent: true },
      ),
    ],
  );
  assert.equal(
    (await invitationRows(realm)).map((i) => i.email),
    [`fresh@${domain}`],
  );
  assert.is((await mailTo(realm.server, `fresh@${domain}`)).length, 1);
});

test('organizations restricted to their domains refuse other addresses and addresses with +', async () => {
  const realm = await newRealm();
  const o = realm.owner.client;
  await o.post('/realm/domains', { domain: 'acme.test', allow_subdomains: false });
  await o.post('/realm/domains', { domain: 'corp.test', allow_subdomains: true });
  await o.patch('/realm', { emails_restricted_to_domains: true });
  await assertNothingSent(
    realm,
    () => o.post('/invites', { invitee_emails: 'a@acme.test, b@eu.acme.test, c+x@acme.test, d@other.test', stream_ids: [] }),
    failed("Some emails did not validate, so we didn't send any invitations.", [
      ['b@eu.acme.test', 'Outside your domain.', false],
      ['c+x@acme.test', 'Email addresses containing + are not allowed.', false],
      ['d@other.test', 'Outside your domain.', false],
    ]),
  );
  assert.equal((await o.post('/invites', { invitee_emails: 'a@ACME.test, e@eu.corp.test, f@corp.test', stream_ids: [] })).body, SUCCESS);
});

test('the daily limit counts every invitation mail, resends too, and refuses the batch that would pass it', async () => {
  const server = await startTestServer({ INVITES_DAILY_LIMIT: '3' });
  try {
    const realm = await newRealm(server);
    const o = realm.owner.client;
    assert.equal((await o.post('/invites', { invitee_emails: 'a@x.test, b@x.test', stream_ids: [] })).body, SUCCESS);
    const limit = failed(
      'To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
      [],
      { daily: true },
    );
    await assertNothingSent(realm, () => o.post('/invites', { invitee_emails: 'c@x.test, d@x.test', stream_ids: [] }), limit);
    const [a] = await invitationRows(realm);
    assert.equal((await o.post(`/invites/${a!.id}/resend`)).body, SUCCESS);
    assert.is((await mailTo(server, 'a@x.test')).length, 2);
    await assertNothingSent(realm, () => o.post(`/invites/${a!.id}/resend`), limit);
    // Another organization has its own count; a day later this one has again.
    assert.equal((await (await newRealm(server)).owner.client.post('/invites', { invitee_emails: 'a@x.test', stream_ids: [] })).body, SUCCESS);
    await server.app.prisma.invitationEmail.updateMany({ where: { realmId: realm.id }, data: { sentAt: new Date(Date.now() - 25 * 3600_000) } });
    assert.equal((await o.post('/invites', { invitee_emails: 'c@x.test, d@x.test, e@x.test', stream_ids: [] })).body, SUCCESS);
  } finally {
    await server.stop();
  }
});

test('where no invitation is required, accounts younger than three days may not invite (administrators may)', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  await realm.owner.client.patch('/realm', { invite_required: false });
  await assertNothingSent(
    realm,
    () => member.client.post('/invites', { invitee_emails: 'a@x.test', stream_ids: [] }),
    failed('Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.', []),
  );
  await realm.server.app.prisma.user.update({ where: { id: member.id }, data: { dateJoined: new Date(Date.now() - 4 * 86400_000) } });
  realm.server.app.auth.forget(member.id);
  assert.equal((await member.client.post('/invites', { invitee_emails: 'a@x.test', stream_ids: [] })).body, SUCCESS);
});

test('GET /invites: administrators see every unexpired invitation, others their own; expired, used and revoked ones are gone', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const guest = await realm.addUser({ role: Role.GUEST });
  await member.client.post('/invites', { invitee_emails: 'm@x.test', stream_ids: [] });
  await realm.owner.client.post('/invites', { invitee_emails: 'o@x.test, old@x.test', stream_ids: [], invite_as: Role.ADMINISTRATOR });
  const link = (await admin.client.post('/invites/multiuse', { invite_as: Role.GUEST, invite_expires_in_minutes: null })).body.invite_link;
  const [m, o, old] = await invitationRows(realm);
  await realm.server.app.prisma.invitation.update({ where: { id: old!.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  const multiuse = await realm.server.app.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: realm.id } });

  const all = (await admin.client.get('/invites')).body.invites;
  assert.equal(
    all.map((i: { id: number; is_multiuse: boolean }) => [i.id, i.is_multiuse]),
    [
      [m!.id, false],
      [o!.id, false],
      [multiuse.id, true],
    ],
  );
  assert.equal(
    { ...all[2], invited: 0 },
    { id: multiuse.id, invited_by_user_id: admin.id, invited: 0, expiry_date: null, invited_as: Role.GUEST, is_multiuse: true, link_url: link },
  );
  assert.equal((await member.client.get('/invites')).body, { ...SUCCESS, invites: [all[0]] });
  assert.equal((await guest.client.get('/invites')).body, errorBody('Not allowed for guest users'));
  await realm.owner.client.delete(`/invites/${o!.id}`);
  await admin.client.delete(`/invites/multiuse/${multiuse.id}`);
  assert.equal((await admin.client.get('/invites')).body.invites, [all[0]]);
});

test('DELETE /invites/{id} and resend: the inviter, or an administrator (an owner for owner invitations)', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const other = await realm.addUser();
  const m1Address = `m1@${realm.subdomain}.test`;
  await member.client.post('/invites', { invitee_emails: `${m1Address}, m2@x.test`, stream_ids: [] });
  await realm.owner.client.post('/invites', { invitee_emails: 'boss@x.test', stream_ids: [], invite_as: Role.OWNER });
  const [m1, m2, boss] = await invitationRows(realm);
  const other2 = await newRealm();
  await other2.owner.client.post('/invites', { invitee_emails: 'elsewhere@x.test', stream_ids: [] });
  const elsewhere = (await invitationRows(other2))[0]!;

  for (const path of [`/invites/${m1!.id}`, `/invites/${m1!.id}/resend`]) {
    const method = path.endsWith('resend') ? 'post' : 'delete';
    await assertNothingSent(realm, () => other.client[method](path), errorBody('Must be an organization administrator'));
    await assertNothingSent(
      realm,
      () => admin.client[method](path.replace(String(m1!.id), String(boss!.id))),
      errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'),
    );
    await assertNothingSent(realm, () => admin.client[method](path.replace(String(m1!.id), String(elsewhere.id))), errorBody('No such invitation'));
    await assertNothingSent(realm, () => admin.client[method](path.replace(String(m1!.id), '99999999')), errorBody('No such invitation'));
  }

  assert.equal((await member.client.post(`/invites/${m1!.id}/resend`)).body, SUCCESS);
  const mails = await mailTo(realm.server, m1Address);
  assert.equal(
    mails.map((mail) => mail.link),
    [mails[0]!.link, mails[0]!.link],
    'a resend mails the same link',
  );

  const queues = await Promise.all([admin, member, other].map((u) => openQueue(u, { event_types: ['invites_changed'] })));
  assert.equal((await member.client.delete(`/invites/${m1!.id}`)).body, SUCCESS);
  assert.equal(await queues[0]!.next(), [{ type: 'invites_changed' }]);
  assert.equal(await queues[1]!.next(), [{ type: 'invites_changed' }]);
  assert.equal((await admin.client.delete(`/invites/${m2!.id}`)).body, SUCCESS);
  assert.equal(await queues[1]!.next(), [{ type: 'invites_changed' }], 'the inviter hears of an administrator revoking');
  assert.equal(await queues[2]!.pending(), []);
  assert.equal((await realm.owner.client.delete(`/invites/${boss!.id}`)).body, SUCCESS);
  await assertNothingSent(realm, () => member.client.delete(`/invites/${m1!.id}`), errorBody('No such invitation'));
  await assertNothingSent(realm, () => member.client.post(`/invites/${m1!.id}/resend`), errorBody('No such invitation'));
  assert.equal(
    (await invitationRows(realm)).map((i) => i.status),
    [2, 2, 2],
  );
  assert.equal((await admin.client.delete('/invites/abc')).body, errorBody('No such invitation'));
});

test('POST /invites/multiuse: create_multiuse_invite_group, the same checks, a /join/ link; DELETE /invites/multiuse/{id}', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const channel = await makeChannel(realm, 'c', [realm.owner]);
  const queue = await openQueue(admin, { event_types: ['invites_changed'] });

  await assertNothingSent(realm, () => member.client.post('/invites/multiuse'), errorBody('Insufficient permission'));
  await assertNothingSent(
    realm,
    () => admin.client.post('/invites/multiuse', { invite_as: Role.OWNER }),
    errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'),
  );
  await assertNothingSent(
    realm,
    () => admin.client.post('/invites/multiuse', { stream_ids: [99999999] }),
    errorBody('Invalid channel ID 99999999. No invites were sent.'),
  );

  const r = await admin.client.post('/invites/multiuse', { stream_ids: [channel], invite_expires_in_minutes: 90, welcome_message_custom_text: '' });
  assert.is(r.status, 200, r.text);
  const invite = await realm.server.app.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: realm.id } });
  assert.equal(r.body, { ...SUCCESS, invite_link: `http://${realm.host}/join/${invite.key}/` });
  assert.equal([invite.channelIds, invite.invitedAs, invite.welcomeMessageCustomText, invite.referredById], [[channel], Role.MEMBER, '', admin.id]);
  assert.is(Math.round((invite.expiresAt!.getTime() - invite.createdAt.getTime()) / 60_000), 90);
  assert.equal(await queue.next(), [{ type: 'invites_changed' }]);

  await setRealmSettings(realm, {}, { create_multiuse_invite_group: systemGroup(realm, 'role:members') });
  assert.is((await member.client.post('/invites/multiuse')).status, 200);
  assert.equal(await queue.next(), [{ type: 'invites_changed' }]);
  const mine = await realm.server.app.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: realm.id, referredById: member.id } });
  await assertNothingSent(realm, () => member.client.delete(`/invites/multiuse/${invite.id}`), errorBody('Must be an organization administrator'));
  assert.equal((await member.client.delete(`/invites/multiuse/${mine.id}`)).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'invites_changed' }]);
  assert.equal((await admin.client.delete(`/invites/multiuse/${invite.id}`)).body, SUCCESS);
  await assertNothingSent(realm, () => admin.client.delete(`/invites/multiuse/${invite.id}`), errorBody('Invitation has already been revoked'));
  await assertNothingSent(realm, () => admin.client.delete('/invites/multiuse/99999999'), errorBody('No such invitation'));
});

test('PATCH /invites/multiuse/{id}: role, channels, groups and default channels of a usable link, under the checks of creating one', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const channel = await makeChannel(realm, 'c', [realm.owner]);
  const link = (await admin.client.post('/invites/multiuse', { invite_as: Role.GUEST })).body.invite_link;
  const invite = await realm.server.app.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: realm.id } });
  const queue = await openQueue(admin, { event_types: ['invites_changed'] });

  const edited = await admin.client.patch(`/invites/multiuse/${invite.id}`, {
    invite_as: Role.MODERATOR,
    stream_ids: [channel],
    include_realm_default_subscriptions: true,
  });
  assert.equal([edited.status, edited.body], [200, SUCCESS]);
  assert.equal(await queue.next(), [{ type: 'invites_changed' }]);
  const row = await realm.server.app.prisma.multiuseInvite.findUniqueOrThrow({ where: { id: invite.id } });
  assert.equal([row.invitedAs, row.channelIds, row.groupIds, row.includeRealmDefaultSubscriptions, row.key], [Role.MODERATOR, [channel], [], true, invite.key]);
  const listed = (await admin.client.get('/invites')).body.invites[0];
  assert.equal([listed.invited_as, listed.link_url], [Role.MODERATOR, link]);
  assert.equal((await admin.client.patch(`/invites/multiuse/${invite.id}`, { stream_ids: [] })).body, SUCCESS);
  assert.equal((await realm.server.app.prisma.multiuseInvite.findUniqueOrThrow({ where: { id: invite.id } })).invitedAs, Role.MODERATOR, 'absent fields stay');

  const refused: [Client, Record<string, unknown>, number, object][] = [
    [member.client, { invite_as: Role.MEMBER }, invite.id, errorBody('Insufficient permission')],
    [admin.client, { invite_as: Role.OWNER }, invite.id, errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL')],
    [admin.client, { stream_ids: [99999999] }, invite.id, errorBody('Invalid channel ID 99999999. No invites were sent.')],
    [admin.client, { invite_as: 7 }, invite.id, errorBody('Invalid invite_as', 'BAD_REQUEST', { var_name: 'invite_as' })],
    [admin.client, {}, 99999999, errorBody('No such invitation')],
  ];
  for (const [client, params, id, body] of refused) {
    const r = await client.patch(`/invites/multiuse/${id}`, params);
    assert.equal([r.status, r.body], [400, body], JSON.stringify(params));
  }
  await setRealmSettings(realm, {}, { create_multiuse_invite_group: systemGroup(realm, 'role:members') });
  const r = await member.client.patch(`/invites/multiuse/${invite.id}`, { invite_as: Role.MEMBER });
  assert.equal([r.status, r.body], [400, errorBody('Must be an organization administrator')], "another's link takes an administrator");
  assert.equal((await admin.client.delete(`/invites/multiuse/${invite.id}`)).body, SUCCESS);
  const revoked = await admin.client.patch(`/invites/multiuse/${invite.id}`, { invite_as: Role.MEMBER });
  assert.equal([revoked.status, revoked.body], [400, errorBody('No such invitation')]);
  assert.equal(
    (await realm.server.app.prisma.multiuseInvite.findUniqueOrThrow({ where: { id: invite.id } })).invitedAs,
    Role.MODERATOR,
    'nothing refused was written',
  );
});

test('deactivating an inviter expires the invitations they made', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const address = `a@${realm.subdomain}.test`;
  await admin.client.post('/invites', { invitee_emails: address, stream_ids: [], invite_expires_in_minutes: null });
  await admin.client.post('/invites/multiuse');
  const queue = await openQueue(realm.owner, { event_types: ['invites_changed'] });
  assert.is((await realm.owner.client.get('/invites')).body.invites.length, 2);
  assert.equal((await realm.owner.client.delete(`/users/${admin.id}`)).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'invites_changed' }]);
  assert.equal((await realm.owner.client.get('/invites')).body.invites, []);
  const link = (await mailTo(realm.server, address))[0]!.link;
  const page = await realm.anonymous.request('GET', new URL(link).pathname);
  assert.equal([page.status, page.text.includes('This invitation has expired')], [410, true]);
});

test('welcome_message_custom_text: an organization setting, and POST /realm/test_welcome_bot_custom_message previews it', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const queue = await openQueue(member, { event_types: ['realm'] });
  assert.equal((await admin.client.patch('/realm', { welcome_message_custom_text: 'Read the **rules**.' })).body, {
    ...SUCCESS,
    welcome_message_custom_text: 'updated',
  });
  assert.equal(await queue.next(), [{ type: 'realm', op: 'update', property: 'welcome_message_custom_text', value: 'Read the **rules**.' }]);
  assert.is((await member.client.post('/register', { fetch_event_types: ['realm'] })).body.realm_welcome_message_custom_text, 'Read the **rules**.');
  assert.equal(
    (await admin.client.patch('/realm', { welcome_message_custom_text: 'x'.repeat(8001) })).body.msg,
    'welcome_message_custom_text is too long (limit: 8000 characters)',
  );

  const r = await admin.client.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'Hello **there**' });
  assert.is(r.status, 200, r.text);
  const message = (await admin.client.get(`/messages/${r.body.message_id}`)).body.message;
  assert.equal(
    [message.sender_full_name, message.content, message.display_recipient.map((u: { id: number }) => u.id).sort()],
    ['Welcome Bot', '<p>Hello <strong>there</strong></p>', [message.sender_id, admin.id].sort()],
  );
  assert.equal(
    (await admin.client.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: '' })).body,
    errorBody('Message must not be empty'),
  );
  assert.equal(
    (await member.client.post('/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'x' })).body,
    errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
  );
});

/** A minimal SMTP server: accepts every message, or refuses recipients that `refuse` names. */
async function smtpListener(refuse: (to: string) => boolean) {
  const messages: string[] = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let data: string[] | null = null;
    socket.setEncoding('utf8');
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (data) {
          if (line === '.') {
            messages.push(data.join('\n'));
            data = null;
            socket.write('250 queued\r\n');
          } else data.push(line.startsWith('..') ? line.slice(1) : line);
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'RCPT' && refuse(line)) socket.write('550 no such mailbox\r\n');
        else if (verb === 'DATA') {
          data = [];
          socket.write('354 go on\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as net.AddressInfo).port, messages, close: () => server.close() };
}

test('with SMTP_URL the invitation goes through SMTP; a message the server refuses is written to mail.log', async () => {
  const smtp = await smtpListener((line) => line.includes('refused@'));
  const server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: 'invites@chat.test' });
  try {
    assert.is(server.app.mail.description, `sent through SMTP at 127.0.0.1:${smtp.port}`);
    const realm = await newRealm(server);
    assert.equal((await realm.owner.client.post('/invites', { invitee_emails: 'smtp@x.test', stream_ids: [] })).body, SUCCESS);
    await server.app.mail.flush();
    assert.is(smtp.messages.length, 1);
    // Quoted-printable folds long lines.
    const message = smtp.messages[0]!.replace(/=\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const key = (await invitationRows(realm))[0]!.key;
    assert.match(message, /^From: invites@chat\.test$/m);
    assert.match(message, /^To: smtp@x\.test$/m);
    assert.match(message, `http://${realm.host}/accounts/do_confirm/${key}`);
    assert.equal(await loggedMail(server), []);

    assert.equal((await realm.owner.client.post('/invites', { invitee_emails: 'refused@x.test', stream_ids: [] })).body, SUCCESS);
    const [logged] = await loggedMail(server);
    assert.equal([logged!.to, logged!.link], ['refused@x.test', `http://${realm.host}/accounts/do_confirm/${(await invitationRows(realm))[1]!.key}`]);
  } finally {
    await server.stop();
    smtp.close();
  }
});

test.run();
