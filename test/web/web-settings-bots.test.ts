// Personal settings in a real browser against the real server: the email notification settings
// of the Notifications tab, and the Bots tab (create, show the API key and the zuliprc,
// edit, deactivate and reactivate), each change made through the API and shown live from its
// event. Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../messages/messages-helpers.ts';
import { browserTests, logIn, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-settings-bots', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

const userSettings = async (ctx: Ctx, user = ctx.bob) => (await user.client.post('/register', { fetch_event_types: ['user_settings'] })).body.user_settings;

browserTest('email notification settings: saved through the API, and a change made elsewhere shows live', async (ctx) => {
  const { page: bob } = await logIn(ctx, ctx.bob);
  await bob.locator('.topbar a.me[href^="#settings/"]').click();
  await bob.getByRole('link', { name: 'Notifications' }).click();
  const dms = bob.getByRole('checkbox', { name: 'Direct messages, mentions and alert words' });
  assert.ok(await dms.isChecked());
  assert.not.ok(await bob.getByRole('checkbox', { name: /All messages in channels/ }).isChecked());

  await dms.click();
  await bob.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  await bob.getByLabel('Delay before sending message notification emails').selectOption({ label: '30 minutes' });
  await bob.getByRole('checkbox', { name: 'Include the message content in message notification emails' }).click();
  await bob.getByRole('checkbox', { name: "Send digest emails when I'm away" }).click();
  await bob.getByLabel('Include the organization name in the subject of message notification emails').selectOption({ label: 'Always' });
  const emailSettings = async () => {
    const s = await userSettings(ctx);
    return [
      s.enable_offline_email_notifications,
      s.email_notifications_batching_period_seconds,
      s.message_content_in_email_notifications,
      s.enable_digest_emails,
      s.realm_name_in_email_notifications_policy,
    ];
  };
  await eventually(emailSettings, (saved) => JSON.stringify(saved) === JSON.stringify([false, 1800, false, false, 2]), 'the settings saved');

  // Changed from another client of Bob's: the boxes follow the user_settings events.
  assert.is(
    (
      await ctx.bob.client.patch('/settings', {
        enable_offline_email_notifications: true,
        enable_followed_topic_email_notifications: false,
        email_notifications_batching_period_seconds: 300,
      })
    ).status,
    200,
  );
  await bob.locator('#settings-email-delay option[value="300"]:checked').waitFor({ state: 'attached' });
  assert.ok(await dms.isChecked());
  assert.not.ok(await bob.getByRole('checkbox', { name: 'Messages in topics I follow' }).isChecked());
  // A delay set elsewhere that the list does not offer is shown as it is.
  assert.is((await ctx.bob.client.patch('/settings', { email_notifications_batching_period_seconds: 2700 })).status, 200);
  await bob.locator('#settings-email-delay option[value="2700"]:checked', { hasText: '45 minutes' }).waitFor({ state: 'attached' });
});

/** A 1x1 PNG, for an avatar. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const botsOf = async (ctx: Ctx) => (await ctx.owner.client.post('/register', { fetch_event_types: ['realm_bot'] })).body.realm_bots as any[];
const botNamed = async (ctx: Ctx, name: string) => (await botsOf(ctx)).find((b) => b.full_name === name);

browserTest(
  'bots: create each type, show the API key and zuliprc, rename, change owner, deactivate and reactivate, live from realm_bot events',
  async (ctx) => {
    const { page: owner } = await logIn(ctx, ctx.owner);
    await owner.locator('.topbar a.me[href^="#settings/"]').click();
    await owner.getByRole('link', { name: 'Bots' }).click();
    await owner.getByText('You have no active bots.').waitFor();

    await owner.getByLabel('Name', { exact: true }).fill('Deploy Bot');
    await owner.getByLabel(/Bot email/).fill('deploy');
    await owner.getByRole('button', { name: 'Create bot' }).click();
    const deploy = owner.getByRole('listitem', { name: 'Deploy Bot' });
    await deploy.waitFor();
    const created = await botNamed(ctx, 'Deploy Bot');
    assert.is(created.bot_type, 1);
    await deploy.getByText('Generic bot').waitFor();
    await deploy.getByText(created.email).waitFor();
    assert.is(await deploy.getByText(created.api_key).count(), 0);
    await deploy.getByRole('button', { name: 'Show API key' }).click();
    await deploy.getByText(created.api_key).waitFor();
    const href = await deploy.getByRole('link', { name: 'Download zuliprc' }).getAttribute('href');
    assert.is(
      decodeURIComponent(href!.replace(/^data:text\/plain;charset=utf-8,/, '')),
      `[api]\nemail=${created.email}\nkey=${created.api_key}\nsite=${ctx.url.replace(/\/$/, '')}\n`,
    );

    await owner.getByLabel('Bot type').selectOption({ label: 'Incoming webhook' });
    await owner.getByLabel('Name', { exact: true }).fill('Alerts');
    await owner.getByLabel(/Bot email/).fill('alerts');
    await owner.getByRole('button', { name: 'Create bot' }).click();
    await owner.getByRole('listitem', { name: 'Alerts' }).getByText('Incoming webhook').waitFor();

    await owner.getByLabel('Bot type').selectOption({ label: 'Outgoing webhook' });
    await owner.getByLabel('Name', { exact: true }).fill('Helper');
    await owner.getByLabel(/Bot email/).fill('helper');
    await owner.getByLabel('Endpoint URL').fill('https://hooks.example.com/zulip');
    await owner.getByLabel('Outgoing webhook message format').selectOption({ label: 'Slack compatible' });
    await owner.getByRole('button', { name: 'Create bot' }).click();
    const helper = owner.getByRole('listitem', { name: 'Helper' });
    await helper.getByText('Endpoint: https://hooks.example.com/zulip (Slack compatible)').waitFor();
    const outgoing = await botNamed(ctx, 'Helper');
    assert.equal([outgoing.bot_type, outgoing.services.map((s: any) => [s.base_url, s.interface])], [3, [['https://hooks.example.com/zulip', 2]]]);
    const helperRc = decodeURIComponent((await helper.getByRole('link', { name: 'Download zuliprc' }).getAttribute('href'))!);
    assert.ok(helperRc.endsWith(`token=${outgoing.services[0].token}\n`), helperRc);

    // Renamed here; renamed elsewhere (the API): both show from the events.
    await deploy.getByLabel('Bot name').fill('Release Bot');
    await deploy.getByRole('button', { name: 'Rename' }).click();
    const release = owner.getByRole('listitem', { name: 'Release Bot' });
    await release.waitFor();
    assert.is((await ctx.owner.client.patch(`/bots/${created.user_id}`, { full_name: 'Ship Bot' })).status, 200);
    const ship = owner.getByRole('listitem', { name: 'Ship Bot' });
    await ship.waitFor();

    const before = (await botNamed(ctx, 'Ship Bot')).avatar_url;
    await ship.getByLabel('Upload a new avatar').setInputFiles({ name: 'bot.png', mimeType: 'image/png', buffer: PNG });
    const changed = await eventually(
      () => botNamed(ctx, 'Ship Bot'),
      (b) => b.avatar_url !== before,
      'the new avatar',
      // The upload loads the image library and resizes: at load 10 it took longer than the default 8 s.
      20_000,
    );
    await ship.locator(`img.avatar[src="${changed.avatar_url}"]`).waitFor({ state: 'attached' });

    await ship.getByRole('button', { name: 'Deactivate' }).click();
    await owner.getByRole('list', { name: 'Deactivated bots' }).getByRole('listitem', { name: 'Ship Bot' }).waitFor();
    assert.is((await botNamed(ctx, 'Ship Bot')).is_active, false);
    await owner.getByRole('listitem', { name: 'Ship Bot' }).getByRole('button', { name: 'Reactivate' }).click();
    await owner.getByRole('list', { name: 'Active bots' }).getByRole('listitem', { name: 'Ship Bot' }).waitFor();

    // Given to Bob, it leaves Olivia's list and shows in Bob's, live.
    const { page: bob } = await logIn(ctx, ctx.bob, { hash: '#settings/your-bots' });
    await bob.getByText('You have no active bots.').waitFor();
    await owner.getByRole('listitem', { name: 'Alerts' }).getByLabel('Owner').selectOption({ label: 'Bob Builder' });
    await bob.getByRole('listitem', { name: 'Alerts' }).getByText('Incoming webhook').waitFor();
    await owner.getByRole('listitem', { name: 'Alerts' }).waitFor({ state: 'detached' });
  },
);

runBrowserTests(test, 'web-settings-bots');
