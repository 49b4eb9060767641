// People in the web client, in Chromium against the real server: the profile card with the
// organization's custom profile fields and the person's status, opened from a message or the
// buddy list, and a status change seen live in another person's browser; desktop notifications
// and sounds for what others send, and the theme, as the user's settings say.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { browserTests, logIn, messageWith, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-people', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

/** The card's fields as [name, value] pairs, in order. */
const cardFields = (page: Page) =>
  page
    .locator('.profile-card .profile-fields dt')
    .evaluateAll((terms) => terms.map((dt) => [dt.textContent!.trim(), dt.nextElementSibling!.textContent!.trim()]));

browserTest('a profile card: custom fields, status, role; opened from a message and from the buddy list, its status current as it changes', async (ctx) => {
  const o = ctx.owner.client;
  const team = (await o.post('/realm/profile_fields', { name: 'Team', field_type: 1 })).body.id;
  const office = (
    await o.post('/realm/profile_fields', {
      name: 'Office',
      field_type: 3,
      field_data: JSON.stringify({ b: { text: 'Berlin', order: '1' }, l: { text: 'Lisbon', order: '2' } }),
    })
  ).body.id;
  const mentor = (await o.post('/realm/profile_fields', { name: 'Mentor', field_type: 6 })).body.id;
  await o.post('/realm/profile_fields', { name: 'Unfilled', field_type: 1 });
  const set = await ctx.bob.client.patch('/users/me/profile_data', {
    data: JSON.stringify([
      { id: team, value: 'Rockets' },
      { id: office, value: 'l' },
      { id: mentor, value: [ctx.carol.id] },
    ]),
  });
  assert.is(set.status, 200, set.text);
  assert.is((await ctx.bob.client.post('/users/me/status', { status_text: 'Building things' })).status, 200);
  const lobby = await makeChannel(ctx.realm, 'lobby', [ctx.owner, ctx.bob]);
  await send(ctx.bob, lobby, 'hello', 'Hello from Bob');

  const owner = await logIn(ctx, ctx.owner, { hash: `#narrow/channel/${lobby}-lobby` });
  await messageWith(owner.page, 'Hello from Bob').getByRole('link', { name: 'Bob Builder' }).click();
  const card = owner.page.getByRole('dialog', { name: 'Bob Builder' });
  await card.waitFor();
  // Bob has no client open yet: offline.
  assert.is(await card.locator('.profile-header .hint').textContent(), 'Member · Offline');
  assert.is(await card.locator('.user-status').textContent(), ' Building things');
  const fields = await cardFields(owner.page);
  assert.equal(
    fields.filter(([name]) => !['Local time', 'Joined'].includes(name!)),
    [
      ['Email', ctx.bob.email],
      ['Team', 'Rockets'],
      ['Office', 'Lisbon'],
      ['Mentor', 'Carol Clerk'],
    ],
  );
  await card.getByRole('link', { name: 'Close' }).click();
  await card.waitFor({ state: 'detached' });

  // The buddy list shows the status too, and opens the same card.
  await owner.page.locator('.people summary').click();
  const person = owner.page.locator(`.people .person[data-user-id="${ctx.bob.id}"]`);
  assert.is(await person.locator('.user-status').textContent(), ' Building things');
  await person.getByRole('link', { name: 'Profile of Bob Builder' }).click();
  await card.waitFor();

  // Bob changes his status in his own browser: the card and the list follow.
  const bob = await logIn(ctx, ctx.bob, { hash: '#settings/profile' });
  await bob.page.getByLabel('Status', { exact: true }).fill('Out for lunch');
  await bob.page.getByRole('button', { name: 'Set status' }).click();
  await card.locator('.user-status', { hasText: 'Out for lunch' }).waitFor();
  await person.locator('.user-status', { hasText: 'Out for lunch' }).waitFor();
  await bob.page.getByRole('button', { name: 'Clear status' }).click();
  await person.locator('.user-status').waitFor({ state: 'detached' });
  assert.is(await card.locator('.user-status').count(), 0);
});

/**
 * The browser's notification and sound machinery, recorded (a headless browser shows neither), and
 * a page that is not in view (notifications are for when the user looks elsewhere).
 */
const RECORD_ALERTS = `
  window.__notes = [];
  window.__chimes = 0;
  window.__asked = 0;
  let permission = 'default';
  window.Notification = class {
    static get permission() { return permission; }
    static async requestPermission() { window.__asked++; permission = 'granted'; return permission; }
    constructor(title, options) { this.title = title; window.__notes.push(this); Object.assign(this, options); }
    close() {}
  };
  window.AudioContext = class {
    currentTime = 0;
    destination = {};
    createOscillator() { window.__chimes += 0.5; return { frequency: {}, connect: (n) => n, start() {}, stop() {} }; }
    createGain() { return { gain: { setValueAtTime() {}, exponentialRampToValueAtTime() {} }, connect: (n) => n }; }
  };
  document.hasFocus = () => false;
`;

const notes = (page: Page) => page.evaluate(() => (window as any).__notes.map((n: { title: string; body: string }) => [n.title, n.body]));
const chimes = (page: Page) => page.evaluate(() => (window as any).__chimes);

browserTest(
  'notifications: permission asked from a click; direct messages and mentions notify and chime, plain channel messages do not unless the channel says so; sounds off by the setting',
  async (ctx) => {
    const dana = await ctx.realm.addUser({ name: 'Dana Notified' });
    const news = await makeChannel(ctx.realm, 'news', [dana, ctx.bob]);
    const tab = await logIn(ctx, dana, { hash: '#settings/preferences', setup: (c) => c.addInitScript(RECORD_ALERTS) });
    const page = tab.page;
    assert.ok(await page.getByRole('checkbox', { name: 'Desktop notifications for direct messages and mentions' }).isChecked());
    await page.getByRole('button', { name: 'Allow desktop notifications' }).click();
    await page.locator('.notification-permission').waitFor({ state: 'detached' });
    assert.is(await page.evaluate(() => (window as any).__asked), 1);

    await send(ctx.bob, news, 'plans', 'A plain channel message');
    await ctx.bob.client.post('/messages', { type: 'direct', to: JSON.stringify([dana.id]), content: 'Are you there, **Dana**?' });
    await page.waitForFunction(() => (window as any).__notes.length === 1);
    assert.equal(await notes(page), [['Bob Builder', 'Are you there, Dana?']]);
    assert.is(await chimes(page), 1);
    await send(ctx.bob, news, 'plans', '@**Dana Notified** please look');
    await page.waitForFunction(() => (window as any).__notes.length === 2);
    assert.equal((await notes(page))[1], ['Bob Builder (#news > plans)', '@Dana Notified please look']);
    assert.is(await chimes(page), 2);

    // A click, not uncheck(): the box shows the setting, which changes when the server's event comes back.
    await page.getByRole('checkbox', { name: 'Sound for direct messages and mentions' }).click();
    await page.getByText('Saved.').waitFor();
    await page.locator('.settings-body label', { hasText: 'Sound for direct messages and mentions' }).locator('input:not(:checked)').waitFor();
    await ctx.bob.client.post('/messages', { type: 'direct', to: JSON.stringify([dana.id]), content: 'Quietly now' });
    await page.waitForFunction(() => (window as any).__notes.length === 3);
    assert.is(await chimes(page), 2);
    // A click on a notification opens its conversation.
    await page.evaluate(() => (window as any).__notes[2].onclick());
    await page.getByRole('heading', { name: 'Bob Builder', exact: true }).waitFor();
    assert.match(page.url(), /#narrow\/dm\//);

    // A channel's own choice: #news notifies every message from now on, without a sound.
    await page.evaluate((hash) => (location.hash = hash), `#channels/${news}/news`);
    const desktop = page.getByRole('group', { name: 'Your notifications for this channel' }).getByRole('checkbox', { name: 'Desktop notifications' });
    assert.not.ok(await desktop.isChecked());
    await desktop.click();
    // Saved once the server says so (the box itself turns at the click).
    let saved: boolean | null = null;
    for (let tries = 0; tries < 50 && saved !== true; tries++) {
      if (tries) await new Promise((r) => setTimeout(r, 100));
      const subs = (await dana.client.get('/users/me/subscriptions')).body.subscriptions;
      saved = subs.find((s: { stream_id: number }) => s.stream_id === news).desktop_notifications;
    }
    assert.is(saved, true);
    await send(ctx.bob, news, 'plans', 'Another plain channel message');
    await page.waitForFunction(() => (window as any).__notes.length === 4);
    assert.equal((await notes(page))[3], ['Bob Builder (#news > plans)', 'Another plain channel message']);
    assert.is(await chimes(page), 2);
  },
);

const background = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const LIGHT = 'rgb(246, 247, 249)';
const DARK = 'rgb(21, 24, 30)';

browserTest('the theme: automatic follows the system, dark and light override it, in every tab of the user at once', async (ctx) => {
  const erin = await ctx.realm.addUser({ name: 'Erin Themed' });
  const here = await logIn(ctx, erin, { hash: '#settings/preferences' });
  const there = await logIn(ctx, erin);
  assert.is(await background(there.page), LIGHT);
  await there.page.emulateMedia({ colorScheme: 'dark' });
  assert.is(await background(there.page), DARK);
  await here.page.getByLabel('Theme').selectOption({ label: 'Light' });
  await there.page.waitForFunction((light) => getComputedStyle(document.body).backgroundColor === light, LIGHT);
  await here.page.getByLabel('Theme').selectOption({ label: 'Dark' });
  await there.page.waitForFunction((dark) => getComputedStyle(document.body).backgroundColor === dark, DARK);
  // The tab that chose applies it when its own event comes back, which may be after the other tab's.
  await here.page.waitForFunction((dark) => getComputedStyle(document.body).backgroundColor === dark, DARK);
  assert.is((await erin.client.post('/register', { fetch_event_types: JSON.stringify(['user_settings']) })).body.user_settings.color_scheme, 2);
  await here.page.getByLabel('Theme').selectOption({ label: 'Automatic (as the system)' });
  await here.page.waitForFunction((light) => getComputedStyle(document.body).backgroundColor === light, LIGHT);
  await there.page.waitForFunction((dark) => getComputedStyle(document.body).backgroundColor === dark, DARK);
});

runBrowserTests(test, 'web-people.test.ts');
