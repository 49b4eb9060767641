// Helpers for the browser tests: Debian's Chromium driven by playwright-core, a tab per user,
// logging in through the form, tests that fail on errors in their pages, and a TCP forwarder
// standing in for a reverse proxy.
import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../src/server.ts';
import { newRealm, startTestServer, type TestRealm, type TestUser } from '../helpers/server.ts';
import { buildWebClient } from '../helpers/web.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 760 };

export interface Ctx {
  server: RunningServer;
  realm: TestRealm;
  owner: TestUser;
  bob: TestUser;
  carol: TestUser;
  general: number;
  random: number;
  browser: Browser;
  /** The browser's way to the server, which stays when the server restarts on another port. */
  forwarder: Forwarder;
  url: string;
  contexts: BrowserContext[];
  errors: string[];
}

/** What a browser test keeps: the contexts it opened (one per person), and the errors their pages threw. */
export interface BrowserState {
  contexts: BrowserContext[];
  errors: string[];
}

/** Tests whose browser contexts are closed after each, and which fail on any error in their pages. */
export function browserTests<C extends BrowserState>(test: Test<C>) {
  return (name: string, fn: (ctx: C) => Promise<void>): void => {
    // Without the browser each is skipped, and counted so in the run's totals.
    if (chromiumMissing) return test.skip(name);
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

/** A logged-in tab, with the event frames its WebSocket received. */
export interface Tab {
  page: Page;
  frames: string[];
}

export async function openTab(ctx: Ctx, setup?: (context: BrowserContext) => Promise<unknown>, viewport = DESKTOP, hash = ''): Promise<Tab> {
  const context = await ctx.browser.newContext({ viewport });
  ctx.contexts.push(context);
  await setup?.(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (err) => ctx.errors.push(err.stack ?? err.message));
  const frames: string[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))));
  await page.goto(ctx.url + hash);
  return { page, frames };
}

/** Logs in through the form; `hash` is the address's fragment, the narrow to open on. */
export async function logIn(
  ctx: Ctx,
  user: TestUser,
  options: { setup?: (context: BrowserContext) => Promise<unknown>; viewport?: typeof DESKTOP; live?: string; hash?: string } = {},
): Promise<Tab> {
  const tab = await openTab(ctx, options.setup, options.viewport, options.hash);
  await submitLogin(tab.page, user, options.live);
  return tab;
}

/** Logs in through the form and waits until the events arrive (`live`: the connection shown). */
export async function submitLogin(page: Page, user: { email: string; password: string }, live = 'socket'): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator(`[data-connection="${live}"]`).waitFor();
}

export const REFUSED_WEBSOCKET = `
  window.WebSocket = class extends EventTarget {
    static CONNECTING = 0; static OPEN = 1; static CLOSING = 2; static CLOSED = 3;
    readyState = 0;
    onclose = null;
    constructor() {
      super();
      setTimeout(() => {
        this.readyState = 3;
        if (this.onclose) this.onclose(new CloseEvent('close', { code: 1006 }));
      }, 10);
    }
    send() {}
    close() {}
  };
`;

export const sidebarLink = (page: Page, name: string) =>
  page.locator('#sidebar .nav-link', { has: page.locator('.name', { hasText: new RegExp(`^${name}$`) }) });
export const messageWith = (page: Page, text: string | RegExp) => page.locator('.message', { has: page.locator('.message-content', { hasText: text }) });

export async function compose(page: Page, content: string, topic?: string): Promise<void> {
  if (topic !== undefined) await page.locator('#compose-topic').fill(topic);
  await page.locator('#compose-content').fill(content);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.WEB_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name) });
}

export interface Forwarder {
  port: number;
  close(): Promise<void>;
}

/** A TCP forwarder to the server's current port, as a reverse proxy would be. */
export function forward(target: () => number): Promise<Forwarder> {
  const connections = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target(), '127.0.0.1');
    for (const socket of [client, upstream]) {
      connections.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        connections.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => {
          for (const socket of connections) socket.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

// Rate limits on (failed logins are what one test shows), but far from what the tests spend.
export const SERVER_ENV = { RATE_LIMIT: 'on', RATE_LIMIT_USER_PER_MINUTE: '100000', RATE_LIMIT_IP_PER_MINUTE: '100000', RATE_LIMIT_LOGIN_FAILURES: '3' };

/** Runs a browser test file; without Chromium its tests are skipped (and its set-up, which needs it, left out). */
export function runBrowserTests<C>(test: Test<C>, file: string): void {
  if (chromiumMissing) console.log(`\n  ${file}: skipped: no browser at ${CHROMIUM} (apt-get install chromium; .ci/run does)\n`);
  test.run();
}

/**
 * A browser suite's set-up: the server (SERVER_ENV), an organization with Olivia Owner, Bob
 * Builder and Carol Clerk, and the browser reaching the server through a forwarder. Nothing
 * without Chromium, whose tests are then skipped.
 */
export async function setUpBrowserSuite(ctx: Ctx): Promise<void> {
  if (chromiumMissing) return;
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
}

export async function tearDownBrowserSuite(ctx: Ctx): Promise<void> {
  await ctx.browser?.close();
  await ctx.forwarder?.close();
  await ctx.server?.stop();
}
