// A message's menu in the web client, in a real browser against the real server: read receipts,
// "EDITED"/"MOVED" and the edit history, reporting a message to the moderators, the organization's
// settings that offer or hide them (live), and the Combined feed and Mentions views; times follow
// the user's clock setting. Each test makes its own people and channels.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import type { TestUser } from '../helpers/server.ts';
import { browserTests, logIn, messageWith, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-messages', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

/** Opens the ⋮ menu of the message with `text`. */
async function openMenu(page: Page, text: string) {
  const message = messageWith(page, text);
  await message.hover();
  const more = message.getByRole('button', { name: 'More actions' });
  if ((await more.getAttribute('aria-expanded')) !== 'true') await more.click();
  const menu = message.getByRole('group', { name: 'More actions' });
  await menu.waitFor();
  return menu;
}

/** The labels of a message's ⋮ menu. */
async function menuItems(page: Page, text: string): Promise<string[]> {
  const menu = await openMenu(page, text);
  const items = await menu.getByRole('button').allTextContents();
  await messageWith(page, text).getByRole('button', { name: 'More actions' }).click();
  return items.map((t) => t.trim());
}

const dialog = (page: Page, name: string) => page.getByRole('dialog', { name });

async function markRead(user: TestUser, ids: number[]): Promise<void> {
  assert.is((await user.client.post('/messages/flags', { messages: JSON.stringify(ids), op: 'add', flag: 'read' })).status, 200);
}

/** A 1x1 PNG, for an avatar. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The texts of the messages on screen, in order. */
const shownMessages = (page: Page) => page.locator('#messages .message .message-content').allTextContents();

browserTest('"View read receipts" lists who has read the message, again when reopened, and goes when the organization turns receipts off', async (ctx) => {
  const rita = await ctx.realm.addUser({ name: 'Rita Receipt' });
  const dave = await ctx.realm.addUser({ name: 'Dave Reader' });
  const channel = await makeChannel(ctx.realm, 'receipts', [rita, ctx.bob, ctx.carol, dave]);
  const avatar = await dave.client.postMultipart('/users/me/avatar', {}, [{ field: 'file', filename: 'dave.png', contentType: 'image/png', data: PNG }]);
  assert.is(avatar.status, 200, avatar.text);
  const id = await send(rita, channel, 'news', 'Who has seen this?');
  const { page } = await logIn(ctx, rita, { hash: `#narrow/channel/${channel}-receipts` });

  const menu = await openMenu(page, 'Who has seen this?');
  await menu.getByRole('button', { name: 'View read receipts' }).click();
  const receipts = dialog(page, 'Read receipts');
  await receipts.getByRole('status').filter({ hasText: 'No one has read this message yet.' }).waitFor();
  await receipts.getByRole('button', { name: 'Close' }).click();
  await receipts.waitFor({ state: 'detached' });

  await markRead(dave, [id]);
  await markRead(ctx.bob, [id]);
  // The sender's own reading never counts: Rita has read her message too.
  assert.equal((await rita.client.get(`/messages/${id}/read_receipts`)).body, { result: 'success', msg: '', user_ids: [ctx.bob.id, dave.id] });
  await (await openMenu(page, 'Who has seen this?')).getByRole('button', { name: 'View read receipts' }).click();
  await receipts.getByRole('status').filter({ hasText: 'This message has been read by 2 people:' }).waitFor();
  const readers = receipts.getByRole('list', { name: 'Read by' }).getByRole('listitem');
  assert.equal(await readers.locator('.read-receipt-name').allTextContents(), ['Bob Builder', 'Dave Reader']);
  // Each reader with their avatar, as in the message list: Dave's picture, Bob's initials (he has none).
  assert.is(await readers.nth(1).locator('img.avatar').getAttribute('src'), avatar.body.avatar_url);
  assert.is(await readers.nth(0).locator('span.avatar').textContent(), 'BB');
  assert.is(await readers.locator('.avatar').count(), 2);
  await page.keyboard.press('Escape');
  await receipts.waitFor({ state: 'detached' });

  assert.is((await ctx.owner.client.patch('/realm', { enable_read_receipts: false })).status, 200);
  try {
    const menuNow = await openMenu(page, 'Who has seen this?');
    await menuNow.getByRole('button', { name: 'View read receipts' }).waitFor({ state: 'detached' });
    assert.equal(await menuNow.getByRole('button').allTextContents(), ['Quote and reply', 'Mark as unread from here', 'Remind me about this']);
  } finally {
    await ctx.owner.client.patch('/realm', { enable_read_receipts: true });
  }
});

browserTest(
  'an edited message says EDITED and a moved one MOVED, live; either opens its history with the diff and the move, unless the organization hides history',
  async (ctx) => {
    const eve = await ctx.realm.addUser({ name: 'Eve Editor' });
    const channel = await makeChannel(ctx.realm, 'history', [eve, ctx.bob]);
    const edited = await send(ctx.bob, channel, 'plans', 'First draft of the plan');
    const moved = await send(ctx.bob, channel, 'plans', 'Lunch at noon');
    const resolved = await send(ctx.bob, channel, 'done', 'All finished');
    const { page } = await logIn(ctx, eve, { hash: `#narrow/channel/${channel}-history` });
    await messageWith(page, 'Lunch at noon').waitFor();
    assert.is(await page.locator('.message .edited').count(), 0);

    assert.is((await ctx.bob.client.patch(`/messages/${edited}`, { content: 'Second draft of the plan' })).status, 200);
    assert.is((await ctx.bob.client.patch(`/messages/${moved}`, { topic: 'food', propagate_mode: 'change_one' })).status, 200);
    assert.is((await ctx.bob.client.patch(`/messages/${resolved}`, { topic: '✔ done', propagate_mode: 'change_all' })).status, 200);
    const editedRow = messageWith(page, 'Second draft of the plan');
    await editedRow.getByRole('button', { name: 'EDITED: view edit history' }).waitFor();
    await messageWith(page, 'Lunch at noon').getByRole('button', { name: 'MOVED: view edit history' }).waitFor();
    await page.locator('.recipient-topic', { hasText: '✔ done' }).first().waitFor();
    assert.is(await messageWith(page, 'All finished').locator('.edited').count(), 0, 'resolving a topic is not a move');
    assert.is((await eve.client.get(`/messages/${resolved}`)).body.message.last_moved_timestamp, undefined);
    // Notification Bot said so; no read receipts for its messages, as in Zulip.
    await (await openMenu(page, 'Bob Builder has marked this topic as resolved.')).getByRole('button', { name: 'View read receipts' }).click();
    await dialog(page, 'Read receipts').getByRole('status').filter({ hasText: 'Read receipts are not available for Notification Bot messages.' }).waitFor();
    await dialog(page, 'Read receipts').getByRole('button', { name: 'Close' }).click();

    await editedRow.getByRole('button', { name: 'EDITED: view edit history' }).click();
    const history = dialog(page, 'Message edit history');
    const entries = history.locator('.edit-history-entry');
    await entries.nth(1).waitFor();
    assert.is(await entries.count(), 2);
    assert.match((await entries.nth(0).locator('.edit-history-meta').textContent()) ?? '', / · Posted by Bob Builder$/);
    assert.is(await entries.nth(0).locator('.message-content').textContent(), 'First draft of the plan');
    assert.match((await entries.nth(1).locator('.edit-history-meta').textContent()) ?? '', / · Edited by Bob Builder$/);
    assert.is(await entries.nth(1).locator('.highlight_text_deleted').textContent(), 'First');
    assert.is(await entries.nth(1).locator('.highlight_text_inserted').textContent(), 'Second');
    await history.getByRole('button', { name: 'Close' }).click();

    await (await openMenu(page, 'Lunch at noon')).getByRole('button', { name: 'View edit history' }).click();
    await entries.nth(1).waitFor();
    assert.match((await entries.nth(1).locator('.edit-history-meta').textContent()) ?? '', / · Moved by Bob Builder$/);
    assert.is(await entries.nth(1).locator('.edit-history-move').textContent(), 'Topic: plans → food');
    assert.is(await entries.nth(1).locator('.message-content').count(), 0, 'a move shows no content');
    await page.keyboard.press('Escape');
    await history.waitFor({ state: 'detached' });

    // With history hidden (Zulip's "none"), the notice stays but opens nothing.
    assert.is((await ctx.owner.client.patch('/realm', { allow_edit_history: false })).status, 200);
    try {
      await editedRow.locator('span.edited', { hasText: 'EDITED' }).waitFor();
      assert.is(await editedRow.getByRole('button', { name: /view edit history/ }).count(), 0);
      assert.not.ok((await menuItems(page, 'Second draft of the plan')).includes('View edit history'));
      assert.is((await eve.client.get(`/messages/${edited}/history`)).status, 400);
    } finally {
      await ctx.owner.client.patch('/realm', { allow_edit_history: true });
    }
  },
);

browserTest(
  '"Report message" appears once a moderation request channel is set, asks an explanation for "Other reason", and the report reaches the moderators',
  async (ctx) => {
    const rose = await ctx.realm.addUser({ name: 'Rose Reporter' });
    const channel = await makeChannel(ctx.realm, 'reporting', [rose, ctx.bob]);
    await send(ctx.bob, channel, 'deals', 'Buy cheap watches here');
    const { page } = await logIn(ctx, rose, { hash: `#narrow/channel/${channel}-reporting` });
    assert.not.ok((await menuItems(page, 'Buy cheap watches here')).includes('Report message'), 'no moderation channel: no report');

    const moderation = await makeChannel(ctx.realm, 'moderation', [ctx.owner], { invite_only: true });
    assert.is((await ctx.owner.client.patch('/realm', { moderation_request_channel_id: moderation })).status, 200);
    try {
      const menu = await openMenu(page, 'Buy cheap watches here');
      await menu.getByRole('button', { name: 'Report message' }).click();
      const form = dialog(page, 'Report message').getByRole('form', { name: 'Report message' });
      await form.waitFor();
      assert.equal(await form.getByLabel('Reason').locator('option').allTextContents(), [
        'Spam',
        'Harassment',
        'Inappropriate content',
        'Violates community norms',
        'Other reason',
      ]);
      // Arrows choose a reason; the message list under the dialog does not take them.
      await form.getByLabel('Reason').press('ArrowDown');
      assert.is(await form.getByLabel('Reason').inputValue(), 'harassment');
      await form.getByLabel('Reason').selectOption('other');
      const submit = form.getByRole('button', { name: 'Submit' });
      assert.ok(await submit.isDisabled(), 'an explanation is required for "Other reason"');
      await form.getByLabel('Explanation').fill('Selling things nobody asked for');
      await submit.click();
      await dialog(page, 'Report message').getByRole('status').filter({ hasText: 'Your report has been sent to the moderators.' }).waitFor();
      await dialog(page, 'Report message').getByRole('button', { name: 'Close' }).click();

      const reports = (
        await ctx.owner.client.get('/messages', {
          anchor: 'newest',
          num_before: 1,
          num_after: 0,
          apply_markdown: false,
          narrow: JSON.stringify([{ operator: 'channel', operand: moderation }]),
        })
      ).body.messages as Record<string, any>[];
      assert.is(reports.length, 1);
      assert.is(reports[0]!.subject, 'Bob Builder moderation');
      const lines = (reports[0]!.content as string).split('\n');
      assert.match(lines[0]!, /^@_\*\*Rose Reporter\|\d+\*\* reported a message sent by @_\*\*Bob Builder\|\d+\*\* at <time:[^>]+>\.$/);
      assert.equal(lines.slice(1, 4), ['```quote', '**Other reason**. Selling things nobody asked for', '```']);
    } finally {
      await ctx.owner.client.patch('/realm', { moderation_request_channel_id: -1 });
    }
    // Turned off again: the menu no longer offers it, live.
    await (await openMenu(page, 'Buy cheap watches here')).getByRole('button', { name: 'Report message' }).waitFor({ state: 'detached' });
  },
);

browserTest('Combined feed shows messages of every channel and direct message in order, with their conversations, live', async (ctx) => {
  const cora = await ctx.realm.addUser({ name: 'Cora Combined' });
  const north = await makeChannel(ctx.realm, 'north', [cora, ctx.bob]);
  const south = await makeChannel(ctx.realm, 'south', [cora, ctx.carol]);
  await send(ctx.bob, north, 'weather', 'Snow up north');
  await sendDm(ctx.carol, [cora.id], 'A word in private');
  await send(ctx.carol, south, 'beach', 'Sun down south');
  const { page } = await logIn(ctx, cora, { hash: '#' });
  await page.locator('#narrow-title', { hasText: 'Combined feed' }).waitFor();
  await messageWith(page, 'Sun down south').waitFor();
  assert.equal((await shownMessages(page)).slice(-3), ['Snow up north', 'A word in private', 'Sun down south']);
  const headers = await page.locator('#messages .recipient-header').allTextContents();
  assert.equal(headers.slice(-3), ['#north › weather', 'Direct messages with Carol Clerk', '#south › beach']);

  await send(ctx.bob, north, 'weather', 'More snow tonight');
  await sendDm(ctx.bob, [cora.id, ctx.carol.id], 'All three of us');
  await messageWith(page, 'All three of us').waitFor();
  assert.equal((await shownMessages(page)).slice(-5), ['Snow up north', 'A word in private', 'Sun down south', 'More snow tonight', 'All three of us']);
  assert.equal((await page.locator('#messages .recipient-header').allTextContents()).slice(-2), [
    '#north › weather',
    'Direct messages with Bob Builder, Carol Clerk',
  ]);
});

browserTest('Mentions shows, live, the messages that mention me: by name, by a group of mine and by wildcards, not silent ones', async (ctx) => {
  const mina = await ctx.realm.addUser({ name: 'Mina Mention' });
  const channel = await makeChannel(ctx.realm, 'mentions', [mina, ctx.bob, ctx.carol]);
  const group = await ctx.owner.client.post('/user_groups/create', { name: 'reviewers', description: 'Review things', members: JSON.stringify([mina.id]) });
  assert.is(group.status, 200, group.text);
  await send(mina, channel, 'release', 'I am on the release');
  const { page } = await logIn(ctx, mina, { hash: '#narrow/is/mentioned' });
  await page.locator('#narrow-title', { hasText: 'Mentions' }).waitFor();

  const ids = [
    await send(ctx.bob, channel, 'release', '@**Mina Mention** can you check?'),
    await send(ctx.bob, channel, 'release', 'Quiet @_**Mina Mention** note'),
    await send(ctx.carol, channel, 'release', '@*reviewers* please review'),
    await send(ctx.bob, channel, 'other', 'Nobody in particular'),
    await send(ctx.carol, channel, 'other', '@**all** the office is closed'),
    await send(ctx.bob, channel, 'release', '@**topic** release moved to Friday'),
  ];
  await messageWith(page, 'release moved to Friday').waitFor();
  const expected = ['@Mina Mention can you check?', '@reviewers please review', '@all the office is closed', '@topic release moved to Friday'];
  assert.equal(await shownMessages(page), expected);
  const fromServer = (
    await mina.client.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow: JSON.stringify([{ operator: 'is', operand: 'mentioned' }]) })
  ).body.messages as { id: number }[];
  assert.equal(
    fromServer.map((m) => m.id),
    [ids[0], ids[2], ids[4], ids[5]],
  );

  // The same view after a reload, from GET /messages.
  await page.reload();
  await messageWith(page, 'release moved to Friday').waitFor();
  assert.equal(await shownMessages(page), expected);
});

browserTest("times' tooltips follow the user's clock setting, live; the paperclip is drawn, not an emoji", async (ctx) => {
  const tim = await ctx.realm.addUser({ name: 'Tim Clock' });
  const channel = await makeChannel(ctx.realm, 'clocks', [tim, ctx.bob]);
  const id = await send(ctx.bob, channel, 'time', 'What time is it?');
  const { page } = await logIn(ctx, tim, { hash: `#narrow/channel/${channel}-clocks` });
  const time = messageWith(page, 'What time is it?').locator('.message-meta time');
  await time.waitFor();
  const sent = (await tim.client.get(`/messages/${id}`)).body.message.timestamp as number;
  // The hour and minute as the browser's time zone has them.
  const [hours, minutes] = await page.evaluate((t) => [new Date(t * 1000).getHours(), new Date(t * 1000).getMinutes()], sent);
  const mm = String(minutes).padStart(2, '0');
  // Chromium puts a narrow no-break space before AM and PM.
  assert.match((await time.getAttribute('title')) ?? '', new RegExp(` ${hours % 12 || 12}:${mm}\\s${hours < 12 ? 'AM' : 'PM'}$`));

  assert.is((await tim.client.patch('/settings', { twenty_four_hour_time: true })).status, 200);
  const twentyFour = `${String(hours).padStart(2, '0')}:${mm}`;
  await page.waitForFunction(
    ({ t, expected }) => document.querySelector(`.message[data-message-id="${t}"] .message-meta time`)?.getAttribute('title')?.endsWith(expected),
    { t: id, expected: twentyFour },
  );
  assert.not.match((await time.getAttribute('title')) ?? '', /AM|PM/);

  const attach = page.locator('label.compose-attach');
  assert.is(await attach.locator('svg').count(), 1);
  assert.is((await attach.textContent())?.trim(), 'Attach files');
});

runBrowserTests(test, 'web-messages');
