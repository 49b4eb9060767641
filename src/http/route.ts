// What an endpoint declares: method, path, who may call it, its parameters, and a handler that
// returns the data of a success response (or a RawResponse for files). The router knows nothing of
// organizations or users: the layer above hands it a Gate, which names each request's scope (`S`,
// merged into the handler's context) and turns Basic credentials into a user (`U`).
import type { z } from 'zod';
import type { Config, Scheme } from '../config.ts';
import type { Fields, ParamsOf } from './params.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';
import type { Log } from '../log.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** What the router knows of a request before it has a scope. */
export interface RequestHead {
  host: string;
  /** Set when a trusted proxy reports the scheme the client used. */
  scheme: Scheme | null;
}

export interface Gate<S, U extends { id: number }> {
  /** The request's scope; throws an ApiError when there is none (an unknown organization). */
  scope(head: RequestHead): S;
  /** The user of these credentials in that scope; throws a 401 ApiError when there is none. */
  authenticate(scope: S, username: string, apiKey: string): U | Promise<U>;
  /** The user of a browser's session cookie in that scope (the /json/ routes); throws a 401 ApiError when there is none. */
  authenticateSession(scope: S, sessionId: string): Promise<U>;
}

export type RequestContext<F extends Fields, S, U> = S & {
  user: U;
  params: ParamsOf<F>;
  /** Path segments named in the route's path (`:user_id` → path.user_id; a final `/*` → path['*']). */
  path: Record<string, string>;
  files: UploadedFile[];
  /** The query string as sent, without its `?` (redirects that pass it on, as Zulip's avatars do). */
  query: string;
  /**
   * The client's address, behind trusted proxies the one they report; read from the socket when
   * first asked (a handler that answers later through `answer` asks before it returns).
   */
  ip: string;
  /** `cookie` and `csrfToken` (X-CSRFToken): on /json/ routes and routes with `cookies`. */
  headers: { userAgent: string; cookie?: string; csrfToken?: string; all?: Record<string, string> };
  /** The browser session that authenticated the request (a /json/ route), else null. */
  sessionId: string | null;
  /** The request body as sent, on routes with `rawBody` (empty elsewhere). */
  body: Buffer;
  /** This request's log: every line carries its id. Hand it to the code below that writes lines. */
  log: Log;
  /** Called if the client goes away before the response; long-polls use it to detach. */
  onAbort(callback: () => void): void;
  /**
   * Answers now, before the handler's promise settles (which is then ignored), or later for a
   * handler that returned ANSWER_PENDING: a fan-out completes thousands of parked polls in one
   * pass without a promise each.
   */
  answer(result: HandlerResult): void;
};

/** A non-JSON answer, such as a file download. */
export class RawResponse {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: Buffer | string,
    /** Set-Cookie values, one header each. */
    readonly cookies: readonly string[] = [],
  ) {}
}

/**
 * Serialized JSON as consecutive pieces: UTF-8 bytes shared by many answers (register's member
 * lists, encoded once), or text of this answer alone.
 */
export type JsonPiece = string | Buffer;

/**
 * Success fields already serialized (`"events":[...],"queue_id":"..."`), for hot responses whose
 * parts were encoded once and shared, such as a fan-out's events.
 */
export class JsonFields {
  constructor(readonly json: string) {}
}

/**
 * Success fields serialized in pieces, some of them bytes shared by many answers (register's
 * member lists): the router writes them one after another without joining them.
 */
export class JsonFieldPieces {
  constructor(readonly pieces: readonly JsonPiece[]) {}
}

/**
 * A value serialized already, for a part of an answer shared by many requests (register's member
 * lists): `jsonFields` writes its pieces as they are, one after another.
 */
export class RawJson {
  readonly pieces: readonly JsonPiece[];
  constructor(...pieces: JsonPiece[]) {
    this.pieces = pieces;
  }
}

/** JsonFields of an object whose values are JSON values or RawJson, in its key order; undefined ones left out. */
export function jsonFields(fields: Record<string, unknown>): JsonFields | JsonFieldPieces {
  const pieces: JsonPiece[] = [];
  let text = '';
  let first = true;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (!(value instanceof RawJson)) {
      text += JSON.stringify(value);
      continue;
    }
    // Text stays text: only shared bytes make an answer of pieces.
    for (const piece of value.pieces) {
      if (typeof piece === 'string') {
        text += piece;
      } else {
        pieces.push(text, piece);
        text = '';
      }
    }
  }
  if (pieces.length === 0) return new JsonFields(text);
  pieces.push(text);
  return new JsonFieldPieces(pieces);
}

export type HandlerResult = Record<string, unknown> | RawResponse | JsonFields | JsonFieldPieces;

/** A handler's result when it will call `answer` itself (a parked long-poll). */
export const ANSWER_PENDING = Symbol('answer pending');

export type HandlerOutcome = HandlerResult | Promise<HandlerResult> | typeof ANSWER_PENDING;

/** A success that is not Zulip's JSON envelope: a file, a page, a redirect or a document. */
export class RawSuccess {
  constructor(
    readonly status: 200 | 302,
    /** The media type, or a range of them such as `image/*`. */
    readonly contentType: string,
    readonly description: string,
    /** A page that may also answer with a redirect (a login form: the page again, or on to the app). */
    readonly orRedirect = false,
  ) {}
}

/**
 * What a success answers: the fields beside `result` and `msg` (a zod object; the OpenAPI
 * document and the tests' conformance check are made from it), or a RawSuccess.
 */
export type ResponseSpec = z.ZodObject | RawSuccess;

interface RouteBase<F extends Fields> {
  method: Method;
  path: string;
  params: F;
  /** Largest accepted request body in bytes, from the settings; defaults to MAX_BODY_BYTES. */
  maxBody?: (config: Config) => number;
  /** Skip the per-user/per-IP rate limits (file downloads, as Zulip does); failed credentials still count. */
  noRateLimit?: boolean;
  /** Every route has one; src/api/openapi.ts lists the routes that lack it, and a test fails on them. */
  response?: ResponseSpec;
  /** Takes uploaded files (multipart/form-data), which the handler gets as `files`. */
  uploads?: true;
  /**
   * Takes the body as sent, which the handler gets as `body` with every request header in
   * `headers.all` (incoming webhooks: a service's JSON payload); parameters come from the query alone.
   */
  rawBody?: true;
  /** Reads the request's cookies (pages that log in and out), which the handler gets as `headers.cookie`. */
  cookies?: true;
  /**
   * Set by the router on the /json/ twin it mounts of each /api/v1/ route, as Zulip's web app
   * calls them: authenticated by the session cookie, and every write by the CSRF token too.
   */
  viaSession?: true;
}

type Handler<F extends Fields, S, U> = (ctx: RequestContext<F, S, U>) => HandlerOutcome;

export type Route<S, U> =
  | (RouteBase<Fields> & { auth: 'user'; handler: Handler<Fields, S, U> })
  | (RouteBase<Fields> & { auth: 'optional'; handler: Handler<Fields, S, U | null> })
  | (RouteBase<Fields> & { auth: 'none'; handler: Handler<Fields, S, null> });

/** Route constructors for one scope and user type; each keeps its parameters' types for the handler. */
export function routeBuilders<S, U>() {
  return {
    userRoute<F extends Fields>(r: RouteBase<F> & { handler: Handler<F, S, U> }): Route<S, U> {
      return { ...r, auth: 'user' } as unknown as Route<S, U>;
    },
    optionalUserRoute<F extends Fields>(r: RouteBase<F> & { handler: Handler<F, S, U | null> }): Route<S, U> {
      return { ...r, auth: 'optional' } as unknown as Route<S, U>;
    },
    publicRoute<F extends Fields>(r: RouteBase<F> & { handler: Handler<F, S, null> }): Route<S, U> {
      return { ...r, auth: 'none' } as unknown as Route<S, U>;
    },
  };
}
