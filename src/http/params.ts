// Request parameters the way Zulip clients send them: strings, with every non-string value
// JSON-encoded ("true", "42", '["a"]'). Each endpoint declares its fields; this module decodes,
// validates with zod, and reports errors in Zulip's words.
import { z } from 'zod';
import { ApiError, invalidArgument, missingArgument } from '../errors.ts';

/**
 * Decodes the usual well-formed value of a plain field without zod, or returns undefined for
 * anything else, which then takes the full path (and gets its error wording there). Every
 * long-poll passes here, and zod plus JSON.parse cost more than the rest of its parsing.
 */
type QuickDecode = (value: string) => unknown;

/** One declared parameter; `Out` is what the handler receives (with `undefined` when optional). */
export class Field<Out> {
  constructor(
    /** 'json' values are JSON-decoded before validation; 'string' values are taken as sent. */
    readonly kind: 'string' | 'json',
    readonly schema: z.ZodType<unknown>,
    readonly required: boolean,
    readonly defaultValue?: unknown,
    readonly quick?: QuickDecode,
  ) {}
  optional(): Field<Out | undefined> {
    return new Field(this.kind, this.schema, false, undefined, this.quick);
  }
  /** Optional, and this value when absent. */
  default(value: Exclude<Out, undefined>): Field<Exclude<Out, undefined>> {
    return new Field(this.kind, this.schema, false, value, this.quick);
  }
}

// JSON integers that are exact in a double; leading zeros are not JSON.
const PLAIN_INT = /^-?(?:0|[1-9]\d{0,14})$/;
const quickInt: QuickDecode = (value) => (PLAIN_INT.test(value) ? Number(value) : undefined);
const quickBool: QuickDecode = (value) => (value === 'true' ? true : value === 'false' ? false : undefined);
const quickString: QuickDecode = (value) => value;

/** A string; with no schema of its own, any string is valid. */
export const str = (schema?: z.ZodType<string>) => new Field<string>('string', schema ?? z.string(), true, undefined, schema ? undefined : quickString);
export const json = <T>(schema: z.ZodType<T>) => new Field<T>('json', schema, true);
/** A string of at most `max` characters as Zulip counts them (code points, not UTF-16 units). */
export const maxChars = (max: number) =>
  z.string().check((ctx) => {
    if ([...ctx.value].length > max) ctx.issues.push({ code: 'too_big', origin: 'string', maximum: max, inclusive: true, input: ctx.value });
  });
/** A string that must be one of `values`. */
export const choice = <const T extends string>(values: readonly [T, ...T[]]) => new Field<T>('string', z.enum(values), true);
export const int = () => new Field<number>('json', z.number().int(), true, undefined, quickInt);
export const bool = () => new Field<boolean>('json', z.boolean(), true, undefined, quickBool);
export const intList = () => json(z.array(z.number().int()));

export type Fields = Record<string, Field<any>>;
export type ParamsOf<F extends Fields> = { [K in keyof F]: F[K] extends Field<infer Out> ? Out : never };

export type RawParams = Map<string, string>;

function describeFailure(name: string, issue: z.core.$ZodIssue | undefined): string {
  // Zulip's validators name list items `x[0]` and dict values `x["key"]`.
  const path = name + (issue?.path ?? []).map((p) => (typeof p === 'number' ? `[${p}]` : `["${String(p)}"]`)).join('');
  if (issue?.code === 'invalid_type') {
    const expected = (issue as { expected?: string }).expected;
    if (expected === 'number' || expected === 'int') return `${path} is not an integer`;
    if (expected === 'boolean') return `${path} is not a boolean`;
    if (expected === 'array') return `${path} is not a list`;
    if (expected === 'string') return `${path} is not a string`;
    if (expected === 'object' || expected === 'record') return `${path} is not a dict`;
  }
  if (issue?.code === 'too_big' && (issue as { origin?: string }).origin === 'string') {
    return `${path} is too long (limit: ${(issue as { maximum: number }).maximum} characters)`;
  }
  if (issue?.code === 'too_small' && issue.path.length === 0 && (issue as { origin?: string }).origin === 'string') {
    return (issue as { minimum: number }).minimum === 1 ? `${name} cannot be blank` : `${name} is too short.`;
  }
  if (issue && issue.message && !issue.message.startsWith('Invalid') && !issue.message.startsWith('Too')) return issue.message;
  return `Invalid ${name}`;
}

/** Decodes and validates `raw` against `fields`; also returns the names it did not know. */
export function parseParams<F extends Fields>(fields: F, raw: RawParams): { params: ParamsOf<F>; ignored: string[] } {
  const params: Record<string, unknown> = {};
  let known = 0;
  for (const name in fields) {
    const field = fields[name]!;
    const value = raw.get(name);
    if (value === undefined) {
      if (field.required) throw missingArgument(name);
      params[name] = field.defaultValue;
      continue;
    }
    known++;
    const quick = field.quick?.(value);
    if (quick !== undefined) {
      params[name] = quick;
      continue;
    }
    let decoded: unknown = value;
    if (field.kind === 'json') {
      try {
        decoded = JSON.parse(value);
      } catch {
        throw invalidArgument(`Argument "${name}" is not valid JSON.`, name);
      }
    }
    const result = field.schema.safeParse(decoded);
    if (!result.success) throw invalidArgument(describeFailure(name, result.error.issues[0]), name);
    params[name] = result.data;
  }
  const ignored = known === raw.size ? [] : [...raw.keys()].filter((k) => !(k in fields));
  return { params: params as ParamsOf<F>, ignored };
}

/** With the u flag a surrogate pair is one code point: this finds only unpaired halves. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Turns an `application/x-www-form-urlencoded` string into raw params (last value wins, as in Django). */
export function parseUrlEncoded(text: string, into: RawParams = new Map()): RawParams {
  // Every re-parked long-poll passes here with a short query: split it by hand, as URLSearchParams
  // would (pairs by `&`, name and value at the first `=`, `+` a space), without its iterator and
  // copies. decodeURIComponent refuses what URLSearchParams would repair (a stray `%`, bad
  // UTF-8): such a query is parsed again by URLSearchParams, which sets the same values over the
  // pairs already read.
  try {
    // A lone surrogate (never from decoded bytes, but a string can hold one) becomes U+FFFD there.
    if (LONE_SURROGATE.test(text)) throw new URIError('not well-formed');
    for (const pair of text.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      into.set(decodeFormPart(eq < 0 ? pair : pair.slice(0, eq)), eq < 0 ? '' : decodeFormPart(pair.slice(eq + 1)));
    }
  } catch {
    for (const [k, v] of new URLSearchParams(text)) into.set(k, v);
  }
  return into;
}

function decodeFormPart(part: string): string {
  if (part.includes('+')) part = part.replaceAll('+', ' ');
  return part.includes('%') ? decodeURIComponent(part) : part;
}

/** A JSON request body: strings stay strings, anything else is re-encoded as Zulip clients would send it. */
export function parseJsonBody(text: string, into: RawParams = new Map()): RawParams {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('Malformed JSON', 'BAD_REQUEST');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError('Malformed JSON', 'BAD_REQUEST');
  for (const [k, v] of Object.entries(body)) into.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return into;
}

/**
 * The row id a URL path segment names; -1, which names no row, for anything but digits within
 * PostgreSQL's integer (Zulip's lookup of an id out of range finds nothing, so it is its "no such").
 */
export function pathInt(segment: string | undefined): number {
  return segment && /^\d+$/.test(segment) && Number(segment) <= 2 ** 31 - 1 ? Number(segment) : -1;
}

/** A numeric id from the URL path; Zulip's URL patterns only match digits, so anything else is `invalid`. */
export function pathId(segment: string | undefined, invalid: () => Error): number {
  const id = pathInt(segment);
  if (id < 0) throw invalid();
  return id;
}
