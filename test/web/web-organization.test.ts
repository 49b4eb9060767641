// Organization settings in the web client, in Chromium against the real server: the profile,
// roles, deactivation, bots, invitations, linkifiers, custom emoji, default channels and login
// methods, each change made in one browser and seen live in another person's.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { makeChannel } from '../messages/messages-helpers.ts';
import { browserTests, logIn, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-organization', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

const section = (page: Page, name: string) => page.getByRole('navigation', { name: 'Organization settings sections' }).getByRole('link', { name, exact: true });
const rowOf = (page: Page, text: string) => page.locator('.admin-table tbody tr', { hasText: text });
const cellTexts = (page: Page, table: string) =>
  page.locator(`${table} tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent!.trim())));

browserTest("the profile: a new name and description, seen at once in a member's top bar; members have no organization settings", async (ctx) => {
  const owner = await logIn(ctx, ctx.owner, { hash: '#organization' });
  const bob = await logIn(ctx, ctx.bob);
  assert.is(await bob.page.getByRole('link', { name: 'Organization settings' }).count(), 0);
  await owner.page.getByLabel('Organization name').fill('Acme Rockets');
  await owner.page.getByLabel('Organization description').fill('We build **rockets**.');
  await owner.page.getByRole('button', { name: 'Save changes' }).click();
  await owner.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  await bob.page.locator('.realm-name', { hasText: /^Acme Rockets$/ }).waitFor();
  const r = await ctx.owner.client.post('/register', { fetch_event_types: JSON.stringify(['realm']) });
  assert.is(r.body.realm_name, 'Acme Rockets');
  assert.is(r.body.realm_description, 'We build **rockets**.');
  // Escape leads back to the conversation under the overlay.
  await owner.page.keyboard.press('Escape');
  await owner.page.getByRole('dialog').waitFor({ state: 'detached' });
});

browserTest(
  'roles and deactivation: a member made administrator gets organization settings at once; a deactivated user moves to Deactivated and back',
  async (ctx) => {
    const dave = await ctx.realm.addUser({ name: 'Dave Deputy' });
    const owner = await logIn(ctx, ctx.owner, { hash: '#organization/users' });
    const dave1 = await logIn(ctx, dave);
    assert.is(await rowOf(owner.page, 'Dave Deputy').locator('select').inputValue(), '400');
    await owner.page.getByLabel('Role of Dave Deputy').selectOption({ label: 'Administrator' });
    await dave1.page.getByRole('link', { name: 'Organization settings' }).click();
    await dave1.page.getByRole('heading', { name: 'Organization profile' }).waitFor();
    assert.is((await ctx.owner.client.get(`/users/${dave.id}`)).body.user.role, 200);
    // An administrator cannot make owners: the choice is not offered.
    await section(dave1.page, 'Users').click();
    const options = await dave1.page.getByLabel('Role of Bob Builder').locator('option').allTextContents();
    assert.equal(options, ['Administrator', 'Moderator', 'Member', 'Guest']);
    assert.ok(await dave1.page.getByLabel('Role of Olivia Owner').isDisabled(), 'an owner is beyond an administrator');

    const carol = await ctx.realm.addUser({ name: 'Carl Leaving' });
    await owner.page.getByRole('searchbox', { name: 'Filter users' }).fill('Carl');
    assert.equal(await cellTexts(owner.page, '.admin-table'), [['CL Carl Leaving', carol.email, 'OwnerAdministratorModeratorMemberGuest', 'Deactivate']]);
    owner.page.once('dialog', (d) => void d.accept());
    await owner.page.getByRole('button', { name: 'Deactivate Carl Leaving' }).click();
    await owner.page.getByText('Nobody.').waitFor();
    // The other administrator sees it gone from Users at once, and in Deactivated users.
    await section(dave1.page, 'Deactivated users').click();
    await dave1.page.getByRole('button', { name: 'Reactivate Carl Leaving' }).click();
    await rowOf(owner.page, 'Carl Leaving').waitFor();
    assert.is((await ctx.owner.client.get(`/users/${carol.id}`)).body.user.is_active, true);
  },
);

browserTest("bots: the organization's bots with their owners, system bots left out", async (ctx) => {
  await ctx.realm.addUser({ name: 'Deploy Bot', bot: true, botOwnerId: ctx.bob.id });
  const owner = await logIn(ctx, ctx.owner, { hash: '#organization/bot-list-admin' });
  // The table fills once the bots are loaded: read it then, not at its first paint.
  await rowOf(owner.page, 'Deploy Bot').waitFor();
  const rows = await cellTexts(owner.page, '.admin-table');
  const deploy = rows.find((r) => r[0]!.endsWith('Deploy Bot'));
  assert.equal(deploy?.slice(2), ['Bob Builder', 'Active']);
  assert.not.ok(
    rows.some((r) => r[0]!.includes('Welcome Bot')),
    'system bots are not listed',
  );
});

browserTest('invitations: by email with a role and channels, and a link; both listed, seen by another administrator, and revoked', async (ctx) => {
  const launch = await makeChannel(ctx.realm, 'launch', [ctx.owner]);
  const erin = await ctx.realm.addUser({ name: 'Erin Admin', role: 200 });
  const owner = await logIn(ctx, ctx.owner, { hash: '#organization/invites-list-admin' });
  const admin = await logIn(ctx, erin, { hash: '#organization/invites-list-admin' });
  await admin.page.getByText('No pending invitations.').waitFor();
  await owner.page.getByLabel('Emails (one per line, or separated by commas)').fill('newbie@example.com');
  await owner.page.getByLabel('Invite as').selectOption({ label: 'Moderator' });
  await owner.page.getByRole('checkbox', { name: '#launch' }).check();
  await owner.page.getByRole('button', { name: 'Invite', exact: true }).click();
  await owner.page.getByText('Invitations sent.').waitFor();
  await rowOf(admin.page, 'newbie@example.com').waitFor();
  const [invite] = (await ctx.owner.client.get('/invites')).body.invites;
  assert.equal([invite.email, invite.invited_as, invite.invited_by_user_id], ['newbie@example.com', 300, ctx.owner.id]);
  const row = await cellTexts(admin.page, '.invites');
  assert.equal(row[0]!.slice(0, 3), ['newbie@example.com', 'Olivia Owner', 'Moderator']);

  await owner.page.getByRole('button', { name: 'Create invite link' }).click();
  const link = await owner.page.locator('a.invite-link').textContent();
  assert.match(link!, /\/join\/[a-z2-7]{24}\/$/);
  await rowOf(admin.page, 'Invite link').waitFor();

  await admin.page.getByRole('button', { name: 'Revoke newbie@example.com' }).click();
  await admin.page.getByRole('button', { name: 'Revoke invite link' }).click();
  await owner.page.getByText('No pending invitations.').waitFor();
  assert.equal((await ctx.owner.client.get('/invites')).body.invites, []);
  assert.ok(launch > 0);
});

browserTest('an invitation ends logged in: the registration form leads into the web client with a session, and logging out ends it', async (ctx) => {
  const owner = await logIn(ctx, ctx.owner, { hash: '#organization/invites-list-admin' });
  const email = 'gina@example.com';
  await owner.page.getByLabel('Emails (one per line, or separated by commas)').fill(email);
  await owner.page.getByRole('button', { name: 'Invite', exact: true }).click();
  await owner.page.getByText('Invitations sent.').waitFor();
  const { key } = await ctx.server.app.prisma.invitation.findFirstOrThrow({ where: { realmId: ctx.realm.id, email } });
  // The organization's own address: the cookies the registration sets belong to it.
  const realmUrl = ctx.server.app.realms.url(ctx.server.app.realms.byId(ctx.realm.id)!);
  const context = await ctx.browser.newContext();
  ctx.contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (err) => ctx.errors.push(err.stack ?? err.message));
  await page.goto(`${realmUrl}/accounts/do_confirm/${key}`);
  await page.getByLabel('Full name').fill('Gina Newcomer');
  await page.getByLabel('Password').fill('gina-password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.locator('[data-connection="socket"]').waitFor();
  assert.is(page.url(), `${realmUrl}/`);
  assert.is(await page.locator('a.me[href="#settings/profile"]').textContent(), 'Gina Newcomer');
  // The owner's people list has her at once.
  await section(owner.page, 'Users').click();
  await rowOf(owner.page, 'Gina Newcomer').waitFor();
  // A reload stays logged in (the session, not the tab's storage); logging out ends the session.
  await page.reload();
  await page.locator('[data-connection="socket"]').waitFor();
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('heading', { name: /^Log in/ }).waitFor();
  await page.reload();
  await page.getByRole('heading', { name: /^Log in/ }).waitFor();
  const gina = await ctx.server.app.prisma.user.findFirstOrThrow({ where: { realmId: ctx.realm.id, deliveryEmail: email } });
  assert.is(await ctx.server.app.prisma.webSession.count({ where: { userId: gina.id } }), 0);
});

browserTest("linkifiers, custom emoji and default channels: added and removed, each list current in another administrator's browser", async (ctx) => {
  const news = await makeChannel(ctx.realm, 'news', [ctx.owner]);
  const frank = await ctx.realm.addUser({ name: 'Frank Admin', role: 200 });
  const owner = await logIn(ctx, ctx.owner, { hash: '#organization/linkifier-settings' });
  const admin = await logIn(ctx, frank, { hash: '#organization/linkifier-settings' });

  await owner.page.getByLabel('Pattern').fill('#(?P<id>[0-9]+)');
  await owner.page.getByLabel('URL template').fill('https://tracker.example.com/{id}');
  await owner.page.getByRole('button', { name: 'Add linkifier' }).click();
  await rowOf(admin.page, 'tracker.example.com').waitFor();
  assert.equal(await cellTexts(admin.page, '.linkifiers'), [['#(?P<id>[0-9]+)', 'https://tracker.example.com/{id}', 'Delete']]);
  await admin.page.getByRole('button', { name: 'Delete linkifier #(?P<id>[0-9]+)' }).click();
  await owner.page.getByText('No linkifiers.').waitFor();

  await section(owner.page, 'Custom emoji').click();
  await section(admin.page, 'Custom emoji').click();
  await owner.page.getByLabel('Emoji name').fill('rocket_ship');
  await owner.page.getByLabel('Image').setInputFiles({ name: 'rocket.png', mimeType: 'image/png', buffer: PNG });
  await owner.page.getByRole('button', { name: 'Add emoji' }).click();
  const emoji = admin.page.locator('.emoji-list li[data-emoji="rocket_ship"]');
  await emoji.waitFor();
  assert.match(String(await emoji.locator('img').getAttribute('src')), /\/user_avatars\/\d+\/emoji\/images\//);
  await admin.page.getByRole('button', { name: 'Delete :rocket_ship:' }).click();
  await owner.page.getByText('No custom emoji.').waitFor();

  await section(owner.page, 'Default channels').click();
  await section(admin.page, 'Default channels').click();
  await owner.page.getByLabel('Add a default channel').selectOption({ label: '#news' });
  await owner.page.getByRole('button', { name: 'Add', exact: true }).click();
  await admin.page.locator('.default-channels li', { hasText: '#news' }).waitFor();
  const r = await ctx.owner.client.post('/register', { fetch_event_types: JSON.stringify(['default_streams']) });
  assert.equal(r.body.realm_default_streams, [news]);
  await admin.page.getByRole('button', { name: 'Remove #news' }).click();
  await owner.page.getByText('No default channels.').waitFor();
});

browserTest("authentication methods: owners see the organization's, and turning off the last one is refused with the server's words", async (ctx) => {
  const owner = await logIn(ctx, ctx.owner, { hash: '#organization/auth-methods' });
  const email = owner.page.getByRole('checkbox', { name: 'Email' });
  assert.ok(await email.isChecked());
  await email.click();
  const alert = owner.page.getByRole('alert');
  await alert.waitFor();
  const refused = await ctx.owner.client.patch('/realm', { authentication_methods: JSON.stringify({ Email: false }) });
  assert.is(refused.status, 400);
  assert.is(await alert.textContent(), refused.body.msg);
  assert.ok(await email.isChecked(), 'the box shows the method as it still is');
  const r = await ctx.owner.client.post('/register', { fetch_event_types: JSON.stringify(['realm']) });
  assert.is(r.body.realm_authentication_methods.Email.enabled, true);
});

runBrowserTests(test, 'web-organization.test.ts');
