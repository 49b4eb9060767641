// Shared setup for the message tests: channels with members, sends, and raw access to dates.
import * as assert from 'uvu/assert';
import { systemBot } from '../../src/actions/users.ts';
import type { Prisma } from '../../src/db/generated/client.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';

export interface ChannelOptions {
  invite_only?: boolean;
  history_public_to_subscribers?: boolean;
}

/** Creates a channel through the API with exactly `members` subscribed; returns its id. */
export async function makeChannel(realm: TestRealm, name: string, members: TestUser[], opts: ChannelOptions = {}): Promise<number> {
  const r = await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: members.map((m) => m.id), ...opts });
  assert.is(r.status, 200, r.text);
  const channel = await realm.server.app.prisma.channel.findFirstOrThrow({ where: { realmId: realm.id, name } });
  return channel.id;
}

export async function send(user: TestUser, to: number | string, topic: string, content: string): Promise<number> {
  const r = await user.client.post('/messages', { type: 'stream', to, topic, content });
  assert.is(r.status, 200, r.text);
  return r.body.id;
}

export async function sendDm(user: TestUser, to: number[], content: string): Promise<number> {
  const r = await user.client.post('/messages', { type: 'direct', to, content });
  assert.is(r.status, 200, r.text);
  return r.body.id;
}

/** Moves messages into the past, for time-limit tests. */
export async function age(realm: TestRealm, ids: number[], seconds: number): Promise<void> {
  await realm.server.app.prisma.message.updateMany({ where: { id: { in: ids } }, data: { dateSent: new Date(Date.now() - seconds * 1000) } });
}

export async function setRealmSettings(realm: TestRealm, settings: Record<string, unknown>, permissions: Record<string, unknown> = {}): Promise<void> {
  const app = realm.server.app;
  const row = await app.prisma.realm.findUniqueOrThrow({ where: { id: realm.id } });
  await app.prisma.realm.update({
    where: { id: realm.id },
    data: { settings: { ...(row.settings as object), ...settings } as object, permissions: { ...(row.permissions as object), ...permissions } as object },
  });
  await app.realms.reload(realm.id);
}

/**
 * Sets a channel's columns directly, for states the API reaches only in several steps, and lets
 * the server's channel cache know, as the actions do after a commit.
 */
export async function setChannelRow(realm: TestRealm, id: number, data: Prisma.ChannelUncheckedUpdateInput): Promise<void> {
  await realm.server.app.prisma.channel.update({ where: { id }, data });
  realm.server.app.channels.forgetRows();
}

/**
 * Makes the Notification Bot and Welcome Bot exist before a test watches events: their creation
 * (announced like any new bot's) is not what such a test is about.
 */
export async function withSystemBots(realm: TestRealm): Promise<void> {
  const realmInfo = realm.server.app.realms.byId(realm.id)!;
  for (const bot of ['notification', 'welcome'] as const) await systemBot(realm.server.app, realmInfo, bot);
}

/** A new organization with Bob and Zoe beside its owner, all three in channel "general". */
export async function ownerBobZoe(): Promise<{ realm: TestRealm; bob: TestUser; zoe: TestUser; channelId: number }> {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const zoe = await realm.addUser({ name: 'Zoe' });
  const channelId = await makeChannel(realm, 'general', [realm.owner, bob, zoe]);
  return { realm, bob, zoe, channelId };
}

/** The id of a system group of the realm (for permission settings). */
export function systemGroup(realm: TestRealm, name: string): number {
  return (realm.server.app.realms.byId(realm.id)!.systemGroups as Record<string, number>)[name]!;
}

export const errorBody = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code, ...extra });

/** An error reply, exactly: status and Zulip's body. */
export function expectError(
  r: { status: number; body: unknown; text: string },
  msg: string,
  status = 400,
  code = 'BAD_REQUEST',
  extra: Record<string, unknown> = {},
): void {
  assert.equal([r.status, r.body], [status, errorBody(msg, code, extra)], r.text);
}

/**
 * A delivery time (UNIX seconds) for the scheduler to reach soon: the first whole second at least
 * `marginMs` from now, so the request still finds it in the future.
 */
export const soon = (marginMs = 400) => Math.ceil((Date.now() + marginMs) / 1000);

/** Reads until `check` holds: for what the scheduler does on its own clock. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
