// Invitations: POST/GET /invites, POST /invites/multiuse, DELETE /invites/{id}, resend,
// DELETE /invites/multiuse/{id}, POST /realm/test_welcome_bot_custom_message (Zulip's
// test_invite.py): permissions, role limits, channel and group checks, INVITATION_FAILED, the
// daily limit, `invites_changed` events and the mail (DATA_DIR/mail.log, or SMTP).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import net from 'node:net';
import { Role } from '../src/domain/roles.ts';
import type { RunningServer } from '../src/server.ts';
import { loggedMail, mailTo } from './helpers/mail.ts';
import { openQueue } from './helpers/queues.ts';
import { newRealm, startTestServer, type TestRealm } from './helpers/server.ts';
import { errorBody, makeChannel, setRealmSettings, systemGroup } from './messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const MINUTE = 60;

const failed = (msg: string, errors: unknown[], o: { sent?: boolean; daily?: boolean } = {}) =>
  errorBody(msg, 'INVITATION_FAILED', { errors, sent_invitations: o.sent ?? false, license_limit_reached: false, daily_limit_reached: o.daily ?? false });

async function invitationRows(realm: TestRealm) {
  return realm.server.app.prisma.invitation.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } });
}

test('POST /invites: one invitation per address, listed by GET /invites, mailed with its link, invites_changed to admins and the inviter', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  const member = await realm.addUser();
  const bystander = await realm.addUser();
  const queues = await Promise.all([admin, member, bystander, realm.owner].map((u) => openQueue(u, { event_types: ['invites_changed'] })));
  const emails = `Ann <ann@${realm.subdomain}.test>,bob@${realm.subdomain}.test\n  cy@${realm.subdomain}.test , BOB@${realm.subdomain}.test`;
  const before = Math.floor(Date.now() / 1000);
  const r = await member.client.post('/invites', { invitee_emails: emails, stream_ids: [] });
  assert.equal([r.status, r.body], [200, SUCCESS]);
  const addresses = [`ann@${realm.subdomain}.test`, `bob@${realm.subdomain}.test`, `cy@${realm.subdomain}.test`];
  const rows = await invitationRows(realm);
  assert.equal(rows.map((i) => i.email), addresses);

  const listed = (await member.client.get('/invites')).body;
  assert.equal(listed.result, 'success');
  assert.equal(listed.invites.map((i: Record<string, unknown>) => Object.keys(i).sort()), addresses.map(() => ['email', 'expiry_date', 'id', 'invited', 'invited_as', 'invited_by_user_id', 'is_multiuse', 'notify_referrer_on_join']));
  const first = listed.invites[0];
  assert.equal({ ...first, invited: 0, expiry_date: 0 }, { id: rows[0]!.id, email: addresses[0], invited_by_user_id: member.id, invited: 0, expiry_date: 0, invited_as: Role.MEMBER, is_multiuse: false, notify_referrer_on_join: true });
  assert.ok(first.invited >= before && first.invited <= before + 5);
  // The default validity: INVITATION_LINK_VALIDITY_MINUTES, 10 days.
  assert.is(first.expiry_date - first.invited, 14400 * MINUTE);

  const mail = await mailTo(realm.server, addresses[0]!);
  assert.is(mail.length, 1);
  assert.is(mail[0]!.subject, `User 2 invited you to join Realm ${realm.subdomain.slice(1).split('x')[0]}`);
  assert.is(mail[0]!.link, `http://${realm.host}/accounts/do_confirm/${rows[0]!.key}`);
  assert.match(mail[0]!.text, `User 2 (${member.email}) has invited you`);
  assert.match(mail[0]!.text, 'This link expires on');

  for (const q of [queues[0]!, queues[1]!, queues[3]!]) assert.equal(await q.next(), [{ type: 'invites_changed' }]);
  assert.equal(await queues[2]!.pending(), [], 'members who did not invite are not told');
});

test.run();
