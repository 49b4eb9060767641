// The suite's check that the OpenAPI document cannot drift from the server: every answer a test
// server gives is validated against the document's response for its route (JSON Schema 2020-12,
// with ajv, so what is checked is the published document, not the zod it was made from). What
// does not conform is recorded; test/run.ts fails the run on any of it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { routeGroups } from '../../src/api/index.ts';
import { openApiDocument, openApiPath } from '../../src/api/openapi.ts';
import { SOCKET_PATH } from '../../src/gateway/socket.ts';
import type { Route } from '../../src/api/route.ts';
import { RawSuccess } from '../../src/http/route.ts';
import type { WrittenAnswer } from '../../src/http/server.ts';

/** JSON pointer escaping (RFC 6901). */
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

let document: { ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

/** The validator of the schema at `at` (a JSON pointer) in the document, compiled once. */
function validatorAt(at: string): ValidateFunction {
  if (!document) {
    // strict: false because the document is OpenAPI around JSON Schema (paths, operations, ...).
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(openApiDocument(routeGroups), 'openapi.json');
    document = { ajv, validators: new Map() };
  }
  let validate = document.validators.get(at);
  if (!validate) {
    validate = document.ajv.compile({ $ref: `openapi.json#${at}` });
    document.validators.set(at, validate);
  }
  return validate;
}

/** The validator of a route's JSON success body. */
export const responseValidator = (route: Route) =>
  validatorAt(`/paths/${pointer(openApiPath(route.path), route.method.toLowerCase(), 'responses', '200', 'content', 'application/json', 'schema')}`);

/** The validator of what the WebSocket gateway sends. */
const serverFrameValidator = () => validatorAt(`/paths/${pointer(SOCKET_PATH, 'get', 'x-websocket', 'serverFrames')}`);

const describeErrors = (validate: ValidateFunction) =>
  [
    ...new Set(
      (validate.errors ?? []).map(
        (e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      ),
    ),
  ]
    .slice(0, 5)
    .join('; ');

/** Whether a Content-Type is in a media range such as `image/*`. */
function inRange(range: string, contentType: string): boolean {
  const [type, subtype] = range.split('/');
  const [actualType, actualSubtype] = contentType.split(';')[0]!.trim().split('/');
  return (type === '*' || type === actualType) && (subtype === '*' || subtype === actualSubtype);
}

export class ResponseCheck {
  private readonly found = new Map<string, string>();
  checked = 0;

  /** The server hook: checks one answer of `route` (error pages a handler returns are not successes). */
  readonly inspect = (route: Route, answer: WrittenAnswer): void => {
    const { response } = route;
    if (!response || answer.status >= 400) return;
    this.checked++;
    const what = `${route.method} ${route.path}`;
    const contentType = answer.headers['Content-Type'] ?? '';
    if (response instanceof RawSuccess) {
      const conforms =
        (answer.status === 302 && response.orRedirect) ||
        (answer.status === response.status && (response.status === 302 || inRange(response.contentType, contentType)));
      if (!conforms) this.record(what, `answered ${answer.status} ${contentType}, declared ${response.status} ${response.contentType}`, answer.body);
      return;
    }
    if (!contentType.startsWith('application/json')) return this.record(what, `answered ${answer.status} ${contentType}, declared JSON`, answer.body);
    const validate = responseValidator(route);
    if (!validate(JSON.parse(String(answer.body)))) this.record(what, describeErrors(validate), answer.body);
  };

  /** Checks one frame a test received from the WebSocket gateway. */
  inspectFrame(text: string): void {
    this.checked++;
    const validate = serverFrameValidator();
    if (!validate(JSON.parse(text))) this.record(`frame of ${SOCKET_PATH}`, describeErrors(validate), text);
  }

  /** What did not conform, each with the start of one body that showed it. */
  violations(): { problem: string; body: string }[] {
    return [...this.found].map(([problem, body]) => ({ problem, body }));
  }

  private record(what: string, problem: string, body: string | Buffer): void {
    const key = `${what}: ${problem}`;
    if (!this.found.has(key)) this.found.set(key, String(body).slice(0, 600));
  }
}

/** The run's check, on every server the tests start. */
export const runCheck = new ResponseCheck();
