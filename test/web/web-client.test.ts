// The web client in a real browser (Debian's Chromium driven by playwright-core) against the real
// server: logging in, channels and unread counts, sending and receiving live over the WebSocket
// gateway, preview, edits, reactions, resolving, reading, history, a dropped socket, long-polling.
// One browser for the file; each test opens its own contexts (a context is one user's tab).
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
// WEB_SCREENSHOTS=<dir> also saves the screenshots of docs/web-client.md (desktop and phone width) there.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page, WebSocketRoute } from 'playwright-core';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { startTestServer } from '../helpers/server.ts';
import { Client } from '../helpers/client.ts';
import {
  browserTests,
  chromiumMissing,
  compose,
  logIn,
  messageWith,
  openTab,
  PHONE,
  REFUSED_WEBSOCKET,
  screenshot,
  SERVER_ENV,
  sidebarLink,
  runBrowserTests,
  setUpBrowserSuite,
  tearDownBrowserSuite,
  type Ctx,
} from '../lib/browser.ts';

const test = suite<Ctx>('web-client', {} as Ctx);

test.before(async (ctx) => {
  await setUpBrowserSuite(ctx);
  if (chromiumMissing) return;
  ctx.general = await makeChannel(ctx.realm, 'general', [ctx.owner, ctx.bob, ctx.carol]);
  ctx.random = await makeChannel(ctx.realm, 'random', [ctx.owner, ctx.bob]);
});

const browserTest = browserTests(test);

test.after(tearDownBrowserSuite);

browserTest('a wrong password is said so, and repeated failures show the rate limit', async (ctx) => {
  const { page } = await openTab(ctx);
  await page.getByLabel('Email').fill(ctx.carol.email);
  for (let i = 0; i < 3; i++) {
    await page.getByLabel('Password', { exact: true }).fill(`wrong-${i}`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#login-error', { hasText: 'Wrong email or password.' }).waitFor();
    await page.getByRole('button', { name: 'Log in' }).and(page.locator(':enabled')).waitFor();
  }
  await page.getByLabel('Password', { exact: true }).fill(ctx.carol.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  const error = page.locator('#login-error');
  await error.filter({ hasText: 'Too many attempts' }).waitFor();
  assert.match((await error.textContent()) ?? '', /^Too many attempts\. Try again in \d+ seconds\.$/);
  assert.ok(await page.getByRole('button', { name: 'Log in' }).isDisabled(), 'the button waits out the limit');
  assert.is(await page.evaluate(() => sessionStorage.length), 0);
});

browserTest('logs in with the password: channels with unread counts and muted state, the key kept in sessionStorage only', async (ctx) => {
  await send(ctx.bob, ctx.random, 'news', 'Unread news for the owner');
  await ctx.owner.client.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ctx.general, property: 'is_muted', value: false }] });
  // Opened on another channel: the combined feed would show the message, and so read it.
  const { page } = await logIn(ctx, ctx.owner, { hash: `#narrow/channel/${ctx.general}-general` });
  await page.locator('#narrow-title', { hasText: '#general' }).waitFor();
  assert.is(await sidebarLink(page, 'random').locator('.unread-count').textContent(), '1');
  assert.is(await sidebarLink(page, 'general').locator('.unread-count').count(), 0);
  const saved = await page.evaluate(() => ({ session: sessionStorage.getItem('chat.session'), local: localStorage.length, cookie: document.cookie }));
  assert.equal(JSON.parse(saved.session!), { email: ctx.owner.email, apiKey: ctx.owner.apiKey });
  assert.is(saved.local, 0);
  assert.is(saved.cookie, '');
  // Muting a channel elsewhere (another client) shows here, live.
  await ctx.owner.client.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ctx.random, property: 'is_muted', value: true }] });
  await sidebarLink(page, 'random').locator('.muted-label').waitFor();
  await ctx.owner.client.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ctx.random, property: 'is_muted', value: false }] });
  await sidebarLink(page, 'random').locator('.muted-label').waitFor({ state: 'detached' });
});

browserTest('logs in with the API key; a wrong key is refused', async (ctx) => {
  const { page } = await openTab(ctx);
  await page.getByText('Use API key').click();
  await page.getByLabel('Email').fill(ctx.bob.email);
  await page.getByLabel('API key', { exact: true }).fill('not-the-key');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#login-error', { hasText: 'Wrong email or API key.' }).waitFor();
  await page.getByLabel('API key', { exact: true }).fill(ctx.bob.apiKey);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('[data-connection="socket"]').waitFor();
  assert.is(await page.locator('.topbar .me').textContent(), 'Bob Builder');
});

browserTest('a message sent from the compose box comes back over the WebSocket, rendered', async (ctx) => {
  const { page, frames } = await logIn(ctx, ctx.owner);
  await sidebarLink(page, 'general').click();
  await page.locator('#narrow-title', { hasText: '#general' }).waitFor();
  await compose(page, 'Hello **world** from the browser', 'greetings');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await messageWith(page, 'Hello world from the browser').locator('strong', { hasText: 'world' }).waitFor();
  assert.is(await page.locator('#compose-content').inputValue(), '', 'the compose box is emptied');
  const pushed = frames.map((f) => JSON.parse(f)).filter((e) => e.type === 'message');
  assert.is(pushed.length, 1);
  assert.is(pushed[0].message.content, '<p>Hello <strong>world</strong> from the browser</p>');
  await sidebarLink(page, 'greetings').waitFor();

  await compose(page, 'A message to take back');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const regret = messageWith(page, 'A message to take back');
  await regret.hover();
  page.once('dialog', (dialog) => void dialog.accept());
  await regret.getByRole('button', { name: 'Delete message' }).click();
  await regret.waitFor({ state: 'detached' });
  assert.ok(
    frames.some((f) => JSON.parse(f).type === 'delete_message'),
    'gone by the delete event',
  );
});

browserTest("another user's message, typing and DM arrive live in a second browser", async (ctx) => {
  const owner = await logIn(ctx, ctx.owner);
  const bob = await logIn(ctx, ctx.bob);
  for (const { page } of [owner, bob]) {
    await sidebarLink(page, 'general').click();
    await sidebarLink(page, 'greetings').click();
    await page.locator('#narrow-title', { hasText: '#general › greetings' }).waitFor();
  }
  await bob.page.locator('#compose-content').pressSequentially('Hi');
  await owner.page.locator('.typing-notice', { hasText: 'Bob Builder is typing…' }).waitFor();
  await compose(bob.page, 'Hi from Bob, with `code` and :tada:');
  await bob.page.locator('#compose-content').press('Control+Enter');
  const arrived = messageWith(owner.page, 'Hi from Bob, with');
  await arrived.locator('code', { hasText: 'code' }).waitFor();
  // Zulip's image of the emoji, not the system's font; its name stays as the text.
  assert.is(await arrived.locator('.emoji').textContent(), ':tada:');
  assert.match(await arrived.locator('.emoji').evaluate((el) => getComputedStyle(el).backgroundImage), /\/static\/emoji\/google-[\d.]+\/1f389\.png/);
  await owner.page.locator('.typing-notice', { hasText: 'typing' }).waitFor({ state: 'detached' });
  // Bob's own copy may reach his socket a moment after Olivia's page shows it.
  for (let waited = 0; waited < 5000 && !bob.frames.some((f) => f.includes('Hi from Bob')); waited += 50) await new Promise((r) => setTimeout(r, 50));
  assert.ok(
    bob.frames.some((f) => f.includes('Hi from Bob')),
    "bob's own message came to him over his socket too",
  );

  await owner.page.getByText('Direct message', { exact: true }).click();
  await owner.page.locator('#compose-to').fill(ctx.bob.email);
  await compose(owner.page, 'A private word');
  await owner.page.getByRole('button', { name: 'Send', exact: true }).click();
  const dm = bob.page.locator('#sidebar .dms .nav-link', { hasText: 'Olivia Owner' });
  await dm.locator('.unread-count', { hasText: '1' }).waitFor();
  await dm.click();
  await messageWith(bob.page, 'A private word').waitFor();
  await dm.locator('.unread-count').waitFor({ state: 'detached' });
});

browserTest('Markdown preview is the server rendering, with math and emoji', async (ctx) => {
  const { page } = await logIn(ctx, ctx.owner);
  await compose(page, '**bold** $$x^2$$ :tada:\n> quoted', 'preview');
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.locator('.compose-preview');
  await preview.locator('strong', { hasText: 'bold' }).waitFor();
  assert.is(await preview.locator('.katex').count(), 1);
  assert.is(await preview.locator('blockquote').textContent(), '\nquoted\n');
  assert.is(await preview.locator('.emoji').getAttribute('aria-label'), 'tada');
  const toggle = page.getByRole('button', { name: 'Preview' });
  assert.is(await toggle.getAttribute('aria-pressed'), 'true');
  await toggle.click();
  assert.is(await page.locator('#compose-content').inputValue(), '**bold** $$x^2$$ :tada:\n> quoted', 'back to the text, as it was');
});

browserTest('an edit, a reaction and resolving the topic show live in the other browser', async (ctx) => {
  const owner = await logIn(ctx, ctx.owner);
  const bob = await logIn(ctx, ctx.bob);
  for (const { page } of [owner, bob]) {
    await sidebarLink(page, 'general').click();
    await sidebarLink(page, 'greetings').click();
    await messageWith(page, 'Hello world from the browser').waitFor();
  }
  const id = await messageWith(owner.page, 'Hello world from the browser').getAttribute('data-message-id');
  const mine = owner.page.locator(`.message[data-message-id="${id}"]`);
  await mine.hover();
  await mine.getByRole('button', { name: 'Edit message' }).click();
  const box = mine.getByLabel('Edit message');
  await box.and(owner.page.locator(':enabled')).waitFor();
  assert.is(await box.inputValue(), 'Hello **world** from the browser');
  await box.fill('Hello **everyone** from the browser');
  await mine.getByRole('button', { name: 'Save' }).click();
  const edited = messageWith(bob.page, 'Hello everyone from the browser');
  await edited.locator('strong', { hasText: 'everyone' }).waitFor();
  await edited.locator('.edited').waitFor();

  await edited.hover();
  await edited.getByRole('button', { name: 'Add reaction' }).click();
  await edited.getByRole('dialog', { name: 'Add a reaction' }).getByRole('button', { name: '+1', exact: true }).first().click();
  const reaction = messageWith(owner.page, 'Hello everyone').locator('.reaction');
  await reaction.waitFor();
  assert.is(await reaction.getAttribute('aria-label'), '+1: 1');
  assert.is(await reaction.getAttribute('aria-pressed'), 'false', "it is Bob's reaction");

  await owner.page.getByRole('button', { name: 'Resolve topic' }).click();
  for (const { page } of [owner, bob]) {
    await page.locator('#narrow-title', { hasText: '#general › ✔ greetings' }).waitFor();
    await messageWith(page, 'Hello everyone from the browser').waitFor();
  }
  await screenshot(owner.page, 'web-desktop.png');
  await owner.page.getByRole('button', { name: 'Unresolve topic' }).click();
  await bob.page.locator('#narrow-title', { hasText: /› greetings$/ }).waitFor();

  // What the events made of Bob's page is what a fresh load shows.
  const fresh = await logIn(ctx, ctx.bob, { hash: new URL(bob.page.url()).hash });
  const shown = (page: Page) => page.evaluate(() => [document.querySelector('#messages')!.textContent, document.querySelector('#sidebar')!.textContent]);
  await messageWith(fresh.page, 'Hello everyone from the browser').waitFor();
  let live: (string | null)[] = [];
  let loaded: (string | null)[] = [];
  for (let waited = 0; waited < 5000; waited += 100) {
    [live, loaded] = await Promise.all([shown(bob.page), shown(fresh.page)]);
    if (JSON.stringify(live) === JSON.stringify(loaded)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(live, loaded);
});

browserTest('unread messages are marked read once they are on screen', async (ctx) => {
  const id = await send(ctx.bob, ctx.random, 'reading', 'Read me when you see me');
  const { page } = await logIn(ctx, ctx.owner, { hash: `#narrow/channel/${ctx.general}-general` });
  await sidebarLink(page, 'random').locator('.unread-count').waitFor();
  await sidebarLink(page, 'random').click();
  await messageWith(page, 'Read me when you see me').and(page.locator(':not(.unread)')).waitFor();
  await sidebarLink(page, 'random').locator('.unread-count').waitFor({ state: 'detached' });
  const deadline = Date.now() + 5000;
  let flags: string[] = [];
  while (Date.now() < deadline && !flags.includes('read')) {
    flags = (await ctx.owner.client.get(`/messages/${id}`)).body.message.flags;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(flags.includes('read'), 'the server knows');
});

browserTest('scrolling up loads older messages until the first', async (ctx) => {
  const ids: number[] = [];
  for (let batch = 0; batch < 13; batch++) {
    const numbers = Array.from({ length: 10 }, (_, i) => batch * 10 + i + 1);
    ids.push(...(await Promise.all(numbers.map((n) => send(ctx.bob, ctx.general, 'history', `history message ${n}`)))));
  }
  ids.sort((a, b) => a - b);
  await ctx.owner.client.post('/mark_all_as_read');
  const { page } = await logIn(ctx, ctx.owner);
  await sidebarLink(page, 'general').click();
  await sidebarLink(page, 'history').click();
  await messageWith(page, 'history message 130').waitFor();
  const list = page.locator('#messages');
  assert.ok((await list.locator('.message').count()) < 130, 'only the newest page is loaded at first');
  const beginning = page.getByText('This is the beginning of the conversation.');
  for (let i = 0; i < 20 && !(await beginning.isVisible()); i++) {
    await list.evaluate((el) => el.scrollTo(0, 0));
    await page.waitForTimeout(150);
  }
  await messageWith(page, /^history message 1$/).waitFor();
  const shown = await list.locator('.message').evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.messageId)));
  assert.equal(shown, ids, 'every message once, in order');
});

browserTest('a dropped socket reconnects and resumes with nothing missed', async (ctx) => {
  const sockets: { url: string; drop: () => Promise<void> }[] = [];
  // Each socket goes through the test (to the real server), which can drop it as a network would.
  const { page } = await logIn(ctx, ctx.owner, {
    setup: (context) =>
      context.routeWebSocket(/\/api\/v1\/events\/socket/, (ws) => {
        ws.connectToServer();
        sockets.push({ url: ws.url(), drop: () => ws.close({ code: 1012, reason: 'server restarting' }) });
      }),
  });
  await sidebarLink(page, 'random').click();
  await page.locator('#narrow-title', { hasText: '#random' }).waitFor();
  await send(ctx.bob, ctx.random, 'outage', 'before the drop');
  await messageWith(page, 'before the drop').waitFor();
  assert.is(sockets.length, 1);
  await sockets[0]!.drop();
  await send(ctx.bob, ctx.random, 'outage', 'sent while the socket was down');
  await send(ctx.bob, ctx.random, 'outage', 'also sent while down');
  await messageWith(page, 'also sent while down').waitFor();
  await page.locator('[data-connection="socket"]').waitFor();
  assert.is(sockets.length, 2, 'one reconnect');
  const resumedAfter = Number(new URL(sockets[1]!.url).searchParams.get('last_event_id'));
  assert.ok(resumedAfter >= 0, `resumed after event ${resumedAfter}`);
  assert.is(await messageWith(page, 'sent while the socket was down').count(), 1, 'no gap, no duplicate');
  assert.is(await messageWith(page, 'also sent while down').count(), 1);
});

browserTest('a queue the server lost is registered again, and the view stays live', async (ctx) => {
  const { page } = await logIn(ctx, ctx.bob, { hash: `#narrow/channel/${ctx.random}-random` });
  await page.locator('#narrow-title', { hasText: '#random' }).waitFor();
  const queues = ctx.server.app.queues;
  const lost = [...queues.queuesOf(ctx.bob.id)];
  for (const queue of lost) queues.delete(queue);
  for (let waited = 0; queues.queuesOf(ctx.bob.id).size === 0; waited += 50) {
    assert.ok(waited < 10_000, 'no new queue registered');
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.is(queues.queuesOf(ctx.bob.id).size, 1, 'one new queue');
  await page.locator('[data-connection="socket"]').waitFor();
  await send(ctx.owner, ctx.random, 'again', 'after the new register');
  await messageWith(page, 'after the new register').waitFor();
});

browserTest('moving a topic to another channel takes the view along', async (ctx) => {
  const { page } = await logIn(ctx, ctx.owner, { hash: `#narrow/channel/${ctx.random}-random/topic/again` });
  await messageWith(page, 'after the new register').waitFor();
  const id = await messageWith(page, 'after the new register').getAttribute('data-message-id');
  await page.getByRole('button', { name: 'Move topic' }).click();
  const form = page.locator('form.move-topic');
  await form.getByLabel('Channel').selectOption({ label: '#general' });
  await form.getByLabel('Topic').fill('moved here');
  await form.getByRole('button', { name: 'Move' }).click();
  await page.locator('#narrow-title', { hasText: '#general › moved here' }).waitFor();
  await messageWith(page, 'after the new register').waitFor();
  assert.match(page.url(), new RegExp(`#narrow/channel/${ctx.general}-general/topic/moved\\.20here$`));
  // Moved back by another client: the view follows again.
  const back = await ctx.owner.client.patch(`/messages/${id}`, {
    topic: 'again',
    stream_id: ctx.random,
    propagate_mode: 'change_all',
    send_notification_to_new_thread: false,
  });
  assert.is(back.status, 200, back.text);
  await page.locator('#narrow-title', { hasText: '#random › again' }).waitFor();
});

browserTest("a topic renamed while the channel's messages load keeps its topic list", async (ctx) => {
  const id = await send(ctx.owner, ctx.random, 'before rename', 'renamed during a load');
  const { page } = await logIn(ctx, ctx.bob, { hash: `#narrow/channel/${ctx.random}-random` });
  const topics = page.getByRole('list', { name: 'Topics in random' });
  await topics.getByText('before rename', { exact: true }).waitFor();
  // The next page of messages is held until the rename's event has come and the topic list
  // was fetched again: the event is then replayed on the page the fetch brings.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route(/\/api\/v1\/messages\?/, async (route) => {
    await held;
    await route.continue();
  });
  await sidebarLink(page, 'general').click();
  await sidebarLink(page, 'random').click();
  const renamed = await ctx.owner.client.patch(`/messages/${id}`, {
    topic: 'after rename',
    propagate_mode: 'change_all',
    send_notification_to_old_thread: false,
    send_notification_to_new_thread: false,
  });
  assert.is(renamed.status, 200, renamed.text);
  await topics.getByText('after rename', { exact: true }).waitFor();
  release();
  await messageWith(page, 'renamed during a load').waitFor();
  await page.unroute(/\/api\/v1\/messages\?/);
  await topics.getByText('after rename', { exact: true }).waitFor();
  assert.is(await topics.getByText('Loading topics…').count(), 0);
});

browserTest('search shows the matching messages with the matches marked', async (ctx) => {
  const { page } = await logIn(ctx, ctx.owner);
  // "down" would be a stop word, which search ignores as Zulip's does.
  await page.getByLabel('Search messages').fill('sent');
  await page.getByLabel('Search messages').press('Enter');
  await page.locator('#narrow-title', { hasText: 'Search: sent' }).waitFor();
  await page.locator('.message-content .highlight').first().waitFor();
  assert.equal(await page.locator('.message-content').allTextContents(), ['sent while the socket was down', 'also sent while down']);
  assert.equal(await page.locator('.message-content .highlight').allTextContents(), ['sent', 'sent']);
});

browserTest('without a WebSocket the client long-polls', async (ctx) => {
  const { page } = await logIn(ctx, ctx.bob, {
    live: 'polling',
    // A socket that never opens, as behind a proxy that refuses the upgrade. (A string: a
    // function would be sent as its compiled text, which may call helpers the page lacks.)
    setup: (context) => context.addInitScript(REFUSED_WEBSOCKET),
  });
  await sidebarLink(page, 'random').click();
  await page.locator('#narrow-title', { hasText: '#random' }).waitFor();
  await send(ctx.owner, ctx.random, 'polling', 'delivered by long-polling');
  await messageWith(page, 'delivered by long-polling').waitFor();
});

browserTest('works at phone width: the sidebar opens from the menu', async (ctx) => {
  const { page } = await logIn(ctx, ctx.owner, { viewport: PHONE });
  const menu = page.getByRole('button', { name: 'Conversations' });
  assert.is(await menu.getAttribute('aria-expanded'), 'false');
  await menu.click();
  await sidebarLink(page, 'general').click();
  await page.locator('#narrow-title', { hasText: '#general' }).waitFor();
  assert.is(await menu.getAttribute('aria-expanded'), 'false', 'choosing a conversation closes the sidebar');
  await menu.click();
  await sidebarLink(page, 'greetings').click();
  await messageWith(page, 'Hello everyone from the browser').waitFor();
  await page.locator('#sidebar').evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
  await screenshot(page, 'web-phone.png');
});

browserTest('keyboard: skip link, j and k through messages, / for search, c for compose', async (ctx) => {
  const { page } = await logIn(ctx, ctx.owner, { hash: `#narrow/channel/${ctx.random}-random` });
  await messageWith(page, 'delivered by long-polling').waitFor();
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return el.id || (el.dataset.messageId ? `message ${el.textContent}` : el.tagName);
    });
  await page.keyboard.press('Tab');
  assert.is(await focused(), 'BUTTON', 'the skip link comes first');
  await page.keyboard.press('Enter');
  assert.is(await focused(), 'messages');
  const ids = await page.locator('.message').evaluateAll((els) => els.map((e) => `message ${e.textContent}`));
  await page.keyboard.press('k');
  assert.is(await focused(), ids.at(-1), 'k from the list: the last message on screen');
  assert.match(ids.at(-1)!, /delivered by long-polling/);
  await page.keyboard.press('k');
  assert.is(await focused(), ids.at(-2));
  await page.keyboard.press('j');
  assert.is(await focused(), ids.at(-1));
  await page.keyboard.press('/');
  assert.is(await focused(), 'search-input');
  await page.locator('#messages').focus();
  await page.keyboard.press('c');
  assert.is(await focused(), 'compose-content');
});

browserTest('across a server restart the queue resumes: what was sent meanwhile arrives once, with no new register', async (ctx) => {
  let blocked = false;
  const sockets: WebSocketRoute[] = [];
  const registers: string[] = [];
  const { page } = await logIn(ctx, ctx.bob, {
    hash: `#narrow/channel/${ctx.random}-random`,
    // While `blocked`, a reconnecting socket gets a stand-in that stays silent (the server never
    // hears of it), so the events of the meantime wait in the queue, through the restart.
    setup: (context) =>
      context.routeWebSocket(/\/api\/v1\/events\/socket/, (ws) => {
        if (!blocked) ws.connectToServer();
        sockets.push(ws);
      }),
  });
  page.on('request', (r) => r.url().endsWith('/api/v1/register') && registers.push(r.url()));
  await page.locator('#narrow-title', { hasText: '#random' }).waitFor();
  blocked = true;
  await sockets.at(-1)!.close({ code: 1012, reason: 'server restarting' });
  for (let waited = 0; sockets.length < 2; waited += 50) {
    assert.ok(waited < 10_000, 'no reconnect');
    await new Promise((r) => setTimeout(r, 50));
  }
  await send(ctx.owner, ctx.random, 'restart', 'sent before the restart');
  await send(ctx.owner, ctx.random, 'restart', 'also before the restart');
  const { DATABASE_URL, DATA_DIR } = ctx.server.app.config;
  await ctx.server.stop();
  // Another port (the old one is held in TIME_WAIT): the forwarder keeps the browser's address.
  ctx.server = await startTestServer({ ...SERVER_ENV, DATABASE_URL, DATA_DIR });
  for (const who of ['owner', 'bob', 'carol'] as const)
    ctx[who] = { ...ctx[who], client: new Client(ctx.server.port, ctx.realm.host, ctx[who].client.credentials) };
  await send(ctx.owner, ctx.random, 'restart', 'sent after the restart');
  blocked = false;
  await sockets.at(-1)!.close({ code: 1012, reason: 'server restarting' });
  await messageWith(page, 'sent after the restart').waitFor();
  for (const text of ['sent before the restart', 'also before the restart', 'sent after the restart'])
    assert.is(await messageWith(page, text).count(), 1, text);
  assert.equal(registers, [], 'the same queue throughout');
});

browserTest('logging out forgets the key and ends the event queue', async (ctx) => {
  const { page } = await logIn(ctx, ctx.owner);
  const queues = () => ctx.server.app.queues.queuesOf(ctx.owner.id).size;
  const before = queues();
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('heading', { name: /^Log in/ }).waitFor();
  assert.is(await page.evaluate(() => sessionStorage.getItem('chat.session')), null);
  assert.is(queues(), before - 1);
  await page.reload();
  await page.getByRole('heading', { name: /^Log in/ }).waitFor();
});

runBrowserTests(test, 'web-client');
