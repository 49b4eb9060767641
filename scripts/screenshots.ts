// npm run screenshots: the web client's main screens, saved in docs/screenshots/, and the first
// screen measured in Chromium: JS and CSS transferred (brotli, as the server sends them to a client
// that accepts it), first contentful paint of the page, and the time from "Log in" to the messages
// on screen. Starts the server on a fresh test database (DATABASE_URL, as the tests) with an
// organization seeded here. Timings are wall-clock: on a loaded machine they are noisy.
import { request } from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { endTestRun } from '../test/helpers/server.ts';
import { DESKTOP, PHONE, messageWith, setUpBrowserSuite, submitLogin, tearDownBrowserSuite, type Ctx } from '../test/lib/browser.ts';
import { makeChannel, send, sendDm } from '../test/messages/messages-helpers.ts';

const OUT = path.resolve('docs/screenshots');

/** The bytes a resource takes on the wire when the client accepts brotli. */
function brotliBytes(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { 'Accept-Encoding': 'br' } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve(bytes));
    })
      .on('error', reject)
      .end();
  });
}

async function seed(ctx: Ctx): Promise<void> {
  const { owner, bob, carol } = ctx;
  const design = await makeChannel(ctx.realm, 'design', [owner, bob, carol]);
  const ops = await makeChannel(ctx.realm, 'operations', [owner, bob, carol]);
  await send(bob, design, 'new logo', 'Here are three takes on the **new logo**: round, square and the wordmark.');
  await send(carol, design, 'new logo', 'I like the round one; the wordmark reads badly at 16 px.');
  await send(owner, design, 'new logo', 'Agreed. @**Bob Builder** can you try the round one in dark mode?');
  await send(bob, ops, 'deploy friday', 'Deploying 2.4 on Friday at 10:00 UTC. Rollback plan:\n1. Stop the workers\n2. Restore the snapshot');
  await send(carol, ops, 'deploy friday', 'The migration takes ~4 minutes on the staging copy.');
  await sendDm(carol, [owner.id], 'Lunch at noon? :pizza:');
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(OUT, name) });
  console.log(`  docs/screenshots/${name}`);
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const ctx = {} as Ctx;
  await setUpBrowserSuite(ctx);
  try {
    await seed(ctx);
    // A first login warms the server (its caches, V8's compiled code): what is measured is the usual case.
    const warmUp = await ctx.browser.newContext({ viewport: DESKTOP });
    const warmPage = await warmUp.newPage();
    await warmPage.goto(ctx.url);
    await submitLogin(warmPage, ctx.owner);
    await warmUp.close();
    const context = await ctx.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const scripts = new Set<string>();
    page.on('response', (r) => {
      const type = r.request().resourceType();
      if (type === 'script' || type === 'stylesheet') scripts.add(r.url());
    });
    await page.goto(ctx.url);
    await page.getByLabel('Email').waitFor();
    const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN);
    await shoot(page, 'web-login.png');

    await page.getByLabel('Email').fill(ctx.owner.email);
    await page.getByLabel('Password', { exact: true }).fill(ctx.owner.password);
    const clicked = await page.evaluate(() => performance.now());
    await page.getByRole('button', { name: 'Log in' }).click();
    await messageWith(page, 'Lunch at noon').waitFor();
    const loginToMessages = (await page.evaluate(() => performance.now())) - clicked;
    const firstScreen = [...scripts];
    const sizes = await Promise.all(firstScreen.map(brotliBytes));
    const total = sizes.reduce((a, b) => a + b, 0);
    await page.locator('[data-connection="socket"]').waitFor();
    await shoot(page, 'web-desktop.png');

    await page.goto(`${ctx.url}#channels/all`);
    await page.getByRole('dialog', { name: 'Channels' }).waitFor();
    await shoot(page, 'web-channels.png');
    await page.goto(`${ctx.url}#inbox`);
    await page.locator('#narrow-title', { hasText: 'Inbox' }).waitFor();
    await shoot(page, 'web-inbox.png');
    await page.goto(`${ctx.url}#settings/profile`);
    await page.getByRole('dialog').first().waitFor();
    await shoot(page, 'web-settings.png');
    await page.goto(`${ctx.url}#organization/users`);
    await page.getByRole('dialog', { name: 'Organization settings' }).waitFor();
    await shoot(page, 'web-organization.png');
    await page.goto(`${ctx.url}#narrow/channel/design`);
    await page.keyboard.press('Escape');
    await page.locator('#compose-content').fill('Looks good :thu');
    await page.getByRole('listbox').first().waitFor();
    await shoot(page, 'web-compose-typeahead.png');
    await context.close();

    const phone = await ctx.browser.newContext({ viewport: PHONE });
    const phonePage = await phone.newPage();
    await phonePage.goto(ctx.url);
    await submitLogin(phonePage, ctx.owner);
    await messageWith(phonePage, 'Lunch at noon').waitFor();
    await shoot(phonePage, 'web-phone.png');
    await phone.close();

    console.log('\nFirst screen (login page, then the messages):');
    for (const [i, url] of firstScreen.entries()) console.log(`  ${(sizes[i]! / 1024).toFixed(1).padStart(6)} KB  ${new URL(url).pathname}`);
    console.log(`  JS+CSS transferred (brotli): ${(total / 1024).toFixed(1)} KB in ${firstScreen.length} files`);
    console.log(`  first contentful paint: ${fcp.toFixed(0)} ms`);
    console.log(`  "Log in" to messages on screen: ${loginToMessages.toFixed(0)} ms (wall clock; noisy on a loaded machine)`);
  } finally {
    await tearDownBrowserSuite(ctx);
    await endTestRun();
  }
}

await main();
