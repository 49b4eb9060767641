// The HTTP front door on uWebSockets.js: routing (with 405s), body reading with a size limit,
// parameter decoding, realm and Basic-auth resolution, rate limits, and the one place where
// results and ApiErrors become Zulip's JSON envelope.
import uWS, { closeApp as closeUws, listenExclusive } from './uws.ts';
import { randomUUID } from 'node:crypto';
import type { User } from '../db/generated/client.ts';
import type { App } from '../app.ts';
import { parseBasicAuth } from '../auth/api-keys.ts';
import { log } from '../log.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { ApiError, invalidSubdomain, notLoggedIn, unauthorized } from '../errors.ts';
import { parseJsonBody, parseParams, parseUrlEncoded, type RawParams } from './params.ts';
import type { RateDecision } from './rate-limit.ts';
import { JsonFields, RawResponse, type HandlerResult, type Route, type UploadedFile } from './route.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  413: 'Payload Too Large', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

const READ_HEADERS = ['host', 'authorization', 'content-type', 'user-agent'] as const;

interface Exchange {
  res: uWS.HttpResponse;
  aborted: boolean;
  done: boolean;
  abortHandlers: (() => void)[];
  headers: Record<string, string>;
}

export interface HttpServer {
  uws: uWS.TemplatedApp;
  port: number;
  /** Stops accepting connections; requests arriving on open connections get 503 from now on. */
  stopAccepting(): void;
  /** Waits for the requests in progress to be answered. */
  drain(timeoutMs: number): Promise<void>;
  close(): void;
}

export function statusLine(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? 'Status'}`;
}

/** Writes a whole response in one corked batch; a no-op if the client already left. */
export function writeResponse(ex: Exchange, status: number, headers: Readonly<Record<string, string>>, body: string | Buffer): void {
  if (ex.aborted || ex.done) return;
  ex.done = true;
  ex.res.cork(() => {
    ex.res.writeStatus(statusLine(status));
    for (const k in headers) ex.res.writeHeader(k, headers[k]!);
    ex.res.end(body);
  });
}

/**
 * PostgreSQL refuses NUL in text (SQLSTATE 22021). Endpoints that Zulip answers with their own
 * wording check for it first; anywhere else the database's refusal is still the client's error.
 */
function isNulByteError(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? '')}` : '';
  return /invalid byte sequence for encoding "UTF8": 0x00|22021/.test(text);
}

function errorBody(err: ApiError): string {
  return JSON.stringify({ result: 'error', msg: err.message, code: err.code, ...err.extra });
}

const JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json' };

function rateHeaders(d: RateDecision): Record<string, string> {
  return { 'X-RateLimit-Limit': String(d.limit), 'X-RateLimit-Remaining': String(d.remaining), 'X-RateLimit-Reset': String(d.reset) };
}

function rateLimited(d: RateDecision): ApiError {
  const retry = Math.max(d.retryAfter, 0.001);
  return new ApiError('API usage exceeded rate limit', 'RATE_LIMIT_HIT', 429, { 'retry-after': retry }, { 'Retry-After': String(retry), ...rateHeaders(d) });
}

function readBody(ex: Exchange, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    ex.res.onData((chunk, isLast) => {
      if (size < 0) return;
      size += chunk.byteLength;
      if (size > limit) {
        size = -1;
        reject(new ApiError(`Request body too large (limit: ${limit} bytes)`, 'BAD_REQUEST', 413));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns, so copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(Buffer.concat(chunks));
    });
  });
}

/** Percent-decodes part of a URL path; a malformed escape leaves it as sent (it then matches nothing). */
function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function decodeBody(body: Buffer, contentType: string, into: RawParams, files: UploadedFile[]): void {
  if (body.length === 0) return;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    const parts = uWS.getParts(body, contentType);
    if (!parts) throw new ApiError('Malformed multipart body', 'BAD_REQUEST');
    for (const part of parts) {
      const data = Buffer.from(part.data);
      if (part.filename !== undefined) files.push({ field: part.name, filename: part.filename, contentType: part.type ?? '', data });
      else into.set(part.name, data.toString('utf8'));
    }
  } else if (type === 'application/json') {
    parseJsonBody(body.toString('utf8'), into);
  } else {
    parseUrlEncoded(body.toString('utf8'), into);
  }
}

export function startHttpServer(app: App, routes: Route[], attach?: (uws: uWS.TemplatedApp) => void): Promise<HttpServer> {
  const uws = uWS.App();
  const inFlight = new Set<Exchange>();
  let closing = false;
  const byPath = new Map<string, Map<string, Route>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Map<string, Route>();
    if (methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }

  async function dispatch(ex: Exchange, route: Route, raw: RawParams, path: Record<string, string>, bodyLimit: number, hasBody: boolean): Promise<void> {
    const h = ex.headers;
    let rate: RateDecision | undefined;
    try {
      // Clients retry a 503; a restarted server will have their queues back.
      if (closing) throw new ApiError('The server is restarting', 'SERVER_RESTARTING', 503, {}, { Connection: 'close' });
      const files: UploadedFile[] = [];
      if (hasBody) decodeBody(await readBody(ex, bodyLimit), h['content-type'] ?? '', raw, files);
      const realm = app.realms.forHost(h.host ?? '');
      if (!realm) throw invalidSubdomain();
      const user = await authenticate(realm, route, h.authorization);
      if (app.limits && !route.noRateLimit) {
        rate = user ? app.limits.user.hit(`u${user.id}`) : app.limits.ip.hit(h.ip!);
        if (!rate.allowed) throw rateLimited(rate);
      }
      const { params, ignored } = parseParams(route.params, raw);
      const answer = answerer(ex, rate, ignored);
      const result: HandlerResult = await (route.handler as (ctx: unknown) => Promise<HandlerResult>)({
        app, realm, user, params, path, files, ip: h.ip!, headers: { userAgent: h['user-agent'] ?? '' },
        onAbort: abortRegistrar(ex),
        answer,
      });
      if (!ex.done) answer(result);
    } catch (err) {
      if (isNulByteError(err)) err = new ApiError('Null bytes are not allowed', 'BAD_REQUEST', 400);
      if (err instanceof ApiError) {
        writeResponse(ex, err.status, { ...(rate && err.status !== 429 ? rateHeaders(rate) : {}), ...err.headers, 'Content-Type': 'application/json' }, errorBody(err));
      } else {
        const requestId = randomUUID();
        log.error('unhandled error', { requestId, route: `${route.method} ${route.path}`, error: err instanceof Error ? err.stack : String(err) });
        writeResponse(ex, 500, { 'Content-Type': 'application/json' }, JSON.stringify({ result: 'error', msg: 'Internal server error', code: 'BAD_REQUEST' }));
      }
    } finally {
      inFlight.delete(ex);
    }
  }

  // These two return anonymous functions on purpose: tsx compiles with keepNames, which gives
  // every named closure (`const answer = () => ...`) a defineProperty call, and each request
  // (every re-parked long-poll) makes both.
  function answerer(ex: Exchange, rate: RateDecision | undefined, ignored: string[]): (result: HandlerResult) => void {
    return (result) => {
      if (result instanceof RawResponse) {
        writeResponse(ex, result.status, { ...(rate ? rateHeaders(rate) : {}), ...result.headers }, result.body);
        return;
      }
      const headers = rate ? { ...rateHeaders(rate), ...JSON_HEADERS } : JSON_HEADERS;
      if (result instanceof JsonFields) {
        const extra = ignored.length ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}` : '';
        writeResponse(ex, 200, headers, `{"result":"success","msg":"",${result.json}${extra}}`);
      } else {
        const body = { result: 'success', msg: '', ...result, ...(ignored.length ? { ignored_parameters_unsupported: ignored } : {}) };
        writeResponse(ex, 200, headers, JSON.stringify(body));
      }
    };
  }

  function abortRegistrar(ex: Exchange): (cb: () => void) => void {
    return (cb) => {
      ex.abortHandlers.push(cb);
    };
  }

  async function authenticate(realm: RealmInfo, route: Route, header: string | undefined): Promise<User | null> {
    if (route.auth === 'none') return null;
    if (!header) {
      if (route.auth === 'optional') return null;
      throw notLoggedIn();
    }
    const basic = parseBasicAuth(header);
    if (basic === null) throw new ApiError('This endpoint requires HTTP basic authentication.', 'BAD_REQUEST', 400);
    if (basic === 'malformed') throw unauthorized('Invalid authorization header for basic auth');
    return app.auth.authenticate(realm, basic.username, basic.password);
  }

  for (const [pattern, methods] of byPath) {
    const paramNames = [...pattern.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    // A pattern ending in `/*` hands the rest of the path (several segments) to the handler.
    const wildcardPrefix = pattern.endsWith('/*') ? pattern.slice(0, -1) : null;
    uws.any(pattern, (res, req) => {
      const method = req.getCaseSensitiveMethod().toUpperCase();
      const ex: Exchange = { res, aborted: false, done: false, abortHandlers: [], headers: {} };
      res.onAborted(() => {
        ex.aborted = true;
        inFlight.delete(ex);
        for (const cb of ex.abortHandlers) cb();
      });
      // Headers must be read before the handler returns: uWS frees the request afterwards. Only
      // the few the router uses are copied; every long-poll passes here.
      for (const name of READ_HEADERS) ex.headers[name] = req.getHeader(name);
      ex.headers.ip = Buffer.from(res.getRemoteAddressAsText()).toString();
      const path: Record<string, string> = {};
      for (let i = 0; i < paramNames.length; i++) path[paramNames[i]!] = decodePath(req.getParameter(i) ?? '');
      if (wildcardPrefix !== null) path['*'] = decodePath(req.getUrl().slice(wildcardPrefix.length));
      const route = methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined);
      if (!route) {
        const body = JSON.stringify({ result: 'error', msg: 'Method Not Allowed', allowed_methods: [...methods.keys()] });
        writeResponse(ex, 405, { 'Content-Type': 'application/json', Allow: [...methods.keys()].join(', ') }, body);
        return;
      }
      let raw: RawParams;
      try {
        raw = parseUrlEncoded(req.getQuery() ?? '');
      } catch {
        raw = new Map();
      }
      inFlight.add(ex);
      const hasBody = method !== 'GET' && method !== 'HEAD';
      void dispatch(ex, route, raw, path, route.maxBody?.(app.config) ?? app.config.MAX_BODY_BYTES, hasBody);
    });
  }
  attach?.(uws);
  uws.any('/*', (res) => {
    const ex: Exchange = { res, aborted: false, done: false, abortHandlers: [], headers: {} };
    res.onAborted(() => (ex.aborted = true));
    writeResponse(ex, 404, { 'Content-Type': 'application/json' }, JSON.stringify({ result: 'error', msg: 'Not Found', code: 'NOT_FOUND' }));
  });

  return new Promise((resolve, reject) => {
    listenExclusive(uws, app.config.HOST, app.config.PORT, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${app.config.HOST}:${app.config.PORT}`));
      let listening: uWS.us_listen_socket | null = socket;
      resolve({
        uws,
        port: uWS.us_socket_local_port(socket),
        stopAccepting() {
          closing = true;
          if (listening) uWS.us_listen_socket_close(listening);
          listening = null;
        },
        async drain(timeoutMs) {
          const deadline = Date.now() + timeoutMs;
          while (inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        },
        close() {
          if (listening) uWS.us_listen_socket_close(listening);
          listening = null;
          closeUws(uws);
        },
      });
    });
  });
}
