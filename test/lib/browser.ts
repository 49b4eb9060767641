// What the browser tests share: the Chromium they drive, the login form filled in, and finding
// things on the web client's page (sidebar links, messages), plus the README's screenshots.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);

/** What a browser test keeps: the contexts it opened (one per person), and the errors their pages threw. */
export interface BrowserState {
  contexts: BrowserContext[];
  errors: string[];
}

/** Tests whose browser contexts are closed after each, and which fail on any error in their pages. */
export function browserTests<C extends BrowserState>(test: Test<C>) {
  return (name: string, fn: (ctx: C) => Promise<void>): void => {
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
  };
}

/** Logs in through the form and waits until the events arrive (`live`: the connection shown). */
export async function submitLogin(page: Page, user: { email: string; password: string }, live = 'socket'): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator(`[data-connection="${live}"]`).waitFor();
}

export const sidebarLink = (page: Page, name: string) => page.locator('#sidebar .nav-link', { has: page.locator('.name', { hasText: new RegExp(`^${name}$`) }) });
export const messageWith = (page: Page, text: string | RegExp) => page.locator('.message', { has: page.locator('.message-content', { hasText: text }) });

/** Saves a screenshot when WEB_SCREENSHOTS names a directory (the README's come from there). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.WEB_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name) });
}
