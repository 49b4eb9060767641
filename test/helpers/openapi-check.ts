// The suite's check that the OpenAPI document cannot drift from the server: every answer a test
// server gives is validated against the document's response for its route (JSON Schema 2020-12,
// with ajv, so what is checked is the published document, not the zod it was made from). What
// does not conform is recorded; test/run.ts fails the run on any of it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { routeGroups } from '../../src/api/index.ts';
import { openApiDocument, openApiPath } from '../../src/api/openapi.ts';
import type { Route } from '../../src/api/route.ts';
import { RawSuccess } from '../../src/http/route.ts';
import type { WrittenAnswer } from '../../src/http/server.ts';

/** JSON pointer escaping (RFC 6901). */
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

let document: { ajv: Ajv2020; validators: Map<Route, ValidateFunction> } | undefined;

/** The validator of a route's JSON success body, compiled from the document once per route. */
export function responseValidator(route: Route): ValidateFunction {
  if (!document) {
    // strict: false because the document is OpenAPI around JSON Schema (paths, operations, ...).
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(openApiDocument(routeGroups), 'openapi.json');
    document = { ajv, validators: new Map() };
  }
  let validate = document.validators.get(route);
  if (!validate) {
    const at = pointer(openApiPath(route.path), route.method.toLowerCase(), 'responses', '200', 'content', 'application/json', 'schema');
    validate = document.ajv.compile({ $ref: `openapi.json#/paths/${at}` });
    document.validators.set(route, validate);
  }
  return validate;
}

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
    const contentType = answer.headers['Content-Type'] ?? '';
    if (response instanceof RawSuccess) {
      if (answer.status !== response.status || (response.status !== 302 && !inRange(response.contentType, contentType))) this.record(route, `answered ${answer.status} ${contentType}, declared ${response.status} ${response.contentType}`, answer.body);
      return;
    }
    if (!contentType.startsWith('application/json')) return this.record(route, `answered ${answer.status} ${contentType}, declared JSON`, answer.body);
    const validate = responseValidator(route);
    if (!validate(JSON.parse(String(answer.body)))) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
      this.record(route, [...new Set(problems)].slice(0, 5).join('; '), answer.body);
    }
  };

  /** What did not conform, each with the start of one body that showed it. */
  violations(): { problem: string; body: string }[] {
    return [...this.found].map(([problem, body]) => ({ problem, body }));
  }

  private record(route: Route, problem: string, body: string | Buffer): void {
    const key = `${route.method} ${route.path}: ${problem}`;
    if (!this.found.has(key)) this.found.set(key, String(body).slice(0, 600));
  }
}

/** The run's check, on every server the tests start. */
export const runCheck = new ResponseCheck();
