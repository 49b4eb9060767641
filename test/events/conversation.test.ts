// Issue 4's end-to-end check: zulip-js's callOnEachEvent loop (long-polling) and a WebSocket
// client each receive every event of a scripted conversation, once and in the same order.
import { createRequire } from 'node:module';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { makeChannel, send, sendDm } from '../messages/messages-helpers.ts';
import { useLoopbackAgent } from '../helpers/loopback-agent.ts';
import { newRealm } from '../helpers/server.ts';
import { runCheck } from '../helpers/openapi-check.ts';

type Event = Record<string, any> & { id: number; type: string };
interface ZulipClient {
  callOnEachEvent(callback: (event: Event) => void, eventTypes?: string[]): Promise<void>;
}
const zulip = createRequire(import.meta.url)('zulip-js') as (config: Record<string, string>) => Promise<ZulipClient>;

useLoopbackAgent();

const TYPES = ['message', 'update_message', 'reaction', 'delete_message', 'typing'];

/** What identifies an event across two queues (ids differ per queue). */
const signature = (e: Event) => `${e.type}:${e.op ?? ''}:${e.message?.id ?? e.message_id ?? e.message_ids?.join(',') ?? e.sender?.user_id ?? ''}`;

async function waitFor(predicate: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a scripted conversation reaches a zulip-js loop and a WebSocket client alike', async () => {
  const realm = await newRealm();
  const bob = await realm.addUser({ name: 'Bob' });
  const channelId = await makeChannel(realm, 'scripted', [realm.owner, bob]);

  const viaZulipJs: Event[] = [];
  const client = await zulip({ realm: `http://${realm.host}`, username: bob.email, apiKey: bob.apiKey });
  void client.callOnEachEvent((e) => viaZulipJs.push(e), TYPES);

  const reg = await bob.client.post('/register', {
    event_types: TYPES,
    client_capabilities: { bulk_message_deletion: true, stream_typing_notifications: true },
  });
  const viaSocket: Event[] = [];
  const ws = new WebSocket(`ws://127.0.0.1:${realm.server.port}/api/v1/events/socket?queue_id=${reg.body.queue_id}`, { headers: { Host: realm.host } });
  ws.on('message', (data) => {
    runCheck.inspectFrame(String(data));
    viaSocket.push(JSON.parse(String(data)));
  });
  await new Promise((resolve) => ws.once('open', resolve));
  // zulip-js registers its queue in the background; wait until it is there before talking.
  const app = realm.server.app;
  await waitFor(() => app.queues.queuesOf(bob.id).size === 2, 10_000);

  const hello = await send(realm.owner, channelId, 'plans', 'hello bob');
  const reply = await send(bob, channelId, 'plans', 'hi!');
  assert.is((await realm.owner.client.patch(`/messages/${hello}`, { content: 'hello, Bob' })).status, 200);
  assert.is((await realm.owner.client.post(`/messages/${reply}/reactions`, { emoji_name: 'smile' })).status, 200);
  const dm = await sendDm(realm.owner, [bob.id], 'a word in private');
  assert.is((await realm.owner.client.delete(`/messages/${dm}`)).status, 200);
  assert.is((await realm.owner.client.post('/typing', { type: 'direct', op: 'start', to: [bob.id] })).status, 200);

  const expected = [
    `message::${hello}`,
    `message::${reply}`,
    `update_message::${hello}`,
    `reaction:add:${reply}`,
    `message::${dm}`,
    `delete_message::${dm}`,
    `typing:start:${realm.owner.id}`,
  ];
  const got = (events: Event[]) => events.filter((e) => e.type !== 'heartbeat').map(signature);
  await waitFor(() => got(viaZulipJs).length >= expected.length && got(viaSocket).length >= expected.length, 15_000);
  assert.equal(got(viaSocket), expected);
  assert.equal(got(viaZulipJs), expected);
  ws.close();
});

test.run();
