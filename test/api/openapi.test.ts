// The OpenAPI document: served, complete (every route with parameters and a response, every event
// schema, the WebSocket frames), well-formed, and able to catch an answer that does not conform.
// That every answer of the suite conforms is checked by test/run.ts (helpers/openapi-check.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { allRoutes, routeGroups } from '../../src/api/index.ts';
import { openApiDocument, openApiPath, routesWithoutResponse } from '../../src/api/openapi.ts';
import { EVENT_SCHEMAS } from '../../src/events/schemas.ts';
import { CLOSE_REASONS, SOCKET_PATH } from '../../src/gateway/socket.ts';
import { RawSuccess } from '../../src/http/route.ts';
import { ResponseCheck, responseValidator } from '../helpers/openapi-check.ts';
import { newRealm } from '../helpers/server.ts';

/**
 * Routes allowed to lack a response schema. Keep it empty: a new route declares `response`
 * beside its `params` (a zod object of its success fields, or a RawSuccess for files and redirects).
 */
const WITHOUT_RESPONSE: string[] = [];

type Json = Record<string, any>;
const document = openApiDocument(routeGroups) as Json;
const operations = Object.entries(document.paths as Json).flatMap(([path, methods]) =>
  Object.entries(methods as Json).map(([method, op]) => ({ path, method, op: op as Json })),
);

test('every route declares its response', () => {
  assert.equal(routesWithoutResponse(allRoutes), WITHOUT_RESPONSE);
});

test('GET /api/v1/openapi.json serves the generated document, with the organization as its server', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.get('/openapi.json');
  assert.is(r.status, 200);
  assert.is(r.headers['content-type'], 'application/json');
  const { servers, ...served } = r.body;
  assert.equal(servers, [{ url: realm.server.app.realms.url(realm.server.app.realms.byId(realm.id)!) }]);
  assert.equal(served, document);
  assert.is(served.openapi, '3.1.0');
});

test('one operation per route, with a unique operationId, its tag, path parameters and fields', () => {
  assert.is(operations.length, allRoutes.length + 1);
  const ids = operations.map(({ op }) => op.operationId);
  assert.equal([...new Set(ids)].length, ids.length);
  for (const route of allRoutes) {
    const op = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
    assert.ok(op, `${route.method} ${route.path}`);
    assert.ok(op.summary && op.tags.length === 1, `${route.method} ${route.path}`);
    const inPath = [...openApiPath(route.path).matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const declared = (op.parameters as Json[]).filter((p) => p.in === 'path').map((p) => p.name);
    assert.equal(declared, inPath, `${route.method} ${route.path}`);
    const fields = [
      ...(op.parameters as Json[]).filter((p) => p.in === 'query').map((p) => p.name),
      ...Object.keys((Object.values((op.requestBody?.content ?? {}) as Json)[0] as Json | undefined)?.schema.properties ?? {}),
    ];
    assert.equal(fields.sort(), Object.keys(route.params).sort(), `${route.method} ${route.path}`);
  }
  assert.equal(document.paths['/api/v1/users/{user_id}/status'].get.operationId, 'getUsersByUserIdStatus');
  assert.equal(document.paths['/avatar/{email_or_id}'].get.operationId, 'serveAvatarByEmailOrId');
  assert.equal(document.paths['/api/v1/messages/{message_id}/reactions'].post.summary, 'Post messages {message_id} reactions');
});

test('no two paths differ only in the names of their parameters', () => {
  const shapes = Object.keys(document.paths).map((path) => path.replace(/\{\w+\}/g, '{}'));
  assert.equal([...new Set(shapes)].length, shapes.length);
});

test('JSON-encoded parameters say so, in the query and in form bodies', () => {
  const events = document.paths['/api/v1/events'].get.parameters as Json[];
  assert.equal(
    events.find((p) => p.name === 'dont_block'),
    { name: 'dont_block', in: 'query', required: false, content: { 'application/json': { schema: { type: 'boolean', default: false } } } },
  );
  assert.equal(
    events.find((p) => p.name === 'queue_id'),
    { name: 'queue_id', in: 'query', required: false, schema: { type: 'string' } },
  );
  const send = document.paths['/api/v1/messages'].post.requestBody.content['application/x-www-form-urlencoded'];
  assert.equal(send.schema.required, ['type', 'content']);
  assert.equal(send.encoding, { read_by_sender: { contentType: 'application/json' } });
  assert.ok(document.paths['/api/v1/user_uploads'].post.requestBody.content['multipart/form-data']);
});

test('every response schema compiles, and shared objects are components', () => {
  for (const route of allRoutes) if (!(route.response instanceof RawSuccess)) responseValidator(route);
  const strict = new Ajv2020({ strict: true, validateFormats: false });
  for (const [name, schema] of Object.entries(document.components.schemas as Json)) strict.addSchema(schema, `#/components/schemas/${name}`);
  for (const name of Object.keys(document.components.schemas)) assert.ok(strict.getSchema(`#/components/schemas/${name}`), name);
  const messages = document.paths['/api/v1/messages'].get.responses['200'].content['application/json'].schema;
  assert.equal(messages.properties.messages.items, { $ref: '#/components/schemas/Message' });
  assert.not.match(JSON.stringify(document), /"#\/\$defs\//);
});

test('the event schemas and the WebSocket frames are in the document', () => {
  for (const key of Object.keys(EVENT_SCHEMAS)) assert.ok(document.components.schemas[`Event.${key.replace('/', '.')}`], key);
  const socket = document.paths[SOCKET_PATH].get;
  assert.equal(
    socket.parameters.map((p: Json) => p.name),
    ['queue_id', 'last_event_id'],
  );
  assert.equal(
    Object.keys(socket['x-websocket'].closeCodes).map(Number).sort(),
    Object.values(CLOSE_REASONS)
      .map((c) => c.code)
      .sort(),
  );
  assert.equal(socket['x-websocket'].clientFrames.required, ['last_event_id']);
  assert.equal(socket['x-websocket'].serverFrames.anyOf[0], { $ref: '#/components/schemas/DeliveredEvent' });
});

test('the conformance check catches an answer that does not match its route', () => {
  const check = new ResponseCheck();
  const route = allRoutes.find((r) => r.method === 'POST' && r.path === '/api/v1/messages')!;
  const answer = (body: unknown) => ({ status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  check.inspect(route, answer({ result: 'success', msg: '', id: 42 }));
  assert.equal(check.violations(), []);
  check.inspect(route, answer({ result: 'success', msg: '', id: '42', extra: true }));
  const file = allRoutes.find((r) => r.path === '/user_avatars/:realm_id/:file_name')!;
  check.inspect(file, { status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'x' });
  check.inspectFrame(JSON.stringify({ type: 'message' }));
  const [wrongBody, wrongFile, wrongFrame] = check.violations().map((v) => v.problem);
  assert.is(wrongBody, 'POST /api/v1/messages: / must NOT have additional properties (extra); /id must be integer');
  assert.is(wrongFile, 'GET /user_avatars/:realm_id/:file_name: answered 200 text/plain, declared 200 image/png');
  assert.match(wrongFrame!, `frame of ${SOCKET_PATH}: / must have required property 'id'`);
});

test.run();
