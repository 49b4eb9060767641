// The HTTP front door on uWebSockets.js: routing (with 405s), body reading with a size limit,
// parameter decoding, Basic auth through the Gate of the layer above, rate limits, and the one place
// where results and ApiErrors become Zulip's JSON envelope.
import uWS, { closeApp as closeUws, listenExclusive } from './uws.ts';
import type { Config } from '../config.ts';
import { log, RequestLog } from '../log.ts';
import { ApiError, notLoggedIn, routeNotFound } from '../errors.ts';
import { decodeBody, readBody } from './body.ts';
import { compress, COMPRESS_MIN_BYTES, preferredCoding } from './compression.ts';
import type { TrustedProxies } from './client-address.ts';
import { authenticateBasic } from './credentials.ts';
import { checkCsrf, CSRF_COOKIE, parseCookies, SESSION_COOKIE } from '../auth/web-sessions.ts';
import {
  allHeaders,
  clientOrigin,
  markAborted,
  openExchange,
  openPending,
  requestId,
  writeResponse,
  type Exchange,
  type ResponseBody,
  type RequestObservers,
  type ResponseObserver,
} from './exchange.ts';
import { parseParams, parseUrlEncoded, type RawParams } from './params.ts';
import { rateLimitHeaders, refusal, type RateDecision, type RateLimiter } from './rate-limit.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';
import type { StartingListener } from './starting.ts';
import {
  ANSWER_PENDING,
  JsonFieldPieces,
  JsonFields,
  type JsonPiece,
  RawResponse,
  type Gate,
  type HandlerOutcome,
  type HandlerResult,
  type Route,
} from './route.ts';

const NO_BODY = Buffer.alloc(0);

export interface HttpServer {
  uws: uWS.TemplatedApp;
  port: number;
  /** Stops accepting connections; requests arriving on open connections get 503 from now on. */
  stopAccepting(): void;
  /** Waits for the requests in progress to be answered. */
  drain(timeoutMs: number): Promise<void>;
  close(): void;
}

export interface HttpOptions<S, U extends { id: number }> {
  routes: Route<S, U>[];
  gate: Gate<S, U>;
  config: Config;
  /** Null when rate limiting is off. */
  limits: { user: RateLimiter; ip: RateLimiter } | null;
  proxies: TrustedProxies;
  /** Metrics and access log of every request the router answers. */
  observers: RequestObservers;
  /** Mounts handlers outside the router (the WebSocket gateway, the CLI's control route) before the catch-all 404. */
  attach?: (uws: uWS.TemplatedApp) => void;
  /** Sees every answer a handler returned, as written (the tests check each against its route's OpenAPI response). */
  inspectAnswer?: (route: Route<S, U>, answer: WrittenAnswer) => void;
  /** The listener that held the port while the server started: released just before this one listens on its port. */
  takeOver?: StartingListener;
}

export interface WrittenAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
  cookies?: readonly string[];
}

/** Requests in progress, and whether the server is shutting down. */
interface Lifecycle {
  inFlight: Set<Exchange>;
  closing: boolean;
}

const JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json' };

export function startHttpServer<S, U extends { id: number }>(options: HttpOptions<S, U>): Promise<HttpServer> {
  const uws = uWS.App();
  const lifecycle: Lifecycle = { inFlight: new Set(), closing: false };
  const dispatch = dispatcher(options, lifecycle);
  for (const [pattern, methods] of routeTable(withSessionTwins(options.routes))) uws.any(pattern, routeHandler(pattern, methods, options, lifecycle, dispatch));
  options.attach?.(uws);
  uws.any('/*', (res, req) => answerNotFound(res, options.observers.unmatched(req.getCaseSensitiveMethod(), req.getUrl())));
  return listen(uws, options.config, lifecycle, options.takeOver);
}

const API_PREFIX = '/api/v1/';
const JSON_PREFIX = '/json/';

/** Each /api/v1/ route, and its /json/ twin for the web app's session (Zulip's two doors to one view). */
function withSessionTwins<R extends { path: string }>(routes: R[]): R[] {
  const twins = routes
    .filter((r) => r.path.startsWith(API_PREFIX))
    .map((r) => ({ ...r, path: `${JSON_PREFIX}${r.path.slice(API_PREFIX.length)}`, viaSession: true as const }));
  return [...routes, ...twins];
}

/** Routes by path, then method; two routes for one method and path are a programming error. */
function routeTable<R extends { method: string; path: string }>(routes: R[]): Map<string, Map<string, R>> {
  const byPath = new Map<string, Map<string, R>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Map<string, R>();
    if (methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  return byPath;
}

type Dispatch<S, U> = (ex: Exchange, route: Route<S, U>, raw: RawParams, path: Record<string, string>, query: string, hasBody: boolean) => void;

/** The synchronous part of a request: everything uWS lets us read only before the handler returns. */
function routeHandler<S, U extends { id: number }>(
  pattern: string,
  methods: Map<string, Route<S, U>>,
  options: HttpOptions<S, U>,
  lifecycle: Lifecycle,
  dispatch: Dispatch<S, U>,
): (res: uWS.HttpResponse, req: uWS.HttpRequest) => void {
  const paramNames = [...pattern.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  // A pattern ending in `/*` hands the rest of the path (several segments) to the handler.
  const wildcardPrefix = pattern.endsWith('/*') ? pattern.slice(0, -1) : null;
  const observers = new Map<string, ResponseObserver>([...methods.values()].map((r) => [r.method, options.observers.route(r.method, r.path)]));
  return (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const route = methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined);
    const ex = openExchange(res, req, options.proxies, route ? observers.get(route.method)! : options.observers.unmatched(method, req.getUrl()));
    if (route?.rawBody) ex.allHeaders = allHeaders(req);
    if (route?.viaSession || route?.cookies) {
      ex.cookie = req.getHeader('cookie');
      ex.csrfHeader = req.getHeader('x-csrftoken');
    }
    res.onAborted(() => {
      markAborted(ex);
      lifecycle.inFlight.delete(ex);
      for (const cb of ex.abortHandlers) cb();
    });
    const path: Record<string, string> = {};
    for (let i = 0; i < paramNames.length; i++) path[paramNames[i]!] = decodePath(req.getParameter(i) ?? '');
    if (wildcardPrefix !== null) path['*'] = decodePath(req.getUrl().slice(wildcardPrefix.length));
    if (!route) {
      const body = JSON.stringify({ result: 'error', msg: 'Method Not Allowed', allowed_methods: [...methods.keys()] });
      writeResponse(ex, 405, { ...JSON_HEADERS, Allow: [...methods.keys()].join(', ') }, body);
      return;
    }
    const query = req.getQuery() ?? '';
    let raw: RawParams;
    try {
      raw = parseUrlEncoded(query);
    } catch {
      raw = new Map();
    }
    lifecycle.inFlight.add(ex);
    dispatch(ex, route, raw, path, query, method !== 'GET' && method !== 'HEAD');
  };
}

/** Percent-decodes part of a URL path; a malformed escape leaves it as sent (it then matches nothing). */
function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The rest: body, scope, user, rate limit, parameters, handler, answer. It runs synchronously as
 * far as it can (no body, a user already known, a handler that answers or parks at once): a
 * re-parked long-poll, the most frequent request, then costs no promise.
 */
function dispatcher<S, U extends { id: number }>(options: HttpOptions<S, U>, lifecycle: Lifecycle): Dispatch<S, U> {
  const { gate, limits, config } = options;

  function identify(ex: Exchange, scope: S, route: Route<S, U>, sessionId: string | undefined): U | null | Promise<U> {
    if (route.auth === 'none') return null;
    if (route.viaSession) {
      if (sessionId) return gate.authenticateSession(scope, sessionId);
      if (route.auth === 'optional') return null;
      throw notLoggedIn();
    }
    if (!ex.authorization) {
      if (route.auth === 'optional') return null;
      throw notLoggedIn();
    }
    return authenticateBasic(gate, scope, ex.authorization, () => clientOrigin(ex).ip, limits?.ip ?? null);
  }

  function spendRateLimit(ex: Exchange, route: Route<S, U>, user: U | null): RateDecision | undefined {
    if (!limits || route.noRateLimit) return undefined;
    const decision = user ? limits.user.hit(`u${user.id}`) : limits.ip.hit(clientOrigin(ex).ip);
    if (!decision.allowed) throw refusal(decision);
    return decision;
  }

  function fail(ex: Exchange, err: unknown, rate: RateDecision | undefined, route: Route<S, U>): void {
    answerError(ex, err, rate, route);
    lifecycle.inFlight.delete(ex);
  }

  function scoped(ex: Exchange, route: Route<S, U>, raw: RawParams, path: Record<string, string>, query: string, files: UploadedFile[]): void {
    try {
      const scope = gate.scope({ host: ex.host, scheme: ex.origin?.scheme ?? null });
      let sessionId: string | undefined;
      if (route.viaSession) {
        const cookies = parseCookies(ex.cookie ?? '');
        // Django's CsrfViewMiddleware: every write that a browser's cookies could authenticate.
        if (route.method !== 'GET') checkCsrf(cookies.get(CSRF_COOKIE), ex.csrfHeader);
        sessionId = cookies.get(SESSION_COOKIE);
      }
      const user = identify(ex, scope, route, sessionId);
      const session = route.viaSession && route.auth !== 'none' ? (sessionId ?? null) : null;
      if (user instanceof Promise) {
        clientOrigin(ex); // read while uWS holds the response: a wrong key counts against it later
        user.then(
          (known) => handle(ex, route, raw, path, query, files, scope, known, session),
          (err: unknown) => fail(ex, err, undefined, route),
        );
      } else {
        handle(ex, route, raw, path, query, files, scope, user, session);
      }
    } catch (err) {
      fail(ex, err, undefined, route);
    }
  }

  function handle(
    ex: Exchange,
    route: Route<S, U>,
    raw: RawParams,
    path: Record<string, string>,
    query: string,
    files: UploadedFile[],
    scope: S,
    user: U | null,
    sessionId: string | null,
  ): void {
    let rate: RateDecision | undefined;
    try {
      ex.userId = user?.id ?? null;
      rate = spendRateLimit(ex, route, user);
      const { params, ignored } = parseParams(route.params, raw);
      const inspect = options.inspectAnswer;
      // A /json/ twin answers as its /api/v1/ route, which the inspector knows.
      const inspected = route.viaSession ? { ...route, path: `${API_PREFIX}${route.path.slice(JSON_PREFIX.length)}` } : route;
      const answer = answerer(ex, rate, ignored, lifecycle, inspect && ((written: WrittenAnswer) => inspect(inspected, written)));
      const context = new HandlerContext(
        ex,
        user,
        params,
        path,
        files,
        query,
        { userAgent: ex.userAgent, cookie: ex.cookie, csrfToken: ex.csrfHeader, all: ex.allHeaders },
        ex.rawBody ?? NO_BODY,
        user ? sessionId : null,
        new RequestLog(ex.seq),
        abortRegistrar(ex),
        answer,
      );
      // The scope's fields added to an object of fixed shape: `{ ...scope, user, ... }` made V8 add
      // every later field one by one to a copy of the scope, the costliest line of a GET /events.
      const result = (route.handler as (ctx: unknown) => HandlerOutcome)(Object.assign(context, scope));
      if (result === ANSWER_PENDING) return;
      if (result instanceof Promise) {
        clientOrigin(ex); // the handler may ask for `ip` after it waited, when uWS may have let the response go
        result.then(
          (value) => {
            if (!ex.done) answer(value);
            lifecycle.inFlight.delete(ex);
          },
          (err: unknown) => fail(ex, err, rate, route),
        );
      } else if (!ex.done) {
        answer(result);
      }
    } catch (err) {
      fail(ex, err, rate, route);
    }
  }

  return (ex, route, raw, path, query, hasBody) => {
    try {
      // Clients retry a 503; a restarted server will have their queues back.
      if (lifecycle.closing) throw new ApiError('The server is restarting', 'SERVER_RESTARTING', 503, {}, { Connection: 'close' });
      if (!hasBody) return scoped(ex, route, raw, path, query, []);
      clientOrigin(ex); // read while uWS holds the response, before the body
      readBody(ex, route.maxBody?.(config) ?? config.MAX_BODY_BYTES).then(
        (body) => {
          const files: UploadedFile[] = [];
          try {
            if (route.rawBody) ex.rawBody = body;
            else decodeBody(body, ex.contentType, raw, files);
          } catch (err) {
            return fail(ex, err, undefined, route);
          }
          scoped(ex, route, raw, path, query, files);
        },
        (err: unknown) => fail(ex, err, undefined, route),
      );
    } catch (err) {
      fail(ex, err, undefined, route);
    }
  };
}

/**
 * What a handler is called with (RequestContext), the scope's fields added to it. A class: its
 * shape is fixed, and `ip` a getter on its prototype that reads the socket's address only when
 * asked (a getter in an object literal made V8 build the literal in its runtime, ten times slower).
 */
class HandlerContext<U> {
  readonly #exchange: Exchange;

  constructor(
    exchange: Exchange,
    readonly user: U | null,
    readonly params: unknown,
    readonly path: Record<string, string>,
    readonly files: UploadedFile[],
    readonly query: string,
    readonly headers: { userAgent: string; cookie?: string; csrfToken?: string; all?: Record<string, string> },
    readonly body: Buffer,
    readonly sessionId: string | null,
    readonly log: RequestLog,
    readonly onAbort: (cb: () => void) => void,
    readonly answer: (result: HandlerResult) => void,
  ) {
    this.#exchange = exchange;
  }

  get ip(): string {
    return clientOrigin(this.#exchange).ip;
  }
}

// These two return anonymous functions on purpose: tsx compiles with keepNames, which gives
// every named closure (`const answer = () => ...`) a defineProperty call, and each request
// (every re-parked long-poll) makes both.
function answerer(
  ex: Exchange,
  rate: RateDecision | undefined,
  ignored: string[],
  lifecycle: Lifecycle,
  inspect?: (answer: WrittenAnswer) => void,
): (result: HandlerResult) => void {
  return (result) => {
    let answer: Answer;
    if (result instanceof RawResponse) {
      answer = { status: result.status, headers: { ...(rate ? rateLimitHeaders(rate) : {}), ...result.headers }, body: result.body, cookies: result.cookies };
    } else {
      const headers = rate ? { ...rateLimitHeaders(rate), ...JSON_HEADERS } : JSON_HEADERS;
      if (result instanceof JsonFields) {
        answer = { status: 200, headers, body: fieldsBody(result, ignored) };
      } else if (result instanceof JsonFieldPieces) {
        answer = { status: 200, headers, body: fieldsPieces(result.pieces, ignored) };
      } else {
        const body = { result: 'success', msg: '', ...result, ...(ignored.length ? { ignored_parameters_unsupported: ignored } : {}) };
        answer = { status: 200, headers, body: JSON.stringify(body) };
      }
    }
    if (inspect) inspect(isPieces(answer.body) ? { ...answer, body: Buffer.concat(answer.body) } : (answer as WrittenAnswer));
    const { status, headers, body, cookies } = answer;
    const compressible = typeof body === 'string' || isPieces(body);
    const coding = compressible && bodyLength(body) >= COMPRESS_MIN_BYTES ? preferredCoding(ex.acceptEncoding) : null;
    if (coding === null) {
      writeResponse(ex, status, headers, body, cookies);
      lifecycle.inFlight.delete(ex);
      return;
    }
    compress(
      isPieces(body) ? Buffer.concat(body) : body,
      coding,
      (compressed) => {
        writeResponse(ex, status, { ...headers, 'Content-Encoding': coding, Vary: 'Accept-Encoding' }, compressed, cookies);
        lifecycle.inFlight.delete(ex);
      },
      (err) => {
        log.warn('compressing an answer failed; sent uncompressed', { request_id: requestId(ex), error: err.message });
        writeResponse(ex, status, headers, body, cookies);
        lifecycle.inFlight.delete(ex);
      },
    );
  };
}

/** An answer as the router writes it: a body in pieces stays in pieces. */
interface Answer extends Omit<WrittenAnswer, 'body'> {
  body: ResponseBody;
}

const isPieces = (body: ResponseBody): body is readonly Buffer[] => Array.isArray(body);

/** The body's length: characters of a string (enough to decide on compression), else bytes. */
function bodyLength(body: ResponseBody): number {
  if (!isPieces(body)) return body.length;
  let length = 0;
  for (const piece of body) length += piece.length;
  return length;
}

/** The success envelope around fields serialized already (a long-poll's events). */
export function fieldsBody(result: JsonFields, ignored: readonly string[]): string {
  return `{"result":"success","msg":"",${result.json}${ignoredField(ignored)}}`;
}

/**
 * The success envelope around fields serialized in pieces, as UTF-8 pieces: the shared bytes as
 * they are, the text between them joined and encoded once.
 */
function fieldsPieces(pieces: readonly JsonPiece[], ignored: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  let text = '{"result":"success","msg":"",';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      text += piece;
      continue;
    }
    if (text) out.push(Buffer.from(text));
    out.push(piece);
    text = '';
  }
  out.push(Buffer.from(`${text}${ignoredField(ignored)}}`));
  return out;
}

const ignoredField = (ignored: readonly string[]) => (ignored.length ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}` : '');

function abortRegistrar(ex: Exchange): (cb: () => void) => void {
  return (cb) => {
    ex.abortHandlers.push(cb);
  };
}

/**
 * PostgreSQL refuses NUL in text (SQLSTATE 22021). Endpoints that Zulip answers with their own
 * wording check for it first; anywhere else the database's refusal is still the client's error.
 */
function isNulByteError(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? '')}` : '';
  return /invalid byte sequence for encoding "UTF8": 0x00|22021/.test(text);
}

/** An ApiError as Zulip's error envelope; anything else as a 500 that names nothing but is logged. */
/** Zulip's challenge on /json/: a browser asked for Basic credentials would show its own login prompt. */
const SESSION_CHALLENGE = { 'WWW-Authenticate': 'Session realm="zulip"' };

function answerError(ex: Exchange, err: unknown, rate: RateDecision | undefined, route: { method: string; path: string; viaSession?: true }): void {
  if (isNulByteError(err)) err = new ApiError('Null bytes are not allowed', 'BAD_REQUEST', 400);
  if (err instanceof ApiError) {
    const challenge = route.viaSession && err.headers['WWW-Authenticate'] ? SESSION_CHALLENGE : {};
    const headers = { ...(rate && err.status !== 429 ? rateLimitHeaders(rate) : {}), ...err.headers, ...challenge, ...JSON_HEADERS };
    writeResponse(ex, err.status, headers, JSON.stringify({ result: 'error', msg: err.message, code: err.code, ...err.extra }));
    return;
  }
  const id = requestId(ex);
  log.error('unhandled error', { request_id: id, route: `${route.method} ${route.path}`, error: err instanceof Error ? err.stack : String(err) });
  // The body stays Zulip's; the header lets whoever got the 500 point at its log line.
  writeResponse(ex, 500, { ...JSON_HEADERS, 'X-Request-Id': id }, JSON.stringify({ result: 'error', msg: 'Internal server error', code: 'BAD_REQUEST' }));
}

function answerNotFound(res: uWS.HttpResponse, observer: ResponseObserver): void {
  const ex = openPending(res, observer);
  res.onAborted(() => markAborted(ex));
  const err = routeNotFound();
  writeResponse(ex, err.status, JSON_HEADERS, JSON.stringify({ result: 'error', msg: err.message, code: err.code }));
}

function listen(uws: uWS.TemplatedApp, config: Pick<Config, 'HOST' | 'PORT'>, lifecycle: Lifecycle, takeOver?: StartingListener): Promise<HttpServer> {
  takeOver?.close();
  const port = takeOver?.port ?? config.PORT;
  return new Promise((resolve, reject) => {
    listenExclusive(uws, config.HOST, port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${config.HOST}:${port}`));
      let listening: uWS.us_listen_socket | null = socket;
      const stopListening = () => {
        if (listening) uWS.us_listen_socket_close(listening);
        listening = null;
      };
      resolve({
        uws,
        port: uWS.us_socket_local_port(socket),
        stopAccepting() {
          lifecycle.closing = true;
          stopListening();
        },
        async drain(timeoutMs) {
          const deadline = Date.now() + timeoutMs;
          while (lifecycle.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        },
        close() {
          stopListening();
          closeUws(uws);
        },
      });
    });
  });
}
