// Missed-message and digest emails, end to end: a server sending through SMTP_URL to a real local
// SMTP server (test/helpers/smtp.ts), users with a one- or two-second batching period, and what
// arrived read as a mail reader would. Also the unsubscribe links, which work without logging in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import { startSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.ts';
import { eventually, makeChannel, send, sendDm } from '../messages/messages-helpers.ts';

let smtp: TestSmtp;
let server: RunningServer;

test.before(async () => {
  smtp = await startSmtp();
  server = await startTestServer({ SMTP_URL: smtp.url, DIGEST_CHECK_SECONDS: '1' });
});

test.after(async () => {
  await server?.stop();
  await smtp?.close();
});

const mailsTo = (user: TestUser) => smtp.received.filter((m) => m.to === user.email);

/** Waits for the user's `count`-th email and returns all they got. */
const waitForMail = (user: TestUser, count = 1) =>
  eventually(
    async () => mailsTo(user),
    (mails) => mails.length >= count,
    `${count} email(s) to ${user.email}`,
  );

async function ok(r: { status: number; text: string }): Promise<void> {
  assert.is(r.status, 200, r.text);
}

async function setup(periodSeconds = 1): Promise<{ realm: TestRealm; bob: TestUser; zoe: TestUser; channelId: number; realmUrl: string }> {
  const realm = await newRealm(server);
  const bob = await realm.addUser({ name: 'Bob' });
  const zoe = await realm.addUser({ name: 'Zoe' });
  await ok(await bob.client.patch('/settings', { email_notifications_batching_period_seconds: periodSeconds }));
  const channelId = await makeChannel(realm, 'Verona', [realm.owner, bob, zoe]);
  return { realm, bob, zoe, channelId, realmUrl: server.app.realms.url(server.app.realms.byId(realm.id)!) };
}

async function settingsOf(user: TestUser): Promise<Record<string, unknown>> {
  const r = await user.client.post('/register', { fetch_event_types: JSON.stringify(['user_settings']) });
  assert.is(r.status, 200, r.text);
  return r.body.user_settings;
}

const header = (mail: ReceivedMail, name: string) => mail.headers.get(name) ?? '';
const unsubscribeLink = (mail: ReceivedMail) => /^<(.*)>$/.exec(header(mail, 'list-unsubscribe'))![1]!;

test('a direct message to an idle user: an email after the batching period, rendered with absolute links', async () => {
  const { bob, zoe, realmUrl } = await setup();
  const id = await sendDm(zoe, [bob.id], 'See **[the notes](/user_uploads/1/ab/notes.txt)**');
  const [mail, ...more] = await waitForMail(bob);
  assert.equal(more, []);
  assert.is(mail!.subject, 'DMs with Zoe');
  const narrow = `${realmUrl}/#narrow/dm/${[bob.id, zoe.id].sort((a, b) => a - b).join(',')}`;
  assert.ok(mail!.html.includes(`<b>Zoe</b></div><p>See <strong><a href="${realmUrl}/user_uploads/1/ab/notes.txt">the notes</a></strong></p>`), mail!.html);
  assert.ok(mail!.html.includes(`<a href="${narrow}">View or reply in`), mail!.html);
  assert.ok(mail!.text.startsWith(`DMs with Zoe\n\nZoe:\nSee **[the notes](/user_uploads/1/ab/notes.txt)**\n\n`), mail!.text);
  assert.ok(mail!.text.includes(`\n${narrow}\n\nReplying to this email is not supported yet`), mail!.text);
  assert.ok(mail!.text.includes('You are receiving this because you received a direct message.'), mail!.text);
  assert.match(unsubscribeLink(mail!), new RegExp(`^${realmUrl}/accounts/unsubscribe/missed_messages/[\\w-]+\\.[\\w-]+$`));
  assert.is(header(mail!, 'list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
  assert.equal(mailsTo(zoe), [], 'the sender is not emailed');
  assert.is(await server.app.prisma.missedMessageEmail.count({ where: { messageId: id } }), 0, 'the note is gone once sent');
});

test('mentions are batched per conversation: one email per topic or direct-message group, with all its messages', async () => {
  const { realm, bob, zoe, channelId, realmUrl } = await setup(2);
  await send(zoe, channelId, 'lunch', '@**Bob** hungry?');
  await send(zoe, channelId, 'lunch', 'not a mention, but in between');
  await send(realm.owner, channelId, 'LUNCH', '@**Bob** pizza or salad?');
  await send(zoe, channelId, 'other', 'nothing for Bob here');
  await sendDm(zoe, [bob.id, realm.owner.id], 'group hello');
  const mails = await waitForMail(bob, 2);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(mailsTo(bob).length, 2);
  const channel = mails.find((m) => m.subject === '#Verona > lunch')!;
  assert.ok(channel, JSON.stringify(mails.map((m) => m.subject)));
  assert.ok(channel.text.startsWith('#Verona > lunch\n\nZoe:\n@**Bob** hungry?\n\nOlivia Owner:\n@**Bob** pizza or salad?\n\n'), channel.text);
  assert.ok(channel.text.includes(`${realmUrl}/#narrow/channel/${channelId}-Verona/topic/lunch\n`));
  assert.ok(channel.text.includes('You are receiving this because you were mentioned.'));
  assert.ok(!channel.text.includes('in between'), 'only the messages that notify');
  const group = mails.find((m) => m.subject === 'Group DMs with Olivia Owner, Zoe')!;
  assert.ok(group?.text.includes('Zoe:\ngroup hello'), JSON.stringify(mails.map((m) => m.subject)));
});

test('wildcard mentions follow the wildcard settings; alert words are emailed', async () => {
  const { bob, zoe, channelId } = await setup();
  await ok(await bob.client.post('/users/me/alert_words', { alert_words: JSON.stringify(['pineapple']) }));
  await send(zoe, channelId, 'news', '@**all** meeting at noon');
  const [wildcard] = await waitForMail(bob);
  assert.is(wildcard!.subject, '#Verona > news');
  assert.ok(wildcard!.text.includes('Zoe:\n@**all** meeting at noon\n'), wildcard!.text);
  assert.ok(wildcard!.text.includes('You are receiving this because everyone in the conversation was mentioned.'));

  await ok(await bob.client.patch('/settings', { wildcard_mentions_notify: false }));
  await send(zoe, channelId, 'news2', '@**all** second meeting');
  await send(zoe, channelId, 'fruit', 'who likes pineapple?');
  const mails = await waitForMail(bob, 2);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(
    mailsTo(bob).map((m) => m.subject),
    ['#Verona > news', '#Verona > fruit'],
    'the second wildcard mention is not emailed',
  );
  assert.ok(mails[1]!.text.includes('You are receiving this because a message contained one of your alert words.'));
});

test('an edit that mentions someone notes the message for them, as a new mention would be', async () => {
  const { bob, zoe, channelId } = await setup();
  const id = await send(zoe, channelId, 'plans', 'who can help?');
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(mailsTo(bob), []);
  await ok(await zoe.client.patch(`/messages/${id}`, { content: 'who can help? @**Bob**' }));
  const [mail] = await waitForMail(bob);
  assert.is(mail!.subject, '#Verona > plans');
  assert.ok(mail!.text.includes('Zoe:\nwho can help? @**Bob**\n'), mail!.text);
  // Editing again, still mentioning Bob, sends nothing more.
  await ok(await zoe.client.patch(`/messages/${id}`, { content: 'who can help? @**Bob** please' }));
  await new Promise((r) => setTimeout(r, 2000));
  assert.is(mailsTo(bob).length, 1);
});

test('followed topics: every message in one is emailed, under its own setting; wildcard mentions in one under theirs', async () => {
  const { realm, bob, zoe, channelId } = await setup();
  const follow = async (topic: string) => ok(await bob.client.post('/user_topics', { stream_id: channelId, topic, visibility_policy: 3 }));
  await follow('Release');
  // enable_offline_email_notifications covers mentions and direct messages, not followed topics.
  await ok(await bob.client.patch('/settings', { enable_offline_email_notifications: false }));
  await send(zoe, channelId, 'release', 'the build is green');
  await send(zoe, channelId, 'elsewhere', 'not followed');
  const [followed] = await waitForMail(bob);
  assert.is(followed!.subject, '#Verona > release');
  assert.ok(followed!.text.startsWith('#Verona > release\n\nZoe:\nthe build is green\n\n'), followed!.text);
  assert.ok(followed!.text.includes('You are receiving this because you have email notifications enabled for topics you follow.'), followed!.text);

  // With the followed-topic email setting off, only what notifies otherwise comes; a stream
  // wildcard mention in a followed topic notifies by its own setting, even when wildcard
  // mentions elsewhere do not.
  await ok(
    await bob.client.patch('/settings', {
      enable_offline_email_notifications: true,
      enable_followed_topic_email_notifications: false,
      wildcard_mentions_notify: false,
    }),
  );
  await follow('plans');
  await send(zoe, channelId, 'release', 'quietly noted');
  await send(zoe, channelId, 'news', '@**all** not for a followed topic');
  await send(zoe, channelId, 'plans', '@**all** planning at three');
  const mails = await waitForMail(bob, 2);
  assert.equal(
    mails.map((m) => m.subject),
    ['#Verona > release', '#Verona > plans'],
  );
  assert.ok(mails[1]!.text.includes('Zoe:\n@**all** planning at three\n'), mails[1]!.text);
  assert.ok(mails[1]!.text.includes('You are receiving this because you have wildcard mention notifications enabled for topics you follow.'), mails[1]!.text);

  // And with that setting off too, a direct message sent after them is the next email.
  await ok(await bob.client.patch('/settings', { enable_followed_topic_wildcard_mentions_notify: false }));
  await send(zoe, channelId, 'plans', '@**all** planning moved to four');
  await sendDm(realm.owner, [bob.id], 'ping');
  const last = await waitForMail(bob, 3);
  assert.equal(
    last.map((m) => m.subject),
    ['#Verona > release', '#Verona > plans', 'DMs with Olivia Owner'],
  );
});

test('a message read before the batching period is over is not emailed; settings off, nothing is sent', async () => {
  const { bob, zoe } = await setup(2);
  const read = await sendDm(zoe, [bob.id], 'read at once');
  await ok(await bob.client.post('/messages/flags', { messages: JSON.stringify([read]), op: 'add', flag: 'read' }));
  await sendDm(zoe, [bob.id], 'still unread');
  const [mail] = await waitForMail(bob);
  assert.ok(mail!.text.includes('Zoe:\nstill unread\n'), mail!.text);
  assert.ok(!mail!.text.includes('read at once'), mail!.text);

  await ok(await bob.client.patch('/settings', { enable_offline_email_notifications: false }));
  await sendDm(zoe, [bob.id], 'while emails are off');
  // Settings count when the email falls due: it is dropped then.
  await new Promise((r) => setTimeout(r, 2500));
  await ok(await bob.client.patch('/settings', { enable_offline_email_notifications: true, email_notifications_batching_period_seconds: 1 }));
  await sendDm(zoe, [bob.id], 'emails on again');
  const mails = await waitForMail(bob, 2);
  await new Promise((r) => setTimeout(r, 1500));
  assert.is(mailsTo(bob).length, 2);
  assert.ok(mails[1]!.text.includes('emails on again') && !mails[1]!.text.includes('while emails are off'), mails[1]!.text);
});

test('a user with an open event queue who was active lately gets no email', async () => {
  const { bob, zoe } = await setup();
  await ok(await bob.client.post('/register', { event_types: JSON.stringify(['message']) }));
  await ok(await bob.client.post('/users/me/presence', { status: 'active', new_user_input: 'true' }));
  await sendDm(zoe, [bob.id], 'you are here');
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(mailsTo(bob), []);
  assert.is(await server.app.prisma.missedMessageEmail.count({ where: { userId: bob.id } }), 0);
});

test('message content left out of emails when the setting says so', async () => {
  const { bob, zoe } = await setup();
  await ok(await bob.client.patch('/settings', { message_content_in_email_notifications: false }));
  await sendDm(zoe, [bob.id], 'a secret plan');
  const [mail] = await waitForMail(bob);
  assert.ok(!mail!.text.includes('secret') && !mail!.html.includes('secret'), mail!.text);
  assert.ok(mail!.text.includes('Zoe:\nThis email does not include message content'), mail!.text);
});

test('the unsubscribe link turns missed-message emails off without logging in; forged or mismatched links do not', async () => {
  const { realm, bob, zoe } = await setup();
  await sendDm(zoe, [bob.id], 'hello');
  const [mail] = await waitForMail(bob);
  const link = new URL(unsubscribeLink(mail!));
  assert.ok(mail!.text.includes(`\n${link.href}`), 'the link is in the text too');
  const token = link.pathname.split('/').pop()!;
  const forged = `${token.split('.')[0]}.${'A'.repeat(43)}`;
  for (const path of [`/accounts/unsubscribe/missed_messages/${forged}`, `/accounts/unsubscribe/digest/${token}`, `/accounts/unsubscribe/login/${token}`]) {
    const r = await realm.anonymous.request('GET', path);
    assert.is(r.status, 404, path);
    assert.ok(r.text.includes('This link is not valid'), r.text);
  }
  assert.is((await settingsOf(bob)).enable_offline_email_notifications, true);
  const r = await realm.anonymous.request('GET', link.pathname);
  assert.is(r.status, 200, r.text);
  assert.ok(r.text.includes('You will no longer get missed-message emails'), r.text);
  assert.is((await settingsOf(bob)).enable_offline_email_notifications, false);
  // Another organization's address does not take the link.
  const other = await newRealm(server);
  assert.is((await other.anonymous.request('GET', link.pathname)).status, 404);
});

test("digest: on the organization's digest weekday, members who were away get what happened in their channels, once", async () => {
  const { realm, bob, zoe, channelId, realmUrl } = await setup();
  const ann = await realm.addUser({ name: 'Ann' });
  await ok(await ann.client.patch('/settings', { enable_digest_emails: false }));
  await ok(await zoe.client.post('/users/me/presence', { status: 'active', new_user_input: 'true' }));
  await send(zoe, channelId, 'release', 'Version 2 is out');
  await send(zoe, channelId, 'release', 'Please test it');
  await send(zoe, channelId, 'release', 'Thanks all');
  await send(zoe, channelId, 'coffee', 'Anyone?');
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(mailsTo(bob), [], 'no digest while the organization has them off');
  const weekday = (new Date().getUTCDay() + 6) % 7;
  await ok(await realm.owner.client.patch('/realm', { digest_emails_enabled: true, digest_weekday: weekday }));
  const [digest] = await waitForMail(bob);
  assert.is(digest!.subject, `Realm ${realm.subdomain.match(/^r(\d+)/)![1]} digest: what you missed`);
  const topic = `${realmUrl}/#narrow/channel/${channelId}-Verona/topic/release`;
  assert.ok(
    digest!.text.includes(
      `Hot conversations:\n#Verona > release (3 messages): ${topic}\n  Zoe: Version 2 is out\n  Zoe: Please test it\n#Verona > coffee (1 message):`,
    ),
    digest!.text,
  );
  assert.ok(digest!.text.includes(`New channels:\n#Verona: ${realmUrl}/#narrow/channel/${channelId}-Verona\n`), digest!.text);
  assert.match(unsubscribeLink(digest!), new RegExp(`^${realmUrl}/accounts/unsubscribe/digest/`));
  await waitForMail(realm.owner);
  await new Promise((r) => setTimeout(r, 2500));
  assert.is(mailsTo(bob).length, 1, 'one digest a week');
  assert.equal(mailsTo(ann), [], 'digests turned off');
  assert.equal(mailsTo(zoe), [], 'active lately');
  // Its unsubscribe link turns digests off.
  const oneClick = await realm.anonymous.request('POST', new URL(unsubscribeLink(digest!)).pathname, {
    body: 'List-Unsubscribe=One-Click',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.is(oneClick.status, 200, oneClick.text);
  assert.is((await settingsOf(bob)).enable_digest_emails, false);
});

test.run();
