// The web client's compose box in a real browser against the real server: Zulip's typeahead for
// `@` people and groups, `#` channels then `>` topics and `:` emoji, worked by keyboard; topic
// suggestions; direct-message recipients as pills. Two people side by side where the other must
// see the result.
// Skipped, with a message, where /usr/bin/chromium is missing (`.ci/run` installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import type { TestUser } from '../helpers/server.ts';
import { browserTests, logIn, messageWith, runBrowserTests, setUpBrowserSuite, tearDownBrowserSuite, type Ctx } from '../lib/browser.ts';

const test = suite<Ctx>('web-compose', {} as Ctx);

test.before(setUpBrowserSuite);

test.after(tearDownBrowserSuite);

const browserTest = browserTests(test);

const suggestions = (page: Page, name = 'Suggestions') => page.getByRole('listbox', { name });
const options = (page: Page, name = 'Suggestions') => suggestions(page, name).getByRole('option');
const content = (page: Page) => page.locator('#compose-content');

/** Types into the message box and waits for the suggestions to start with `first`. */
async function typeAndSee(page: Page, text: string, first: string): Promise<void> {
  await content(page).pressSequentially(text);
  await options(page).first().filter({ hasText: first }).waitFor();
}

async function makeGroup(ctx: Ctx, name: string, members: number[]): Promise<void> {
  const r = await ctx.owner.client.post('/user_groups/create', { name, description: `The ${name}`, members: JSON.stringify(members) });
  assert.is(r.status, 200, r.text);
}

browserTest('typeahead in the message: @ people and groups (silent with @_), # channels then > topics, : emoji; arrows, Tab, Enter and Esc', async (ctx) => {
  const mona = await ctx.realm.addUser({ name: 'Mona Mention' });
  const lab = await makeChannel(ctx.realm, 'lab', [mona, ctx.bob]);
  await send(ctx.bob, lab, 'plans', 'Plans go here');
  await send(ctx.bob, lab, 'budget', 'Budget goes here');
  await makeGroup(ctx, 'designers', [ctx.bob.id]);
  const hash = `#narrow/channel/${lab}-lab/topic/plans`;
  const bob = await logIn(ctx, ctx.bob, { hash });
  const { page } = await logIn(ctx, mona, { hash });
  await messageWith(page, 'Plans go here').waitFor();
  await content(page).click();

  await typeAndSee(page, 'Hi @bo', 'Bob Builder');
  assert.is(await content(page).getAttribute('aria-expanded'), 'true');
  await content(page).press('Tab');
  await suggestions(page).waitFor({ state: 'detached' });
  assert.is(await content(page).inputValue(), 'Hi @**Bob Builder** ');

  await typeAndSee(page, 'and @_desi', 'designers');
  assert.match((await suggestions(page).textContent()) ?? '', /The designers/);
  await content(page).press('Enter');
  assert.is(await content(page).inputValue(), 'Hi @**Bob Builder** and @_*designers* ');

  // A channel, then its topics: the channel alone comes first, the arrows reach the others.
  await typeAndSee(page, 'see #la', '#lab');
  await content(page).press('Enter');
  assert.is(await content(page).inputValue(), 'Hi @**Bob Builder** and @_*designers* see #**lab>');
  await options(page).filter({ hasText: 'budget' }).waitFor();
  assert.equal(await options(page).locator('.label').allTextContents(), ['#lab', 'budget', 'plans']);
  await content(page).press('ArrowDown');
  await content(page).press('ArrowDown');
  assert.is(await options(page).nth(2).getAttribute('aria-selected'), 'true');
  await content(page).press('ArrowUp');
  await content(page).press('Enter');
  assert.is(await content(page).inputValue(), 'Hi @**Bob Builder** and @_*designers* see #**lab>budget** ');

  // Emoji: their names come with the catalog, loaded now.
  await typeAndSee(page, ':tad', ':tada:');
  await content(page).press('Enter');
  // Esc closes the list and leaves the box focused; typing on opens it again.
  await typeAndSee(page, '@car', 'Carol Clerk');
  await content(page).press('Escape');
  await suggestions(page).waitFor({ state: 'detached' });
  assert.ok(await content(page).evaluate((el) => el === document.activeElement), 'Esc closed the list, not the box');
  await typeAndSee(page, 'o', 'Carol Clerk');
  await content(page).press('Escape');
  await content(page).press('End');
  assert.is(await content(page).inputValue(), 'Hi @**Bob Builder** and @_*designers* see #**lab>budget** :tada: @caro');

  await content(page).press('Control+Enter');
  const arrived = messageWith(bob.page, 'Hi');
  await arrived.waitFor();
  assert.is(await arrived.locator('.user-mention:not(.silent)').textContent(), '@Bob Builder');
  assert.is(await arrived.locator('.user-group-mention.silent').textContent(), 'designers');
  assert.is(await arrived.locator('a.stream-topic').textContent(), '#lab > budget');
  assert.is(await arrived.locator('.emoji').getAttribute('aria-label'), 'tada');
  assert.ok(await arrived.locator('.user-mention-me').count(), 'Bob sees that he is mentioned');
});

browserTest("the topic field suggests the channel's topics; picking one moves on to the message", async (ctx) => {
  const tess = await ctx.realm.addUser({ name: 'Tess Topic' });
  const desk = await makeChannel(ctx.realm, 'desk', [tess, ctx.bob]);
  for (const topic of ['release plan', 'planning', 'lunch']) await send(ctx.bob, desk, topic, `About ${topic}`);
  const { page } = await logIn(ctx, tess, { hash: `#narrow/channel/${desk}-desk` });
  await messageWith(page, 'About lunch').waitFor();
  const topic = page.locator('#compose-topic');
  await topic.click();
  await topic.pressSequentially('plan');
  const topics = options(page, 'Topics');
  await topics.filter({ hasText: 'release plan' }).waitFor();
  // Those starting with the words come first.
  assert.equal(await topics.allTextContents(), ['planning', 'release plan']);
  await topic.press('ArrowDown');
  await topic.press('Enter');
  assert.is(await topic.inputValue(), 'release plan');
  assert.ok(await content(page).evaluate((el) => el === document.activeElement), 'the message box has the focus');
  await content(page).fill('On the plan');
  await content(page).press('Control+Enter');
  // The server's copy, not the local echo.
  await page.locator('.message:not(.local-echo)', { has: page.locator('.message-content', { hasText: 'On the plan' }) }).waitFor();
  const r = await ctx.bob.client.get('/messages', {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    narrow: JSON.stringify([{ operator: 'channel', operand: desk }]),
  });
  assert.is(r.body.messages[0].subject, 'release plan');
});

browserTest('direct-message recipients are pills picked by name, email or group; Backspace takes the last one out', async (ctx) => {
  const nina = await ctx.realm.addUser({ name: 'Nina Pills' });
  const crew = await ctx.realm.addUser({ name: 'Crew Member' });
  await makeGroup(ctx, 'crew', [crew.id, nina.id]);
  const carol = await logIn(ctx, ctx.carol);
  const { page } = await logIn(ctx, nina);
  await page.getByText('Direct message', { exact: true }).click();
  const to = page.locator('#compose-to');
  const pills = page.locator('.pill-field .pill');
  await to.pressSequentially('car');
  await options(page, 'People and groups').first().filter({ hasText: 'Carol Clerk' }).waitFor();
  await to.press('Enter');
  await pills.filter({ hasText: 'Carol Clerk' }).waitFor();
  assert.is(await to.inputValue(), '');
  await to.pressSequentially(ctx.bob.email);
  await to.press('Tab');
  assert.equal(await pills.allTextContents(), ['Carol Clerk×', 'Bob Builder×']);
  await to.press('Backspace');
  assert.equal(await pills.allTextContents(), ['Carol Clerk×']);
  // A group adds its members, the writer apart.
  await to.pressSequentially('cre');
  await options(page, 'People and groups').filter({ hasText: 'group of 2' }).click();
  assert.equal(await pills.allTextContents(), ['Carol Clerk×', 'Crew Member×']);
  await page.getByRole('button', { name: 'Remove Crew Member' }).click();
  assert.equal(await pills.allTextContents(), ['Carol Clerk×']);

  await content(page).fill('Just us two');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await messageWith(carol.page, 'Just us two').waitFor();
  const r = await ctx.carol.client.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[]' });
  assert.equal(
    r.body.messages[0].display_recipient.map((u: { id: number }) => u.id).sort((a: number, b: number) => a - b),
    [ctx.carol.id, nina.id].sort((a, b) => a - b),
  );
});

// A 1x1 PNG, as a custom emoji's image.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** The width of the image an emoji element shows (its own, or its background), once loaded. */
const emojiImageWidth = (emoji: ReturnType<Page['locator']>) =>
  emoji.evaluate(
    (el) =>
      new Promise<number>((resolve, reject) => {
        const image = new Image();
        image.onload = () => resolve(image.naturalWidth);
        image.onerror = reject;
        image.src = el instanceof HTMLImageElement ? el.src : getComputedStyle(el).backgroundImage.replace(/^url\("?|"?\)$/g, '');
      }),
  );

browserTest(
  'the emoji picker: search, categories with images loaded as they come into sight, custom emoji; reactions show live, and it inserts into the message',
  async (ctx) => {
    const pia = await ctx.realm.addUser({ name: 'Pia Picker' });
    const picnic = await makeChannel(ctx.realm, 'picnic', [pia, ctx.bob]);
    await send(ctx.bob, picnic, 'lunch', 'Lunch at noon?');
    const upload = await ctx.owner.client.postMultipart('/realm/emoji/partyparrot', {}, [
      { field: 'f1', filename: 'parrot.png', contentType: 'image/png', data: PNG },
    ]);
    assert.is(upload.status, 200, upload.text);
    const hash = `#narrow/channel/${picnic}-picnic/topic/lunch`;
    const bob = await logIn(ctx, ctx.bob, { hash });
    const { page } = await logIn(ctx, pia, { hash });
    const lunch = messageWith(page, 'Lunch at noon?');
    await lunch.hover();
    await lunch.getByRole('button', { name: 'Add reaction' }).click();
    const picker = page.getByRole('dialog', { name: 'Add a reaction' });
    const categories = picker.getByRole('navigation', { name: 'Emoji categories' }).getByRole('button');
    await categories.first().waitFor();
    assert.equal(await categories.allTextContents(), [
      'Popular',
      'Smileys & Emotion',
      'People & Body',
      'Animals & Nature',
      'Food & Drink',
      'Activities',
      'Travel & Places',
      'Objects',
      'Symbols',
      'Flags',
      'Custom',
    ]);
    const popular = picker.getByRole('region', { name: 'Popular' }).getByRole('button');
    assert.equal(await popular.evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label'))), [
      '+1',
      'tada',
      'slight_smile',
      'heart',
      'working_on_it',
      'octopus',
    ]);
    // Only what is in sight gets its image: Popular does, Flags (at the bottom) not yet.
    await picker.locator('[data-category="Popular"] span.emoji[style]').first().waitFor();
    assert.is(await picker.locator('[data-category="Flags"] span.emoji[style]').count(), 0);
    assert.is(await emojiImageWidth(popular.first().locator('.emoji')), 64);

    await picker.getByLabel('Search emoji').fill('octo');
    const results = picker.getByRole('group', { name: 'Search results' }).getByRole('button');
    await results.first().waitFor();
    assert.is(await results.first().getAttribute('aria-label'), 'octopus');
    await picker.getByLabel('Search emoji').press('Enter');
    await picker.waitFor({ state: 'detached' });
    const octopus = messageWith(bob.page, 'Lunch at noon?').locator('.reaction', { hasText: '1' });
    await octopus.waitFor();
    assert.is(await octopus.getAttribute('aria-label'), 'octopus: 1');
    assert.is(await emojiImageWidth(octopus.locator('.emoji')), 64);

    // The organization's own emoji, from the Custom category.
    await lunch.hover();
    await lunch.getByRole('button', { name: 'Add reaction' }).click();
    await categories.filter({ hasText: 'Custom' }).click();
    await picker.getByRole('region', { name: 'Custom' }).getByRole('button', { name: 'partyparrot' }).click();
    const parrot = messageWith(bob.page, 'Lunch at noon?').locator('.reaction[aria-label="partyparrot: 1"]');
    await parrot.waitFor();
    assert.is(await emojiImageWidth(parrot.locator('img.emoji')), 1);
    // Esc closes the picker.
    await lunch.hover();
    await lunch.getByRole('button', { name: 'Add reaction' }).click();
    await picker.getByLabel('Search emoji').press('Escape');
    await picker.waitFor({ state: 'detached' });

    // In the compose box: the emoji goes where the caret is.
    await content(page).fill('Count me in');
    await page.getByRole('button', { name: 'Insert an emoji' }).click();
    const composePicker = page.getByRole('dialog', { name: 'Insert an emoji' });
    await composePicker.getByLabel('Search emoji').fill('sandwich');
    await composePicker.getByRole('group', { name: 'Search results' }).getByRole('button', { name: 'sandwich', exact: true }).click();
    assert.is(await content(page).inputValue(), 'Count me in :sandwich: ');
    assert.ok(await content(page).evaluate((el) => el === document.activeElement), 'back in the message box');
    await content(page).press('Control+Enter');
    const sent = messageWith(bob.page, 'Count me in');
    await sent.waitFor();
    assert.is(await sent.locator('.emoji').getAttribute('aria-label'), 'sandwich');
    assert.is(await emojiImageWidth(sent.locator('.emoji')), 64);
  },
);

/** Drops `files` (name and text) on the compose box, or pastes them into the message. */
function dropOrPaste(page: Page, how: 'drop' | 'paste', files: [string, string][]): Promise<void> {
  return page.evaluate(
    ([how, files]) => {
      const data = new DataTransfer();
      for (const [name, text] of files) data.items.add(new File([text], name, { type: 'text/plain' }));
      const init = { bubbles: true, cancelable: true };
      if (how === 'paste') {
        const box = document.getElementById('compose-content')!;
        box.focus();
        box.dispatchEvent(new ClipboardEvent('paste', { ...init, clipboardData: data }));
        return;
      }
      const form = document.querySelector('form.compose')!;
      form.dispatchEvent(new DragEvent('dragover', { ...init, dataTransfer: data }));
      form.dispatchEvent(new DragEvent('drop', { ...init, dataTransfer: data }));
    },
    [how, files] as const,
  );
}

browserTest(
  'files: attached by the button with progress, dropped and pasted, each ending as its link; an image alone in a message shows as its thumbnail to the other person',
  async (ctx) => {
    const uma = await ctx.realm.addUser({ name: 'Uma Upload' });
    const files = await makeChannel(ctx.realm, 'files', [uma, ctx.bob]);
    const hash = `#narrow/channel/${files}-files/topic/shots`;
    const bob = await logIn(ctx, ctx.bob, { hash });
    const { page } = await logIn(ctx, uma, { hash });
    const image = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#3b6fd8' } })
      .png()
      .toBuffer();

    // The upload is held on its way until its progress has been seen.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/user_uploads', async (route) => {
      await held;
      await route.continue();
    });
    await page.locator('.compose-attach input[type="file"]').setInputFiles({ name: 'chart.png', mimeType: 'image/png', buffer: image });
    await page.getByRole('progressbar', { name: 'Uploading chart.png' }).waitFor();
    assert.is(await content(page).inputValue(), '[Uploading chart.png…]() ');
    assert.ok(await page.getByRole('button', { name: 'Uploading…' }).isDisabled(), 'no sending before the file is up');
    release();
    await page.getByRole('progressbar').waitFor({ state: 'detached' });
    const linked = await content(page).inputValue();
    assert.match(linked, /^\[chart\.png\]\(\/user_uploads\/\d+\/[\w/-]+\/chart\.png\) $/, linked);
    await page.unrouteAll();
    await content(page).press('Control+Enter');
    // Bob sees the server's thumbnail, fetched with his credentials.
    const thumbnail = bob.page.locator('.message .message_inline_image img');
    await thumbnail.waitFor();
    await bob.page
      .waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('.message .message_inline_image img');
        return img !== null && img.complete && img.naturalWidth === 60;
      })
      .catch(async (err) => assert.unreachable(`${err}: ${await thumbnail.evaluate((img: HTMLImageElement) => `${img.outerHTML} ${img.naturalWidth}`)}`));
    assert.match((await thumbnail.getAttribute('src')) ?? '', /^blob:/);

    // Dropped on the box, then pasted into the message: each is a link where it was put.
    await dropOrPaste(page, 'drop', [['notes.txt', 'meeting notes']]);
    await page
      .waitForFunction(() => /^\[notes\.txt\]\(\/user_uploads\/[^)]+\) $/.test((document.getElementById('compose-content') as HTMLTextAreaElement).value))
      .catch(async (err) => assert.unreachable(`${err}: ${await content(page).inputValue()} ${await page.locator('.compose').textContent()}`));
    await dropOrPaste(page, 'paste', [
      ['one.txt', '1'],
      ['two.txt', '2'],
    ]);
    await page
      .waitForFunction(() => /\) \[one\.txt\]\([^)]+\) \[two\.txt\]\([^)]+\) $/.test((document.getElementById('compose-content') as HTMLTextAreaElement).value))
      .catch(async (err) => assert.unreachable(`${err}: ${await content(page).inputValue()} ${await page.locator('.compose').textContent()}`));
    await content(page).press('Control+Enter');
    const sent = messageWith(bob.page, 'notes.txt');
    await sent.waitFor();
    assert.equal(await sent.locator('a').allTextContents(), ['notes.txt', 'one.txt', 'two.txt']);
    const uploads = await uma.client.get('/attachments');
    assert.equal(uploads.body.attachments.map((a: { name: string }) => a.name).sort(), ['chart.png', 'notes.txt', 'one.txt', 'two.txt']);
  },
);

/** Waits (up to 5 s: saving waits for typing to pause) for the user's drafts on the server to be `expected` (their contents). */
async function serverDrafts(user: TestUser, expected: string[]): Promise<{ id: number; type: string; to: number[]; topic: string; content: string }[]> {
  let drafts: { id: number; type: string; to: number[]; topic: string; content: string }[] = [];
  for (let tries = 0; tries < 50; tries++) {
    if (tries) await new Promise((r) => setTimeout(r, 100));
    drafts = (await user.client.get('/drafts')).body.drafts;
    if (JSON.stringify(drafts.map((d) => d.content).sort()) === JSON.stringify([...expected].sort())) return drafts;
  }
  assert.equal(
    drafts.map((d) => d.content),
    expected,
    'drafts on the server',
  );
  return drafts;
}

/** Someone new in a new channel where Bob wrote `text` in `topic`, logged in twice: a laptop on that topic, a phone on the combined feed. */
async function onTwoDevices(ctx: Ctx, name: string, channelName: string, topic: string, text: string) {
  const user = await ctx.realm.addUser({ name });
  const channel = await makeChannel(ctx.realm, channelName, [user, ctx.bob]);
  await send(ctx.bob, channel, topic, text);
  const laptop = await logIn(ctx, user, { hash: `#narrow/channel/${channel}-${channelName}/topic/${topic}` });
  const phone = await logIn(ctx, user);
  await messageWith(laptop.page, text).waitFor();
  return { user, channel, laptop, phone };
}

browserTest(
  'drafts are kept on the server while one writes, listed live on another device, restored into the compose box, deleted once sent or by hand',
  async (ctx) => {
    const { user: dora, channel: notes, laptop, phone } = await onTwoDevices(ctx, 'Dora Drafts', 'notebook', 'ideas', 'Any ideas?');
    await content(laptop.page).fill('Half a thought');
    const [saved] = await serverDrafts(dora, ['Half a thought']);
    assert.equal({ type: saved!.type, to: saved!.to, topic: saved!.topic }, { type: 'stream', to: [notes], topic: 'ideas' });

    const draftsLink = phone.page.locator('#sidebar .nav-link', { hasText: 'Drafts' });
    await draftsLink.locator('.draft-count', { hasText: '1' }).waitFor();
    await draftsLink.click();
    const overlay = phone.page.getByRole('dialog', { name: 'Drafts' });
    const draft = overlay.getByRole('listitem', { name: 'Draft to #notebook › ideas' });
    assert.match((await draft.textContent()) ?? '', 'Half a thought');
    await draft.getByRole('button', { name: 'Restore' }).click();
    await overlay.waitFor({ state: 'detached' });
    assert.is(await content(phone.page).inputValue(), 'Half a thought');
    assert.is(await phone.page.locator('#compose-topic').inputValue(), 'ideas');
    await content(phone.page).press('End');
    await content(phone.page).pressSequentially(', now whole');
    await content(phone.page).press('Control+Enter');
    await messageWith(laptop.page, 'Half a thought, now whole').waitFor();
    // Sending deleted the draft, for every device.
    await serverDrafts(dora, []);
    await laptop.page.locator('#sidebar .nav-link', { hasText: 'Drafts' }).locator('.draft-count').waitFor({ state: 'detached' });

    // A draft deleted from the list goes everywhere.
    const r = await dora.client.post('/drafts', {
      drafts: JSON.stringify([{ type: 'private', to: [ctx.bob.id], topic: '', content: 'For Bob only', timestamp: Math.floor(Date.now() / 1000) }]),
    });
    assert.is(r.status, 200, r.text);
    await phone.page.goto(`${ctx.url}#drafts`);
    const forBob = phone.page.getByRole('listitem', { name: 'Draft to Bob Builder' });
    await forBob.getByRole('button', { name: 'Delete' }).click();
    await forBob.waitFor({ state: 'detached' });
    await laptop.page.locator('#sidebar .nav-link', { hasText: 'Drafts' }).locator('.draft-count').waitFor({ state: 'detached' });
    await serverDrafts(dora, []);
  },
);

browserTest('send later: a message scheduled from the compose box is listed live under Scheduled messages, and cancelled there', async (ctx) => {
  const { user: sam, channel: later, laptop, phone } = await onTwoDevices(ctx, 'Sam Later', 'later', 'plans', 'Tomorrow then?');
  await content(laptop.page).fill('See you tomorrow');
  await laptop.page.getByRole('button', { name: 'Send later' }).click();
  const sendAt = laptop.page.getByLabel('Send at');
  // An hour from now is offered first.
  const offered = await sendAt.inputValue();
  const offeredIn = await laptop.page.evaluate((value) => new Date(value).getTime() - Date.now(), offered);
  assert.ok(offeredIn > 58 * 60_000 && offeredIn <= 60 * 60_000, `${offered} is an hour from now`);
  const tomorrow = await laptop.page.evaluate(() => {
    const at = new Date(Date.now() + 86_400_000);
    at.setMinutes(at.getMinutes() - at.getTimezoneOffset());
    return at.toISOString().slice(0, 16);
  });
  await sendAt.fill(tomorrow);
  await laptop.page.getByRole('button', { name: 'Schedule' }).click();
  await laptop.page.getByRole('status').filter({ hasText: 'Scheduled for' }).waitFor();
  assert.is(await content(laptop.page).inputValue(), '');
  const listed = (await sam.client.get('/scheduled_messages')).body.scheduled_messages;
  const expectedAt = await laptop.page.evaluate((value) => new Date(value).getTime() / 1000, tomorrow);
  assert.equal(
    listed.map((m: Record<string, unknown>) => [m.type, m.to, m.topic, m.content, m.scheduled_delivery_timestamp]),
    [['stream', later, 'plans', 'See you tomorrow', expectedAt]],
  );
  assert.is(await messageWith(laptop.page, 'See you tomorrow').count(), 0, 'not sent now');

  const link = phone.page.locator('#sidebar .nav-link', { hasText: 'Scheduled messages' });
  await link.locator('.draft-count', { hasText: '1' }).waitFor();
  await link.click();
  const item = phone.page.getByRole('dialog', { name: 'Scheduled messages' }).getByRole('listitem', { name: 'Scheduled message to #later › plans' });
  assert.match((await item.textContent()) ?? '', 'See you tomorrow');
  await item.getByRole('button', { name: 'Cancel' }).click();
  await item.waitFor({ state: 'detached' });
  await laptop.page.locator('#sidebar .nav-link', { hasText: 'Scheduled messages' }).locator('.draft-count').waitFor({ state: 'detached' });
  assert.equal((await sam.client.get('/scheduled_messages')).body.scheduled_messages, []);
});

runBrowserTests(test, 'web-compose');
