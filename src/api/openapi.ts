// The OpenAPI 3.1 document of this server, made from what the code declares, never by hand: each
// route's parameters and response (zod), the event schemas (src/events/schemas.ts) and the
// WebSocket gateway's frames. Served at GET /api/v1/openapi.json; the test suite checks every
// success answer it gets against this document.
import { z } from 'zod';
import { EVENT_SCHEMAS } from '../events/schemas.ts';
import { CLOSE_REASONS, clientFrame, serverFrame, SOCKET_PATH } from '../gateway/socket.ts';
import type { Field } from '../http/params.ts';
import { RawResponse, RawSuccess } from '../http/route.ts';
import { FEATURE_LEVEL, ZULIP_VERSION } from '../version.ts';
import { publicRoute, type Route } from './route.ts';

export type Json = Record<string, unknown>;

const SUCCESS = { result: z.literal('success'), msg: z.string() };
const IGNORED = { ignored_parameters_unsupported: z.array(z.string()).optional().describe('Parameters the server did not know') };
const errorEnvelope = z.looseObject({ result: z.literal('error'), msg: z.string(), code: z.string() });
const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);
const VERBS: Record<string, string> = { GET: 'Get', POST: 'Post', PATCH: 'Update', PUT: 'Put', DELETE: 'Delete' };
/** A resource's name in code (`userGroups`) as a tag (`user groups`). */
const tagName = (resource: string) => resource.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/** `METHOD path` of every route that declares no response: the test suite fails on any of them. */
export function routesWithoutResponse(routes: readonly Route[]): string[] {
  return routes.filter((r) => !r.response).map((r) => `${r.method} ${r.path}`);
}

/** A route's JSON success body: `result`, `msg` and its fields, as strict or loose as it declared them. */
function successEnvelope(fields: z.ZodObject): z.ZodObject {
  const envelope = z.object({ ...SUCCESS, ...fields.shape, ...IGNORED });
  const { catchall } = fields.def;
  const shaped = catchall ? envelope.catchall(catchall) : envelope;
  return fields.description ? shaped.describe(fields.description) : shaped;
}

/**
 * JSON Schema from zod; schemas with an `id` in their metadata are gathered into `shared`. Draft
 * 2020-12 for OpenAPI 3.1; draft 7 for AsyncAPI (src/api/asyncapi.ts), whose schemas extend it.
 */
export function jsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  shared: Record<string, Json>,
  target: 'draft-2020-12' | 'draft-7' = 'draft-2020-12',
): Json {
  // Parameters may transform what they parse; their input side is what clients send.
  const converted = z.toJSONSchema(schema, { target, io, unrepresentable: io === 'input' ? 'any' : 'throw' }) as Json;
  const { $schema: _, $defs, definitions, ...rest } = converted;
  for (const [id, def] of Object.entries(($defs ?? definitions ?? {}) as Record<string, Json>)) {
    if (shared[id] && JSON.stringify(shared[id]) !== JSON.stringify(def)) throw new Error(`two different schemas are named ${id}`);
    shared[id] = def;
  }
  return rest;
}

/** `/api/v1/users/:user_id/status` → `/api/v1/users/{user_id}/status`; a final `/*` is `{path}`. */
export const openApiPath = (path: string) => path.replace(/\/\*$/, '/{path}').replace(/:(\w+)/g, '{$1}');

const camel = (words: string[]) => words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');

/**
 * `GET /api/v1/users/{user_id}/status` → getUsersByUserIdStatus. Routes outside /api/v1 serve
 * files, pages and redirects: `GET /avatar/{email_or_id}` → serveAvatarByEmailOrId, and take
 * forms: `POST /join/{key}/` → submitJoinByKey.
 */
function operationId(route: Route): string {
  const api = route.path.startsWith('/api/v1/');
  const words = openApiPath(api ? route.path.slice('/api/v1/'.length) : route.path.slice(1))
    .split('/')
    .flatMap((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      return (param ? `by_${param[1]}` : segment).split(/[_\-.]/);
    })
    .filter((word) => word !== '');
  return camel([api ? route.method.toLowerCase() : route.method === 'GET' ? 'serve' : 'submit', ...words]);
}

function summary(route: Route): string {
  const path = openApiPath(route.path.replace(/^\/api\/v1\//, '/'));
  const words = path
    .slice(1)
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => (segment.startsWith('{') ? segment : segment.replace(/_/g, ' ')));
  return `${VERBS[route.method]} ${words.join(' ')}`;
}

function pathParameters(route: Route): Json[] {
  return [...openApiPath(route.path).matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    // Ids are digits; other segments (emails, names, fragments, a file's path, "id or email") are any text.
    schema: name!.endsWith('_id') && !name!.includes('_or_') ? { type: 'integer', minimum: 0 } : { type: 'string' },
    ...(name === 'path' ? { description: 'The rest of the path, slashes included' } : {}),
  }));
}

/** A field's JSON Schema, with its default; the caller marks JSON-encoded fields as application/json. */
function fieldSchema(field: Field<unknown>, shared: Record<string, Json>): Json {
  const schema = jsonSchema(field.schema, 'input', shared);
  return field.defaultValue === undefined ? schema : { ...schema, default: field.defaultValue };
}

function queryParameters(route: Route, shared: Record<string, Json>): Json[] {
  return Object.entries(route.params).map(([name, field]) => {
    const schema = fieldSchema(field, shared);
    const value = field.kind === 'json' ? { content: { 'application/json': { schema } } } : { schema };
    return { name, in: 'query', required: field.required, ...value };
  });
}

function requestBody(route: Route, shared: Record<string, Json>): Json | undefined {
  const entries = Object.entries(route.params);
  if (entries.length === 0 && !route.uploads) return undefined;
  const properties: Json = {};
  const encoding: Json = {};
  for (const [name, field] of entries) {
    properties[name] = fieldSchema(field, shared);
    if (field.kind === 'json') encoding[name] = { contentType: 'application/json' };
  }
  const required = entries.filter(([, field]) => field.required).map(([name]) => name);
  const schema: Json = { type: 'object', properties, ...(required.length ? { required } : {}) };
  const withEncoding = Object.keys(encoding).length ? { encoding } : {};
  if (route.uploads) {
    // Files come as parts of any name, as Zulip takes them.
    const files = { type: 'string', contentMediaType: 'application/octet-stream' };
    return { required: true, content: { 'multipart/form-data': { schema: { ...schema, additionalProperties: files }, ...withEncoding } } };
  }
  return { required: required.length > 0, content: { 'application/x-www-form-urlencoded': { schema, ...withEncoding } } };
}

function successResponse(route: Route, shared: Record<string, Json>): Json {
  const { response } = route;
  if (!response) return { 200: { description: 'Success; this route declares no response schema yet' } };
  if (response instanceof RawSuccess) {
    if (response.status === 302) return { 302: { description: response.description, headers: { Location: { schema: { type: 'string' } } } } };
    const redirect = response.orRedirect ? { 302: { description: 'A redirect', headers: { Location: { schema: { type: 'string' } } } } } : {};
    return { 200: { description: response.description, content: { [response.contentType]: {} } }, ...redirect };
  }
  const schema = jsonSchema(successEnvelope(response), 'output', shared);
  return { 200: { description: response.description || 'Success', content: { 'application/json': { schema } } } };
}

function operation(route: Route, tag: string, shared: Record<string, Json>): Json {
  const inQuery = !BODY_METHODS.has(route.method);
  const body = inQuery ? undefined : requestBody(route, shared);
  return {
    operationId: operationId(route),
    summary: summary(route),
    tags: [tag],
    security: route.auth === 'user' ? [{ basicAuth: [] }] : route.auth === 'optional' ? [{ basicAuth: [] }, {}] : [],
    parameters: [...pathParameters(route), ...(inQuery ? queryParameters(route, shared) : [])],
    ...(body ? { requestBody: body } : {}),
    responses: { ...successResponse(route, shared), default: { $ref: '#/components/responses/Error' } },
  };
}

/** The gateway, in OpenAPI terms: the upgrade request, and its frames as an `x-websocket` extension. */
function socketOperation(shared: Record<string, Json>): Json {
  return {
    operationId: 'connectEventsSocket',
    summary: 'Read an event queue over a WebSocket',
    description: 'Beyond Zulip: the events of a queue made by POST /register, pushed as JSON text frames as they are queued.',
    tags: ['events'],
    security: [{ basicAuth: [] }, {}],
    parameters: [
      { name: 'queue_id', in: 'query', required: true, schema: { type: 'string' }, description: "The queue's id; it is a credential of its own" },
      {
        name: 'last_event_id',
        in: 'query',
        required: false,
        schema: { type: 'integer' },
        description: 'Resume after this event (acknowledging it and every one before)',
      },
    ],
    responses: { 101: { description: 'Switching Protocols: frames as in x-websocket' }, default: { $ref: '#/components/responses/Error' } },
    'x-websocket': {
      clientFrames: jsonSchema(clientFrame, 'input', shared),
      serverFrames: jsonSchema(serverFrame, 'output', shared),
      closeCodes: Object.fromEntries(Object.values(CLOSE_REASONS).map(({ code, reason }) => [code, reason])),
    },
  };
}

/** The whole document; `groups` are the routes by resource, whose names become the tags. */
export function openApiDocument(groups: Readonly<Record<string, readonly Route[]>>): Json {
  const shared: Record<string, Json> = {};
  const paths: Record<string, Json> = {};
  for (const [resource, routes] of Object.entries(groups)) {
    for (const route of routes) (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route, tagName(resource), shared);
  }
  paths[SOCKET_PATH] = { get: socketOperation(shared) };
  const events = Object.entries(EVENT_SCHEMAS).map(([key, schema]) => [`Event.${key.replace('/', '.')}`, jsonSchema(schema, 'output', shared)]);
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Team chat server API',
      version: `${ZULIP_VERSION} (feature level ${FEATURE_LEVEL})`,
      description:
        'A Zulip-compatible API. Parameters are strings, with non-string values JSON-encoded. Events ' +
        '(GET /events, the WebSocket gateway) are described as actions publish them in the Event.* schemas; ' +
        "each queue then shapes them for its client's options and adds their id.",
    },
    tags: Object.keys(groups).map((resource) => ({ name: tagName(resource) })),
    paths,
    components: {
      securitySchemes: { basicAuth: { type: 'http', scheme: 'basic', description: 'Email and API key' } },
      responses: {
        Error: {
          description: "Zulip's error envelope (400 for most errors, 401, 404, 405, 429, 500)",
          content: { 'application/json': { schema: jsonSchema(errorEnvelope, 'output', shared) } },
        },
      },
      schemas: { ...shared, ...Object.fromEntries(events) },
    },
  };
  // zod names shared schemas under each schema's own $defs; in the document they are components.
  return JSON.parse(JSON.stringify(document).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
}

/** GET /api/v1/openapi.json, for the routes `groups` returns (which include this one). */
export function openApiRoutes(groups: () => Readonly<Record<string, readonly Route[]>>): Route[] {
  let document: Json | undefined;
  return [
    publicRoute({
      method: 'GET',
      path: '/api/v1/openapi.json',
      params: {},
      response: new RawSuccess(200, 'application/json', 'This document'),
      async handler({ app, realm }) {
        document ??= openApiDocument(groups());
        const body = JSON.stringify({ ...document, servers: [{ url: app.realms.url(realm) }] });
        return new RawResponse(200, { 'Content-Type': 'application/json' }, body);
      },
    }),
  ];
}
