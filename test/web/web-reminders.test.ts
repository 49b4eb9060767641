// Message reminders in the web client, in a real browser against the real server: "Remind me
// about this" on a message (a preset time or a date and time with a note) makes the reminder
// through POST /reminders; `#reminders` lists it live on the user's other device, where it is deleted.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { browserTests, logIn, messageWith, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-reminders', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

/** Opens the reminder form of the message with `text`. */
async function remindAbout(page: Page, text: string) {
  const message = messageWith(page, text);
  await message.hover();
  await message.getByRole('button', { name: 'More actions' }).click();
  await message.getByRole('button', { name: 'Remind me about this' }).click();
  return message.getByRole('form', { name: 'Remind me about this' });
}

browserTest('a reminder set on a message, at a preset or a chosen time with a note, is listed live on another device and deleted there', async (ctx) => {
  const rita = await ctx.realm.addUser({ name: 'Rita Remind' });
  const memos = await makeChannel(ctx.realm, 'memos', [rita, ctx.bob]);
  const renew = await send(ctx.bob, memos, 'domains', 'Renew the domain');
  const invoice = await send(ctx.bob, memos, 'domains', 'Pay the invoice');
  const laptop = await logIn(ctx, rita, { hash: `#narrow/channel/${memos}-memos/topic/domains` });
  const phone = await logIn(ctx, rita, { hash: '#reminders' });
  const reminders = phone.page.getByRole('dialog', { name: 'Reminders' });
  await reminders.getByText('No reminders.').waitFor();

  const form = await remindAbout(laptop.page, 'Renew the domain');
  await form.getByLabel('Remind me').selectOption('custom');
  const tomorrow = await laptop.page.evaluate(() => {
    const at = new Date(Date.now() + 86_400_000);
    at.setMinutes(at.getMinutes() - at.getTimezoneOffset());
    return at.toISOString().slice(0, 16);
  });
  await form.getByLabel('Date and time').fill(tomorrow);
  await form.getByLabel('Note (optional)').fill('before it lapses');
  await form.getByRole('button', { name: 'Schedule reminder' }).click();
  await messageWith(laptop.page, 'Renew the domain').getByRole('status').filter({ hasText: 'Reminder set for' }).waitFor();
  assert.is(await form.count(), 0, 'the form closes');

  // The preset offered first is an hour from now.
  const before = Date.now() / 1000;
  await (await remindAbout(laptop.page, 'Pay the invoice')).getByRole('button', { name: 'Schedule reminder' }).click();
  await messageWith(laptop.page, 'Pay the invoice').getByRole('status').waitFor();

  const listed = (await rita.client.get('/reminders')).body.reminders as Record<string, any>[];
  const expectedAt = await laptop.page.evaluate((value) => new Date(value).getTime() / 1000, tomorrow);
  assert.equal(
    listed.map((r) => [r.reminder_target_message_id, r.failed]),
    [
      [invoice, false],
      [renew, false],
    ],
  );
  const inAnHour = listed[0]!.scheduled_delivery_timestamp - before;
  assert.ok(inAnHour >= 3599 && inAnHour <= 3600 + 60, `${inAnHour} s is an hour`);
  assert.is(listed[1]!.scheduled_delivery_timestamp, expectedAt);
  assert.match(listed[1]!.content, /^You requested a reminder for the following message\. Note:\n > before it lapses\n/);

  // Live on the other device, soonest first, counted in the sidebar.
  const items = reminders.getByRole('listitem', { name: 'Reminder to Rita Remind (you)' });
  await items.nth(1).waitFor();
  assert.match((await items.nth(0).textContent()) ?? '', 'Pay the invoice');
  assert.match((await items.nth(1).textContent()) ?? '', 'before it lapses');
  await phone.page.locator('#sidebar .nav-link', { hasText: 'Reminders' }).locator('.draft-count', { hasText: '2' }).waitFor();
  await items.nth(1).getByRole('button', { name: 'Delete' }).click();
  await items.nth(1).waitFor({ state: 'detached' });
  assert.equal(
    ((await rita.client.get('/reminders')).body.reminders as Record<string, any>[]).map((r) => r.reminder_target_message_id),
    [invoice],
  );
  await items.getByRole('link', { name: 'Go to message' }).click();
  await messageWith(phone.page, 'Pay the invoice').and(phone.page.locator('.near')).waitFor();
});

runBrowserTests(test, 'web-reminders');
