// The web client's channels in Chromium against the real server, on an organization made the way
// `npm start` makes the first one: its first screen is a chat; browsing every channel, joining
// and leaving, creating a channel with its settings, an unsubscribed channel opened by link, and
// an administrator's channel settings (rename, describe, privacy, who can post, subscribers,
// archive), channel folders (an administrator makes, renames and archives one and puts a channel
// in it; the sidebar groups by folder), each seen live in a second person's browser.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { bootstrapFirstRealm, type RunningServer } from '../../src/server.ts';
import { Client } from '../helpers/client.ts';
import { startTestServer } from '../helpers/server.ts';
import { buildWebClient } from '../helpers/web.ts';
import { CHROMIUM, browserTests, chromiumMissing, messageWith, screenshot, runBrowserTests, sidebarLink, submitLogin } from '../lib/browser.ts';

interface Person {
  id: number;
  email: string;
  password: string;
  client: Client;
}

interface Ctx {
  server: RunningServer;
  url: string;
  owner: Person;
  bob: Person;
  browser: Browser;
  contexts: BrowserContext[];
  errors: string[];
}

const test = suite<Ctx>('web-channels', {} as Ctx);

test.before(async (ctx) => {
  if (chromiumMissing) return;
  await buildWebClient();
  ctx.server = await startTestServer();
  const creds = (await bootstrapFirstRealm(ctx.server, {
    INIT_EMAIL: 'olivia@example.com',
    INIT_PASSWORD: 'olivia-password',
    INIT_NAME: 'Olivia Owner',
    INIT_ORG: 'Acme',
  }))!;
  const host = new URL(creds.url).host;
  const ownerClient = new Client(ctx.server.port, host, { email: creds.email, apiKey: creds.apiKey });
  const me = await ownerClient.get('/users/me');
  ctx.owner = { id: me.body.user_id, email: creds.email, password: creds.password, client: ownerClient };
  const bob = { email: 'bob@example.com', password: 'bob-password' };
  const made = await ownerClient.post('/users', { ...bob, full_name: 'Bob Builder' });
  assert.is(made.status, 200, made.text);
  const key = await new Client(ctx.server.port, host).post('/fetch_api_key', { username: bob.email, password: bob.password });
  ctx.bob = { id: made.body.user_id, ...bob, client: ownerClient.withCredentials(bob.email, key.body.api_key) };
  ctx.browser = await chromium.launch({ executablePath: CHROMIUM });
  ctx.url = new URL('/', creds.url).href;
  ctx.contexts = [];
  ctx.errors = [];
});

test.after(async (ctx) => {
  await ctx.browser?.close();
  await ctx.server?.stop();
});

const browserTest = browserTests(test);

async function logIn(ctx: Ctx, person: Person, hash = ''): Promise<Page> {
  const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } });
  ctx.contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (err) => ctx.errors.push(err.stack ?? err.message));
  await page.goto(ctx.url + hash);
  await submitLogin(page, person);
  return page;
}

/** A channel made through the API by the owner, with `subscribers`; returns its id. */
async function makeChannel(ctx: Ctx, name: string, subscribers: Person[], options: Record<string, unknown> = {}): Promise<number> {
  const r = await ctx.owner.client.post('/channels/create', { name, subscribers: subscribers.map((p) => p.id), ...options });
  assert.is(r.status, 200, r.text);
  return r.body.id;
}

const channelRow = (page: Page, name: string) => page.locator(`.channel-row[data-channel="${name}"]`);

browserTest("the first screen of a new organization is a chat: its channels, Welcome Bot's messages and direct message", async (ctx) => {
  const page = await logIn(ctx, ctx.owner);
  await page.locator('#narrow-title', { hasText: 'Combined feed' }).waitFor();
  for (const name of ['general', 'sandbox']) await sidebarLink(page, name).waitFor();
  await messageWith(page, 'This greetings topic is the place to say hello').waitFor();
  await messageWith(page, 'I am Welcome Bot.').waitFor();
  assert.is(await page.locator('#sidebar').getByText('You are not subscribed to any channel.').count(), 0);
  assert.ok(await page.locator('#sidebar .dms .nav-link', { hasText: 'Welcome Bot' }).count());
  await screenshot(page, 'web-first-screen.png');
  // Welcome Bot's pointers lead somewhere real (personal settings: the last test).
  await messageWith(page, 'I am Welcome Bot.').getByRole('link', { name: 'the channels' }).click();
  await page.getByRole('dialog', { name: 'Channels' }).waitFor();
  await channelRow(page, 'sandbox').getByText('A place to try things out.').waitFor();
});

browserTest('browse all channels with description and subscriber count; subscribe and unsubscribe, live in the other browser', async (ctx) => {
  await makeChannel(ctx, 'design', [ctx.owner], { description: 'Sketches and mockups' });
  const owner = await logIn(ctx, ctx.owner, '#channels/all');
  const bob = await logIn(ctx, ctx.bob);
  await bob.getByRole('link', { name: 'Browse channels' }).click();
  const row = channelRow(bob, 'design');
  await row.getByText('Sketches and mockups').waitFor();
  await row.getByText('1 subscriber', { exact: true }).waitFor();
  await channelRow(owner, 'design').getByText('1 subscriber', { exact: true }).waitFor();
  await row.getByRole('button', { name: 'Subscribe to design' }).click();
  await row.getByText('2 subscribers').waitFor();
  await channelRow(owner, 'design').getByText('2 subscribers').waitFor();
  await sidebarLink(bob, 'design').waitFor();
  await screenshot(bob, 'web-channels.png');
  // The Subscribed tab lists only Bob's channels.
  await bob.getByRole('link', { name: 'Subscribed', exact: true }).click();
  assert.equal(await bob.locator('.channel-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-channel'))), ['design', 'general', 'sandbox']);
  await channelRow(bob, 'design').getByRole('button', { name: 'Unsubscribe from design' }).click();
  await channelRow(bob, 'design').waitFor({ state: 'detached' });
  await sidebarLink(bob, 'design').waitFor({ state: 'detached' });
  await channelRow(owner, 'design').getByText('1 subscriber', { exact: true }).waitFor();
  // Closing the overlay leads back to the conversation under it.
  await bob.getByRole('link', { name: 'Close' }).click();
  await bob.locator('.overlay').waitFor({ state: 'detached' });
  await bob.locator('#narrow-title', { hasText: 'Combined feed' }).waitFor();
});

browserTest('create a private channel where only administrators post; an administrator adds and removes a subscriber, live', async (ctx) => {
  const owner = await logIn(ctx, ctx.owner);
  const bob = await logIn(ctx, ctx.bob);
  await owner.getByRole('link', { name: 'Create a channel' }).click();
  const form = owner.getByRole('form', { name: 'Create channel' });
  await form.getByLabel('Name').fill('launch');
  await form.getByLabel('Description').fill('Release planning');
  await form.getByRole('radio', { name: /Private/ }).check();
  await form.getByLabel('Who can post').selectOption({ label: 'Administrators' });
  await form.getByRole('button', { name: 'Create' }).click();
  await owner.locator('#narrow-title', { hasText: '#launch' }).waitFor();
  await sidebarLink(owner, 'launch').waitFor();
  const streams = (await ctx.owner.client.get('/streams')).body.streams;
  const launch = streams.find((s: { name: string }) => s.name === 'launch');
  const groups = (await ctx.owner.client.get('/user_groups')).body.user_groups;
  const admins = groups.find((g: { name: string }) => g.name === 'role:administrators').id;
  assert.equal([launch.description, launch.invite_only, launch.can_send_message_group], ['Release planning', true, admins]);

  await owner.getByRole('link', { name: 'Channel settings' }).click();
  const subscribers = owner.getByRole('region', { name: 'Subscribers' });
  await subscribers.getByLabel('Add a subscriber').selectOption({ label: 'Bob Builder' });
  await subscribers.getByRole('button', { name: 'Add' }).click();
  await sidebarLink(bob, 'launch').waitFor();
  const listed = subscribers.locator('.subscriber-list');
  await listed.getByText('Bob Builder').waitFor();
  await subscribers.getByRole('button', { name: 'Remove Bob Builder' }).click();
  await sidebarLink(bob, 'launch').waitFor({ state: 'detached' });
  await listed.getByText('Bob Builder').waitFor({ state: 'detached' });
  assert.equal(await listed.locator('.name').allTextContents(), ['Olivia Owner']);
});

browserTest('an unsubscribed public channel opened by link shows its name, its messages and a Subscribe button', async (ctx) => {
  const news = await makeChannel(ctx, 'news', [ctx.owner]);
  const sent = await ctx.owner.client.post('/messages', { type: 'stream', to: news, topic: 'today', content: 'Fresh news for everyone' });
  assert.is(sent.status, 200, sent.text);
  const bob = await logIn(ctx, ctx.bob, `#narrow/channel/${news}-news`);
  await bob.locator('#narrow-title', { hasText: '#news' }).waitFor();
  await messageWith(bob, 'Fresh news for everyone').waitFor();
  assert.is(await sidebarLink(bob, 'news').count(), 0);
  await bob.locator('.narrow-header').getByRole('button', { name: 'Subscribe' }).click();
  await sidebarLink(bob, 'news').waitFor();
  await bob.locator('.narrow-header').getByRole('button', { name: 'Subscribe' }).waitFor({ state: 'detached' });
});

browserTest('an administrator renames, describes and archives a channel; a member sees it live and gets no settings form', async (ctx) => {
  const id = await makeChannel(ctx, 'old-name', [ctx.owner, ctx.bob], { description: 'Before' });
  const owner = await logIn(ctx, ctx.owner, `#channels/${id}/old-name`);
  const bob = await logIn(ctx, ctx.bob, `#channels/${id}/old-name`);
  await bob.locator('.channel-detail h2', { hasText: 'old-name' }).waitFor();
  assert.is(await bob.getByRole('form', { name: 'Channel settings' }).count(), 0);
  const form = owner.getByRole('form', { name: 'Channel settings' });
  await form.getByLabel('Name').fill('new-name');
  await form.getByLabel('Description').fill('After the rename');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await bob.locator('.channel-detail h2', { hasText: 'new-name' }).waitFor();
  await bob.locator('.channel-detail .channel-description', { hasText: 'After the rename' }).waitFor();
  await sidebarLink(bob, 'new-name').waitFor();
  await form.getByRole('button', { name: 'Archive channel' }).click();
  await form.getByRole('button', { name: 'Archive', exact: true }).click();
  await sidebarLink(bob, 'new-name').waitFor({ state: 'detached' });
  await bob.getByText('This channel does not exist, or you cannot see it.').waitFor();
  await owner.waitForURL(/#channels\/all$/);
});

browserTest('time format: the 12-hour clock by default, the 24-hour one once chosen in Preferences, kept across a reload', async (ctx) => {
  const sent = await ctx.owner.client.post('/messages', { type: 'stream', to: 'general', topic: 'clock', content: 'What time is it?' });
  assert.is(sent.status, 200, sent.text);
  const { timestamp } = (await ctx.bob.client.get(`/messages/${sent.body.id}`)).body.message;
  const streamId = (await ctx.bob.client.get('/get_stream_id', { stream: 'general' })).body.stream_id;
  const bob = await logIn(ctx, ctx.bob, `#narrow/channel/${streamId}-general/topic/clock`);
  const time = bob.locator(`article[data-message-id="${sent.body.id}"] .message-meta time`);
  // The hour and minute of the message in the browser's time zone, to spell both clocks exactly.
  const timeZone = await bob.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  const parts = new Intl.DateTimeFormat('en-US', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).formatToParts(timestamp * 1000);
  const [hour, minute] = ['hour', 'minute'].map((type) => parts.find((p) => p.type === type)!.value);
  const twelve = new RegExp(`^${((Number(hour) + 11) % 12) + 1}:${minute}\\s${Number(hour) < 12 ? 'AM' : 'PM'}$`);
  assert.match((await time.textContent()) ?? '', twelve);

  await bob.goto(`${ctx.url}#settings/preferences`);
  await bob.getByLabel('Time format').selectOption({ label: '24-hour clock (17:00)' });
  await bob.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  assert.is((await ctx.bob.client.post('/register', { fetch_event_types: ['user_settings'] })).body.user_settings.twenty_four_hour_time, true);
  await bob.goto(`${ctx.url}#narrow/channel/${streamId}-general/topic/clock`);
  const twentyFour = new RegExp(`^${hour}:${minute}$`);
  await time.filter({ hasText: twentyFour }).waitFor();
  // Register brings the choice back.
  await bob.reload();
  await time.filter({ hasText: twentyFour }).waitFor();
});

/** A 1x1 PNG, for an avatar. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

browserTest("personal settings, reached from Welcome Bot's message: name, avatar, status, password, Enter-to-send, time zone", async (ctx) => {
  const owner = await logIn(ctx, ctx.owner);
  const bob = await logIn(ctx, ctx.bob);
  await owner.locator('#sidebar .dms .nav-link', { hasText: 'Welcome Bot' }).click();
  await owner.getByRole('link', { name: 'personal settings' }).click();
  await owner.getByRole('dialog', { name: 'Personal settings' }).waitFor();

  await owner.getByLabel('Full name').fill('Olivia Renamed');
  await owner.getByRole('button', { name: 'Change name' }).click();
  await owner.locator('.topbar .me', { hasText: 'Olivia Renamed' }).waitFor();
  await bob.locator('#sidebar .people .name', { hasText: 'Olivia Renamed' }).waitFor({ state: 'attached' });

  await owner.getByLabel('Upload a new avatar').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: PNG });
  await owner.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const avatarUrl: string = (await ctx.bob.client.get(`/users/${ctx.owner.id}`)).body.user.avatar_url;
  await bob.locator(`#sidebar .people img.avatar[src="${avatarUrl}"]`).waitFor({ state: 'attached' });

  await owner.getByLabel('Status', { exact: true }).fill('On holiday');
  await owner.getByRole('button', { name: 'Set status' }).click();
  await owner.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  assert.is((await ctx.bob.client.get(`/users/${ctx.owner.id}/status`)).body.status.status_text, 'On holiday');

  await owner.getByRole('link', { name: 'Account' }).click();
  await owner.getByLabel('Current password').fill(ctx.owner.password);
  await owner.getByLabel('New password').fill('a-new-password');
  await owner.getByRole('button', { name: 'Change password' }).click();
  await owner.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const key = await new Client(ctx.owner.client.port, ctx.owner.client.host).post('/fetch_api_key', { username: ctx.owner.email, password: 'a-new-password' });
  assert.is(key.status, 200, key.text);
  ctx.owner.password = 'a-new-password';

  await owner.getByRole('link', { name: 'Preferences' }).click();
  await owner.getByLabel('Time zone').selectOption('Europe/Paris');
  await owner.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const registered = await ctx.owner.client.post('/register', { fetch_event_types: ['user_settings'] });
  assert.is(registered.body.user_settings.timezone, 'Europe/Paris');
  // Checked once the server's user_settings event came back.
  await owner.getByRole('checkbox', { name: /Enter sends a message/ }).click();
  await owner.locator('.settings-body label', { hasText: 'Enter sends a message' }).locator('input:checked').waitFor();
  await owner.getByRole('link', { name: 'Close' }).click();
  await owner.goto(`${ctx.url}#narrow/channel/${(await ctx.owner.client.get('/get_stream_id', { stream: 'general' })).body.stream_id}-general/topic/greetings`);
  await owner.locator('#compose-content').fill('Sent with Enter');
  await owner.locator('#compose-content').press('Enter');
  await messageWith(bob, 'Sent with Enter').waitFor();
});

browserTest('channel folders: an administrator makes one, puts a channel in it, renames and archives it; the sidebar of a member follows live', async (ctx) => {
  const builds = await makeChannel(ctx, 'builds', [ctx.owner, ctx.bob]);
  const owner = await logIn(ctx, ctx.owner, '#channels/folders');
  const bob = await logIn(ctx, ctx.bob);
  const sidebarSection = (name: string) => bob.locator('#sidebar').getByRole('region', { name, exact: true });

  await owner.getByLabel('Name', { exact: true }).fill('Engineering');
  await owner.getByLabel('Description', { exact: true }).fill('Code and builds');
  await owner.getByRole('button', { name: 'Create folder' }).click();
  const folderForm = owner.getByRole('form', { name: 'Folder Engineering' });
  await folderForm.waitFor();
  assert.is(await sidebarSection('Engineering').count(), 0, 'an empty folder shows no group');

  await owner.goto(`${ctx.url}#channels/${builds}/builds`);
  await owner.getByLabel('Folder').selectOption({ label: 'Engineering' });
  await sidebarSection('Engineering').locator('.nav-link', { hasText: 'builds' }).waitFor();
  await sidebarSection('Other channels').locator('.nav-link', { hasText: 'general' }).waitFor();
  assert.is(await sidebarSection('Other channels').locator('.nav-link', { hasText: 'builds' }).count(), 0);
  await screenshot(bob, 'web-channel-folders.png');

  await owner.goto(`${ctx.url}#channels/folders`);
  await folderForm.getByLabel('Name').fill('Platform');
  await folderForm.getByRole('button', { name: 'Save changes' }).click();
  await sidebarSection('Platform').locator('.nav-link', { hasText: 'builds' }).waitFor();
  // A folder with channels in it is not archived (Zulip's rule), in the server's words.
  const platform = owner.getByRole('form', { name: 'Folder Platform' });
  await platform.getByRole('button', { name: 'Archive folder' }).click();
  await platform.getByRole('alert').getByText('You need to remove all the channels from this folder to archive it.').waitFor();
  await owner.goto(`${ctx.url}#channels/${builds}/builds`);
  await owner.getByLabel('Folder').selectOption({ label: 'No folder' });
  await sidebarSection('Platform').waitFor({ state: 'detached' });
  await sidebarSection('Other channels').locator('.nav-link', { hasText: 'builds' }).waitFor();
  await owner.goto(`${ctx.url}#channels/folders`);
  await platform.getByRole('button', { name: 'Archive folder' }).click();
  await platform.getByRole('button', { name: 'Unarchive folder' }).waitFor();
  // No folder left to show: one list again.
  await sidebarSection('Channels').locator('.nav-link', { hasText: 'builds' }).waitFor();
  // An archived folder is not offered for channels.
  await owner.goto(`${ctx.url}#channels/${builds}/builds`);
  assert.equal(await owner.getByLabel('Folder').locator('option').allTextContents(), ['No folder']);

  const folders = (await ctx.owner.client.get('/channel_folders', { include_archived: true })).body.channel_folders;
  assert.equal(
    folders.map((f: Record<string, unknown>) => [f.name, f.description, f.is_archived]),
    [['Platform', 'Code and builds', true]],
  );
  assert.is((await ctx.owner.client.get(`/streams/${builds}`)).body.stream.folder_id, null);
  // Members manage no folders.
  await bob.goto(`${ctx.url}#channels/all`);
  await bob.getByRole('link', { name: 'All channels' }).waitFor();
  assert.is(await bob.getByRole('link', { name: 'Folders' }).count(), 0);
});

runBrowserTests(test, 'web-channels');
