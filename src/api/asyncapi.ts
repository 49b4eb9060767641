// The AsyncAPI 3.0 document of the WebSocket gateway, made from the same zod schemas as the
// OpenAPI document (src/api/openapi.ts): the frames the gateway sends and reads (src/gateway/
// socket.ts) and every event type as actions publish it (src/events/schemas.ts). Served at
// GET /api/v1/asyncapi.json, beside /api/v1/openapi.json.
import { EVENT_SCHEMAS } from '../events/schemas.ts';
import { CLOSE_REASONS, clientFrame, frameError, SOCKET_PATH } from '../gateway/socket.ts';
import { deliveredEvent } from '../gateway/long-poll.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { FEATURE_LEVEL, ZULIP_VERSION } from '../version.ts';
import { jsonSchema, type Json } from './openapi.ts';
import { publicRoute, type Route } from './route.ts';

const CHANNEL = 'eventQueue';
const message = (name: string, title: string, description: string, payload: Json) => ({ name, title, description, contentType: 'application/json', payload });
const ref = (name: string) => ({ $ref: `#/channels/${CHANNEL}/messages/${name}` });

/** The document, its server left out (that is the organization's address, known per request). */
export function asyncApiDocument(): Json {
  const shared: Record<string, Json> = {};
  const schema = (s: Parameters<typeof jsonSchema>[0], io: 'input' | 'output') => jsonSchema(s, io, shared, 'draft-7');
  const closeCodes = Object.values(CLOSE_REASONS)
    .map(({ code, reason }) => `${code}: ${reason}`)
    .join('; ');
  const eventMessages = Object.fromEntries(
    Object.entries(EVENT_SCHEMAS).map(([key, eventSchema]) => {
      const name = `Event.${key.replace('/', '.')}`;
      const description = `The ${key.replace('/', ' event, op ')} as actions publish it; each queue shapes it for its client's register options and adds its id.`;
      return [name, message(name, key.replace(/\/$/, ''), description, schema(eventSchema, 'output'))];
    }),
  );
  const messages = {
    DeliveredEvent: message(
      'DeliveredEvent',
      'An event',
      'One event of the queue, as GET /events would return it, with its id; its fields are those of one of the Event.* messages.',
      schema(deliveredEvent, 'output'),
    ),
    FrameError: message('FrameError', 'A refused client frame', 'The answer to a client frame that is not an acknowledgement.', schema(frameError, 'output')),
    Acknowledgement: message(
      'Acknowledgement',
      'An acknowledgement',
      'Every event up to last_event_id was received: the server drops them from the queue.',
      schema(clientFrame, 'input'),
    ),
    ...eventMessages,
  };
  const channelMessages = Object.fromEntries(Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }]));
  const document = {
    asyncapi: '3.0.0',
    info: {
      title: 'Team chat server: WebSocket events',
      version: `${ZULIP_VERSION} (feature level ${FEATURE_LEVEL})`,
      description:
        'Beyond Zulip: an event queue made by POST /register (see the OpenAPI document at /api/v1/openapi.json) read over one ' +
        'WebSocket. Each event is pushed as a JSON text frame as soon as it is queued; the client acknowledges with ' +
        '{"last_event_id": N}, and after a reconnect passes the last id it received to resume with no gap and no duplicate. ' +
        `Close codes: ${closeCodes}.`,
    },
    defaultContentType: 'application/json',
    channels: {
      [CHANNEL]: {
        address: SOCKET_PATH,
        title: 'An event queue',
        description: 'A queue made by POST /register; one reader at a time (a new one takes over, and the old socket is closed with 4001).',
        messages: channelMessages,
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                queue_id: { type: 'string', description: "The queue's id; it is a credential of its own" },
                last_event_id: { type: 'integer', description: 'Resume after this event (acknowledging it and every one before)' },
              },
              required: ['queue_id'],
            },
            bindingVersion: '0.1.0',
          },
        },
      },
    },
    operations: {
      receiveEvents: {
        action: 'receive',
        title: 'Receive the events of the queue',
        channel: { $ref: `#/channels/${CHANNEL}` },
        messages: [ref('DeliveredEvent'), ref('FrameError'), ...Object.keys(eventMessages).map(ref)],
      },
      acknowledgeEvents: {
        action: 'send',
        title: 'Acknowledge the events received',
        channel: { $ref: `#/channels/${CHANNEL}` },
        messages: [ref('Acknowledgement')],
      },
    },
    components: {
      schemas: shared,
      messages,
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: 'Email and API key on the upgrade request; or none, the queue id being the credential' },
      },
    },
  };
  // zod names shared schemas under each schema's own definitions; in the document they are components.
  return JSON.parse(JSON.stringify(document).replaceAll('"#/definitions/', '"#/components/schemas/')) as Json;
}

/** GET /api/v1/asyncapi.json. */
export function asyncApiRoutes(): Route[] {
  let document: Json | undefined;
  return [
    publicRoute({
      method: 'GET',
      path: '/api/v1/asyncapi.json',
      params: {},
      response: new RawSuccess(200, 'application/json', 'The AsyncAPI document of the WebSocket gateway'),
      async handler({ app, realm }) {
        document ??= asyncApiDocument();
        const url = new URL(app.realms.url(realm));
        const server = { host: url.host, protocol: url.protocol === 'https:' ? 'wss' : 'ws', security: [{ $ref: '#/components/securitySchemes/basicAuth' }] };
        const channels = document.channels as Record<string, Json>;
        const body = JSON.stringify({
          ...document,
          servers: { organization: server },
          channels: { [CHANNEL]: { ...channels[CHANNEL], servers: [{ $ref: '#/servers/organization' }] } },
        });
        return new RawResponse(200, { 'Content-Type': 'application/json' }, body);
      },
    }),
  ];
}
