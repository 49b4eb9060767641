// npm run screenshots: the web client's main screens, saved in docs/screenshots/, and the first
// screen measured in Chromium: the page and its JS and CSS transferred (brotli, as the server sends them to a client
// that accepts it), first contentful paint of the page, and the time from "Log in" to the messages
// on screen. Starts the server on a fresh test database (DATABASE_URL, as the tests) with an
// organization seeded here. Timings are wall-clock: on a loaded machine they are noisy.
//
// `npm run screenshots -- --bench 15` measures instead of shooting: 15 rounds, each a fresh tab on a
// blank page served locally (the floor: what Chromium takes to paint anything here), then the
// client's login page, then "Log in" to the messages; medians, and the ratio to the floor. The
// requests of the login (log in, register, the messages) are timed from the page's resource timing.
// `--against <build/web of another commit>` serves that build too, from a second server on the same
// database, and alternates the two builds round by round (A B A B), so both meet the same load.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { endTestRun, startTestServer } from '../test/helpers/server.ts';
import { DESKTOP, PHONE, SERVER_ENV, forward, messageWith, setUpBrowserSuite, submitLogin, tearDownBrowserSuite, type Ctx } from '../test/lib/browser.ts';
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

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** A page with one line of text, served by Node on this machine: the floor for a first paint. */
async function blankPageServer(): Promise<{ url: string; close: () => void }> {
  const server = createServer((_, res) =>
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>blank</title><p>Blank page</p>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}

const fcpOf = async (page: Page) =>
  (await (await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime, null, { polling: 5 })).jsonValue()) as number;

interface Round {
  fcp: number;
  login: number;
  /** Duration of each request of the login, by its path. */
  requests: Record<string, number>;
}

/** Clicks "Log in" (the form filled) and times, in the page, the click's event to the message's text
 * in the document, so that neither Playwright's steps nor its polling count; with the requests made meanwhile. */
async function timeLogin(page: Page): Promise<{ login: number; requests: Record<string, number> }> {
  await page.evaluate(() => {
    const w = window as unknown as { clickedAt: number; shownAt: number };
    document.addEventListener('click', () => (w.clickedAt ??= performance.now()), { capture: true });
    new MutationObserver((_, observer) => {
      if (!document.getElementById('messages')?.textContent?.includes('Lunch at noon')) return;
      w.shownAt = performance.now();
      observer.disconnect();
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
  await page.getByRole('button', { name: 'Log in' }).click();
  await messageWith(page, 'Lunch at noon').waitFor();
  const [clicked, shown] = await page.evaluate(() => {
    const w = window as unknown as { clickedAt: number; shownAt: number };
    return [w.clickedAt, w.shownAt];
  });
  const login = shown - clicked;
  const requests = await page.evaluate(
    (after) =>
      Object.fromEntries(
        (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
          .filter((e) => e.startTime >= after)
          .map((e) => [`${new URL(e.name).pathname} @${Math.round(e.startTime - after)}`, e.responseEnd - e.startTime]),
      ),
    clicked,
  );
  requests['messages on screen @' + Math.round(login)] = 0;
  return { login, requests };
}

/** One measured round of a build served at `url`: its first paint, then "Log in" to the messages. */
async function measureRound(ctx: Ctx, url: string): Promise<Round> {
  const context = await ctx.browser.newContext({ viewport: DESKTOP });
  try {
    const page = await context.newPage();
    await page.goto(url);
    const fcp = await fcpOf(page);
    await page.getByLabel('Email').fill(ctx.owner.email);
    await page.getByLabel('Password', { exact: true }).fill(ctx.owner.password);
    const { login, requests } = await timeLogin(page);
    return { fcp, login, requests };
  } finally {
    await context.close();
  }
}

async function blankRound(ctx: Ctx, url: string): Promise<number> {
  const context = await ctx.browser.newContext({ viewport: DESKTOP });
  try {
    const page = await context.newPage();
    await page.goto(url);
    return await fcpOf(page);
  } finally {
    await context.close();
  }
}

function summary(name: string, rounds: Round[], floor: number): void {
  const fcp = median(rounds.map((r) => r.fcp));
  console.log(
    `  ${name}: first contentful paint ${fcp.toFixed(0)} ms (${(fcp / floor).toFixed(2)}x the blank page), "Log in" to messages ${median(rounds.map((r) => r.login)).toFixed(0)} ms`,
  );
  const last = rounds.at(-1)!;
  console.log('    its last round, from the click (ms after it, and how long each request took):');
  for (const [key, ms] of Object.entries(last.requests))
    console.log(`      ${key.padEnd(44)} ${key.startsWith('messages on screen') ? '' : `${ms.toFixed(0)} ms`}`);
}

async function bench(rounds: number, against: string | undefined): Promise<void> {
  const ctx = {} as Ctx;
  await setUpBrowserSuite(ctx);
  const blank = await blankPageServer();
  let other: Awaited<ReturnType<typeof startTestServer>> | undefined;
  let otherForwarder: Awaited<ReturnType<typeof forward>> | undefined;
  try {
    await seed(ctx);
    const builds: { name: string; url: string; rounds: Round[] }[] = [{ name: 'this build', url: ctx.url, rounds: [] }];
    if (against) {
      other = await startTestServer({ ...SERVER_ENV, DATABASE_URL: ctx.server.app.config.DATABASE_URL, WEB_DIR: path.resolve(against) });
      otherForwarder = await forward(() => other!.port);
      builds.push({ name: `against ${against}`, url: `http://127.0.0.1:${otherForwarder.port}/`, rounds: [] });
    }
    // A first round of each warms the servers and Chromium; it is not counted.
    await blankRound(ctx, blank.url);
    for (const b of builds) await measureRound(ctx, b.url);
    const floor: number[] = [];
    for (let i = 0; i < rounds; i++) {
      floor.push(await blankRound(ctx, blank.url));
      for (const b of i % 2 ? [...builds].reverse() : builds) b.rounds.push(await measureRound(ctx, b.url));
    }
    const floorMedian = median(floor);
    console.log(
      `\n${rounds} rounds; blank page (the floor): first contentful paint ${floorMedian.toFixed(0)} ms (median; ${Math.min(...floor).toFixed(0)}-${Math.max(...floor).toFixed(0)})`,
    );
    for (const b of builds) summary(b.name, b.rounds, floorMedian);
    if (builds.length === 2) {
      const [a, b] = builds.map((x) => x.rounds);
      console.log(
        `  ratio this/against: first paint ${(median(a!.map((r) => r.fcp)) / median(b!.map((r) => r.fcp))).toFixed(2)}, login to messages ${(median(a!.map((r) => r.login)) / median(b!.map((r) => r.login))).toFixed(2)}`,
      );
    }
  } finally {
    blank.close();
    await otherForwarder?.close();
    await other?.stop();
    await tearDownBrowserSuite(ctx);
    await endTestRun();
  }
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
      if (type === 'script' || type === 'stylesheet' || type === 'document') scripts.add(r.url());
    });
    await page.goto(ctx.url);
    await page.getByLabel('Email').waitFor();
    const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN);
    await shoot(page, 'web-login.png');

    await page.getByLabel('Email').fill(ctx.owner.email);
    await page.getByLabel('Password', { exact: true }).fill(ctx.owner.password);
    const { login: loginToMessages } = await timeLogin(page);
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
    console.log(`  "Log in" to messages on screen: ${loginToMessages.toFixed(0)} ms (one round; --bench 15 gives medians beside a blank page)`);
  } finally {
    await tearDownBrowserSuite(ctx);
    await endTestRun();
  }
}

const args = process.argv.slice(2);
const benchAt = args.indexOf('--bench');
const againstAt = args.indexOf('--against');
if (benchAt >= 0) await bench(Number(args[benchAt + 1] ?? 15), againstAt >= 0 ? args[againstAt + 1] : undefined);
else await main();
