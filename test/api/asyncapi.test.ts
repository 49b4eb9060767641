// The AsyncAPI document of the WebSocket gateway: served beside the OpenAPI one, valid against
// AsyncAPI's own JSON Schema for 3.0.0, every reference resolving, every event type a message,
// and frames the gateway really sends conforming to it.
import { test } from 'uvu';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as assert from 'uvu/assert';
import { Ajv } from 'ajv';
import WebSocket from 'ws';
import { EVENT_SCHEMAS } from '../../src/events/schemas.ts';
import { SOCKET_PATH } from '../../src/gateway/socket.ts';
import { makeChannel, send } from '../messages/messages-helpers.ts';
import { newRealm } from '../helpers/server.ts';

type Json = Record<string, any>;
const specs = createRequire(import.meta.url).resolve('@asyncapi/specs/schemas/3.0.0-without-$id.json');

/** Every `$ref` inside the document that names no part of it. */
function danglingRefs(document: Json): string[] {
  const missing: string[] = [];
  const resolve = (pointer: string) =>
    pointer
      .slice(2)
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<Json | undefined>((node, key) => node?.[key], document);
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && resolve(value) === undefined) missing.push(value);
      else walk(value);
    }
  };
  walk(document);
  return missing;
}

test('GET /api/v1/asyncapi.json: a valid AsyncAPI 3.0 document of the gateway, the organization as its server', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.get('/asyncapi.json');
  assert.is(r.status, 200);
  assert.is(r.headers['content-type'], 'application/json');
  const doc = r.body as Json;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(JSON.parse(readFileSync(specs, 'utf8')));
  assert.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 5), null, 2));
  assert.equal(danglingRefs(doc), []);
  assert.is(doc.asyncapi, '3.0.0');
  assert.equal(doc.servers, { organization: { host: realm.host, protocol: 'ws', security: [{ $ref: '#/components/securitySchemes/basicAuth' }] } });
  assert.is(doc.channels.eventQueue.address, SOCKET_PATH);
  const eventMessages = Object.keys(EVENT_SCHEMAS).map((key) => `Event.${key.replace('/', '.')}`);
  assert.equal(Object.keys(doc.components.messages), ['DeliveredEvent', 'FrameError', 'Acknowledgement', ...eventMessages]);
  assert.equal(
    doc.operations.receiveEvents.messages.map((m: Json) => m.$ref),
    ['DeliveredEvent', 'FrameError', ...eventMessages].map((name) => `#/channels/eventQueue/messages/${name}`),
  );
  assert.equal(doc.operations.acknowledgeEvents.messages, [{ $ref: '#/channels/eventQueue/messages/Acknowledgement' }]);
});

test("the gateway's frames conform to the document's messages", async () => {
  const realm = await newRealm();
  const channel = await makeChannel(realm, 'general', [realm.owner]);
  const doc = (await realm.anonymous.get('/asyncapi.json')).body as Json;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ components: doc.components }, 'doc');
  const payload = (name: string) => ajv.compile({ $ref: `doc#/components/messages/${name}/payload` });
  const queue = (await realm.owner.client.post('/register', { event_types: ['message'] })).body as Json;
  const ws = new WebSocket(`ws://127.0.0.1:${realm.server.port}${SOCKET_PATH}?queue_id=${queue.queue_id}`, { headers: { Host: realm.host } });
  const frames: Json[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data))));
  await new Promise((resolve) => ws.once('open', resolve));
  await send(realm.owner, channel, 'hello', 'framed');
  ws.send(JSON.stringify({ nonsense: true }));
  while (frames.length < 2) await new Promise((resolve) => ws.once('message', resolve));
  ws.close();
  const [event, refusal] = frames as [Json, Json];
  assert.is(event.type, 'message');
  for (const [name, frame] of [
    ['DeliveredEvent', event],
    ['FrameError', refusal],
  ] as const) {
    const check = payload(name);
    assert.ok(check(frame), `${name}: ${JSON.stringify(check.errors)}`);
  }
  const ack = payload('Acknowledgement');
  assert.ok(ack({ last_event_id: event.id }));
  assert.not.ok(ack({ last_event_id: 'one' }));
  assert.not.ok(payload('FrameError')(event));
});

test.run();
