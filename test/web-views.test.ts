// The web client's views and message actions in a real browser against the real server: starring
// and the Starred view, all direct messages, "Mark all as read" and "Mark as unread from here",
// the unread count in the tab's title, search with operators and suggestions, quote and reply,
// keyboard shortcuts and the local echo of one's own messages.
// Each test makes its own people and channels, so unread counts start known.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';
import { makeChannel, send, sendDm } from './messages-helpers.ts';
import { newRealm, startTestServer, type TestUser } from './helpers/server.ts';
import { buildWebClient } from './helpers/web.ts';
import { CHROMIUM, forward, logIn, messageWith, SERVER_ENV, sidebarLink, type Ctx } from './lib/browser.ts';

const test = suite<Ctx>('web-views', {} as Ctx);

test.before(async (ctx) => {
  await buildWebClient();
  ctx.server = await startTestServer(SERVER_ENV);
  ctx.realm = await newRealm(ctx.server);
  ctx.owner = ctx.realm.owner;
  ctx.bob = await ctx.realm.addUser({ name: 'Bob Builder' });
  ctx.carol = await ctx.realm.addUser({ name: 'Carol Clerk' });
  ctx.browser = await chromium.launch({ executablePath: CHROMIUM });
  ctx.forwarder = await forward(() => ctx.server.port);
  ctx.url = `http://127.0.0.1:${ctx.forwarder.port}/`;
  ctx.contexts = [];
  ctx.errors = [];
});

test.after(async (ctx) => {
  await ctx.browser?.close();
  await ctx.forwarder?.close();
  await ctx.server?.stop();
});

/** A test whose browser contexts are closed after it, and which fails on any error in its pages. */
function browserTest(name: string, fn: (ctx: Ctx) => Promise<void>): void {
  test(name, async (ctx) => {
    let errors: string[];
    try {
      await fn(ctx);
    } finally {
      for (const context of ctx.contexts.splice(0)) await context.close();
      errors = ctx.errors.splice(0);
    }
    assert.equal(errors, [], 'errors in the page');
  });
}

/** Someone new, with nothing read or starred yet. */
const newcomer = (ctx: Ctx, name: string) => ctx.realm.addUser({ name });

/** A tab in the background: it reads nothing by itself (the page is never visible). */
const BACKGROUND_TAB = `Object.defineProperty(Document.prototype, 'visibilityState', { get: () => 'hidden' });`;

const title = (page: Page) => page.evaluate(() => document.title);
const unreadOf = (page: Page, name: string) => sidebarLink(page, name).locator('.unread-count');

/** Waits for the tab's title to be `expected` and the organization's name. */
async function waitForTitle(page: Page, expected: string): Promise<void> {
  await page.waitForFunction((t) => document.title.startsWith(`${t} · `), expected).catch(async () => assert.is(await title(page), expected));
}

async function unreadCountOnServer(user: TestUser): Promise<number> {
  const r = await user.client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: 'is', operand: 'unread' }]) });
  return r.body.messages.length;
}

browserTest('a star shows in the other tab at once and in Starred messages; all direct messages in one view', async (ctx) => {
  const dana = await newcomer(ctx, 'Dana Star');
  const stars = await makeChannel(ctx.realm, 'stars', [dana, ctx.bob]);
  await send(ctx.bob, stars, 'ideas', 'An idea worth keeping');
  await send(ctx.bob, stars, 'ideas', 'A passing remark');
  const here = await logIn(ctx, dana, { hash: `#narrow/channel/${stars}-stars` });
  const there = await logIn(ctx, dana, { hash: `#narrow/channel/${stars}-stars` });
  const idea = messageWith(here.page, 'An idea worth keeping');
  await idea.hover();
  await idea.getByRole('button', { name: 'Star message' }).click();
  await messageWith(there.page, 'An idea worth keeping').locator('.star-mark').waitFor();
  assert.is(await messageWith(there.page, 'A passing remark').locator('.star-mark').count(), 0);

  await sidebarLink(there.page, 'Starred messages').click();
  await there.page.locator('#narrow-title', { hasText: 'Starred messages' }).waitFor();
  await messageWith(there.page, 'An idea worth keeping').waitFor();
  assert.is(await there.page.locator('.message').count(), 1);
  assert.match(there.page.url(), /#narrow\/is\/starred$/);
  await idea.hover();
  await idea.getByRole('button', { name: 'Unstar message' }).click();
  await messageWith(there.page, 'An idea worth keeping').locator('.star-mark').waitFor({ state: 'detached' });

  await sendDm(ctx.bob, [dana.id], 'Just between us');
  await sendDm(ctx.bob, [dana.id, ctx.carol.id], 'All three of us');
  await sidebarLink(here.page, 'All direct messages').click();
  await here.page.locator('#narrow-title', { hasText: 'Direct messages' }).waitFor();
  await messageWith(here.page, 'All three of us').waitFor();
  assert.is(await messageWith(here.page, 'Just between us').count(), 1);
  assert.is(await here.page.locator('.message').count(), 2, 'channel messages are not in it');
  // A new conversation shows there live.
  await sendDm(ctx.carol, [dana.id], 'Carol writes too');
  await messageWith(here.page, 'Carol writes too').waitFor();
  await send(ctx.bob, stars, 'ideas', 'Not a direct message');
  await sendDm(ctx.carol, [dana.id], 'And again');
  await messageWith(here.page, 'And again').waitFor();
  assert.is(await messageWith(here.page, 'Not a direct message').count(), 0);
});

browserTest('"Mark all as read" of a topic, a channel and everything; the tab title counts what is unread', async (ctx) => {
  const erin = await newcomer(ctx, 'Erin Reader');
  const news = await makeChannel(ctx.realm, 'news', [erin, ctx.bob]);
  const quiet = await makeChannel(ctx.realm, 'quiet', [erin, ctx.bob]);
  for (const n of [1, 2, 3]) await send(ctx.bob, news, 'launch', `Launch note ${n}`);
  for (const n of [1, 2]) await send(ctx.bob, news, 'budget', `Budget note ${n}`);
  await sendDm(ctx.bob, [erin.id], 'A word in private');
  // One tab in the background (it reads nothing by being open), one in front on an empty channel.
  const back = await logIn(ctx, erin, { setup: (c) => c.addInitScript(BACKGROUND_TAB), hash: `#narrow/channel/${news}-news/topic/launch` });
  const front = await logIn(ctx, erin, { hash: `#narrow/channel/${quiet}-quiet` });
  await waitForTitle(front.page, `(6) #quiet`);
  assert.is(await unreadOf(front.page, 'news').textContent(), '5');

  await messageWith(back.page, 'Launch note 3').waitFor();
  await back.page.getByRole('button', { name: 'Mark all as read' }).click();
  await waitForTitle(front.page, `(3) #quiet`);
  assert.is(await unreadOf(front.page, 'news').textContent(), '2');
  await back.page.getByRole('button', { name: 'Mark all as read' }).waitFor({ state: 'detached' });

  await sidebarLink(back.page, 'news').click();
  await messageWith(back.page, 'Budget note 2').waitFor();
  await back.page.getByRole('button', { name: 'Mark all as read' }).click();
  await unreadOf(front.page, 'news').waitFor({ state: 'detached' });
  await waitForTitle(front.page, `(1) #quiet`);

  await sidebarLink(back.page, 'Combined feed').click();
  await messageWith(back.page, 'A word in private').waitFor();
  await back.page.getByRole('button', { name: 'Mark all as read' }).click();
  await waitForTitle(front.page, `#quiet`);
  assert.is(await unreadCountOnServer(erin), 0);
});

browserTest('"Mark as unread from here" makes that message and the later ones unread, and they stay so while shown', async (ctx) => {
  const finn = await newcomer(ctx, 'Finn Again');
  const notes = await makeChannel(ctx.realm, 'notes', [finn, ctx.bob]);
  for (const n of [1, 2, 3]) await send(ctx.bob, notes, 'minutes', `Minute ${n}`);
  const { page } = await logIn(ctx, finn, { hash: `#narrow/channel/${notes}-notes/topic/minutes` });
  await waitForTitle(page, `#notes › minutes`);
  assert.is(await unreadCountOnServer(finn), 0, 'read once shown');

  const second = messageWith(page, 'Minute 2');
  await second.hover();
  await second.getByRole('button', { name: 'More actions' }).click();
  await second.getByRole('button', { name: 'Mark as unread from here' }).click();
  await waitForTitle(page, `(2) #notes › minutes`);
  await page.locator('.message.unread').nth(1).waitFor();
  assert.is(await messageWith(page, 'Minute 1').evaluate((m) => m.classList.contains('unread')), false);
  // Still on screen, and scrolled past, they are not read again (reading waits for another view).
  await page.locator('#messages').dispatchEvent('scroll');
  await page.waitForTimeout(600);
  assert.is(await unreadCountOnServer(finn), 2);
  assert.match(await title(page), /^\(2\) #notes › minutes · /);
  // Another view and back: reading goes on.
  await sidebarLink(page, 'Combined feed').click();
  await waitForTitle(page, `Combined feed`);
});

if (existsSync(CHROMIUM)) test.run();
else console.log(`\n  web-views: skipped: no browser at ${CHROMIUM} (apt-get install chromium; .ci/run does)\n`);
