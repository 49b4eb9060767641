// The web client's views and message actions in a real browser against the real server: starring
// and the Starred view, all direct messages, "Mark all as read" and "Mark as unread from here",
// the unread count in the tab's title, search with operators and suggestions, quote and reply,
// keyboard shortcuts and the local echo of one's own messages.
// Each test makes its own people and channels, so unread counts start known.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import type { TestUser } from '../helpers/server.ts';
import { browserTests, compose, logIn, messageWith, sidebarLink, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-views', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

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

/** Waits (up to 5 s: reads are sent in batches) for the server to count `expected` unread messages for the user. */
async function serverUnread(user: TestUser, expected: number): Promise<void> {
  let count = -1;
  for (let tries = 0; tries < 50 && count !== expected; tries++) {
    if (tries) await new Promise((r) => setTimeout(r, 100));
    const r = await user.client.get('/messages', {
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      narrow: JSON.stringify([{ operator: 'is', operand: 'unread' }]),
    });
    count = r.body.messages.length;
  }
  assert.is(count, expected, 'unread on the server');
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
  await serverUnread(erin, 0);
});

browserTest('"Mark as unread from here" makes that message and the later ones unread, and they stay so while shown', async (ctx) => {
  const finn = await newcomer(ctx, 'Finn Again');
  const notes = await makeChannel(ctx.realm, 'notes', [finn, ctx.bob]);
  for (const n of [1, 2, 3]) await send(ctx.bob, notes, 'minutes', `Minute ${n}`);
  const { page } = await logIn(ctx, finn, { hash: `#narrow/channel/${notes}-notes/topic/minutes` });
  await waitForTitle(page, `#notes › minutes`);
  await serverUnread(finn, 0);

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
  await serverUnread(finn, 2);
  assert.match(await title(page), /^\(2\) #notes › minutes · /);
  // Another view and back: reading goes on.
  await sidebarLink(page, 'Combined feed').click();
  await waitForTitle(page, `Combined feed`);
});

browserTest('search with operators: a query that names a view opens it, others ask the server with their operators; suggestions complete them', async (ctx) => {
  const gina = await newcomer(ctx, 'Gina Finder');
  const plans = await makeChannel(ctx.realm, 'plans', [gina, ctx.bob, ctx.carol]);
  await send(ctx.bob, plans, 'road map', 'See https://example.com/map for the map');
  await send(ctx.carol, plans, 'road map', 'Carol has a link too: https://example.org');
  await send(ctx.bob, plans, 'road map', 'Bob without a link');
  await send(ctx.bob, plans, 'lunch', 'Lunch map at noon');
  const { page } = await logIn(ctx, gina, { hash: `#narrow/channel/${plans}-plans` });
  const search = page.getByLabel('Search messages');

  await search.fill(`sender:${ctx.bob.email} has:link`);
  await search.press('Enter');
  await page.locator('#narrow-title', { hasText: `Search: sender:${ctx.bob.email} has:link` }).waitFor();
  await messageWith(page, 'for the map').waitFor();
  assert.is(await page.locator('.message').count(), 1, 'only Bob, only with a link');

  await search.fill('map -topic:lunch');
  await search.press('Enter');
  await messageWith(page, 'for the map').waitFor();
  assert.is(await messageWith(page, 'Lunch map').count(), 0, 'the negated topic is left out');

  // channel: and topic: together are the topic's own view, with its address.
  await search.fill('channel:plans topic:"road map"');
  await search.press('Enter');
  await page.locator('#narrow-title', { hasText: '#plans › road map' }).waitFor();
  assert.match(page.url(), new RegExp(`#narrow/channel/${plans}-plans/topic/road\\.20map$`));

  // Suggestions: an operator from its first letters, then a channel from part of its name.
  await search.fill('');
  await search.pressSequentially('chan');
  const suggestions = page.getByRole('listbox', { name: 'Suggestions' });
  await suggestions.getByRole('option', { name: 'channel:', exact: true }).click();
  assert.is(await search.inputValue(), 'channel:');
  await search.pressSequentially('pla');
  await suggestions.getByRole('option', { name: 'channel:plans', exact: true }).waitFor();
  await search.press('ArrowDown');
  await search.press('Enter');
  await page.locator('#narrow-title', { hasText: '#plans' }).waitFor();
  await search.fill('is:st');
  await suggestions.getByRole('option', { name: 'is:starred' }).click();
  await page.locator('#narrow-title', { hasText: 'Starred messages' }).waitFor();
  await search.fill('sender:carol');
  await suggestions.getByRole('option', { name: `sender:${ctx.carol.email}` }).waitFor();
});

browserTest("quote and reply: the quote goes to the message's conversation and shows quoted in the other browser", async (ctx) => {
  const hugo = await newcomer(ctx, 'Hugo Quoter');
  const talk = await makeChannel(ctx.realm, 'talk', [hugo, ctx.bob]);
  await send(ctx.bob, talk, 'plans', 'We ship on **Friday**');
  const hugoTab = await logIn(ctx, hugo, { hash: `#narrow/channel/${talk}-talk` });
  const bobTab = await logIn(ctx, ctx.bob, { hash: `#narrow/channel/${talk}-talk/topic/plans` });
  const original = messageWith(hugoTab.page, 'We ship on Friday');
  await original.hover();
  await original.getByRole('button', { name: 'More actions' }).click();
  await original.getByRole('button', { name: 'Quote and reply' }).click();
  const content = hugoTab.page.locator('#compose-content');
  await hugoTab.page.waitForFunction(() => (document.getElementById('compose-content') as HTMLTextAreaElement).value.includes('quote'));
  const id = await original.getAttribute('data-message-id');
  assert.is(
    await content.inputValue(),
    `@_**Bob Builder|${ctx.bob.id}** [said](#narrow/channel/${talk}-talk/topic/plans/near/${id}):\n\`\`\`quote\nWe ship on **Friday**\n\`\`\`\n`,
  );
  assert.is(await hugoTab.page.locator('#compose-topic').inputValue(), 'plans');
  assert.ok(await content.evaluate((el) => el === document.activeElement), 'the compose box has the focus');
  await content.press('End');
  await content.pressSequentially('Agreed.');
  await content.press('Control+Enter');
  const reply = messageWith(bobTab.page, 'Agreed.');
  await reply.locator('blockquote', { hasText: 'We ship on Friday' }).waitFor();
  assert.is(await reply.locator('blockquote strong').textContent(), 'Friday');
});

browserTest('keyboard: ? lists the shortcuts, Esc closes; r replies to the selected message; n opens the next unread topic; arrows move', async (ctx) => {
  const ivy = await newcomer(ctx, 'Ivy Keys');
  const keys = await makeChannel(ctx.realm, 'keys', [ivy, ctx.bob]);
  const other = await makeChannel(ctx.realm, 'other', [ivy, ctx.bob]);
  await send(ctx.bob, keys, 'first', 'First topic message');
  await sendDm(ctx.bob, [ivy.id], 'A direct question');
  const { page } = await logIn(ctx, ivy, { hash: `#narrow/channel/${keys}-keys/topic/first` });
  await messageWith(page, 'First topic message').waitFor();

  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await help.waitFor();
  for (const [keys, what] of [
    ['r', 'Reply'],
    ['n', 'Next topic with unread messages'],
    ['?', 'This list'],
  ]) {
    assert.match((await help.locator('tr', { has: page.locator('kbd', { hasText: new RegExp(`^${keys.replace('?', '\\?')}$`) }) }).textContent()) ?? '', what);
  }
  await page.keyboard.press('Escape');
  await help.waitFor({ state: 'detached' });

  // n: the next topic with unread messages (none here yet), then one arrives.
  await send(ctx.bob, other, 'second', 'Second topic message');
  await sidebarLink(page, 'other').locator('.unread-count').waitFor();
  await page.locator('#messages').focus();
  await page.keyboard.press('n');
  await page.locator('#narrow-title', { hasText: '#other › second' }).waitFor();

  // Arrows select messages; r replies to the selected one.
  await sidebarLink(page, 'All direct messages').click();
  await messageWith(page, 'A direct question').waitFor();
  await page.locator('#messages').focus();
  await page.keyboard.press('ArrowDown');
  assert.is(await page.evaluate(() => document.activeElement?.closest('.message')?.textContent?.includes('A direct question')), true);
  await page.keyboard.press('r');
  await page.locator('#compose-to').waitFor();
  assert.equal(await page.locator('.pill-field .pill').allTextContents(), ['Bob Builder×']);
  assert.ok(await page.locator('#compose-content').evaluate((el) => el === document.activeElement));
  // Esc leaves the compose box; c comes back to it.
  await page.keyboard.press('Escape');
  assert.ok(await page.locator('#compose-content').evaluate((el) => el !== document.activeElement));
  await page.keyboard.press('c');
  assert.ok(await page.locator('#compose-content').evaluate((el) => el === document.activeElement));
});

browserTest("local echo: one's own message shows at once, before the server has it, then the server's replaces it", async (ctx) => {
  const jo = await newcomer(ctx, 'Jo Echo');
  const echo = await makeChannel(ctx.realm, 'echo', [jo, ctx.bob]);
  await send(ctx.bob, echo, 'sound', 'Hello?');
  const { page } = await logIn(ctx, jo, { hash: `#narrow/channel/${echo}-echo/topic/sound` });
  const bobTab = await logIn(ctx, ctx.bob, { hash: `#narrow/channel/${echo}-echo/topic/sound` });
  // The send is held back until the echo has been seen: the server cannot have the message before.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/v1/messages', async (route) => {
    if (route.request().method() === 'POST') await held;
    await route.continue();
  });
  await messageWith(page, 'Hello?').waitFor();
  await page.locator('#compose-content').fill('Echo **here**\nsecond line');
  await page.locator('#compose-content').press('Control+Enter');
  const local = page.locator('.message.local-echo');
  await local.waitFor();
  assert.is(await local.locator('.message-content').textContent(), 'Echo **here**\nsecond line', 'plain text until the server renders it');
  assert.is(await local.locator('.message-actions').count(), 0, 'no actions on a message the server does not have');
  assert.is(await messageWith(bobTab.page, 'Echo').count(), 0);
  release();
  await messageWith(page, 'Echo here').locator('strong', { hasText: 'here' }).waitFor();
  await local.waitFor({ state: 'detached' });
  assert.is(await messageWith(page, /Echo/).count(), 1, 'the echo is replaced, not doubled');
  await messageWith(bobTab.page, 'Echo here').waitFor();
});

browserTest('local echo: a message the server refuses leaves no echo and stays in the compose box', async (ctx) => {
  const kim = await newcomer(ctx, 'Kim Refused');
  const closed = await makeChannel(ctx.realm, 'closed', [kim, ctx.bob]);
  const { page } = await logIn(ctx, kim, { hash: `#narrow/channel/${closed}-closed/topic/t` });
  await page.locator('.list-note.empty').waitFor();
  // Only administrators may post from now on.
  const groups = await ctx.owner.client.get('/user_groups');
  const admins = groups.body.user_groups.find((g: { name: string }) => g.name === 'role:administrators').id;
  const r = await ctx.owner.client.patch(`/streams/${closed}`, { can_send_message_group: { new: admins } });
  assert.is(r.status, 200, r.text);
  await compose(page, 'Not allowed here', 't');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.locator('.compose .alert-error').waitFor();
  assert.is(await page.locator('.message').count(), 0);
  assert.is(await page.locator('#compose-content').inputValue(), 'Not allowed here');
});

browserTest('Inbox lists the unread conversations and Recent conversations the newest ones, both live', async (ctx) => {
  const lee = await newcomer(ctx, 'Lee Inbox');
  const desk = await makeChannel(ctx.realm, 'desk', [lee, ctx.bob, ctx.carol]);
  await send(ctx.bob, desk, 'alpha', 'Alpha one');
  await send(ctx.carol, desk, 'alpha', 'Alpha two');
  await send(ctx.bob, desk, 'beta', 'Beta one');
  await sendDm(ctx.bob, [lee.id], 'Private hello');
  const { page } = await logIn(ctx, lee, { hash: '#inbox' });
  await page.locator('#narrow-title', { hasText: 'Inbox' }).waitFor();
  const inbox = page.locator('.inbox');
  const row = (name: string) => inbox.locator('li', { has: page.getByRole('link', { name, exact: true }) });
  await row('alpha').waitFor();
  assert.is(await row('alpha').locator('.unread-count').textContent(), '2');
  assert.is(await row('beta').locator('.unread-count').textContent(), '1');
  assert.is(await row('Bob Builder').locator('.unread-count').textContent(), '1');
  assert.is(await inbox.locator('h2', { hasText: '#desk' }).locator('.unread-count').textContent(), '3');
  // Live: a new topic arrives; one read elsewhere leaves.
  await send(ctx.carol, desk, 'gamma', 'Gamma one');
  await row('gamma').waitFor();
  await lee.client.post('/mark_topic_as_read', { stream_id: desk, topic_name: 'alpha' });
  await row('alpha').waitFor({ state: 'detached' });
  await row('beta').getByRole('link').click();
  await page.locator('#narrow-title', { hasText: '#desk › beta' }).waitFor();

  await sidebarLink(page, 'Recent conversations').click();
  const recent = page.locator('.recent tbody tr');
  await recent.first().waitFor();
  assert.equal(await recent.locator('.conversation-link').allTextContents(), ['gamma', 'Bob Builder', 'beta', 'alpha']);
  assert.is(await recent.filter({ hasText: 'alpha' }).locator('td').nth(3).textContent(), 'Carol Clerk, Bob Builder');
  await send(ctx.bob, desk, 'alpha', 'Alpha three');
  await page.waitForFunction(() => document.querySelector('.recent tbody tr .conversation-link')?.textContent === 'alpha');
  assert.equal(await recent.locator('.conversation-link').allTextContents(), ['alpha', 'gamma', 'Bob Builder', 'beta']);
  assert.is(await recent.first().locator('.unread-count').textContent(), '1');
  await recent.first().locator('.conversation-link').click();
  await page.locator('#narrow-title', { hasText: '#desk › alpha' }).waitFor();
});

runBrowserTests(test, 'web-views');
